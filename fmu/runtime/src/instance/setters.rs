//! What the set calls and the step's output check need of the variable table, packed so that
//! a master's calls at every communication point touch a few bytes per variable, not whole
//! declarations, and call no getter. The reasons for a refusal still come from the declarations
//! (`Instance::refusal`); this only answers "accepted" quickly.

use crate::declare::Variables;
use crate::variables::{Access, Causality, Phase, Var};

/// A variable as a set call sees it.
pub(crate) struct Setter<M> {
    pub(crate) access: Access<M>,
    /// The declared range, or the largest finite numbers: a value passes when it lies inside,
    /// which refuses NaN and the infinities with the same two comparisons.
    min: f64,
    max: f64,
    /// Whether it may be set in each [`Phase`], by the phase's index.
    settable: [bool; 3],
    /// An input: in Continuous-Time Mode its value moves the input's motion; a state's does not.
    pub(crate) input: bool,
}

impl<M> Setter<M> {
    fn of(v: &Var<M>) -> Self {
        Setter {
            access: v.access.clone(),
            min: v.min.unwrap_or(f64::MIN),
            max: v.max.unwrap_or(f64::MAX),
            settable: PHASES.map(|p| v.settable(p)),
            input: v.causality == Causality::Input,
        }
    }

    /// Whether `value` may be written now, without saying why not.
    #[inline(always)]
    pub(crate) fn accepts(&self, value: f64, real: bool, phase: Phase) -> bool {
        matches!(self.access, Access::Real { .. }) == real
            && self.settable[phase as usize]
            && value >= self.min
            && value <= self.max
    }
}

const PHASES: [Phase; 3] = [
    Phase::Initialization,
    Phase::Stepping,
    Phase::ContinuousTime,
];

/// The table, by value reference.
pub(crate) fn setters<M>(vars: &[Var<M>]) -> Vec<Setter<M>> {
    vars.iter().map(Setter::of).collect()
}

/// How a step checks that every Real output is finite.
pub(crate) enum OutputCheck<M> {
    /// The derive's sum over the output fields ([`Variables::output_zeros`]), confirmed
    /// against the variable table.
    Fields,
    /// The getters of the Real outputs, for a model whose sum does not match its table.
    Getters(Vec<fn(&M) -> f64>),
}

impl<M: Variables + Clone> OutputCheck<M> {
    pub(crate) fn new(vars: &[Var<M>]) -> Self {
        let getters: Vec<fn(&M) -> f64> = vars
            .iter()
            .filter(|v| v.causality == Causality::Output)
            .filter_map(|v| match v.access {
                Access::Real { get, .. } => Some(get),
                _ => None,
            })
            .collect();
        if Self::fields_match(vars) {
            OutputCheck::Fields
        } else {
            OutputCheck::Getters(getters)
        }
    }

    /// Whether the sum sees a NaN in each Real output, and in nothing else.
    fn fields_match(vars: &[Var<M>]) -> bool {
        let model = M::default();
        model.output_zeros() == 0.0
            && vars.iter().all(|v| match v.access {
                Access::Real { set, .. } => {
                    let mut probe = model.clone();
                    set(&mut probe, f64::NAN);
                    probe.output_zeros().is_nan() == (v.causality == Causality::Output)
                }
                Access::Integer { .. } => true,
            })
    }

    /// Whether every Real output of `model` is finite: `x * 0` is 0 for a finite `x` and NaN
    /// otherwise, so one sum tells, with no branch per output.
    #[inline]
    pub(crate) fn all_finite(&self, model: &M) -> bool {
        match self {
            OutputCheck::Fields => model.output_zeros() == 0.0,
            OutputCheck::Getters(getters) => {
                getters.iter().fold(0.0, |sum, get| sum + get(model) * 0.0) == 0.0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OutputCheck;
    use crate::declare::{Lens, Variables};
    use crate::variables::{Access, Var};

    /// An output `y` and a parameter `p`; `RIGHT`: whether its sum covers the output (else the
    /// parameter, as a derive that went wrong would).
    #[derive(Default, Clone)]
    struct Probe<const RIGHT: bool> {
        y: f64,
        p: f64,
    }

    impl<const RIGHT: bool> Variables for Probe<RIGHT> {
        const STATES: usize = 0;
        const ANGLES: u64 = 0;
        type StateIndex = ();
        fn declare<L: Lens<Inner = Self>>(_: &mut Vec<Var<L::Outer>>) {}
        fn get_states(&self, _: &mut [f64]) {}
        fn set_states(&mut self, _: &[f64]) {}
        fn start_states(&mut self) {}
        fn output_zeros(&self) -> f64 {
            if RIGHT {
                self.y * 0.0
            } else {
                self.p * 0.0
            }
        }
    }

    fn table<const RIGHT: bool>() -> Vec<Var<Probe<RIGHT>>> {
        vec![
            Var::output(
                "y",
                Access::Real {
                    get: |m: &Probe<RIGHT>| m.y,
                    set: |m, v| m.y = v,
                },
            ),
            Var::parameter(
                "p",
                Access::Real {
                    get: |m: &Probe<RIGHT>| m.p,
                    set: |m, v| m.p = v,
                },
            ),
        ]
    }

    /// Both ways of checking tell a NaN or an infinity in the output, and nothing else.
    #[test]
    fn the_output_check_tells_any_nan_or_infinity_in_an_output_and_nothing_else() {
        fn judge<const RIGHT: bool>(check: OutputCheck<Probe<RIGHT>>) {
            // A value that overflows a plain sum is still finite.
            let mut m = Probe::<RIGHT> {
                y: f64::MAX,
                p: f64::NAN,
            };
            assert!(check.all_finite(&m));
            for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                m.y = bad;
                assert!(!check.all_finite(&m), "{bad}");
            }
        }
        let right = OutputCheck::new(&table::<true>());
        assert!(matches!(right, OutputCheck::Fields));
        judge(right);
        // A sum that does not match the table is not trusted.
        let wrong = OutputCheck::new(&table::<false>());
        assert!(matches!(wrong, OutputCheck::Getters(_)));
        judge(wrong);
    }
}
