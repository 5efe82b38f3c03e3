//! Gear with mesh efficiency and bearing friction, with the inertias of both flanges.
//!
//! Semantics of the Modelica Standard Library's LossyGear (3.2 and later) with the corrected
//! driving-side decision of the seed `lossy-gear-driving-side-fix.txt`. Equations, state machine
//! and derivation: `documentation.html` next to this file (it ships in the FMU).

mod losses;

use fmu_runtime::{
    export_fmu, integer, real, Access, Experiment, Indicators, Invalid, Model, Side, Var,
    HYSTERESIS,
};
use losses::{interpolate, rolling_torque, segment_of, Losses, COLUMNS, MAX_ROWS};

pub const FREE: i32 = 2;
pub const FORWARD: i32 = 1;
pub const STUCK: i32 = 0;
pub const BACKWARD: i32 = -1;

#[derive(Debug, Clone)]
pub struct LossyGear {
    // parameters
    ratio: f64,
    j_a: f64,
    j_b: f64,
    phi_b_start: f64,
    w_b_start: f64,
    n_rows: i32,
    loss_table: [[f64; COLUMNS]; MAX_ROWS],
    // inputs
    tau_a: f64,
    tau_b: f64,
    // continuous states
    phi_b: f64,
    w_b: f64,
    energy_loss: f64,
    // discrete states
    mode: i32,
    segment: i32,
    // outputs
    phi_a: f64,
    w_a: f64,
    a_a: f64,
    a_b: f64,
    tau_mesh: f64,
    tau_loss: f64,
    power_loss: f64,
    tau_support: f64,
}

impl Default for LossyGear {
    /// The LossyGearDemo3 case of the seed: it made the classic model fail at t = 0.5 s.
    fn default() -> Self {
        let mut loss_table = [[0.0; COLUMNS]; MAX_ROWS];
        loss_table[0] = [0.0, 0.25, 0.25, 0.625, 2.5];
        LossyGear {
            ratio: 1.0,
            j_a: 0.001,
            j_b: 0.001,
            phi_b_start: 0.0,
            w_b_start: 10.0,
            n_rows: 1,
            loss_table,
            tau_a: 0.0,
            tau_b: 0.0,
            phi_b: 0.0,
            w_b: 0.0,
            energy_loss: 0.0,
            mode: STUCK,
            segment: 0,
            phi_a: 0.0,
            w_a: 0.0,
            a_a: 0.0,
            a_b: 0.0,
            tau_mesh: 0.0,
            tau_loss: 0.0,
            power_loss: 0.0,
            tau_support: 0.0,
        }
    }
}

/// The mechanical state of the gear at one instant.
struct Motion {
    /// Cut torque at flange a (`flange_a.tau`).
    t: f64,
    /// `tauLoss`, referred to flange a; the constraint loss torque while stuck.
    loss: f64,
    a_b: f64,
    power_loss: f64,
}

impl LossyGear {
    fn table(&self) -> &[[f64; COLUMNS]] {
        &self.loss_table[..(self.n_rows.clamp(1, MAX_ROWS as i32) as usize)]
    }

    /// All rows `[w, 1, 1, 0, 0]`: no loss at any speed.
    fn ideal(&self) -> bool {
        self.table()
            .iter()
            .all(|r| r[1] == 1.0 && r[2] == 1.0 && r[3] == 0.0 && r[4] == 0.0)
    }

    fn w_a_of(&self) -> f64 {
        self.ratio * self.w_b
    }

    fn j_reflected(&self) -> f64 {
        self.j_b + self.ratio * self.ratio * self.j_a
    }

    /// `sa`: the loss torque that keeps the gear at rest (tau_a + tau_b/ratio).
    fn stuck_loss(&self) -> f64 {
        self.tau_a + self.tau_b / self.ratio
    }

    /// The friction band at rest, with the zero-speed losses and the flange torque of a stuck
    /// gear (tau_a): `(tauLossMin_m, tauLossMax_p)`. Beyond it the gear breaks away.
    fn band_at_rest(&self) -> (f64, f64) {
        let l0 = interpolate(self.table(), segment_of(self.table(), 0.0), 0.0);
        let margin = 1e-12 * (1.0 + self.stuck_loss().abs());
        (
            l0.loss(self.tau_a, -1.0) - margin,
            l0.loss(self.tau_a, 1.0) + margin,
        )
    }

    /// Motion in mode `mode` with the current states and inputs.
    fn motion(&self, mode: i32) -> Motion {
        let w_a = self.w_a_of();
        let (t, loss) = match mode {
            STUCK => {
                let t = self.tau_a;
                return Motion {
                    t,
                    loss: self.stuck_loss(),
                    a_b: 0.0,
                    power_loss: 0.0,
                };
            }
            FREE => rolling_torque(
                &Losses::IDEAL,
                1.0,
                self.ratio,
                self.j_a,
                self.j_b,
                self.tau_a,
                self.tau_b,
            ),
            _ => {
                let losses = interpolate(self.table(), self.segment as usize, w_a.abs());
                let dir = if mode == FORWARD { 1.0 } else { -1.0 };
                rolling_torque(
                    &losses, dir, self.ratio, self.j_a, self.j_b, self.tau_a, self.tau_b,
                )
            }
        };
        // Both Newton equations summed, so J_a = 0 or J_b = 0 needs no special case.
        let a_b = (self.tau_b + self.ratio * (self.tau_a - loss)) / self.j_reflected();
        Motion {
            t,
            loss,
            a_b,
            power_loss: loss * w_a,
        }
    }
}

/// Access to table cell (I, J), 0-based.
fn cell<const I: usize, const J: usize>() -> Access<LossyGear> {
    Access::Real {
        get: |m| m.loss_table[I][J],
        set: |m, v| m.loss_table[I][J] = v,
    }
}

fn row<const I: usize>() -> [Access<LossyGear>; COLUMNS] {
    [
        cell::<I, 0>(),
        cell::<I, 1>(),
        cell::<I, 2>(),
        cell::<I, 3>(),
        cell::<I, 4>(),
    ]
}

/// The 50 parameters `lossTable[i,j]`: unit, range and meaning per column.
fn table_variables() -> Vec<Var<LossyGear>> {
    let columns: [(Option<&'static str>, f64, Option<f64>, &'static str); COLUMNS] = [
        (
            Some("rad/s"),
            0.0,
            None,
            "Loss table column 1: |w_a|, speed breakpoint (strictly increasing)",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 2: eta_mf1, mesh efficiency when flange a drives, in (0, 1]",
        ),
        (
            None,
            0.0,
            Some(1.0),
            "Loss table column 3: eta_mf2, mesh efficiency when flange b drives, in (0, 1]",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 4: |tau_bf1|, bearing friction (at flange a) when flange a drives",
        ),
        (
            Some("N.m"),
            0.0,
            None,
            "Loss table column 5: |tau_bf2|, bearing friction (at flange a) when flange b drives",
        ),
    ];
    let rows = [
        row::<0>(),
        row::<1>(),
        row::<2>(),
        row::<3>(),
        row::<4>(),
        row::<5>(),
        row::<6>(),
        row::<7>(),
        row::<8>(),
        row::<9>(),
    ];
    let mut vars = Vec::new();
    for (i, accesses) in rows.into_iter().enumerate() {
        for (j, access) in accesses.into_iter().enumerate() {
            let (unit, min, max, description) = columns[j];
            let mut v = Var::parameter(TABLE_NAMES[i][j], access)
                .min(min)
                .describe(description);
            v.unit = unit;
            v.max = max;
            vars.push(v);
        }
    }
    vars
}

const DYNAMIC: &[&str] = &["w_b", "tau_a", "tau_b"];

impl Model for LossyGear {
    const NAME: &'static str = "LossyGear";
    const DESCRIPTION: &'static str =
        "Gear with mesh efficiency and bearing friction (Stuck/Forward/Backward), carrying the inertias of both flanges";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(1.0);
    const STATES: usize = 3;
    const EVENT_INDICATORS: usize = 4;
    const ANGLE_STATES: &'static [usize] = &[0];

    fn variables() -> Vec<Var<Self>> {
        let mut vars = gear_interface::gear_interface!(DYNAMIC, None);
        vars.push(
            Var::parameter("nLossRows", integer!(n_rows))
                .min(1.0)
                .max(MAX_ROWS as f64)
                .describe("Number of rows of lossTable in use (1..10); later rows are ignored"),
        );
        vars.extend(table_variables());
        vars.extend([
            Var::output("tau_mesh", real!(tau_mesh))
                .unit("N.m")
                .describe("Torque the gear exerts on the a-side inertia through flange a; the constraint torque while stuck")
                .depends_on(DYNAMIC),
            Var::output("tau_loss", real!(tau_loss))
                .unit("N.m")
                .describe("Loss torque referred to flange a (tauLoss); while stuck, the torque the friction holds")
                .depends_on(DYNAMIC),
            Var::output("power_loss", real!(power_loss))
                .unit("W")
                .describe("Power dissipated by mesh and bearing losses, tau_loss*w_a (>= 0)")
                .derivative_of("energy_loss")
                .depends_on(DYNAMIC),
            Var::output("energy_loss", real!(energy_loss))
                .unit("J")
                .describe("Energy dissipated since the start: the integral of power_loss (state)")
                .depends_on(&["energy_loss"]),
            Var::output("mode", integer!(mode))
                .describe("2 free (ideal table), 1 forward (w_a > 0), 0 stuck, -1 backward (w_a < 0)")
                .depends_on(DYNAMIC),
            Var::support_torque(real!(tau_support)).depends_on(DYNAMIC),
            Var::local("segment", integer!(segment))
                .describe("Loss-table interval that holds |w_a| (0-based); changes are events"),
        ]);
        vars
    }

    fn initialize(&mut self) -> Result<(), Invalid> {
        gear_interface::reflected_inertia(self.ratio, self.j_a, self.j_b)?;
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
        self.phi_b = self.phi_b_start;
        self.w_b = self.w_b_start;
        self.energy_loss = 0.0;
        let w_a = self.w_a_of();
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

    fn get_states(&self, x: &mut [f64]) {
        x.copy_from_slice(&[self.phi_b, self.w_b, self.energy_loss]);
    }

    fn set_states(&mut self, x: &[f64]) {
        (self.phi_b, self.w_b, self.energy_loss) = (x[0], x[1], x[2]);
    }

    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let m = self.motion(self.mode);
        dx.copy_from_slice(&[self.w_b, m.a_b, m.power_loss]);
    }

    /// Rolling: the speed w_a (on the side of the direction) and the loss table's breakpoints
    /// around |w_a|, so that no step crosses a kink of the losses. Stuck: the torque the
    /// friction holds against the band it can hold. Hysteresis: 1e-12 rad/s and 1e-12 N.m.
    fn event_indicators(&self, _t: f64, z: &mut Indicators) {
        (0..4).for_each(|i| z.unused(i));
        let w_a = self.w_a_of();
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
        let w_a = self.w_a_of();
        match self.mode {
            FORWARD | BACKWARD => {
                let dir = if self.mode == FORWARD { 1.0 } else { -1.0 };
                // Rolling ends where the speed reaches zero; the gear comes to rest at exactly
                // zero speed. At zero speed it keeps rolling only if it accelerates onward.
                let reversed = w_a * dir < 0.0;
                let stops_here = w_a == 0.0 && self.motion(self.mode).a_b * self.ratio * dir <= 0.0;
                if reversed || stops_here {
                    self.w_b = 0.0;
                    self.mode = STUCK;
                    self.segment = segment_of(self.table(), 0.0) as i32;
                    return Ok(true);
                }
                // A breakpoint reached exactly counts as crossed in the direction |w_a| is
                // heading (see Model::event_update); beyond it counts either way.
                let (s, table, speed) = (self.segment as usize, self.table(), w_a.abs());
                let rising = w_a * self.ratio * self.motion(self.mode).a_b > 0.0;
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

    fn update_outputs(&mut self, _t: f64) {
        let m = self.motion(self.mode);
        self.w_a = self.w_a_of();
        self.phi_a = self.ratio * self.phi_b;
        self.a_b = m.a_b;
        self.a_a = self.ratio * m.a_b;
        self.tau_mesh = -m.t;
        self.tau_loss = m.loss;
        self.power_loss = m.power_loss;
        // The inner gear's cut torques: t at flange a, -ratio (t - loss) at flange b; the
        // support takes the rest (stuck: -(tau_a + tau_b)).
        self.tau_support = (self.ratio - 1.0) * m.t - self.ratio * m.loss;
    }
}

/// `lossTable[i,j]` names by 0-based row and column, for error messages.
const TABLE_NAMES: [[&str; COLUMNS]; MAX_ROWS] = {
    macro_rules! row {
        ($n:literal) => {
            [
                concat!("lossTable[", $n, ",1]"),
                concat!("lossTable[", $n, ",2]"),
                concat!("lossTable[", $n, ",3]"),
                concat!("lossTable[", $n, ",4]"),
                concat!("lossTable[", $n, ",5]"),
            ]
        };
    }
    [
        row!("1"),
        row!("2"),
        row!("3"),
        row!("4"),
        row!("5"),
        row!("6"),
        row!("7"),
        row!("8"),
        row!("9"),
        row!("10"),
    ]
};

export_fmu!(LossyGear);
