//! The drive's equations, written once over the number type: as `f64` they are the
//! simulation, over jets its Jacobian (one sweep for every state and input; in Initialization
//! Mode the start's pose, rest lengths and calculated parameters move with the parameters too).

use crate::half_bike::{Inputs, Motion, Rest};
use crate::{ChainDrive, INEXTENSIBLE, QSS};
use fmu_runtime::{Equations, Param, Scalar, Variables};

impl<S: Scalar> ChainDrive<S> {
    pub(crate) fn inputs(&self) -> Inputs<S> {
        Inputs {
            tau_eng: self.tau_eng,
            tau_load: self.tau_load,
            c_brake: self.c_brake,
        }
    }

    pub(crate) fn lengths(&self) -> Rest<S> {
        Rest {
            l_u0: self.l_u0,
            l_l0: self.l_l0,
        }
    }

    /// The motion at this instant under the selected chain model, in the mode the drive is in
    /// (a known's move does not change it: the event iteration does).
    pub(crate) fn motion(&self) -> Motion<S> {
        let (b, u, rest) = (self.bike.bike(), self.inputs(), self.lengths());
        let (q, w) = (self.q, self.w);
        match self.chain_model {
            QSS => b.qss(q, w, u, rest, self.mode),
            INEXTENSIBLE => b.inextensible(q, w, u, rest, self.mode),
            _ => b.full(q, w, u, rest, self.mode),
        }
    }
}

impl<S: Scalar> Equations<S> for ChainDrive<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let m = self.motion();
        let (s, dx) = (
            ChainDrive::STATE,
            &mut dx[..<ChainDrive as Variables>::STATES],
        );
        for (angle, speed) in [s.theta_ds, s.theta_sa, s.theta_rw]
            .into_iter()
            .zip(m.speeds)
        {
            dx[angle] = speed;
        }
        for (speed, acceleration) in [s.w_ds, s.w_sa, s.w_rw].into_iter().zip(m.dw) {
            dx[speed] = acceleration;
        }
        dx[s.energy_dissipated] = m.power_dissipated;
    }

    fn outputs(&mut self, _t: f64) {
        let m = self.motion();
        // The QSS model's swing arm and sprocket, and a taut inextensible chain's sprocket, are
        // algebraic: their values follow from the states and inputs, and never feed back.
        let o = self.bike.bike().outputs(&m, self.g_sa);
        self.q = m.q;
        self.w = m.speeds;
        self.a = m.dw;
        (self.theta_wheel, self.w_wheel) = (o.theta_wheel, o.w_wheel);
        (self.t_u, self.t_l, self.e_u, self.e_l) = (m.t_u, m.t_l, m.e_u, m.e_l);
        self.tau_chain_ds = o.tau_chain_ds;
        self.tau_chain_rw = o.tau_chain_rw;
        self.tau_chain_sa = o.tau_chain_sa;
        self.energy_kinetic = o.energy_kinetic;
        self.energy_gravity = o.energy_gravity;
        self.energy_suspension = o.energy_suspension;
        self.energy_chain = m.energy_chain;
        self.power_dissipated = m.power_dissipated;
        // The impacts' energy changes at events only: between them it moves with no known.
        self.energy_impact = S::constant(self.energy_impact.value());
    }

    /// `I_sa` and `G_sa`; the start (`Bike::start`): the swing arm at `theta_sa_start` and at
    /// rest relative to the wheel, the sprocket turning with the wheel through the chain, the
    /// upper run just taut (`L_upper_0` its length) and the slack all in the lower run; no
    /// energy dissipated yet.
    fn calculated(&mut self, _t: f64) {
        let b = self.bike.bike();
        self.i_sa = b.i_sa();
        self.g_sa = b.g_sa();
        let start = self
            .bike
            .bike_over::<Param<S>>()
            .start(self.theta_sa_start, self.w_rw_start);
        (self.q, self.w) = (start.q.map(S::param), start.w.map(S::param));
        (self.l_u0, self.l_l0) = (start.l_u0, start.l_l0);
        let zero = S::constant(0.0);
        (self.energy_dissipated, self.energy_impact) = (zero, zero);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FREE, UPPER};
    use fmu_runtime::lift::Lifted;
    use fmu_runtime::{Jet, Model, Moving};

    /// The full chain starts untensioned: `calculated` gives `L_upper_0` the upper run's length
    /// at the start pose by the same code that `outputs` measures it with, so its extension is
    /// 0 with every derivative by the parameters. Slack at the start, its tension and the
    /// chain's torques are 0 with every derivative. Taut (the event iteration's choice when the
    /// engine pulls), the tension is `c_chain` times the run's rate, the rounding of the
    /// cancelling terms `r_ds rho w_rw - r_ws w_rw`, and its derivatives are that rounding's.
    #[test]
    fn the_full_chain_starts_untensioned() {
        for mode in [FREE, UPPER] {
            let mut m = ChainDrive::default();
            (m.bike.c, m.w_rw_start, m.tau_eng) = (40.0, 5.0, 60.0);
            m.initialize(0.0).unwrap();
            m.mode = mode;
            let mut j = ChainDrive::<Jet<10, Moving>>::lift(&m);
            let b = &mut j.bike;
            for (i, x) in [
                &mut b.c,
                &mut b.k,
                &mut b.slack,
                &mut b.layout.r_ds,
                &mut b.layout.r_ws,
                &mut b.layout.l_sa,
                &mut b.layout.ds_x,
                &mut j.w_rw_start,
                &mut j.theta_sa_start,
                &mut j.tau_eng,
            ]
            .into_iter()
            .enumerate()
            {
                x.eps[i] = 1.0;
            }
            j.start_states();
            j.calculated(0.0);
            j.outputs(0.0);
            assert_eq!((j.e_u.re, j.e_u.eps), (0.0, [0.0; 10]), "mode {mode}");
            for (name, x) in [
                ("T_upper", j.t_u),
                ("tau_chain_ds", j.tau_chain_ds),
                ("tau_chain_rw", j.tau_chain_rw),
                ("tau_chain_sa", j.tau_chain_sa),
            ] {
                let largest = x.eps.iter().fold(x.re.abs(), |a, e| a.max(e.abs()));
                let bound = if mode == FREE { 0.0 } else { 1e-14 };
                assert!(largest <= bound, "mode {mode}: {name} {x:?}");
            }
        }
    }
}
