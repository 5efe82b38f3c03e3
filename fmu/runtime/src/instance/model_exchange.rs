//! The Model Exchange side of an instance: the importer's solver owns time and the continuous
//! states; the FMU evaluates derivatives and event indicators where it is told, and runs its
//! event update in Event Mode (`fmi2NewDiscreteStates`).

use super::{CallResult, EventUpdate, FmiState, Instance, Interface};
use crate::logger::{Category, OK, WARNING};
use crate::model::{Indicators, Model, ROOT_TIME_TOLERANCE};
use crate::ode as integrator;
use crate::variables::Access;

impl<M: Model> Instance<M> {
    fn check_count(&self, n: usize, expected: usize, what: &str) -> Result<(), String> {
        if n == expected {
            Ok(())
        } else {
            Err(format!("{n} {what} given; {} has {expected}", M::NAME))
        }
    }

    pub fn set_time(&mut self, t: f64) -> CallResult {
        if !t.is_finite() {
            return Err(format!("time = {t} refused: not a finite number"));
        }
        if t != self.time {
            self.time = t;
            self.dirty = true;
            self.untouched = false;
            // The equations take the time as an argument: the columns kept are stale, the
            // lifted model's values are not (a Model Exchange importer sets the time before
            // every evaluation, and a whole sync would cost more than the pass).
            self.jacobian.states_changed();
        }
        Ok(OK)
    }

    pub fn set_continuous_states(&mut self, x: &[f64]) -> CallResult {
        self.check_count(x.len(), M::STATES, "continuous states")?;
        if let Some((i, v)) = x.iter().enumerate().find(|(_, v)| !v.is_finite()) {
            return Err(format!(
                "continuous state {i} = {v} at t = {} refused: not a finite number",
                self.time
            ));
        }
        self.model.set_states(x);
        self.dirty = true;
        self.untouched = false;
        self.jacobian.states_changed();
        Ok(OK)
    }

    /// In Initialization Mode the states follow from the parameters set so far.
    fn initial_values(&mut self) -> Result<(), String> {
        if self.state == FmiState::InitializationMode {
            self.refresh()?;
        }
        Ok(())
    }

    pub fn get_continuous_states(&mut self, x: &mut [f64]) -> CallResult {
        self.check_count(x.len(), M::STATES, "continuous states")?;
        self.initial_values()?;
        self.model.get_states(x);
        Ok(OK)
    }

    pub fn get_nominals(&mut self, x: &mut [f64]) -> CallResult {
        self.check_count(x.len(), M::STATES, "nominals")?;
        x.fill(1.0);
        Ok(OK)
    }

    pub fn get_derivatives(&mut self, dx: &mut [f64]) -> CallResult {
        self.check_count(dx.len(), M::STATES, "derivatives")?;
        self.initial_values()?;
        let t = self.time;
        self.model
            .check_inputs()
            .map_err(|e| format!("t = {t}: {e}"))?;
        self.model.derivatives(t, dx);
        self.outside = dx.iter().any(|v| !v.is_finite());
        Ok(self.defined("the derivatives are"))
    }

    /// The event indicators, each widened by its band (see [`Indicators`]).
    pub fn get_event_indicators(&mut self, z: &mut [f64]) -> CallResult {
        self.check_count(z.len(), M::EVENT_INDICATORS, "event indicators")?;
        self.initial_values()?;
        let t = self.time;
        // Room for the sides, the rates and the states moved ahead (`scratch`, made at
        // instantiation): no call allocates.
        let mut room = std::mem::take(&mut self.scratch);
        let (sides, rest) = room.split_at_mut(M::EVENT_INDICATORS);
        let (rates, moved) = rest.split_at_mut(M::EVENT_INDICATORS);
        sides.fill(0.0);
        self.model
            .event_indicators(t, &mut Indicators::with_sides(z, sides));
        let defined = z.iter().all(|v| v.is_finite());
        if defined && self.indicator_rates(t, z, rates, moved) {
            let tau = ROOT_TIME_TOLERANCE * t.abs().max(1.0);
            for ((z, side), rate) in z.iter_mut().zip(&*sides).zip(&*rates) {
                *z += side * rate.abs() * tau;
            }
        }
        self.scratch = room;
        if !defined {
            self.outside = true;
            return Ok(self.defined("the event indicators are"));
        }
        Ok(OK)
    }

    /// How fast each indicator `z` (at `t`) moves along the model's motion, into `rates`: a
    /// forward difference over a step of 1e-8 max(|t|, 1) along the derivatives and the
    /// inputs' rates as the importer sets them, with the modes held (`room`: twice the
    /// states). False where that step leaves the model's domain.
    fn indicator_rates(&self, t: f64, z: &[f64], rates: &mut [f64], room: &mut [f64]) -> bool {
        let delta = 1e-8 * t.abs().max(1.0);
        let (x, dx) = room[..2 * M::STATES].split_at_mut(M::STATES);
        self.model.get_states(x);
        self.model.derivatives(t, dx);
        x.iter_mut().zip(&*dx).for_each(|(x, dx)| *x += delta * dx);
        let mut ahead = self.model.clone();
        ahead.set_states(x);
        for (v, motion) in self.vars.iter().zip(&self.input_motion) {
            if let (Access::Real { get, set }, true) = (&v.access, motion.rate != 0.0) {
                let u = get(&ahead);
                set(&mut ahead, u + delta * motion.rate);
            }
        }
        rates.fill(0.0);
        ahead.event_indicators(t + delta, &mut Indicators::new(rates));
        for (r, z) in rates.iter_mut().zip(z) {
            *r = (*r - z) / delta;
        }
        rates.iter().all(|r| r.is_finite())
    }

    /// Logs a warning for an indicator left at exactly zero by a converged event iteration: a
    /// root finder would not see it change sign (a model breaking the [`Indicators`] contract).
    fn warn_indicators_at_zero(&mut self, t: f64) {
        if let Some(i) = self.indicator_at_zero(t) {
            self.logger.log(
                WARNING,
                Category::Warning,
                &format!("t = {t}: event indicator {i} is exactly zero after the event iteration; a root finder will not see it change sign"),
            );
        }
    }

    /// The first event indicator that is exactly zero now, if any.
    fn indicator_at_zero(&mut self, t: f64) -> Option<usize> {
        let z = &mut self.scratch[..M::EVENT_INDICATORS];
        z.fill(1.0);
        self.model.event_indicators(t, &mut Indicators::new(z));
        z.iter().position(|z| *z == 0.0)
    }

    /// Model Exchange, and FMI 3.0 Co-Simulation with Event Mode used.
    pub fn enter_event_mode(&mut self) -> Result<(), String> {
        if self.interface == Interface::CoSimulation && !self.event_mode_used {
            return Err(
                "Event Mode was not asked for at instantiation (eventModeUsed = false)".into(),
            );
        }
        self.state = FmiState::EventMode;
        self.event_updates = 0;
        Ok(())
    }

    pub fn enter_continuous_time_mode(&mut self) {
        self.state = FmiState::ContinuousTimeMode;
    }

    /// One event update (the importer repeats the call while `new_discrete_states_needed`),
    /// the same update the Co-Simulation interface repeats at a located crossing.
    pub fn new_discrete_states(&mut self) -> Result<EventUpdate, String> {
        let t = self.time;
        if let Err(e) = self.model.check_inputs() {
            return self.failed(format!("t = {t}: event refused: {e}"));
        }
        self.event_updates += 1;
        if self.event_updates > integrator::MAX_EVENT_ITERATIONS {
            return self.failed(format!(
                "t = {t}: event iteration did not converge in {} updates",
                integrator::MAX_EVENT_ITERATIONS
            ));
        }
        self.model.get_states(&mut self.event_states[..M::STATES]);
        let backup = self.model.clone();
        let changed = match self.model.event_update(t) {
            Ok(changed) => changed,
            Err(e) => {
                self.model = backup;
                return self.failed(format!("t = {t}: {e}"));
            }
        };
        if changed {
            // Described only for a log that is on: with logging off an event allocates nothing.
            if self.logger.enabled(Category::Events) {
                let what = self
                    .model
                    .describe_event(t)
                    .map_or_else(String::new, |text| format!(": {text}"));
                self.log_event(&format!("state event at t = {t}{what}"));
            }
        } else {
            self.event_updates = 0;
            self.warn_indicators_at_zero(t);
        }
        self.model.get_states(&mut self.event_states[M::STATES..]);
        let (before, after) = self.event_states.split_at(M::STATES);
        let moved = before
            .iter()
            .zip(after)
            .any(|(a, b)| a.to_bits() != b.to_bits());
        self.dirty = true;
        self.untouched = false;
        self.jacobian.changed();
        Ok(EventUpdate {
            new_discrete_states_needed: changed,
            values_of_continuous_states_changed: moved,
            next_event_time: self.model.next_time_event(t),
            ..EventUpdate::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instance::Interface;
    use crate::logger::Logger;
    use crate::model::{Experiment, Invalid, Side};
    use crate::test_models::Ball;

    /// A model whose one indicator is `g` with no hysteresis, against the contract.
    #[derive(Default, Clone)]
    struct Bare {
        g: f64,
    }
    crate::test_states!(Bare;);
    impl crate::lift::Equations<f64> for Bare {
        fn derivatives(&self, _t: f64, _dx: &mut [f64]) {}
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for Bare {
        const NAME: &'static str = "Bare";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
        const EVENT_INDICATORS: usize = 1;
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        fn event_indicators(&self, _t: f64, z: &mut Indicators) {
            z.set(0, self.g, Side::Positive, 0.0);
        }
        type Jets = crate::lift::Unlifted;
    }

    fn model_exchange<M: Model>() -> Instance<M> {
        let logger = Logger::new(None, std::ptr::null_mut(), "t", false);
        Instance::new(logger, Interface::ModelExchange)
    }

    #[test]
    fn an_indicator_left_at_zero_is_found_and_one_with_hysteresis_is_not() {
        let mut bare = model_exchange::<Bare>();
        assert_eq!(bare.indicator_at_zero(0.0), Some(0));
        bare.model.g = -1e-300;
        assert_eq!(bare.indicator_at_zero(0.0), None);
        // The ball resting on the ground: its indicator is the height plus the hysteresis.
        let mut ball = model_exchange::<Ball>();
        assert_eq!(ball.model.h, 0.0);
        assert_eq!(ball.indicator_at_zero(0.0), None);
    }

    /// A model whose event iteration takes `left` more updates that change something.
    #[derive(Default, Clone)]
    struct Countdown {
        left: usize,
    }
    crate::test_states!(Countdown;);
    impl crate::lift::Equations<f64> for Countdown {
        fn derivatives(&self, _t: f64, _dx: &mut [f64]) {}
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for Countdown {
        const NAME: &'static str = "Countdown";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
            let changed = self.left > 0;
            self.left = self.left.saturating_sub(1);
            Ok(changed)
        }
        type Jets = crate::lift::Unlifted;
    }

    /// An importer repeating fmi2NewDiscreteStates gets as many updates as Co-Simulation's own
    /// event iteration makes, and is refused where it gives up.
    #[test]
    fn both_interfaces_give_up_an_event_iteration_at_the_same_count() {
        let max = integrator::MAX_EVENT_ITERATIONS;
        for (changes, converges) in [(max - 1, true), (max, false)] {
            let mut cs = Countdown { left: changes };
            let co_simulation = integrator::event_iteration(&mut cs, 0.0).is_ok();
            let mut me = model_exchange::<Countdown>();
            me.model.left = changes;
            me.enter_event_mode().unwrap();
            let model_exchange = loop {
                match me.new_discrete_states() {
                    Ok(info) if info.new_discrete_states_needed => continue,
                    Ok(_) => break true,
                    Err(e) => {
                        assert!(e.contains(&format!("did not converge in {max}")), "{e}");
                        break false;
                    }
                }
            };
            assert_eq!(
                (co_simulation, model_exchange),
                (converges, converges),
                "{changes}"
            );
        }
    }

    /// A state `x` moving at `v` and an input `u`: one indicator `x + x^2 + u` (curved, so
    /// that the difference step of its rate matters), no hysteresis.
    #[derive(Default, Clone)]
    struct Drift {
        x: f64,
        v: f64,
        u: f64,
    }
    impl crate::declare::Variables for Drift {
        const STATES: usize = 1;
        const ANGLES: u64 = 0;
        type StateIndex = ();
        fn declare<L: crate::declare::Lens<Inner = Self>>(vars: &mut Vec<crate::Var<L::Outer>>) {
            vars.push(crate::Var::input("u", crate::real!(u)));
        }
        fn get_states(&self, x: &mut [f64]) {
            x[0] = self.x;
        }
        fn set_states(&mut self, x: &[f64]) {
            self.x = x[0];
        }
        fn start_states(&mut self) {}
    }
    impl crate::lift::Equations<f64> for Drift {
        fn derivatives(&self, _t: f64, dx: &mut [f64]) {
            dx[0] = self.v;
        }
        fn outputs(&mut self, _t: f64) {}
    }

    impl Model for Drift {
        const NAME: &'static str = "Drift";
        const DESCRIPTION: &'static str = "";
        const DOCUMENTATION: &'static str = "";
        const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
        const EVENT_INDICATORS: usize = 1;
        fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
            Ok(())
        }
        fn event_indicators(&self, _t: f64, z: &mut Indicators) {
            z.set(0, self.x + self.x * self.x + self.u, Side::Negative, 0.0);
        }
        type Jets = crate::lift::Unlifted;
    }

    /// The indicator an importer reads is widened, toward its mode's side, by its rate along
    /// the states' motion and the input's as the importer moved it (Continuous-Time Mode only)
    /// times the root time tolerance.
    #[test]
    fn the_band_follows_the_states_and_the_inputs_as_set() {
        let mut me = model_exchange::<Drift>();
        me.state = FmiState::ContinuousTimeMode;
        me.model.v = 2.0;
        let (mut z, tau) = ([0.0], ROOT_TIME_TOLERANCE * 4.0);
        for (t, u) in [(1.0, 0.0), (4.0, 6.0)] {
            me.set_time(t).unwrap();
            me.set_real(&[0], &[u]).unwrap();
        }
        me.get_event_indicators(&mut z).unwrap();
        // g = 6, rate (1 + 2 x) 2 + 6 / 3 = 4 at x = 0: on the negative side, g - 4 tau (to
        // the rounding of g).
        let band = 6.0 - z[0];
        assert!((band - 4.0 * tau).abs() < 1e-2 * band, "{band}");
        // Between Co-Simulation steps an input set is not observed.
        me.state = FmiState::EventMode;
        me.set_time(5.0).unwrap();
        me.set_real(&[0], &[100.0]).unwrap();
        me.state = FmiState::ContinuousTimeMode;
        me.get_event_indicators(&mut z).unwrap();
        let band = 100.0 - z[0];
        assert!(
            (band - 4.0 * ROOT_TIME_TOLERANCE * 5.0).abs() < 5e-2 * band,
            "{band}"
        );
    }

    /// Where the derivatives are finite the values are defined: a get after the states moved
    /// answers (the refresh tells the model's domain by the derivatives).
    #[test]
    fn a_get_after_the_states_moved_answers_where_the_derivatives_are_finite() {
        let mut me = model_exchange::<Drift>();
        me.state = FmiState::ContinuousTimeMode;
        me.model.v = 2.0;
        me.set_continuous_states(&[1.0]).unwrap();
        let mut u = [f64::NAN];
        assert_eq!(me.get_real(&[0], &mut u), Ok(OK));
        assert!(!me.outside);
        assert_eq!(u, [0.0]);
    }
}
