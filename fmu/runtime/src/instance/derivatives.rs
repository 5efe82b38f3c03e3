//! Exact partial derivatives: FMI 2.0's and FMI 3.0's directional derivatives `J seed` and
//! FMI 3.0's adjoint derivatives `seed^T J`.
//!
//! A model written over the number type gives them from its own equations over jets
//! ([`super::jacobian`]): one sweep at a point gives a group of columns, which answers every
//! call there.
//!
//! Which variables may be unknowns and knowns follows the mode (FMI 2.0 section 2.1.9, FMI 3.0
//! section 2.2.12, FMI 2.0.4 section 2.2.8 for the knowns): in Initialization Mode the initial
//! unknowns with respect to the inputs and the variables with an exact start value
//! (parameters, start values); after it, the Real outputs and the state derivatives with
//! respect to the states and the continuous inputs, where in Continuous-Time Mode the outputs
//! are the continuous ones only (discrete outputs are unknowns in Event Mode and in
//! Co-Simulation, with derivatives 0: they change only at events). Where the model's equations are not defined (states outside its
//! domain) or a derivative is not finite, the call returns Discard, as fmi2GetDerivatives
//! does there.

use super::jacobian::{continuous_unknown, NotFinite, RATES, STATES};
use super::{CallResult, FmiState, Instance};
use crate::lift::Lifted;
use crate::logger::{Category, DISCARD, OK};
use crate::model::Model;
use crate::variables::{Causality, Initial, Variability};
use std::panic::{catch_unwind, AssertUnwindSafe};

impl<M: Model> Instance<M> {
    /// `sensitivity = J seed` after initialization where the call needs no check beyond its
    /// unknowns' and knowns' roles and no log line (calls not logged): swept at the first call
    /// at a point, then read from the columns kept. Whether it answered; if not (a refusal,
    /// Initialization Mode, a derivative not finite here), the call takes the full path
    /// ([`Instance::directional_derivative`]), which says why. What an importer's calls cost
    /// then is about what reading their entries costs. It cannot panic: the reads are checked
    /// without panicking, and a sweep runs inside `catch_unwind`.
    #[inline(always)]
    pub(crate) fn directional_at_once(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> bool {
        if !self.answers_at_once() {
            return false;
        }
        if !self.jacobian.valid && !self.first_sweep(unknowns, knowns) {
            return false;
        }
        self.jacobian.swept(unknowns, knowns, seed, sensitivity)
            || self.directional_first(unknowns, knowns, seed, sensitivity)
    }

    /// `sensitivity = J seed` where the point is already swept ([`super::jacobian::Jacobian::swept`]): reads
    /// alone, no call, so that the C ABI's entry is a leaf and hands anything else on by a
    /// tail call ([`Instance::directional_at_once`]).
    #[inline(always)]
    pub(crate) fn swept_at_once(
        &self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> bool {
        self.answers_at_once() && self.jacobian.swept(unknowns, knowns, seed, sensitivity)
    }

    /// Whether the point was swept (and nothing has moved since).
    #[inline(always)]
    pub(crate) fn swept_here(&self) -> bool {
        self.jacobian.valid
    }

    /// Whether a derivative call may be answered ahead of the call's guard: a lifted model
    /// after initialization, calls not logged.
    #[inline(always)]
    fn answers_at_once(&self) -> bool {
        <M::Jets as Lifted<M>>::LIFTED
            && matches!(
                self.state,
                FmiState::ContinuousTimeMode
                    | FmiState::EventMode
                    | FmiState::StepComplete
                    | FmiState::Terminated
            )
            && !self.logger.enabled(Category::Calls)
    }

    /// The first call at a point, as importers make it: the groups of its first unknown and
    /// first known swept, the other unknowns' and knowns' roles left to the reads that follow
    /// (where they need more, [`Instance::directional_first`] checks them all and sweeps the
    /// rest). False where the sweep failed (the full path says why); true also where the
    /// first unknown or known has no group (the reads then find no point swept).
    #[inline(never)]
    fn first_sweep(&mut self, unknowns: &[u32], knowns: &[u32]) -> bool {
        let Some((rows, columns)) = self.jacobian.groups_of(unknowns, knowns) else {
            return true;
        };
        // The model's equations run here, and might panic: the full path reports it.
        let swept = catch_unwind(AssertUnwindSafe(|| match (rows, columns) {
            (RATES, STATES) => self.rates_by_states(),
            _ => self.columns(rows, columns),
        }));
        matches!(swept, Ok(Ok(())))
    }

    /// [`Instance::directional_at_once`] for the first call at a point, or one that needs
    /// another group swept: out of line, so that the reads keep a small frame.
    #[inline(never)]
    fn directional_first(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> bool {
        // The unknowns after initialization in every mode: Continuous-Time Mode's.
        let Some((rows, columns)) = self.jacobian.request(unknowns, knowns, true) else {
            return false;
        };
        self.jacobian.begin_point();
        if self.jacobian.missing(rows, columns) {
            // The model's equations run here, and might panic: the full path reports it (it
            // panics again there, inside the call's guard).
            let swept = catch_unwind(AssertUnwindSafe(|| self.columns(rows, columns)));
            if !matches!(swept, Ok(Ok(()))) {
                return false;
            }
        }
        self.jacobian.swept(unknowns, knowns, seed, sensitivity)
    }

    /// `sensitivity = J seed`, `seed` by known, `sensitivity` by unknown.
    pub fn directional_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> CallResult {
        if self.state == FmiState::InitializationMode {
            let write = |s: &mut [f64], i: usize, _, v| s[i] = v;
            return self.initially(unknowns, knowns, sensitivity, 1, |_, i| seed[i], write);
        }
        self.answered_by_columns(unknowns, knowns, |j| {
            j.directional(unknowns, knowns, seed, sensitivity)
        })
    }

    /// `sensitivity = seed^T J`, `seed` by unknown, `sensitivity` by known.
    pub fn adjoint_derivative(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        seed: &[f64],
        sensitivity: &mut [f64],
    ) -> CallResult {
        if self.state == FmiState::InitializationMode {
            let unit = |d, i| f64::from(u8::from(d == i));
            let write = |s: &mut [f64], i: usize, d: usize, v: f64| s[d] += seed[i] * v;
            return self.initially(unknowns, knowns, sensitivity, knowns.len(), unit, write);
        }
        self.answered_by_columns(unknowns, knowns, |j| {
            for (k, s) in knowns.iter().zip(sensitivity.iter_mut()) {
                *s = unknowns
                    .iter()
                    .zip(seed)
                    .map(|(u, w)| w * j.entry(*u, *k))
                    .sum();
            }
        })
    }

    /// After initialization: the row and column groups the request needs swept at this point
    /// (once per point, [`Instance::columns`]), then `answer` from the entries kept. It needs
    /// no refresh: the sweep computes every value it reads, and finds where they are not
    /// finite. A request that is not allowed, or a model without jets, is refused naming why.
    #[inline]
    fn answered_by_columns(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        answer: impl FnOnce(&super::jacobian::Jacobian<M>),
    ) -> CallResult {
        let continuous_time = self.state == FmiState::ContinuousTimeMode;
        let request = self.jacobian.request(unknowns, knowns, continuous_time);
        let Some((rows, columns)) = request.filter(|_| <M::Jets as Lifted<M>>::LIFTED) else {
            self.derivative_request(unknowns, knowns)?;
            return Err(format!("{} gives no derivatives here", M::NAME));
        };
        if let Err(e) = self.columns(rows, columns) {
            return Ok(self.not_finite(e));
        }
        answer(&self.jacobian);
        Ok(OK)
    }

    /// In Initialization Mode: the request checked, the values brought up to date, then the
    /// unknowns along `directions` directions of the knowns ([`Instance::initial_sweep`]),
    /// each written into `sensitivity` by `write(sensitivity, unknown, direction, value)`.
    fn initially(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
        sensitivity: &mut [f64],
        directions: usize,
        seed: impl Fn(usize, usize) -> f64,
        write: impl Fn(&mut [f64], usize, usize, f64),
    ) -> CallResult {
        if let Some(status) = self.derivatives_ready(unknowns, knowns)? {
            return Ok(status);
        }
        sensitivity.fill(0.0);
        let swept = self.initial_sweep(unknowns, knowns, directions, seed, |i, d, v| {
            write(sensitivity, i, d, v)
        });
        Ok(swept.map_or_else(|e| self.not_finite(e), |()| OK))
    }

    /// Checks the request and brings the values up to date; `Some(status)` to return at once.
    fn derivatives_ready(
        &mut self,
        unknowns: &[u32],
        knowns: &[u32],
    ) -> Result<Option<crate::logger::Status>, String> {
        self.derivative_request(unknowns, knowns)?;
        self.refresh()?;
        let status = self.defined("the derivatives are");
        Ok((status != OK).then_some(status))
    }

    /// Discard, logged with the unknown whose derivative is not finite here.
    fn not_finite(&self, e: NotFinite) -> crate::logger::Status {
        self.logger.log(
            DISCARD,
            Category::Warning,
            &format!(
                "t = {}: the derivatives of {} are not finite here",
                self.time, self.vars[e.unknown as usize].name
            ),
        );
        DISCARD
    }

    /// Whether these unknowns and knowns may be asked for now; the reason names the variable.
    fn derivative_request(&self, unknowns: &[u32], knowns: &[u32]) -> Result<(), String> {
        if !M::PROVIDES_DERIVATIVES {
            return Err(format!("{} provides no derivatives", M::NAME));
        }
        let initializing = self.state == FmiState::InitializationMode;
        for u in unknowns {
            let v = self.var(*u)?;
            let allowed = if initializing {
                v.is_real() && v.is_initial_unknown(&self.vars)
            } else {
                continuous_unknown(v)
                    || (v.is_real()
                        && v.causality == Causality::Output
                        && self.state != FmiState::ContinuousTimeMode)
            };
            if !allowed {
                return Err(format!(
                    "{} (vr {u}) is no unknown here: {}",
                    v.name,
                    if initializing {
                        "in Initialization Mode, the unknowns are the initial unknowns"
                    } else {
                        "the unknowns are the Real outputs (in Continuous-Time Mode the continuous ones) and the state derivatives"
                    }
                ));
            }
        }
        for k in knowns {
            let v = self.var(*k)?;
            let input = v.is_real()
                && v.causality == Causality::Input
                && v.variability == Variability::Continuous;
            let allowed = if initializing {
                v.is_real() && (input || v.initial == Some(Initial::Exact))
            } else {
                input || v.derivative.is_some()
            };
            if !allowed {
                return Err(format!(
                    "{} (vr {k}) is no known here: {}",
                    v.name,
                    if initializing {
                        "in Initialization Mode, the knowns are the continuous inputs and the variables with an exact start value"
                    } else {
                        "the knowns are the states and the continuous inputs"
                    }
                ));
            }
        }
        Ok(())
    }
}
