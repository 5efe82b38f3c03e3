//! The explicit Runge-Kutta method ([`super::erk`]) as a [`Method`] of the segment loop: its
//! steps, its dense output, and its landing on a crossing, where it steps again from the start
//! of the step that holds it, so that the states at the event are a step end.

use super::erk::{Erk, Stepped};
use super::segment::{
    changes_mode, not_finite, time_epsilon, too_many_steps, Context, Method, StepError,
    MAX_INTERNAL_STEPS,
};
use crate::model::Model;

/// One non-stiff segment with the instance's explicit pair, in the model's working copy.
pub struct Explicit<'a, M: Model> {
    pub rk: &'a mut Erk,
    pub c: &'a mut Context<M>,
    /// The model as the segment started, to try events on.
    pub model: &'a M,
    /// The dense-output states at a crossing, should landing on it fail.
    pub fallback: &'a mut [f64],
    /// Accepted steps so far.
    pub steps: usize,
    /// The step proposed before the last one was cut to the segment's end.
    pub proposal: f64,
    /// The segment goes on from where the last one paused, nothing changed: the method's
    /// state (time, states, derivative, indicators, step) is that pause's, as if it had not
    /// stopped.
    pub resumes: bool,
}

impl<M: Model> Method for Explicit<'_, M> {
    fn start(
        &mut self,
        t0: f64,
        _t1: f64,
        x: &[f64],
        h: &mut f64,
        restart: bool,
    ) -> Result<(), StepError> {
        if self.resumes {
            *h = self.rk.h;
            return Ok(());
        }
        self.rk.set(self.c, t0, x, *h);
        if restart {
            *h = self.rk.first_step(self.c).min(*h);
            self.rk.h = *h;
        }
        Ok(())
    }

    fn at_end(&mut self, t1: f64, x: &mut [f64], h: &mut f64) -> bool {
        // The proposal for the next step, before the end of the segment cuts it: what the next
        // segment starts from.
        self.proposal = self.rk.h;
        *h = self.proposal;
        // At the end already (a touch of an indicator there stopped the last step).
        let reached = t1 - self.rk.t <= time_epsilon(t1);
        if reached {
            x.copy_from_slice(self.rk.y());
        }
        reached
    }

    fn step(&mut self, t1: f64, x: &mut [f64], h: &mut f64) -> Result<Stepped, StepError> {
        let reason = self.advance(t1)?;
        let (t, proposed) = (self.rk.t, self.rk.h);
        match reason {
            Stepped::Inside => {}
            Stepped::Stop => {
                // A final step much shorter than proposed says little about the next one.
                if t - self.rk.start().0 >= 0.5 * self.proposal {
                    *h = proposed;
                }
                x.copy_from_slice(self.rk.y());
            }
            Stepped::Root(_) => *h = proposed,
        }
        Ok(reason)
    }

    fn interpolate(&mut self, t: f64, x: &mut [f64]) -> Result<(), StepError> {
        self.rk.interpolate(t, x);
        Ok(())
    }

    fn changes_mode(&mut self, t: f64, x: &[f64]) -> bool {
        changes_mode(self.model, self.c, t, x)
    }

    fn land(&mut self, tr: f64, x: &mut [f64]) -> Result<f64, StepError> {
        self.fallback.copy_from_slice(x);
        if let Some(t) = self.land_on(tr, x)? {
            return Ok(t);
        }
        // No step end was found across the crossing: the dense output there.
        x.copy_from_slice(self.fallback);
        Ok(tr)
    }

    fn here(&mut self, x: &mut [f64], h: &mut f64) -> f64 {
        x.copy_from_slice(self.rk.y());
        *h = self.rk.h;
        self.rk.t
    }

    fn resume(&mut self, t1: f64, x: &mut [f64]) -> Result<bool, StepError> {
        // A touch that changes no mode: go on from this step's end.
        let reached = t1 - self.rk.t <= time_epsilon(t1);
        if reached {
            x.copy_from_slice(self.rk.y());
        }
        Ok(reached)
    }
}

impl<M: Model> Explicit<'_, M> {
    /// One accepted step toward `stop`, with the limit on their number per segment.
    fn advance(&mut self, stop: f64) -> Result<Stepped, StepError> {
        self.steps += 1;
        if self.steps > MAX_INTERNAL_STEPS {
            return Err(too_many_steps(self.rk.t));
        }
        // A step that would end within `time_epsilon` of the stop ends there: no sliver is left.
        let reason = self
            .rk
            .step(self.c, stop, time_epsilon(stop))
            .map_err(|failed| {
                if failed.not_finite {
                    not_finite(failed.t)
                } else {
                    StepError::Solver(
                        failed.t,
                        format!("the integrator failed: {}", failed.reason),
                    )
                }
            })?;
        if self.rk.y().iter().any(|v| !v.is_finite()) {
            return Err(not_finite(self.rk.t));
        }
        Ok(reason)
    }

    /// Steps again from the start of the step that holds the crossing at `tr`, with `tr` as the
    /// stop time: the states at the event are a step end, not the dense output.
    fn land_on(&mut self, mut tr: f64, x: &mut [f64]) -> Result<Option<f64>, StepError> {
        loop {
            let (start, y0) = self.rk.start();
            if tr - start <= time_epsilon(tr) {
                // The crossing is at the start of the step.
                x.copy_from_slice(y0);
                return Ok(self.changes_mode(start, x).then_some(start));
            }
            self.rk.back_to_start();
            self.rk.h = tr - start;
            loop {
                match self.advance(tr)? {
                    Stepped::Inside => continue,
                    Stepped::Stop => return self.past_the_crossing(x),
                    Stepped::Root(t2) => {
                        let t = self.rk.t;
                        if t - t2 <= 10.0 * time_epsilon(t) {
                            // Found again where this step ends: the event is here.
                            return self.past_the_crossing(x);
                        }
                        self.rk.interpolate(t2, x);
                        if self.changes_mode(t2, x) {
                            // The shorter step sees the crossing a little earlier.
                            tr = t2;
                            break;
                        }
                        if tr - t <= time_epsilon(tr) {
                            return self.past_the_crossing(x);
                        }
                    }
                }
            }
        }
    }

    /// The method has landed on a crossing: the event is at this step end, unless rounding left
    /// the states just short of it (the indicator a hair from zero on the near side). Then tiny
    /// steps, growing from 200 ulp of the time, carry them across.
    fn past_the_crossing(&mut self, x: &mut [f64]) -> Result<Option<f64>, StepError> {
        let mut t = self.rk.t;
        x.copy_from_slice(self.rk.y());
        let mut delta = 200.0 * f64::EPSILON * t.abs().max(1.0);
        for _ in 0..20 {
            if self.changes_mode(t, x) {
                return Ok(Some(t));
            }
            self.rk.h = delta;
            let stop = t + delta;
            delta *= 2.0;
            while let Stepped::Inside = self.advance(stop)? {}
            t = self.rk.t;
            x.copy_from_slice(self.rk.y());
        }
        Ok(None)
    }
}
