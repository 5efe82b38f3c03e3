//! What a component crate provides: its physics and its variable table.

use crate::declare::Variables;
use crate::lift::{Equations, Jets, Lifted};
use std::fmt;

/// A rejected parameter or input: which variable, which value, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Invalid {
    pub variable: &'static str,
    pub value: f64,
    pub reason: String,
}

impl Invalid {
    pub fn new(variable: &'static str, value: f64, reason: impl Into<String>) -> Self {
        Invalid {
            variable,
            value,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} = {} is invalid: {}",
            self.variable, self.value, self.reason
        )
    }
}

/// The side of an event indicator's switching function that the model's current modes belong to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Positive,
    Negative,
}

impl Side {
    /// `Positive` where `positive`, else `Negative`.
    pub fn of(positive: bool) -> Side {
        if positive {
            Side::Positive
        } else {
            Side::Negative
        }
    }
}

/// Relative hysteresis of event indicators: a model passes it times the natural size of each
/// switching function (a length, a speed, a torque) to [`Indicators::set`].
pub const HYSTERESIS: f64 = 1e-12;

/// The event indicators a model writes. Each is a switching function `g` of the states, inputs
/// and time (the model's modes change where it changes sign), the side of it that the current
/// modes belong to, and a hysteresis `h > 0` in `g`'s unit, at least `g`'s own rounding. The
/// integrator sees `g + h` on the positive side and `g - h` on the negative one:
/// - after every event iteration each indicator is strictly nonzero, on the side of its mode.
///   Root finders (CVode, IDA, DASSL, SciPy's `solve_ivp`, ours) report a root only where an
///   indicator changes sign between nonzero values: one left at exactly zero is ignored until
///   it has moved away, so a switch that starts there would never be seen;
/// - an event is found where `g` has gone `h` past its surface, so the event update sees `g`
///   on the far side and switches: the hysteresis moves event times by `h / |dg/dt|`;
/// - a switching function that touches zero at rounding level (a chain run that grazes
///   taut) causes no event.
///
/// A Model Exchange importer's root finder may report a root anywhere within its time
/// tolerance of the crossing, on the near side too (SciPy's `brentq` on a dense output does;
/// CVode reports the far side). There `g` must already be past zero, or the event update
/// changes nothing and the root is found again at the same time. So the runtime widens every
/// indicator it hands to an importer by the band `|dg/dt| tau`, with `dg/dt` along the
/// model's motion and `tau` = [`ROOT_TIME_TOLERANCE`] `max(|t|, 1)`, far more than a root
/// finder's few ulp of time: at any speed, a root reported within that tolerance lies where `g`
/// has crossed. The band moves Model Exchange event times by `tau` at most; the FMU's own
/// integrator reports roots on the far side and sees `g ± h` alone.
pub struct Indicators<'a> {
    z: &'a mut [f64],
    /// The side of each indicator's modes (+1, -1; 0: unused), where the runtime asks for it.
    sides: Option<&'a mut [f64]>,
}

/// The time tolerance, relative to `max(|t|, 1)`, of the root finders the band of
/// [`Indicators`] serves: 450 ulp of time.
pub const ROOT_TIME_TOLERANCE: f64 = 1e-13;

impl<'a> Indicators<'a> {
    pub fn new(z: &'a mut [f64]) -> Self {
        Indicators { z, sides: None }
    }

    /// Also records the side of each indicator in `sides`.
    pub(crate) fn with_sides(z: &'a mut [f64], sides: &'a mut [f64]) -> Self {
        Indicators {
            z,
            sides: Some(sides),
        }
    }

    /// Indicator `i`: switching function `g`, the side of it the current modes belong to, and
    /// the hysteresis `h` (> 0, in `g`'s unit).
    #[inline(always)]
    pub fn set(&mut self, i: usize, g: f64, side: Side, h: f64) {
        let (z, sign) = match side {
            Side::Positive => (g + h, 1.0),
            Side::Negative => (g - h, -1.0),
        };
        self.z[i] = z;
        if let Some(sides) = self.sides.as_mut() {
            sides[i] = sign;
        }
    }

    /// Indicator `i` watches nothing in the current modes.
    pub fn unused(&mut self, i: usize) {
        self.z[i] = 1.0;
        if let Some(sides) = self.sides.as_mut() {
            sides[i] = 0.0;
        }
    }
}

/// Start, stop, tolerance and step of the `DefaultExperiment`.
#[derive(Debug, Clone, Copy)]
pub struct Experiment {
    pub start: f64,
    pub stop: f64,
    pub tolerance: f64,
    pub step: f64,
}

impl Experiment {
    /// From 0 s to `stop` at a relative tolerance of 1e-8 and a 1 ms communication step: what
    /// every drivetrain FMU here proposes.
    pub const fn until(stop: f64) -> Self {
        Experiment {
            start: 0.0,
            stop,
            tolerance: 1e-8,
            step: 1e-3,
        }
    }

    /// The same experiment at another relative tolerance. It is also the tolerance the FMU
    /// integrates with when an importer (OSP libcosim, for one) defines none.
    pub const fn with_tolerance(self, tolerance: f64) -> Self {
        Experiment { tolerance, ..self }
    }
}

/// A component model. The runtime owns time, the FMI state machine, inputs over a step and the
/// integrator; the model owns its variables and its equations.
///
/// All model state lives in fields that are declared with `#[derive(Variables)]` (as `local` where
/// users need not see them): the FMU state is serialized from that table, so a field that is not
/// declared would not survive a rollback.
///
/// Its equations are [`Equations`] (state derivatives, outputs, calculated parameters): written
/// once over the number type (`impl<S: Scalar> Equations<S> for Gear<S>`), the same code gives
/// the simulation and, over [`Model::Jets`], the exact derivatives.
pub trait Model: Variables + Equations<f64> + Clone + Send + 'static {
    /// The model over the numbers of its exact derivatives: `Gear<Jet<N>>`, with `N` the
    /// number of states (the states' columns in one pass; the inputs' are swept apart, in
    /// chunks of `N`), or [`crate::lift::Unlifted`] for a model that provides none.
    type Jets: Jets<Self>;
    /// The model identifier: names the `.fmu`, the binary and `modelName`.
    const NAME: &'static str;
    /// One line for `modelDescription.xml`.
    const DESCRIPTION: &'static str;
    /// HTML fragment with the equations, derivation and validity limits; the runtime adds the
    /// variable table when it writes `documentation/index.html`.
    const DOCUMENTATION: &'static str;
    const DEFAULT_EXPERIMENT: Experiment;
    /// Number of event indicators; the runtime locates their zero crossings inside a step.
    const EVENT_INDICATORS: usize = 0;
    /// The relative tolerance from which down (to `HIGH_ORDER_FROM` = 1e-9, where
    /// DOP853 takes over) the runtime integrates with Verner's 6(5) pair instead of Tsitouras'
    /// 5(4): eight evaluations a step against six, repaid where the steps are limited by
    /// accuracy rather than by the communication step (a crank turning half a radian per
    /// step, say). 0, the default: never.
    const SIXTH_ORDER_FROM: f64 = 0.0;

    /// Whether the equations are stiff with the current parameters and inputs. The runtime then
    /// integrates with diffsol's BDF (variable order, Newton with a finite-difference Jacobian)
    /// instead of an explicit Runge-Kutta pair. Asked at the start of every integration
    /// segment.
    fn stiff(&self) -> bool {
        false
    }

    /// Checks the parameters and sets the states from their start values, at the start time
    /// `t`. Called by `fmi2ExitInitializationMode`.
    fn initialize(&mut self, t: f64) -> Result<(), Invalid>;

    /// Event indicators: for each, its switching function, the side of it the current modes
    /// belong to, and the hysteresis (see [`Indicators`]).
    fn event_indicators(&self, _t: f64, _z: &mut Indicators) {}

    /// Handles an event at `t`: switches modes, may reset states. Returns whether anything
    /// discrete changed; the runtime repeats the call until nothing does.
    ///
    /// The modes it leaves must lie on the side of each switching function `g` that `g` is on,
    /// or, where `g` is within its hysteresis of zero, on the side the motion is heading to
    /// (exactly zero included). Then every indicator is strictly nonzero after the iteration.
    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        Ok(false)
    }

    /// What the event update just done at `t` changed, in words for the log (logEvents), or
    /// None to log only the time. Called only after an update that changed something.
    fn describe_event(&self, _t: f64) -> Option<String> {
        None
    }

    /// The next time event strictly after `t`, if any.
    fn next_time_event(&self, _t: f64) -> Option<f64> {
        None
    }

    /// Checks the inputs before a step (finiteness is checked by the runtime already).
    fn check_inputs(&self) -> Result<(), Invalid> {
        Ok(())
    }

    /// Checks what a restored FMU state holds beyond each variable's declared range, which the
    /// runtime checks, and beyond the parameters, which it checks by initializing a copy: the
    /// modes, counts and indices must be ones this model reaches with these parameters (a
    /// table segment among the rows in use, a mode the chain model has, outputs that follow
    /// the engaged gear).
    fn check_state(&self) -> Result<(), Invalid> {
        Ok(())
    }

    /// Whether the model gives its exact first derivatives (it is lifted, [`Model::Jets`]):
    /// the FMUs then provide directional derivatives (FMI 2.0 and 3.0) and adjoint
    /// derivatives (FMI 3.0).
    const PROVIDES_DERIVATIVES: bool = <Self::Jets as Lifted<Self>>::LIFTED;
}

#[cfg(test)]
mod tests {
    use super::Experiment;

    /// Another tolerance, the rest of the experiment kept.
    #[test]
    fn another_tolerance_keeps_the_rest() {
        let e = Experiment::until(2.0).with_tolerance(1e-5);
        assert_eq!(
            (e.start, e.stop, e.tolerance, e.step),
            (0.0, 2.0, 1e-5, 1e-3)
        );
    }
}
