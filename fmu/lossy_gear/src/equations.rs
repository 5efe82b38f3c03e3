//! The gear's equations, written once over the number type: as `LossyGear<f64>` they are the
//! simulation, as `LossyGear<Jet<N>>` the same code gives the exact Jacobian. The mode and the
//! loss-table segment are integers, the same in both: they change only at events.

use crate::losses::{interpolate, rolling_torque, Losses, COLUMNS, MAX_ROWS};
use crate::{LossyGear, FORWARD, FREE, STUCK};
use fmu_runtime::{Equations, Param, Scalar, Variables};

/// The gear's motion in the current mode.
pub(crate) struct Motion<S: Scalar> {
    /// Cut torque at flange a (`flange_a.tau`).
    pub t: S,
    /// `tauLoss`, referred to flange a; the constraint loss torque while stuck.
    pub loss: S,
    pub a_b: S,
    pub power_loss: S,
}

impl<S: Scalar> LossyGear<S> {
    /// The loss table's rows in use.
    pub(crate) fn table(&self) -> &[[Param<S>; COLUMNS]] {
        &self.loss_table[..(self.n_rows.clamp(1, MAX_ROWS as i32) as usize)]
    }

    /// Speed of flange a, ratio w_b.
    pub(crate) fn w_a(&self) -> S {
        self.gear.ratio * self.gear.w_b
    }

    /// Inertia reflected to flange b, J_b + ratio^2 J_a.
    fn j_reflected(&self) -> Param<S> {
        let g = &self.gear;
        g.j_b + g.ratio * g.ratio * g.j_a
    }

    /// `sa`: the loss torque that keeps the gear at rest, tau_a + tau_b/ratio.
    pub(crate) fn stuck_loss(&self) -> S {
        let g = &self.gear;
        g.tau_a + g.tau_b / g.ratio
    }

    /// The flange torque, the loss, the acceleration and the dissipated power in the current
    /// mode, on the current loss-table segment while rolling. The stuck case is a few
    /// operations and is decided inline in the caller; rolling is a call (so a stuck gear's
    /// step costs no more than before this was generic).
    #[inline(always)]
    pub(crate) fn motion(&self) -> Motion<S> {
        if self.mode == STUCK {
            let zero = S::constant(0.0);
            return Motion {
                t: self.gear.tau_a,
                loss: self.stuck_loss(),
                a_b: zero,
                power_loss: zero,
            };
        }
        self.rolling()
    }

    /// [`Self::motion`] while rolling (free, forward or backward).
    fn rolling(&self) -> Motion<S> {
        let g = &self.gear;
        let w_a = self.w_a();
        let (t, loss) = if self.mode == FREE {
            rolling_torque(
                &Losses::ideal(),
                1.0,
                g.ratio,
                g.j_a,
                g.j_b,
                g.tau_a,
                g.tau_b,
            )
        } else {
            let losses = interpolate(self.table(), self.segment as usize, w_a.abs());
            let dir = if self.mode == FORWARD { 1.0 } else { -1.0 };
            rolling_torque(&losses, dir, g.ratio, g.j_a, g.j_b, g.tau_a, g.tau_b)
        };
        // Both Newton equations summed, so J_a = 0 or J_b = 0 needs no special case.
        let a_b = (g.tau_b + g.ratio * (g.tau_a - loss)) / self.j_reflected();
        Motion {
            t,
            loss,
            a_b,
            power_loss: loss * w_a,
        }
    }
}

impl<S: Scalar> Equations<S> for LossyGear<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let m = self.motion();
        let (s, dx) = (
            LossyGear::STATE,
            &mut dx[..<LossyGear as Variables>::STATES],
        );
        dx[s.gear.phi_b] = self.gear.w_b;
        dx[s.gear.w_b] = m.a_b;
        dx[s.energy_loss] = m.power_loss;
    }

    fn outputs(&mut self, _t: f64) {
        let m = self.motion();
        let w_a = self.w_a();
        let g = &mut self.gear;
        g.w_a = w_a;
        g.phi_a = g.ratio * g.phi_b;
        g.a_b = m.a_b;
        g.a_a = g.ratio * m.a_b;
        self.tau_mesh = -m.t;
        self.tau_loss = m.loss;
        self.power_loss = m.power_loss;
        // The inner gear's cut torques: t at flange a, -ratio (t - loss) at flange b; the
        // support takes the rest (stuck: -(tau_a + tau_b)).
        self.tau_support = (g.ratio - 1.0) * m.t - g.ratio * m.loss;
    }

    /// The start sets the dissipated energy to 0, whatever its start value.
    fn calculated(&mut self, _t: f64) {
        self.energy_loss = S::constant(0.0);
    }
}
