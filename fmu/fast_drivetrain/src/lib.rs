//! FastDrivetrain: a motorcycle's internal drivetrain (up to 8 parallel shafts coupled by gear
//! ratios that depend on the selected gear) as the thesis's fast model, two coaxial
//! counter-rotating discs, in a casing whose rotation is an input.
//!
//! Equations, derivation and the shift rule: `documentation.html` next to this file (it ships
//! in the FMU). The model is written once over the number type (`fmu_runtime::lift`): as
//! `FastDrivetrain<f64>` it is the simulation, as `FastDrivetrain<Jet<8>>` the same equations
//! give its Jacobian.

/// `Clone` as a copy, not the field-by-field clone `derive(Clone)` writes for a generic
/// struct: the instance clones the model at every step (field by field, the model and its
/// parts cost 163 instructions more per step).
macro_rules! copied_clone {
    ($t:ident $(: $bound:path)?) => {
        impl<S: Copy $(+ $bound)?> Clone for $t<S> {
            #[inline(always)]
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<S: Copy $(+ $bound)?> Copy for $t<S> {}
    };
}

mod checks;
mod reduction;
mod variables;

use fmu_runtime::{
    export_fmu, Equations, Experiment, Invalid, Jet, Model, Param, Scalar, Variables,
};
use reduction::{GearSet, MassDistribution, Shaft};
use variables::*;

pub const MAX_SHAFTS: usize = 8;
pub const MAX_GEARS: usize = 8;

#[derive(Debug, Variables)]
pub struct FastDrivetrain<S: Scalar = f64> {
    // A Real first: importers' checks read value reference 0 as one.
    #[variables(with = shaft_variables, names = &SHAFT_NAMES, visit = visit_shafts)]
    #[start(engine_shafts())]
    shaft: [Shaft<Param<S>>; MAX_SHAFTS],
    /// rho[g][k]: speed of shaft k over the sprocket shaft's, relative to the casing, in gear g.
    #[variables(with = ratio_variables, names = &RHO_ALL, visit = visit_ratios)]
    #[start(engine_ratios())]
    rho: [[Param<S>; MAX_SHAFTS]; MAX_GEARS],
    #[parameter(
        name = "nShafts",
        start = 4,
        min = 1.0,
        max = 8.0,
        describe = "Number of shafts (1 to 8); entries of higher shafts are ignored"
    )]
    n_shafts: i32,
    #[parameter(
        name = "nGears",
        start = 6,
        min = 1.0,
        max = 8.0,
        describe = "Number of gears (1 to 8); ratios of higher gears are ignored"
    )]
    n_gears: i32,
    #[parameter(
        name = "iCrank",
        start = 1,
        min = 1.0,
        max = 8.0,
        describe = "Which shaft is the crankshaft (engine torque, engine speed)"
    )]
    i_crank: i32,
    #[parameter(
        name = "iSprocket",
        start = 4,
        min = 1.0,
        max = 8.0,
        describe = "Which shaft is the counter shaft carrying the drive sprocket (its ratio is 1 in every gear)"
    )]
    i_sprocket: i32,
    #[parameter(
        unit = "N.m.s/rad",
        min = 0.0,
        describe = "Viscous drag of the whole drivetrain referred to the sprocket shaft: torque -d_spin w_ds against the casing"
    )]
    d_spin: Param<S>,
    #[parameter(
        unit = "rad",
        describe = "Initial sprocket shaft angle relative to the casing"
    )]
    theta_ds_start: Param<S>,
    #[parameter(
        unit = "rad/s",
        describe = "Initial sprocket shaft speed relative to the casing"
    )]
    w_ds_start: Param<S>,
    #[variables(
        initial_depends_on(alpha) = &TRANSVERSE_SUM,
        initial_depends_on(beta) = &SPIN_SUM,
        initial_depends_on(m_disc) = &MASSES,
        initial_depends_on(hx_disc, dJ_zz) = &MASSES_X,
        initial_depends_on(hz_disc, dJ_xx) = &MASSES_Z,
        initial_depends_on(dJ_yy, dJ_xz) = &MASSES_XZ
    )]
    mass: MassDistribution<Param<S>>,
    #[input(
        unit = "N.m",
        describe = "Engine torque on the crankshaft about y, reacting on the casing"
    )]
    tau_eng: S,
    #[input(
        unit = "N.m",
        describe = "External torque on the sprocket shaft about y (the chain's), reacting outside the drivetrain"
    )]
    tau_ext: S,
    #[input(
        name = "omega_x",
        index = 0,
        unit = "rad/s",
        describe = "Casing angular velocity, x component in the casing frame"
    )]
    #[input(
        name = "omega_y",
        index = 1,
        unit = "rad/s",
        describe = "Casing angular velocity, y component (the shafts' axis)"
    )]
    #[input(
        name = "omega_z",
        index = 2,
        unit = "rad/s",
        describe = "Casing angular velocity, z component"
    )]
    omega: [S; 3],
    #[input(
        start = 1,
        min = 1.0,
        max = 8.0,
        describe = "Selected gear, 1 to nGears: a change shifts at the next communication point"
    )]
    gear: i32,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = ["theta_ds_start"], state, angle, from = theta_ds_start, derivative = "w_ds", describe = "Sprocket shaft angle relative to the casing (state)")]
    theta_ds: S,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = ["w_ds_start"], describe = "Sprocket shaft speed relative to the casing")]
    w_ds: S,
    #[output(unit = "N.m.s", depends_on = ["p", "gear"], initial_depends_on = &INITIAL_P, state, derivative = "Q", describe = "Generalized momentum of the spin, gamma omega_y + delta w_ds (state)")]
    p: S,
    #[output(name = "Q", unit = "N.m", depends_on = PITCH, initial_depends_on = &INITIAL_Q, describe = "Generalized force on theta_ds: rho_eng tau_eng + tau_ext - d_spin w_ds")]
    q: S,
    #[output(unit = "J", depends_on = ["energy_damping"], initial_depends_on = [], state, derivative = "P_damping", describe = "Energy dissipated by d_spin since the start (state)")]
    energy_damping: S,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_W_ENG, describe = "Engine speed: crankshaft relative to the casing")]
    w_eng: S,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = &INITIAL_ANGLE, describe = "Disc A angle relative to the casing (continuous through shifts)")]
    theta_a: S,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_SPIN, describe = "Disc A speed relative to the casing, rho_e w_ds")]
    w_a: S,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = &INITIAL_ANGLE, describe = "Disc B angle relative to the casing, -theta_a")]
    theta_b: S,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_SPIN, describe = "Disc B speed relative to the casing, -w_a")]
    w_b: S,
    #[output(name = "M_x", index = 0, unit = "N.m", depends_on = ["p", "omega_z", "gear"], initial_depends_on = &INITIAL_M_X, describe = "Moment of the drivetrain on the casing, x (casing frame), beyond the rigid inertia diag(alpha, J_pitch, alpha) the casing carries: (gamma/delta) p omega_z")]
    #[output(name = "M_y", index = 1, unit = "N.m", depends_on = PITCH, initial_depends_on = &INITIAL_M_Y, describe = "Moment on the casing, y: tau_ext - (gamma/delta) Q (engine and drag reactions, spin acceleration)")]
    #[output(name = "M_z", index = 2, unit = "N.m", depends_on = ["p", "omega_x", "gear"], initial_depends_on = &INITIAL_M_Z, describe = "Moment on the casing, z: -(gamma/delta) p omega_x")]
    moment: [S; 3],
    #[output(name = "E_kin", unit = "J", depends_on = ENERGY, initial_depends_on = &INITIAL_E_KIN, describe = "Rotational kinetic energy of the shafts (spin and casing rotation)")]
    e_kin: S,
    #[output(name = "P_eng", unit = "W", depends_on = ["p", "omega_y", "tau_eng", "gear"], initial_depends_on = &INITIAL_P_ENG, describe = "Engine power, tau_eng w_eng")]
    p_eng: S,
    #[output(name = "P_damping", unit = "W", depends_on = SPIN, initial_depends_on = ["d_spin", "w_ds_start"], describe = "Power dissipated by d_spin, d_spin w_ds^2")]
    p_damping: S,
    #[variables(
        depends_on(gamma, delta, rho_e, rho_eng, lambda, Jxx_a, Jxx_b, Jyy_a, Jyy_b, J_pitch) = SHIFT,
        initial_depends_on(gamma, delta, rho_e, Jyy_a, Jyy_b, J_pitch) = &REDUCTION,
        initial_depends_on(lambda, Jxx_a, Jxx_b) = &TRANSVERSE,
        initial_depends_on(rho_eng) = &ENGINE_RATIO
    )]
    set: GearSet<Param<S>>,
    #[output(start = 1, min = 1.0, max = MAX_GEARS as f64, depends_on = SHIFT, initial_depends_on = SHIFT, describe = "The gear whose ratios are engaged")]
    gear_engaged: i32,
    #[output(min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Number of gear shifts since the start")]
    shift_count: i32,
    #[output(unit = "J", discrete, min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Energy dissipated by the last shift (>= 0)")]
    shift_loss: S,
    #[output(unit = "N.m.s", discrete, depends_on = SHIFT, initial_depends_on = [], describe = "Angular impulse about y the drivetrain gave the casing at the last shift")]
    shift_impulse: S,
    #[output(unit = "J", discrete, min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Energy dissipated by all shifts since the start")]
    energy_shift: S,
    /// The gear of the last shift's start (0: no shift yet).
    #[local(min = 0.0, max = MAX_GEARS as f64)]
    shift_from: i32,
    #[local(
        unit = "s",
        describe = "Time of the last shift; the start time while shift_count = 0 (no shift yet)"
    )]
    shift_time: S,
    #[local]
    theta_a_offset: S,
}

copied_clone!(FastDrivetrain: Scalar);

impl<S: Scalar> FastDrivetrain<S> {
    fn shafts(&self) -> &[Shaft<Param<S>>] {
        &self.shaft[..self.n_shafts as usize]
    }

    /// `gear`'s reduction and engine ratio.
    fn gear_set(&self, gear: i32) -> GearSet<Param<S>> {
        let rho = &self.rho[(gear - 1) as usize];
        GearSet::of(
            self.shafts(),
            &rho[..self.n_shafts as usize],
            &self.mass,
            rho[(self.i_crank - 1) as usize],
        )
    }

    /// Engages `gear`'s ratios (no state change: that is the shift's business).
    fn engage(&mut self, gear: i32) {
        self.set = self.gear_set(gear);
        self.gear_engaged = gear;
    }

    /// The sprocket shaft's speed relative to the casing, from p = gamma omega_y + delta w.
    #[inline(always)]
    fn w(&self) -> S {
        (self.p - self.set.gamma * self.omega[1]) / self.set.delta
    }

    /// The generalized force on theta_ds at spin speed `w`.
    #[inline(always)]
    fn force(&self, w: S) -> S {
        self.set.rho_eng * self.tau_eng + self.tau_ext - self.d_spin * w
    }

    /// The power d_spin dissipates at spin speed `w`.
    #[inline(always)]
    fn damping(&self, w: S) -> S {
        self.d_spin * w * w
    }
}

/// The spin in the engaged gear: a shift is an event, so between events the reduction holds
/// still and only the start moves it with the parameters.
impl<S: Scalar> Equations<S> for FastDrivetrain<S> {
    fn derivatives(&self, _t: f64, dx: &mut [S]) {
        let w = self.w();
        let (s, dx) = (
            FastDrivetrain::STATE,
            &mut dx[..<FastDrivetrain as Variables>::STATES],
        );
        dx[s.theta_ds] = w;
        dx[s.p] = self.force(w);
        dx[s.energy_damping] = self.damping(w);
    }

    fn outputs(&mut self, _t: f64) {
        let [wx, wy, wz] = self.omega;
        let (set, mass) = (&self.set, &self.mass);
        let w = self.w();
        let q = self.force(w);
        let k = set.gamma / set.delta;
        self.w_ds = w;
        self.w_eng = set.rho_eng * w;
        self.q = q;
        self.theta_a = set.rho_e * self.theta_ds + self.theta_a_offset;
        self.theta_b = -self.theta_a;
        self.w_a = set.rho_e * w;
        self.w_b = -self.w_a;
        self.moment = [k * self.p * wz, self.tau_ext - k * q, -k * self.p * wx];
        self.e_kin = (mass.alpha * (wx * wx + wz * wz) + mass.beta * wy * wy) * 0.5
            + set.gamma * wy * w
            + set.delta * 0.5 * w * w;
        self.p_eng = self.tau_eng * self.w_eng;
        self.p_damping = self.damping(w);
    }

    /// The mass distribution and the selected gear's reduction from the shafts and ratios,
    /// the spin momentum p = gamma omega_y + delta w_ds_start, nothing dissipated or shifted.
    fn calculated(&mut self, t: f64) {
        self.mass = MassDistribution::of(self.shafts());
        self.engage(self.gear);
        self.p = self.set.gamma * self.omega[1] + self.set.delta * self.w_ds_start;
        let zero = S::constant(0.0);
        self.energy_damping = zero;
        (self.shift_from, self.shift_count, self.shift_time) = (0, 0, S::constant(t));
        (self.shift_loss, self.shift_impulse, self.energy_shift) = (zero, zero, zero);
        self.theta_a_offset = zero;
    }
}

impl FastDrivetrain {
    /// Plastic re-engagement in the gear input: every shaft keeps its absolute spin Omega_k
    /// through the release, then the new ratios engage with an internal impulse only, so the
    /// momentum projected on them is conserved: p' = sum rho'_k Jyy_k Omega_k.
    fn shift(&mut self, t: f64) {
        let w = self.w();
        let wy = self.omega[1];
        let old = self.rho[(self.gear_engaged - 1) as usize];
        let new = self.rho[(self.gear - 1) as usize];
        let shafts = self.shafts();
        let p_new: f64 = shafts
            .iter()
            .zip(old.iter().zip(&new))
            .map(|(s, (r, r_new))| r_new * s.jyy * (wy + r * w))
            .sum();
        let (gamma_old, rho_e_old) = (self.set.gamma, self.set.rho_e);
        self.shift_from = self.gear_engaged;
        self.engage(self.gear);
        self.p = p_new;
        let w_new = self.w();
        // Omega_k - Omega'_k = rho_k w - rho'_k w'.
        self.shift_loss = 0.5
            * self
                .shafts()
                .iter()
                .zip(old.iter().zip(&new))
                .map(|(s, (r, r_new))| s.jyy * (r * w - r_new * w_new).powi(2))
                .sum::<f64>();
        self.shift_impulse = gamma_old * w - self.set.gamma * w_new;
        self.energy_shift += self.shift_loss;
        self.shift_count += 1;
        self.shift_time = t;
        // Disc A's angle stays continuous; its ratio to the sprocket shaft changed.
        self.theta_a_offset += (rho_e_old - self.set.rho_e) * self.theta_ds;
    }
}

impl Model for FastDrivetrain {
    const NAME: &'static str = "FastDrivetrain";
    const DESCRIPTION: &'static str =
        "Motorcycle internal drivetrain (up to 8 shafts, 8 gears) reduced to two counter-rotating discs: spin, gyroscopic and reaction moments on the casing, energy-consistent gear shifts";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);

    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.check_parameters()?;
        self.check_gear()?;
        self.calculated(t);
        Ok(())
    }

    fn check_inputs(&self) -> Result<(), Invalid> {
        self.check_gear()
    }

    fn event_update(&mut self, t: f64) -> Result<bool, Invalid> {
        if self.gear == self.gear_engaged {
            return Ok(false);
        }
        self.check_gear()?;
        self.shift(t);
        Ok(true)
    }

    fn check_state(&self) -> Result<(), Invalid> {
        self.check_engaged()
    }

    fn describe_event(&self, t: f64) -> Option<String> {
        (self.shift_time == t).then(|| {
            format!(
                "shift from gear {} to {}: spin momentum p = {}, engine speed {} rad/s, {} J dissipated, angular impulse {} N.m.s on the casing",
                self.shift_from,
                self.gear_engaged,
                self.p,
                self.set.rho_eng * self.w(),
                self.shift_loss,
                self.shift_impulse
            )
        })
    }

    /// One lane per state; the five continuous inputs' columns (tau_eng, tau_ext, omega) are
    /// swept apart.
    type Jets = FastDrivetrain<Jet<3>>;
}

export_fmu!(FastDrivetrain);
