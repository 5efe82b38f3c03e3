//! Gear with mesh efficiency and bearing friction, with the inertias of both flanges.
//!
//! Semantics of the Modelica Standard Library's LossyGear (3.2 and later) with the corrected
//! driving-side decision of the seed `lossy-gear-driving-side-fix.txt`. Equations, state machine
//! and derivation: `documentation.html` next to this file (it ships in the FMU).
//!
//! Here: the declarations and the state machine (modes, loss-table segments, events), in f64.
//! The equations, over the number type: `equations.rs`; the loss table's parameters:
//! `table.rs`; the losses at one speed: `losses.rs`.

mod equations;
mod losses;
mod table;

use fmu_runtime::declare::concat_names;
use fmu_runtime::{
    export_fmu, Equations, Experiment, Indicators, Invalid, Jet, Model, Param, Scalar, Side,
    Variables, HYSTERESIS,
};
use gear_interface::GearInterface;
use losses::{interpolate, segment_of, COLUMNS, MAX_ROWS};
use table::{demo_table, table_variables, visit_table, TABLE_ALL, TABLE_NAMES};

pub const FREE: i32 = 2;
pub const FORWARD: i32 = 1;
pub const STUCK: i32 = 0;
pub const BACKWARD: i32 = -1;

const DYNAMIC: &[&str] = &["w_b", "tau_a", "tau_b"];
/// At the start: the torques, inertias and speed through the whole loss table (the start speed
/// can fall in any row); not the start angle.
const INITIAL: [&str; 57] = concat_names(&[
    &[
        "ratio",
        "J_a",
        "J_b",
        "w_b_start",
        "tau_a",
        "tau_b",
        "nLossRows",
    ],
    &TABLE_ALL,
]);

/// The start values are the LossyGearDemo3 case of the seed: it made the classic model fail at
/// t = 0.5 s. Generic over the number type of its Real fields (see `fmu_runtime::lift`).
#[derive(Debug, Clone, Variables)]
pub struct LossyGear<S: Scalar = f64> {
    #[variables(depends_on(a_a, a_b) = DYNAMIC, initial_depends_on(a_a, a_b) = &INITIAL)]
    #[start(GearInterface::with_parameters(1.0, 0.001, 0.001, 0.0, 10.0))]
    gear: GearInterface<S>,
    #[parameter(name = "nLossRows", start = 1, min = 1.0, max = MAX_ROWS as f64,
                describe = "Number of rows of lossTable in use (1..10); later rows are ignored")]
    n_rows: i32,
    #[variables(with = table_variables, names = &TABLE_ALL, visit = visit_table)]
    #[start(demo_table())]
    loss_table: [[Param<S>; COLUMNS]; MAX_ROWS],
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Torque the gear exerts on the a-side inertia through flange a; the constraint torque while stuck")]
    tau_mesh: S,
    #[output(unit = "N.m", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Loss torque referred to flange a (tauLoss); while stuck, the torque the friction holds")]
    tau_loss: S,
    #[output(unit = "W", depends_on = DYNAMIC, initial_depends_on = &INITIAL,
             describe = "Power dissipated by mesh and bearing losses, tau_loss*w_a (>= 0)")]
    power_loss: S,
    #[output(unit = "J", depends_on = ["energy_loss"], initial_depends_on = [], state, derivative = "power_loss",
             describe = "Energy dissipated since the start: the integral of power_loss (state)")]
    energy_loss: S,
    #[output(start = STUCK, min = BACKWARD as f64, max = FREE as f64, depends_on = [], initial_depends_on = ["ratio", "w_b_start"],
             describe = "2 free (ideal table), 1 forward (w_a > 0), 0 stuck, -1 backward (w_a < 0)")]
    mode: i32,
    #[support_torque(depends_on = DYNAMIC, initial_depends_on = &INITIAL)]
    tau_support: S,
    #[local(min = 0.0, max = (MAX_ROWS - 2) as f64, describe = "Loss-table interval that holds |w_a| (0-based): between rows segment and segment + 1; changes are events")]
    segment: i32,
}

/// What the state machine reads besides the equations, in f64.
impl LossyGear {
    /// All rows `[w, 1, 1, 0, 0]`: no loss at any speed.
    fn ideal(&self) -> bool {
        self.table()
            .iter()
            .all(|r| r[1] == 1.0 && r[2] == 1.0 && r[3] == 0.0 && r[4] == 0.0)
    }

    /// The friction band at rest, with the zero-speed losses and the flange torque of a stuck
    /// gear (tau_a): `(tauLossMin_m, tauLossMax_p)`. Beyond it the gear breaks away.
    fn band_at_rest(&self) -> (f64, f64) {
        let l0 = interpolate(self.table(), segment_of(self.table(), 0.0), 0.0);
        let margin = 1e-12 * (1.0 + self.stuck_loss().abs());
        (
            l0.loss(self.gear.tau_a, -1.0) - margin,
            l0.loss(self.gear.tau_a, 1.0) + margin,
        )
    }
}

impl Model for LossyGear {
    const NAME: &'static str = "LossyGear";
    const DESCRIPTION: &'static str =
        "Gear with mesh efficiency and bearing friction (Stuck/Forward/Backward), carrying the inertias of both flanges";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const EVENT_INDICATORS: usize = 4;

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.gear.reflected_inertia()?;
        if !(1..=MAX_ROWS as i32).contains(&self.n_rows) {
            return Err(Invalid::new(
                "nLossRows",
                f64::from(self.n_rows),
                "must be in 1..10",
            ));
        }
        if let Err((i, j, reason)) = losses::check_table(self.table()) {
            return Err(Invalid::new(
                TABLE_NAMES[i][j],
                self.loss_table[i][j],
                reason,
            ));
        }
        self.calculated(t);
        let w_a = self.w_a();
        self.segment = segment_of(self.table(), w_a.abs()) as i32;
        // The classic initial() rule: moving means rolling in that direction, rest means
        // stuck; the event iteration that follows decides a breakaway at rest.
        self.mode = if self.ideal() {
            FREE
        } else if w_a > 0.0 {
            FORWARD
        } else if w_a < 0.0 {
            BACKWARD
        } else {
            STUCK
        };
        Ok(())
    }

    /// Rolling: the speed w_a (on the side of the direction) and the loss table's breakpoints
    /// around |w_a|, so that no step crosses a kink of the losses. Stuck: the torque the
    /// friction holds against the band it can hold. Hysteresis: 1e-12 rad/s and 1e-12 N.m.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        (0..4).for_each(|i| z.unused(i));
        let w_a = self.w_a();
        match self.mode {
            FORWARD | BACKWARD => {
                z.set(0, w_a, Side::of(self.mode == FORWARD), HYSTERESIS);
                let (s, table) = (self.segment as usize, self.table());
                if s > 0 {
                    z.set(2, w_a.abs() - table[s][0], Side::Positive, HYSTERESIS);
                }
                if s + 2 < table.len() {
                    z.set(3, table[s + 1][0] - w_a.abs(), Side::Positive, HYSTERESIS);
                }
            }
            STUCK => {
                let (min, max) = self.band_at_rest();
                let sa = self.stuck_loss();
                z.set(0, sa - max, Side::Negative, HYSTERESIS);
                z.set(1, sa - min, Side::Positive, HYSTERESIS);
            }
            _ => {}
        }
    }

    fn event_update(&mut self, _t: f64) -> Result<bool, Invalid> {
        if self.ideal() {
            let changed = self.mode != FREE;
            self.mode = FREE;
            return Ok(changed);
        }
        let w_a = self.w_a();
        match self.mode {
            FORWARD | BACKWARD => {
                let dir = if self.mode == FORWARD { 1.0 } else { -1.0 };
                // Rolling ends where the speed reaches zero; the gear comes to rest at exactly
                // zero speed. At zero speed it keeps rolling only if it accelerates onward.
                let reversed = w_a * dir < 0.0;
                let stops_here = w_a == 0.0 && self.motion().a_b * self.gear.ratio * dir <= 0.0;
                if reversed || stops_here {
                    self.gear.w_b = 0.0;
                    self.mode = STUCK;
                    self.segment = segment_of(self.table(), 0.0) as i32;
                    return Ok(true);
                }
                // A breakpoint reached exactly counts as crossed in the direction |w_a| is
                // heading (see Model::event_update); beyond it counts either way.
                let (s, table, speed) = (self.segment as usize, self.table(), w_a.abs());
                let rising = w_a * self.gear.ratio * self.motion().a_b > 0.0;
                let below = s > 0 && (speed < table[s][0] || (speed == table[s][0] && !rising));
                let above = s + 2 < table.len()
                    && (speed > table[s + 1][0] || (speed == table[s + 1][0] && rising));
                if below || above {
                    self.segment += if below { -1 } else { 1 };
                    return Ok(true);
                }
            }
            STUCK => {
                // Both directions are looked at, with the losses at w = 0+ and w = 0-.
                let (min, max) = self.band_at_rest();
                let sa = self.stuck_loss();
                // The band carries a margin, so reaching its edge exactly already means a
                // (tiny) acceleration onward: zero counts as crossed.
                if sa >= max || sa <= min {
                    self.mode = if sa >= max { FORWARD } else { BACKWARD };
                    self.segment = segment_of(self.table(), 0.0) as i32;
                    return Ok(true);
                }
            }
            _ => {
                // A table that stopped being ideal cannot happen (parameters are fixed), but
                // decide as at initialization rather than stay Free.
                self.mode = if w_a > 0.0 {
                    FORWARD
                } else if w_a < 0.0 {
                    BACKWARD
                } else {
                    STUCK
                };
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The segment lies between two rows in use; the gear is free exactly when the table is
    /// ideal, and stuck only at rest.
    fn check_state(&self) -> Result<(), Invalid> {
        let last = (self.table().len().max(2) - 2) as i32;
        if self.segment > last {
            return Err(Invalid::new(
                "segment",
                f64::from(self.segment),
                format!(
                    "the loss table's {} rows in use have segments 0 to {last}",
                    self.n_rows
                ),
            ));
        }
        if (self.mode == FREE) != self.ideal() {
            let reason = if self.ideal() {
                "the loss table is ideal: the gear is free (2)"
            } else {
                "free (2) needs an ideal loss table"
            };
            return Err(Invalid::new("mode", f64::from(self.mode), reason));
        }
        if self.mode == STUCK && self.gear.w_b != 0.0 {
            return Err(Invalid::new(
                "w_b",
                self.gear.w_b,
                "the gear is stuck (mode 0): it does not turn",
            ));
        }
        Ok(())
    }

    /// One lane per state; the two continuous inputs' columns are swept apart.
    type Jets = LossyGear<Jet<3>>;
}

export_fmu!(LossyGear);

#[cfg(test)]
mod tests {
    use super::*;

    /// n rows in use have the n - 1 segments 0 to n - 2 between them: a state (restored, say)
    /// in a segment past them, which would interpolate beyond the table, is refused naming
    /// `segment`; every segment up to the last is accepted.
    #[test]
    fn a_segment_past_the_rows_in_use_is_refused() {
        for n_rows in 2..=6 {
            for segment in 0..=n_rows - 1 {
                let gear = LossyGear {
                    n_rows,
                    segment,
                    ..LossyGear::default()
                };
                let result = gear.check_state();
                if segment <= n_rows - 2 {
                    assert!(
                        result.is_ok(),
                        "{n_rows} rows, segment {segment}: {result:?}"
                    );
                } else {
                    let error = format!("{:?}", result.expect_err("refused"));
                    assert!(error.contains("segment"), "{error}");
                }
            }
        }
    }

    /// A gear with a three-row table: breakpoints at 0, 5 and 10 rad/s.
    fn three_rows() -> LossyGear {
        let mut gear = LossyGear {
            n_rows: 3,
            ..LossyGear::default()
        };
        gear.loss_table[..3].copy_from_slice(&[
            [0.0, 0.9, 0.9, 0.1, 0.1],
            [5.0, 0.8, 0.8, 0.2, 0.2],
            [10.0, 0.7, 0.7, 0.3, 0.3],
        ]);
        gear
    }

    /// The classic initial() rule: moving means rolling that way, rest means stuck.
    #[test]
    fn it_starts_rolling_the_way_it_moves_and_stuck_at_rest() {
        for (w_b, mode) in [(1.0, FORWARD), (-1.0, BACKWARD), (0.0, STUCK)] {
            let mut gear = three_rows();
            gear.gear.w_b = w_b;
            gear.initialize(0.0).expect("valid");
            assert_eq!(gear.mode, mode, "w_b {w_b}");
        }
    }

    /// Rolling forward exactly at the 5 rad/s breakpoint, the segment is the one the speed is
    /// heading into: below it when slowing down, above it (unchanged, 1) when speeding up.
    #[test]
    fn at_a_breakpoint_the_segment_follows_the_speed() {
        for (tau_a, segment) in [(-1.0, 0), (1.0, 1)] {
            let mut gear = three_rows();
            gear.gear.w_b = 5.0;
            gear.gear.tau_a = tau_a;
            // Heavy: slow accelerations (|a| << 5 rad/s^2), so speed and acceleration differ.
            (gear.gear.j_a, gear.gear.j_b) = (100.0, 100.0);
            gear.mode = FORWARD;
            gear.segment = 1;
            gear.event_update(0.0).expect("valid");
            assert_eq!(gear.segment, segment, "tau_a {tau_a}");
        }
    }
}
