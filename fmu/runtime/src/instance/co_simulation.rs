//! The Co-Simulation side of an instance: the FMU integrates its model over each communication
//! step itself (`fmi2DoStep`), with input ramps from `fmi2SetRealInputDerivatives` and output
//! derivatives for extrapolating masters.

use super::{step_error_text, CallResult, FmiState, Instance};
use crate::lift::Lifted;
use crate::logger::{Category, OK};
use crate::model::Model;
use crate::ode::{Ended, Integrator, Stops};
use crate::variables::{Access, Causality};

impl<M: Model> Instance<M> {
    /// FMI 3.0 Co-Simulation with Event Mode: back from Event Mode to stepping.
    pub fn enter_step_mode(&mut self) {
        self.state = FmiState::StepComplete;
    }

    /// The integrator for the current tolerance, built (it allocates) only when that changed.
    #[inline(always)]
    pub(super) fn integrator(&mut self) -> &mut Integrator<M> {
        if self.integrator.as_ref().map(Integrator::rtol) != Some(self.tolerance) {
            self.build_integrator();
        }
        self.integrator.as_mut().expect("built above")
    }

    #[cold]
    fn build_integrator(&mut self) {
        self.integrator = Some(Integrator::new(self.tolerance));
    }

    /// First time derivatives of Real outputs at the current time (`fmi2GetRealOutputDerivatives`,
    /// `fmi3GetOutputDerivatives`, order 1). A model written over the number type gives them
    /// exactly: one pass of its equations over jets along its own motion, the states moving as
    /// `dx/dt` and the inputs as the input derivatives set (0 where none was). Discrete
    /// outputs change only at events: 0. A model that is not declares
    /// maxOutputDerivativeOrder 0 and gives none.
    pub fn get_output_derivatives(
        &mut self,
        vrs: &[u32],
        orders: &[i32],
        values: &mut [f64],
    ) -> CallResult {
        if !<M::Jets as Lifted<M>>::LIFTED {
            return Err(format!("{} provides no output derivatives", M::NAME));
        }
        self.refresh()?;
        for (vr, order) in vrs.iter().zip(orders) {
            let v = self.var(*vr)?;
            if v.causality != Causality::Output || !v.is_real() {
                return Err(format!("{} (vr {vr}) is not a Real output", v.name));
            }
            if *order != 1 {
                return Err(format!(
                    "derivative order {order} of {} is not provided (maxOutputDerivativeOrder 1)",
                    v.name
                ));
            }
        }
        match self.along_motion(vrs, values) {
            Ok(()) => Ok(OK),
            Err(e) => Err(format!(
                "t = {}: the derivative of {} is not finite here",
                self.time, self.vars[e.unknown as usize].name
            )),
        }
    }

    /// First-order input derivatives, valid from the next communication point on until they
    /// are set again: the input follows `u + du/dt * (t - t_c)` over each step.
    pub fn set_input_derivatives(
        &mut self,
        vrs: &[u32],
        orders: &[i32],
        values: &[f64],
    ) -> CallResult {
        for ((vr, order), value) in vrs.iter().zip(orders).zip(values) {
            let v = self.var(*vr)?;
            if v.causality != Causality::Input || !v.is_real() {
                return Err(format!("{} is not a Real input", v.name));
            }
            if *order != 1 {
                return Err(format!(
                    "derivative order {order} for {} is not supported (maxOrder 1)",
                    v.name
                ));
            }
            if !value.is_finite() {
                return Err(format!(
                    "derivative of {} = {value} at t = {} refused: not finite",
                    v.name, self.time
                ));
            }
        }
        for (vr, value) in vrs.iter().zip(values) {
            self.slopes[*vr as usize] = *value;
        }
        self.untouched = false;
        Ok(OK)
    }

    pub fn do_step(&mut self, tc: f64, h: f64) -> CallResult {
        self.step_with(tc, h, Stops::default()).map(|_| OK)
    }

    /// One communication step from `tc` over `h`, ending early where `stops` asks (FMI 3.0:
    /// at an event in Event Mode, or where the importer asked for an early return): the
    /// instance is then at the time where it ended, which is returned.
    #[inline(always)]
    pub(crate) fn step_with(&mut self, tc: f64, h: f64, stops: Stops) -> Result<Ended, String> {
        let t_end = self.step_end(tc, h)?;
        self.step_to(tc, t_end, stops)
    }

    /// The rest of a communication step already checked ([`Instance::step_with`]): from the
    /// instance's time `tc` to `t_end`, which is passed rather than a step size so that it is
    /// reached exactly (FMI 3.0 goes on so after an intermediate update).
    pub(crate) fn step_to(&mut self, tc: f64, t_end: f64, stops: Stops) -> Result<Ended, String> {
        if let Err(e) = self.model.check_inputs() {
            return self.failed(format!("t = {tc}: step refused: {e}"));
        }
        self.integrator();
        let integrator = self.integrator.as_mut().expect("built above");
        // Inputs with a derivative follow a ramp over the step; going on from a pause with
        // nothing set, the ramps are the step's own, from its start.
        let model = &self.model;
        let ramped = self.slopes.iter().any(|s| *s != 0.0);
        let resumes = self.untouched && integrator.paused_at() == Some(tc);
        if !resumes {
            integrator.set_inputs(
                tc,
                self.vars
                    .iter()
                    .zip(&self.slopes)
                    // Most masters hold their inputs: then there is no ramp to look for.
                    .take(if ramped { usize::MAX } else { 0 })
                    .filter(|(_, s)| **s != 0.0)
                    .filter_map(|(v, s)| match v.access {
                        Access::Real { get, set } => Some((set, get(model), *s)),
                        _ => None,
                    }),
            );
        }
        let before = self.model.clone();
        if ramped {
            // Inputs are linear over the step: valid at both ends means valid throughout.
            let mut end = before.clone();
            integrator.apply_inputs(&mut end, t_end);
            if let Err(e) = end.check_inputs() {
                return self.failed(format!(
                    "t = {tc}: step refused: with the input derivatives, at t = {t_end}: {e}"
                ));
            }
        }
        let logger = &self.logger;
        let mut log = |msg: &str| logger.log(OK, Category::Events, msg);
        let log: Option<&mut dyn FnMut(&str)> =
            logger.enabled(Category::Events).then_some(&mut log);
        let mut trial_step = self.step_size;
        integrator.continues = std::mem::take(&mut self.untouched);
        let result =
            integrator.integrate_with(&mut self.model, tc, t_end, &mut trial_step, log, stops);
        let ended = match result {
            Ok(stats) => stats.ended,
            Err(e) => {
                self.model = before;
                return self.failed(format!(
                    "step from t = {tc} failed: {}",
                    step_error_text(&e)
                ));
            }
        };
        let t_reached = match ended {
            Ended::Reached => t_end,
            Ended::Event(t) | Ended::Paused(t) => t,
        };
        integrator.apply_inputs(&mut self.model, t_reached);
        self.finish_step(before, tc, t_reached, trial_step)?;
        // At an event the importer's Event Mode changes the model.
        self.untouched = !matches!(ended, Ended::Event(_));
        Ok(ended)
    }

    /// The end of a step from `tc` over `h`, if the step is one the instance can take.
    #[inline(always)]
    pub(crate) fn step_end(&self, tc: f64, h: f64) -> Result<f64, String> {
        let t = self.time;
        let eps = 1e-9 * t.abs().max(1.0);
        if !(h.is_finite() && h > 0.0) {
            return Err(format!("communicationStepSize = {h} must be positive"));
        }
        if !tc.is_finite() || (tc - t).abs() > eps {
            return Err(format!(
                "currentCommunicationPoint = {tc} does not match the FMU time {t}"
            ));
        }
        let t_end = tc + h;
        match self.stop_time {
            Some(stop) if t_end > stop + eps => {
                Err(format!("a step to t = {t_end} passes the stop time {stop}"))
            }
            _ => Ok(t_end),
        }
    }

    /// After integrating to `t_reached`: the outputs there, or the model as it was `before` the
    /// step and the Error state where one is not finite.
    #[inline(always)]
    fn finish_step(
        &mut self,
        before: M,
        tc: f64,
        t_reached: f64,
        trial_step: f64,
    ) -> Result<(), String> {
        self.model.outputs(t_reached);
        if let Some(why) = self.outputs_not_finite() {
            self.model = before;
            return self.failed(format!("step from t = {tc} failed: t = {t_reached}: {why}"));
        }
        self.step_size = trial_step;
        self.dirty = false;
        self.jacobian.changed();
        self.unrepresentable = None;
        self.time = t_reached;
        self.last_successful_time = t_reached;
        Ok(())
    }

    pub fn last_successful_time(&self) -> f64 {
        self.last_successful_time
    }
}
