//! The runtime's Jacobian on a small model written over the number type: an unknown its
//! equations forget is named, and the columns kept answer every call at a point.

use super::{Instance, Interface};
use crate::lift::Equations;
use crate::logger::{Logger, DISCARD, OK};
use crate::model::{Experiment, Invalid, Model};
use crate::{Jet, Scalar};

/// x' = v = (a u + w t) x; y = x u, which `outputs` forgets while `FORGET` is set; y2 = x + u,
/// y3 = 3 x.
#[derive(Debug, Clone, crate::Variables)]
struct Plant<S = f64> {
    #[parameter(start = 2.0)]
    a: S,
    #[input]
    u: S,
    #[output(state, derivative = "v", start = 1.5)]
    x: S,
    #[output]
    v: S,
    #[output]
    y: S,
    #[parameter(start = 0.0)]
    w: S,
    #[local]
    forget: i32,
    #[output]
    y2: S,
    #[output]
    y3: S,
}

impl<S: Scalar> Equations<S> for Plant<S> {
    fn derivatives(&self, t: f64, dx: &mut [S]) {
        dx[0] = (self.a * self.u + self.w * t) * self.x;
    }
    fn outputs(&mut self, t: f64) {
        self.v = (self.a * self.u + self.w * t) * self.x;
        if self.forget == 0 {
            self.y = self.x * self.u;
        }
        self.y2 = self.x + self.u;
        self.y3 = self.x * 3.0;
    }
}

impl Model for Plant {
    const NAME: &'static str = "Plant";
    const DESCRIPTION: &'static str = "";
    const DOCUMENTATION: &'static str = "";
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    fn initialize(&mut self, _t: f64) -> Result<(), Invalid> {
        Ok(())
    }
    type Jets = Plant<Jet<1>>;
}

fn plant(forget: bool) -> Instance<Plant> {
    let logger = Logger::new(None, std::ptr::null_mut(), "t", false);
    let mut p = Instance::<Plant>::new(logger, Interface::CoSimulation);
    p.setup_experiment(None, 0.0, None).unwrap();
    p.set_real(&[1], &[0.5]).unwrap();
    p.enter_initialization_mode();
    p.exit_initialization_mode().unwrap();
    p.model.forget = i32::from(forget);
    p
}

/// The plant in Continuous-Time Mode, u = 0.5.
fn model_exchange() -> Instance<Plant> {
    let logger = Logger::new(None, std::ptr::null_mut(), "t", false);
    let mut p = Instance::<Plant>::new(logger, Interface::ModelExchange);
    p.setup_experiment(None, 0.0, None).unwrap();
    p.set_real(&[U], &[0.5]).unwrap();
    p.enter_initialization_mode();
    p.exit_initialization_mode().unwrap();
    p.enter_continuous_time_mode();
    p
}

const A: u32 = 0;
const U: u32 = 1;
const X: u32 = 2;
const V: u32 = 3;
const Y: u32 = 4;
const W: u32 = 5;
const Y2: u32 = 7;
const Y3: u32 = 8;

/// dv/dx = a u, dv/du = a x, dy/dx = u, dy/du = x: each entry alone, all at once, and the
/// adjoint, from one sweep of each group.
#[test]
fn the_columns_kept_answer_every_call() {
    let mut p = plant(false);
    let (a, u, x) = (2.0, 0.5, p.model.x);
    let mut out = [0.0; 2];
    assert_eq!(
        p.directional_derivative(&[V, Y], &[X], &[1.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out, [a * u, u]);
    assert_eq!(
        p.directional_derivative(&[V, Y], &[U], &[1.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out, [a * x, x]);
    // The rows in another order than the one swept, or from another than the first: each
    // unknown read at its own row.
    assert!(p.directional_at_once(&[Y, V], &[X], &[1.0], &mut out));
    assert_eq!(out, [u, a * u]);
    assert!(p.directional_at_once(&[Y], &[X], &[2.0], &mut out[..1]));
    assert_eq!(out[0], 2.0 * u);
    // Every row (x is an output too), in the order swept and in others.
    let mut rows = [0.0; 5];
    let cases: [&[u32]; 4] = [
        &[V, X, Y, Y2, Y3],
        &[V, X, Y, Y2],
        &[V, X, Y3, Y2],
        &[Y3, Y, Y2, V, X],
    ];
    for unknowns in cases {
        let expected = |vr| {
            [a * u, 1.0, u, 1.0, 3.0][[V, X, Y, Y2, Y3].iter().position(|v| *v == vr).unwrap()]
        };
        let out = &mut rows[..unknowns.len()];
        assert!(p.directional_at_once(unknowns, &[X], &[1.0], out));
        let expected: Vec<f64> = unknowns.iter().map(|vr| expected(*vr)).collect();
        assert_eq!(out, &expected[..], "{unknowns:?}");
    }
    assert_eq!(
        p.directional_derivative(&[V, Y], &[X, U], &[2.0, 3.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out, [2.0 * a * u + 3.0 * a * x, 2.0 * u + 3.0 * x]);
    assert_eq!(
        p.adjoint_derivative(&[V, Y], &[X, U], &[1.0, -1.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out, [a * u - u, a * x - x]);
    // A new point: the columns follow.
    p.set_real(&[U], &[4.0]).unwrap();
    assert_eq!(
        p.directional_derivative(&[V], &[X], &[1.0], &mut out[..1]),
        Ok(OK)
    );
    assert_eq!(out[0], a * 4.0);
}

/// An output the equations forget is not left at its seed: the call returns Discard, naming
/// it; the state derivative, computed, is still answered.
#[test]
fn a_forgotten_unknown_is_named() {
    let mut p = plant(true);
    let mut out = [0.0];
    assert_eq!(
        p.directional_derivative(&[Y], &[X], &[1.0], &mut out),
        Ok(DISCARD)
    );
    let (rows, columns) = p.jacobian.request(&[Y], &[X], false).expect("allowed");
    match p.columns(rows, columns) {
        Err(e) => assert_eq!(e.unknown, Y, "names y"),
        Ok(()) => panic!("a forgotten unknown passed"),
    }
    let mut q = plant(true);
    assert_eq!(
        q.directional_derivative(&[V], &[X], &[1.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out[0], 1.0);
}

/// In Continuous-Time Mode a state set by value reference (fmi2SetReal, FMI 2.0.4 section
/// 3.2.3 condition 5) gives, bit for bit, the derivatives fmi2SetContinuousStates gives, and the
/// Jacobian there; another output is still refused.
#[test]
fn a_state_set_by_value_reference_is_a_state_set() {
    let (mut by_vr, mut by_vector) = (model_exchange(), model_exchange());
    let x = 0.123456789;
    assert_eq!(by_vr.set_real(&[X], &[x]), Ok(OK));
    assert_eq!(by_vector.set_continuous_states(&[x]), Ok(OK));
    let (mut a, mut b) = ([0.0], [0.0]);
    by_vr.get_derivatives(&mut a).unwrap();
    by_vector.get_derivatives(&mut b).unwrap();
    assert_eq!(a[0].to_bits(), b[0].to_bits());
    assert_eq!(
        by_vr.directional_derivative(&[V], &[U], &[1.0], &mut a),
        Ok(OK)
    );
    assert_eq!(a[0], 2.0 * x);
    let refused = by_vr.set_real(&[Y], &[1.0]).unwrap_err();
    assert!(
        refused.contains("y is a continuous output variable and cannot be set"),
        "{refused}"
    );
}

/// Between an integrator's points only the states move (fmi2SetContinuousStates): the calls
/// answered at once, and the full path, follow them; so do they an input set after them.
#[test]
fn the_columns_follow_the_states_alone() {
    let mut p = model_exchange();
    let (a, mut u) = (2.0, 0.5);
    let mut out = [0.0];
    for (i, x) in [0.25, -3.0, 7.5, 7.5, 0.125].into_iter().enumerate() {
        assert_eq!(p.set_continuous_states(&[x]), Ok(OK));
        if i == 3 {
            u = -1.5;
            p.set_real(&[U], &[u]).unwrap();
        }
        assert!(p.directional_at_once(&[V], &[U], &[1.0], &mut out));
        assert_eq!(out[0], a * x, "dv/du at x = {x}, answered at once");
        assert!(p.directional_at_once(&[V], &[X], &[1.0], &mut out));
        assert_eq!(out[0], a * u, "dv/dx at x = {x}, answered at once");
        let mut both = [0.0; 2];
        assert_eq!(
            p.directional_derivative(&[V, Y], &[U], &[1.0], &mut both),
            Ok(OK)
        );
        assert_eq!(both, [a * x, x], "dv/du, dy/du at x = {x}");
    }
}

/// A call answered at once at a point already swept checks the roles as the full path does:
/// a parameter is neither an unknown nor a known, even with a seed of zeros (the full path
/// refuses it); a unit seed over several knowns is its known's column, another seed their sum.
#[test]
fn the_calls_answered_at_once_check_the_roles() {
    let mut p = model_exchange();
    let (a, u, x) = (2.0, 0.5, 1.5);
    let mut out = [0.0];
    assert!(p.directional_at_once(&[V], &[X], &[1.0], &mut out));
    assert_eq!(out[0], a * u);
    assert!(p.directional_at_once(&[V], &[X], &[-4.0], &mut out));
    assert_eq!(out[0], -4.0 * a * u);
    for (unknowns, knowns, seed) in [
        (&[A][..], &[X, U][..], &[0.0, 0.0][..]),
        (&[A], &[X], &[1.0]),
        (&[V], &[A], &[1.0]),
        (&[V], &[X, A], &[1.0, 0.0]),
    ] {
        assert!(!p.directional_at_once(unknowns, knowns, seed, &mut out));
        let refused = p.directional_derivative(unknowns, knowns, seed, &mut out);
        assert!(refused.is_err(), "{unknowns:?} by {knowns:?}: {refused:?}");
    }
    // A seed of zeros: the full path, which checks the unknowns, answers 0.
    assert!(!p.directional_at_once(&[V], &[X, U], &[0.0, 0.0], &mut out));
    assert_eq!(
        p.directional_derivative(&[V], &[X, U], &[0.0, 0.0], &mut out),
        Ok(OK)
    );
    assert_eq!(out[0], 0.0);
    assert!(p.directional_at_once(&[V], &[X, U], &[0.0, 1.0], &mut out));
    assert_eq!(out[0], a * x);
    assert!(p.directional_at_once(&[V], &[X, U], &[2.0, 3.0], &mut out));
    assert_eq!(out[0], 2.0 * a * u + 3.0 * a * x);
}

/// The first call at a point sweeps its first unknown's and known's groups; one whose other
/// variables need more (an output, an input) has those swept too, and one whose first
/// unknown is none is refused, at every new point.
#[test]
fn the_first_call_at_a_point_sweeps_what_it_needs() {
    let mut p = model_exchange();
    let (a, x) = (2.0, 1.5);
    for u in [0.5, 3.0] {
        p.set_real(&[U], &[u]).unwrap();
        let mut out = [0.0; 2];
        assert!(p.directional_at_once(&[V, Y], &[X, U], &[2.0, 3.0], &mut out));
        assert_eq!(out, [2.0 * a * u + 3.0 * a * x, 2.0 * u + 3.0 * x]);
        p.set_real(&[U], &[u + 1.0]).unwrap();
        assert!(!p.directional_at_once(&[A, V], &[X], &[1.0], &mut out));
        assert!(p.directional_at_once(&[Y], &[U], &[1.0], &mut out[..1]));
        assert_eq!(out[0], x);
    }
}

/// A Model Exchange importer sets the time before every evaluation: the columns follow it,
/// answered at once and by the full path (dv/dx = a u + w t).
#[test]
fn the_columns_follow_the_time() {
    let logger = Logger::new(None, std::ptr::null_mut(), "t", false);
    let mut p = Instance::<Plant>::new(logger, Interface::ModelExchange);
    p.setup_experiment(None, 0.0, None).unwrap();
    p.set_real(&[U, W], &[0.5, 0.25]).unwrap();
    p.enter_initialization_mode();
    p.exit_initialization_mode().unwrap();
    p.enter_continuous_time_mode();
    let mut out = [0.0];
    for t in [0.0, 2.0, 2.0, 3.0, 10.0] {
        assert_eq!(p.set_time(t), Ok(OK));
        assert_eq!(p.set_continuous_states(&[1.5]), Ok(OK));
        assert!(p.directional_at_once(&[V], &[X], &[1.0], &mut out));
        assert_eq!(
            out[0],
            2.0 * 0.5 + 0.25 * t,
            "dv/dx at t = {t}, answered at once"
        );
        assert_eq!(p.set_time(t + 0.5), Ok(OK));
        assert_eq!(
            p.directional_derivative(&[V], &[X], &[1.0], &mut out),
            Ok(OK)
        );
        assert_eq!(
            out[0],
            2.0 * 0.5 + 0.25 * (t + 0.5),
            "dv/dx at t = {t} + 0.5"
        );
    }
}

/// The jets' places follow the variable table; a table whose Real variables are out of the
/// lifted model's order (two setters swapped) is named.
#[test]
fn the_jets_follow_the_table() {
    let p = plant(false);
    assert_eq!(
        super::places::places_follow_the_table(&p.model, &p.vars),
        Ok(())
    );
    let mut swapped = <Plant as crate::Variables>::variables();
    let (head, tail) = swapped.split_at_mut(X as usize);
    std::mem::swap(&mut head[U as usize].access, &mut tail[0].access);
    let e = super::places::places_follow_the_table(&p.model, &swapped).unwrap_err();
    assert!(e.contains("is not u"), "{e}");
}
