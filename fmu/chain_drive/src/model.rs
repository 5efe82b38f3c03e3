//! The simulation's side of the drive: the checks, the state derivatives, the chain's events
//! and mode changes (impacts included), in f64.

use crate::half_bike::{BOTH, FREE, LOWER, UPPER};
use crate::{ChainDrive, FULL, INEXTENSIBLE, QSS};
use fmu_runtime::{Equations, Experiment, Indicators, Invalid, Jet, Model, Side, HYSTERESIS};

/// A decay rate above which the full model is integrated with BDF (1/s).
const STIFF_RATE: f64 = 1e5;

impl ChainDrive {
    /// Sprockets that overlap at swing-arm angle `th` (named `variable`): the chain cannot wrap.
    fn overlap(&self, variable: &'static str, th: f64) -> Invalid {
        let l = &self.bike.layout;
        Invalid::new(
            variable,
            th,
            format!(
                "the sprockets overlap there: their centres are {} m apart, less than r_ds + r_ws = {} m (l_sa = {}, ds_x = {}, ds_z = {}), so the chain cannot wrap",
                l.clearance(th) + l.r_ds + l.r_ws,
                l.r_ds + l.r_ws,
                l.l_sa,
                l.ds_x,
                l.ds_z
            ),
        )
    }
}

impl Model for ChainDrive {
    const NAME: &'static str = "ChainDrive";
    const DESCRIPTION: &'static str = "Planar half-bike with a drive chain (full elastic, quasi-steady-state or inextensible chain model): engine and load torques and a brake in, motion, chain tensions and energies out";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);
    const EVENT_INDICATORS: usize = 3;

    fn stiff(&self) -> bool {
        self.chain_model == FULL && self.bike.bike().chain_rate(self.q[1]) > STIFF_RATE
    }

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.bike.check()?;
        if !(FULL..=INEXTENSIBLE).contains(&self.chain_model) {
            return Err(Invalid::new(
                "chain_model",
                f64::from(self.chain_model),
                "must be 1 (full elastic), 2 (quasi-steady-state) or 3 (inextensible)",
            ));
        }
        let th = self.theta_sa_start;
        if !th.is_finite() {
            return Err(Invalid::new(
                "theta_sa_start",
                th,
                "must be a finite number",
            ));
        }
        if !self.bike.layout.wraps(th) {
            return Err(self.overlap("theta_sa_start", th));
        }
        self.calculated(t);
        self.impact_count = 0;
        self.mode = match self.chain_model {
            FULL => FREE,
            _ => UPPER,
        };
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        if self.c_brake < 0.0 {
            return Err(Invalid::new(
                "c_brake",
                self.c_brake,
                "must be >= 0: a brake cannot drive the wheel",
            ));
        }
        Ok(())
    }

    /// Full chain: per run, min(e, e + c/k de/dt), positive exactly while it pulls, on the
    /// side of the run's mode. QSS: the signed tension T_u - T_l, on the side of the taut run.
    /// Inextensible, taut: the taut run's tension (positive) and the other run's extension
    /// (negative); slack: both extensions (negative). Hysteresis 1e-9 N on tensions (1e-12 of
    /// a kilonewton, their size), and on lengths the extension of a run pulling 1e-9 N
    /// (1e-14 m at the default stiffness), so that a run taut just inside the hysteresis pushes
    /// no more than that. The third, in every model, is the sprockets' clearance: the swing arm
    /// reaching a pose where they overlap ends the run there with that reason.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        use Side::{Negative, Positive};
        const TENSION: f64 = 1e3 * HYSTERESIS;
        let length = TENSION / self.bike.k;
        // The full model's indicators need no dynamics; the QSS model solves its swing-arm
        // angle, and the inextensible one its tension, in the motion.
        let (th_sa, g) = match self.chain_model {
            QSS | INEXTENSIBLE => {
                let m = self.motion();
                (m.q[1], m.indicators)
            }
            _ => (
                self.q[1],
                self.bike
                    .bike()
                    .full_indicators(self.q, self.w, self.lengths()),
            ),
        };
        let layout = &self.bike.layout;
        let size = layout.r_ds + layout.r_ws;
        z.set(2, layout.clearance(th_sa), Positive, HYSTERESIS * size);
        let taut = |run| Side::of(self.mode == run || self.mode == BOTH);
        let sides = match (self.chain_model, self.mode) {
            (QSS, mode) => [(Side::of(mode == UPPER), TENSION), (Positive, TENSION)],
            (INEXTENSIBLE, UPPER | LOWER) => [(Positive, TENSION), (Negative, length)],
            (INEXTENSIBLE, _) => [(Negative, length), (Negative, length)],
            _ => [(taut(UPPER), length), (taut(LOWER), length)],
        };
        for (i, (g, (side, h))) in g.into_iter().zip(sides).enumerate() {
            z.set(i, g, side, h);
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        let th = self.motion().q[1];
        if !self.bike.layout.wraps(th) {
            return Err(self.overlap("theta_sa", th));
        }
        let (b, u, rest) = (self.bike.bike(), self.inputs(), self.lengths());
        let change = match self.chain_model {
            QSS => b.qss_switch(self.q, self.w, u, self.mode),
            INEXTENSIBLE => b.inextensible_switch(self.q, self.w, u, rest, self.mode)?,
            _ => b.full_switch(self.q, self.w, u, rest, self.mode),
        };
        let Some(s) = change else {
            return Ok(false);
        };
        self.mode = s.mode;
        self.q = s.q;
        self.w = s.w;
        if let Some(lost) = s.impact {
            self.energy_impact += lost;
            self.energy_dissipated += lost;
            self.impact_count += 1;
        }
        Ok(true)
    }

    /// Both runs taut only in the full model; impacts only in the inextensible one.
    fn check_state(&self) -> Result<(), Invalid> {
        if self.mode == BOTH && self.chain_model != FULL {
            return Err(Invalid::new(
                "chain_mode",
                f64::from(self.mode),
                format!(
                    "both runs taut (2) happens in the full model (chain_model 1), not in chain_model {}",
                    self.chain_model
                ),
            ));
        }
        if self.chain_model != INEXTENSIBLE {
            for (name, value) in [
                ("impact_count", f64::from(self.impact_count)),
                ("energy_impact", self.energy_impact),
            ] {
                if value != 0.0 {
                    return Err(Invalid::new(
                        name,
                        value,
                        format!(
                            "only the inextensible chain (chain_model 3) has impacts, not chain_model {}",
                            self.chain_model
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    fn describe_event(&self, _t: f64) -> Option<String> {
        let run = match self.mode {
            UPPER => "upper run taut",
            LOWER => "lower run taut",
            FREE => "chain slack",
            _ => "both runs taut",
        };
        Some(
            if self.chain_model == INEXTENSIBLE && self.impact_count > 0 {
                format!(
                    "{run} (impacts {}, energy lost in them {:.6e} J)",
                    self.impact_count, self.energy_impact
                )
            } else {
                run.to_string()
            },
        )
    }

    /// One lane per state; the three continuous inputs' columns are swept apart.
    type Jets = ChainDrive<Jet<7>>;
}
