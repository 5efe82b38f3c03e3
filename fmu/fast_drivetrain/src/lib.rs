//! FastDrivetrain: a motorcycle's internal drivetrain (up to 8 parallel shafts coupled by gear
//! ratios that depend on the selected gear) as the thesis's fast model, two coaxial
//! counter-rotating discs, in a casing whose rotation is an input.
//!
//! Equations, derivation and the shift rule: `documentation.html` next to this file (it ships
//! in the FMU).

mod reduction;

use fmu_runtime::declare::{concat_names, Lens};
use fmu_runtime::{export_fmu, real, Dual, Experiment, Invalid, Model, Scalar, Var, Variables};
use reduction::{Distribution, GearSet, MassDistribution, Reduction, Shaft};

pub const MAX_SHAFTS: usize = 8;
pub const MAX_GEARS: usize = 8;

#[derive(Debug, Clone, Variables)]
pub struct FastDrivetrain {
    // A Real first: importers' checks read value reference 0 as one.
    #[variables(with = shaft_variables, names = &SHAFT_NAMES)]
    #[start(engine_shafts())]
    shaft: [Shaft; MAX_SHAFTS],
    /// rho[g][k]: speed of shaft k over the sprocket shaft's, relative to the casing, in gear g.
    #[variables(with = ratio_variables, names = &RHO_ALL)]
    #[start(engine_ratios())]
    rho: [[f64; MAX_SHAFTS]; MAX_GEARS],
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
    d_spin: f64,
    #[parameter(
        unit = "rad",
        describe = "Initial sprocket shaft angle relative to the casing"
    )]
    theta_ds_start: f64,
    #[parameter(
        unit = "rad/s",
        describe = "Initial sprocket shaft speed relative to the casing"
    )]
    w_ds_start: f64,
    #[variables(
        initial_depends_on(alpha) = &TRANSVERSE_SUM,
        initial_depends_on(beta) = &SPIN_SUM,
        initial_depends_on(m_disc) = &MASSES,
        initial_depends_on(hx_disc, dJ_zz) = &MASSES_X,
        initial_depends_on(hz_disc, dJ_xx) = &MASSES_Z,
        initial_depends_on(dJ_yy, dJ_xz) = &MASSES_XZ
    )]
    mass: MassDistribution,
    #[input(
        unit = "N.m",
        describe = "Engine torque on the crankshaft about y, reacting on the casing"
    )]
    tau_eng: f64,
    #[input(
        unit = "N.m",
        describe = "External torque on the sprocket shaft about y (the chain's), reacting outside the drivetrain"
    )]
    tau_ext: f64,
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
    omega: [f64; 3],
    #[input(
        start = 1,
        min = 1.0,
        max = 8.0,
        describe = "Selected gear, 1 to nGears: a change shifts at the next communication point"
    )]
    gear: i32,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = ["theta_ds_start"], state, angle, from = theta_ds_start, derivative = "w_ds", describe = "Sprocket shaft angle relative to the casing (state)")]
    theta_ds: f64,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = ["w_ds_start"], describe = "Sprocket shaft speed relative to the casing")]
    w_ds: f64,
    #[output(unit = "N.m.s", depends_on = ["p", "gear"], initial_depends_on = &INITIAL_P, state, derivative = "Q", describe = "Generalized momentum of the spin, gamma omega_y + delta w_ds (state)")]
    p: f64,
    #[output(name = "Q", unit = "N.m", depends_on = PITCH, initial_depends_on = &INITIAL_Q, describe = "Generalized force on theta_ds: rho_eng tau_eng + tau_ext - d_spin w_ds")]
    q: f64,
    #[output(unit = "J", depends_on = ["energy_damping"], initial_depends_on = [], state, derivative = "P_damping", describe = "Energy dissipated by d_spin since the start (state)")]
    energy_damping: f64,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_W_ENG, describe = "Engine speed: crankshaft relative to the casing")]
    w_eng: f64,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = &INITIAL_ANGLE, describe = "Disc A angle relative to the casing (continuous through shifts)")]
    theta_a: f64,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_SPIN, describe = "Disc A speed relative to the casing, rho_e w_ds")]
    w_a: f64,
    #[output(unit = "rad", depends_on = ["theta_ds"], initial_depends_on = &INITIAL_ANGLE, describe = "Disc B angle relative to the casing, -theta_a")]
    theta_b: f64,
    #[output(unit = "rad/s", depends_on = SPIN, initial_depends_on = &INITIAL_SPIN, describe = "Disc B speed relative to the casing, -w_a")]
    w_b: f64,
    #[output(name = "M_x", index = 0, unit = "N.m", depends_on = ["p", "omega_z", "gear"], initial_depends_on = &INITIAL_M_X, describe = "Moment of the drivetrain on the casing, x (casing frame), beyond the rigid inertia diag(alpha, J_pitch, alpha) the casing carries: (gamma/delta) p omega_z")]
    #[output(name = "M_y", index = 1, unit = "N.m", depends_on = PITCH, initial_depends_on = &INITIAL_M_Y, describe = "Moment on the casing, y: tau_ext - (gamma/delta) Q (engine and drag reactions, spin acceleration)")]
    #[output(name = "M_z", index = 2, unit = "N.m", depends_on = ["p", "omega_x", "gear"], initial_depends_on = &INITIAL_M_Z, describe = "Moment on the casing, z: -(gamma/delta) p omega_x")]
    moment: [f64; 3],
    #[output(name = "E_kin", unit = "J", depends_on = ENERGY, initial_depends_on = &INITIAL_E_KIN, describe = "Rotational kinetic energy of the shafts (spin and casing rotation)")]
    e_kin: f64,
    #[output(name = "P_eng", unit = "W", depends_on = ["p", "omega_y", "tau_eng", "gear"], initial_depends_on = &INITIAL_P_ENG, describe = "Engine power, tau_eng w_eng")]
    p_eng: f64,
    #[output(name = "P_damping", unit = "W", depends_on = SPIN, initial_depends_on = ["d_spin", "w_ds_start"], describe = "Power dissipated by d_spin, d_spin w_ds^2")]
    p_damping: f64,
    #[variables(
        depends_on(gamma, delta, rho_e, rho_eng, lambda, Jxx_a, Jxx_b, Jyy_a, Jyy_b, J_pitch) = SHIFT,
        initial_depends_on(gamma, delta, rho_e, Jyy_a, Jyy_b, J_pitch) = &REDUCTION,
        initial_depends_on(lambda, Jxx_a, Jxx_b) = &TRANSVERSE,
        initial_depends_on(rho_eng) = &ENGINE_RATIO
    )]
    set: GearSet,
    #[output(start = 1, min = 1.0, max = MAX_GEARS as f64, depends_on = SHIFT, initial_depends_on = SHIFT, describe = "The gear whose ratios are engaged")]
    gear_engaged: i32,
    #[output(min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Number of gear shifts since the start")]
    shift_count: i32,
    #[output(unit = "J", discrete, min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Energy dissipated by the last shift (>= 0)")]
    shift_loss: f64,
    #[output(unit = "N.m.s", discrete, depends_on = SHIFT, initial_depends_on = [], describe = "Angular impulse about y the drivetrain gave the casing at the last shift")]
    shift_impulse: f64,
    #[output(unit = "J", discrete, min = 0.0, depends_on = SHIFT, initial_depends_on = [], describe = "Energy dissipated by all shifts since the start")]
    energy_shift: f64,
    /// The gear of the last shift's start (0: no shift yet).
    #[local(min = 0.0, max = MAX_GEARS as f64)]
    shift_from: i32,
    #[local(
        unit = "s",
        describe = "Time of the last shift; the start time while shift_count = 0 (no shift yet)"
    )]
    shift_time: f64,
    #[local]
    theta_a_offset: f64,
}

/// A 689 cc parallel twin with a balancer shaft and six gears: the ratios are the published
/// primary and gearbox ratios of such an engine (Yamaha MT-07: primary 1.925, gears 2.846 to
/// 0.964); masses, inertias and positions are our estimates for its parts (the thesis gives
/// no numbers). x points forward, z down, in metres from the crankshaft.
const PRIMARY: f64 = 1.925;
const GEARBOX: [f64; 6] = [2.846, 2.125, 1.632, 1.3, 1.091, 0.964];

/// The shafts of that engine: crankshaft, balancer, main shaft, counter shaft.
fn engine_shafts() -> [Shaft; MAX_SHAFTS] {
    let mut shaft = [Shaft::default(); MAX_SHAFTS];
    shaft[0] = Shaft {
        m: 8.0,
        jxx: 0.06,
        jyy: 0.009,
        hx: 0.0,
        hz: 0.0,
    }; // crankshaft, flywheel, alternator rotor
    shaft[1] = Shaft {
        m: 1.8,
        jxx: 0.012,
        jyy: 0.0012,
        hx: 0.08,
        hz: 0.02,
    }; // balancer
    shaft[2] = Shaft {
        m: 3.5,
        jxx: 0.02,
        jyy: 0.0045,
        hx: -0.11,
        hz: -0.06,
    }; // main shaft, clutch
    shaft[3] = Shaft {
        m: 2.8,
        jxx: 0.016,
        jyy: 0.0012,
        hx: -0.2,
        hz: -0.02,
    }; // counter shaft, sprocket
    shaft
}

/// The ratios of its six gears.
fn engine_ratios() -> [[f64; MAX_SHAFTS]; MAX_GEARS] {
    let mut rho = [[0.0; MAX_SHAFTS]; MAX_GEARS];
    for (r, g) in rho.iter_mut().zip(GEARBOX) {
        // One external mesh per stage: the main shaft turns against the counter shaft, the
        // crank against the main shaft, the balancer against the crank.
        *r = [PRIMARY * g, -PRIMARY * g, -g, 1.0, 0.0, 0.0, 0.0, 0.0];
    }
    rho
}

/// `names!("m"; "1", "2")` = `["m[1]", "m[2]"]`.
macro_rules! names {
    ($prefix:literal; $($k:literal),*) => { [$(concat!($prefix, "[", $k, "]")),*] };
}
const M_NAMES: [&str; MAX_SHAFTS] = names!("m"; "1", "2", "3", "4", "5", "6", "7", "8");
const JXX_NAMES: [&str; MAX_SHAFTS] = names!("Jxx"; "1", "2", "3", "4", "5", "6", "7", "8");
const JYY_NAMES: [&str; MAX_SHAFTS] = names!("Jyy"; "1", "2", "3", "4", "5", "6", "7", "8");
const HX_NAMES: [&str; MAX_SHAFTS] = names!("hx"; "1", "2", "3", "4", "5", "6", "7", "8");
const HZ_NAMES: [&str; MAX_SHAFTS] = names!("hz"; "1", "2", "3", "4", "5", "6", "7", "8");
/// RHO_NAMES[g][k] = "rho[g+1,k+1]".
const RHO_NAMES: [[&str; MAX_SHAFTS]; MAX_GEARS] = [
    names!("rho"; "1,1", "1,2", "1,3", "1,4", "1,5", "1,6", "1,7", "1,8"),
    names!("rho"; "2,1", "2,2", "2,3", "2,4", "2,5", "2,6", "2,7", "2,8"),
    names!("rho"; "3,1", "3,2", "3,3", "3,4", "3,5", "3,6", "3,7", "3,8"),
    names!("rho"; "4,1", "4,2", "4,3", "4,4", "4,5", "4,6", "4,7", "4,8"),
    names!("rho"; "5,1", "5,2", "5,3", "5,4", "5,5", "5,6", "5,7", "5,8"),
    names!("rho"; "6,1", "6,2", "6,3", "6,4", "6,5", "6,6", "6,7", "6,8"),
    names!("rho"; "7,1", "7,2", "7,3", "7,4", "7,5", "7,6", "7,7", "7,8"),
    names!("rho"; "8,1", "8,2", "8,3", "8,4", "8,5", "8,6", "8,7", "8,8"),
];

/// The parameters of shaft `$k` (0-based literal, `$n` its 1-based name).
macro_rules! shaft_vars {
    ($v:ident; $($k:literal $n:literal),*) => {$(
        $v.push(Var::parameter(M_NAMES[$k], real!(shaft[$k].m))
            .unit("kg").min(0.0).describe(concat!("Mass of shaft ", $n, " with everything that turns with it")));
        $v.push(Var::parameter(JXX_NAMES[$k], real!(shaft[$k].jxx))
            .unit("kg.m2").min(0.0).describe(concat!("Transverse inertia of shaft ", $n, " about its centre of mass (Jxx = Jzz)")));
        $v.push(Var::parameter(JYY_NAMES[$k], real!(shaft[$k].jyy))
            .unit("kg.m2").min(0.0).describe(concat!("Spin inertia of shaft ", $n, " (about the casing's y axis)")));
        $v.push(Var::parameter(HX_NAMES[$k], real!(shaft[$k].hx))
            .unit("m").describe(concat!("x of shaft ", $n, "'s centre of mass in the casing frame")));
        $v.push(Var::parameter(HZ_NAMES[$k], real!(shaft[$k].hz))
            .unit("m").describe(concat!("z of shaft ", $n, "'s centre of mass in the casing frame")));
    )*};
}

/// The ratios of gear `$g` (0-based literal, `$gn` its 1-based name) for every shaft.
macro_rules! ratio_vars {
    ($v:ident; $g:literal $gn:literal; $($k:literal $n:literal),*) => {$(
        $v.push(Var::parameter(RHO_NAMES[$g][$k], real!(rho[$g][$k]))
            .describe(concat!("Speed of shaft ", $n, " over the sprocket shaft's (signed, relative to the casing) in gear ", $gn)));
    )*};
}

macro_rules! gear_ratio_vars {
    ($v:ident; $($g:literal $gn:literal),*) => {$(
        ratio_vars!($v; $g $gn; 0 "1", 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 "8");
    )*};
}

/// The names `shaft_variables` declares.
const SHAFT_NAMES: [&str; 5 * MAX_SHAFTS] =
    concat_names(&[&M_NAMES, &JXX_NAMES, &JYY_NAMES, &HX_NAMES, &HZ_NAMES]);

/// The parameters of every shaft, shaft by shaft.
fn shaft_variables<L: Lens<Inner = FastDrivetrain>>(v: &mut Vec<Var<L::Outer>>) {
    shaft_vars!(v; 0 "1", 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 "8");
}

/// The ratios of every gear, gear by gear.
fn ratio_variables<L: Lens<Inner = FastDrivetrain>>(v: &mut Vec<Var<L::Outer>>) {
    gear_ratio_vars!(v; 0 "1", 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 "8");
}

// A change of `gear` shifts in the event iteration, which moves the momentum p and the ratios:
// whatever follows p or the ratios follows `gear` in Event Mode.
const SPIN: &[&str] = &["p", "omega_y", "gear"];
const PITCH: &[&str] = &["p", "omega_y", "tau_eng", "tau_ext", "gear"];
const ENERGY: &[&str] = &["p", "omega_x", "omega_y", "omega_z", "gear"];
const SHIFT: &[&str] = &["gear"];

// At the start: the selected gear's ratios (any gear can be selected, any shaft can be the
// crankshaft) reduce the shafts in use to the discs. iSprocket and nGears only decide which
// values are valid.
const RHO_ALL: [&str; MAX_SHAFTS * MAX_GEARS] = concat_names(&[
    &RHO_NAMES[0],
    &RHO_NAMES[1],
    &RHO_NAMES[2],
    &RHO_NAMES[3],
    &RHO_NAMES[4],
    &RHO_NAMES[5],
    &RHO_NAMES[6],
    &RHO_NAMES[7],
]);
/// The discs' spin inertias and ratios: every Jyy and ratio.
const REDUCTION: [&str; 74] = concat_names(&[&JYY_NAMES, &RHO_ALL, &["nShafts", "gear"]]);
/// And the discs' transverse inertias.
const TRANSVERSE: [&str; 82] = concat_names(&[&REDUCTION, &JXX_NAMES]);
const ENGINE_RATIO: [&str; 66] = concat_names(&[&RHO_ALL, &["iCrank", "gear"]]);
const INITIAL_W_ENG: [&str; 67] = concat_names(&[&ENGINE_RATIO, &["w_ds_start"]]);
const INITIAL_P_ENG: [&str; 68] = concat_names(&[&INITIAL_W_ENG, &["tau_eng"]]);
const INITIAL_Q: [&str; 70] = concat_names(&[&INITIAL_W_ENG, &["tau_eng", "tau_ext", "d_spin"]]);
const INITIAL_ANGLE: [&str; 75] = concat_names(&[&REDUCTION, &["theta_ds_start"]]);
const INITIAL_SPIN: [&str; 75] = concat_names(&[&REDUCTION, &["w_ds_start"]]);
const INITIAL_P: [&str; 76] = concat_names(&[&INITIAL_SPIN, &["omega_y"]]);
const INITIAL_M_X: [&str; 77] = concat_names(&[&INITIAL_P, &["omega_z"]]);
// At the start w_ds is w_ds_start itself, so M_y does not follow omega_y through p.
const INITIAL_M_Y: [&str; 79] =
    concat_names(&[&INITIAL_SPIN, &["iCrank", "tau_eng", "tau_ext", "d_spin"]]);
const INITIAL_M_Z: [&str; 77] = concat_names(&[&INITIAL_P, &["omega_x"]]);
const INITIAL_E_KIN: [&str; 86] = concat_names(&[&INITIAL_P, &JXX_NAMES, &["omega_x", "omega_z"]]);
const MASSES: [&str; 9] = concat_names(&[&M_NAMES, &["nShafts"]]);
const TRANSVERSE_SUM: [&str; 9] = concat_names(&[&JXX_NAMES, &["nShafts"]]);
const SPIN_SUM: [&str; 9] = concat_names(&[&JYY_NAMES, &["nShafts"]]);
const MASSES_X: [&str; 17] = concat_names(&[&MASSES, &HX_NAMES]);
const MASSES_Z: [&str; 17] = concat_names(&[&MASSES, &HZ_NAMES]);
const MASSES_XZ: [&str; 25] = concat_names(&[&MASSES_X, &HZ_NAMES]);

/// What the spin's equations read, in the number type of the equations (`f64` for the
/// simulation, [`Dual`] for its exact derivatives): the engaged gear's reduction, the mass
/// sums, the drag, the spin momentum, the torques and the casing's rotation.
struct Spin<S> {
    gamma: S,
    delta: S,
    rho_e: S,
    rho_eng: S,
    alpha: S,
    beta: S,
    d_spin: S,
    p: S,
    tau_eng: S,
    tau_ext: S,
    omega: [S; 3],
}

/// The outputs the spin gives.
struct Outputs<S> {
    w_ds: S,
    w_eng: S,
    theta_a: S,
    w_a: S,
    q: S,
    moment: [S; 3],
    e_kin: S,
    p_eng: S,
    p_damping: S,
}

impl<S: Scalar> Spin<S> {
    /// The sprocket shaft's speed relative to the casing, from p = gamma omega_y + delta w.
    #[inline(always)]
    fn w(&self) -> S {
        (self.p - self.gamma * self.omega[1]) / self.delta
    }

    /// The generalized force on theta_ds at spin speed `w`.
    #[inline(always)]
    fn force(&self, w: S) -> S {
        self.rho_eng * self.tau_eng + self.tau_ext - self.d_spin * w
    }

    /// The power d_spin dissipates at spin speed `w`.
    #[inline(always)]
    fn damping(&self, w: S) -> S {
        self.d_spin * w * w
    }

    fn outputs(&self, theta_ds: S, theta_a_offset: f64) -> Outputs<S> {
        let [wx, wy, wz] = self.omega;
        let w = self.w();
        let w_eng = self.rho_eng * w;
        let q = self.force(w);
        let k = self.gamma / self.delta;
        Outputs {
            w_ds: w,
            w_eng,
            theta_a: self.rho_e * theta_ds + theta_a_offset,
            w_a: self.rho_e * w,
            q,
            moment: [k * self.p * wz, self.tau_ext - k * q, -k * self.p * wx],
            e_kin: (self.alpha * (wx * wx + wz * wz) + self.beta * wy * wy) * 0.5
                + self.gamma * wy * w
                + self.delta * 0.5 * w * w,
            p_eng: self.tau_eng * w_eng,
            p_damping: self.damping(w),
        }
    }
}

impl FastDrivetrain {
    fn shafts(&self) -> &[Shaft] {
        &self.shaft[..self.n_shafts as usize]
    }

    fn gear_set(&self, gear: i32) -> GearSet {
        let g = (gear - 1) as usize;
        GearSet::of(
            self.shafts(),
            &self.rho[g][..self.n_shafts as usize],
            &self.mass,
        )
    }

    /// Engages `gear`'s ratios (no state change: that is the shift's business).
    fn engage(&mut self, gear: i32) {
        self.set = self.gear_set(gear);
        self.set.rho_eng = self.rho[(gear - 1) as usize][(self.i_crank - 1) as usize];
        self.gear_engaged = gear;
    }

    /// The spin's knowns in the engaged gear.
    #[inline(always)]
    fn spinning(&self) -> Spin<f64> {
        let (set, mass) = (&self.set, &self.mass);
        Spin {
            gamma: set.gamma,
            delta: set.delta,
            rho_e: set.rho_e,
            rho_eng: set.rho_eng,
            alpha: mass.alpha,
            beta: mass.beta,
            d_spin: self.d_spin,
            p: self.p,
            tau_eng: self.tau_eng,
            tau_ext: self.tau_ext,
            omega: self.omega,
        }
    }

    /// The sprocket shaft's speed relative to the casing, from the spin momentum.
    fn spin(&self) -> f64 {
        self.spinning().w()
    }

    /// The mass distribution, the engaged gear's reduction and its engine ratio, moving as
    /// `seed`'s fields say (in Initialization Mode the shafts' parameters and ratios are
    /// knowns; after it they hold still).
    fn moving(&self, seed: &Self) -> (Distribution<Dual>, Reduction<Dual>, Dual) {
        let dual = Dual::seeded;
        let n = self.n_shafts as usize;
        let shafts = self.shaft[..n]
            .iter()
            .zip(&seed.shaft)
            .map(|(s, d)| s.along(d));
        let g = (self.gear_engaged - 1) as usize;
        let rho: [Dual; MAX_SHAFTS] = std::array::from_fn(|k| dual(self.rho[g][k], seed.rho[g][k]));
        let mass = Distribution::of(shafts.clone());
        let set = Reduction::of(shafts, &rho[..n], mass.alpha, mass.beta);
        (mass, set, rho[(self.i_crank - 1) as usize])
    }

    /// The outputs' and state derivatives' tangent with the spin momentum `p`; the moving
    /// mass distribution, reduction and engine ratio.
    fn tangent_with(
        &self,
        seed: &Self,
        tangent: &mut Self,
        p: Dual,
    ) -> (Distribution<Dual>, Reduction<Dual>, Dual) {
        let dual = Dual::seeded;
        let (mass, set, rho_eng) = self.moving(seed);
        let k = Spin {
            gamma: set.gamma,
            delta: set.delta,
            rho_e: set.rho_e,
            rho_eng,
            alpha: mass.alpha,
            beta: mass.beta,
            d_spin: dual(self.d_spin, seed.d_spin),
            p,
            tau_eng: dual(self.tau_eng, seed.tau_eng),
            tau_ext: dual(self.tau_ext, seed.tau_ext),
            omega: std::array::from_fn(|i| dual(self.omega[i], seed.omega[i])),
        };
        let o = k.outputs(dual(self.theta_ds, seed.theta_ds), self.theta_a_offset);
        let t = tangent;
        (t.w_ds, t.w_eng, t.q) = (o.w_ds.eps, o.w_eng.eps, o.q.eps);
        (t.theta_a, t.theta_b) = (o.theta_a.eps, -o.theta_a.eps);
        (t.w_a, t.w_b) = (o.w_a.eps, -o.w_a.eps);
        t.moment = o.moment.map(|m| m.eps);
        (t.e_kin, t.p_eng, t.p_damping) = (o.e_kin.eps, o.p_eng.eps, o.p_damping.eps);
        (mass, set, rho_eng)
    }

    // The indices name the variable in the refusal, not only the entry.
    #[allow(clippy::needless_range_loop)]
    fn check_parameters(&self) -> Result<(), Invalid> {
        let count = |name, n: i32, max: usize| {
            if n < 1 || n as usize > max {
                Err(Invalid::new(
                    name,
                    f64::from(n),
                    format!("must be 1 to {max}"),
                ))
            } else {
                Ok(())
            }
        };
        count("nShafts", self.n_shafts, MAX_SHAFTS)?;
        count("nGears", self.n_gears, MAX_GEARS)?;
        let n = self.n_shafts as usize;
        count("iCrank", self.i_crank, n)?;
        count("iSprocket", self.i_sprocket, n)?;
        for (k, s) in self.shafts().iter().enumerate() {
            for (name, x) in [
                (M_NAMES[k], s.m),
                (JXX_NAMES[k], s.jxx),
                (JYY_NAMES[k], s.jyy),
            ] {
                if !(x.is_finite() && x >= 0.0) {
                    return Err(Invalid::new(name, x, "must be zero or positive"));
                }
            }
            // A solid of revolution obeys the triangle inequality Jyy <= Jxx + Jzz = 2 Jxx; the
            // discs' inertias are valid only if the shafts' are.
            if s.jyy > 2.0 * s.jxx * (1.0 + 1e-12) {
                return Err(Invalid::new(
                    JYY_NAMES[k],
                    s.jyy,
                    format!(
                        "exceeds 2 Jxx[{}] = {}: no solid of revolution has a spin inertia above the sum of its transverse ones",
                        k + 1,
                        2.0 * s.jxx
                    ),
                ));
            }
        }
        if self.mass.beta <= 0.0 {
            return Err(Invalid::new(
                JYY_NAMES[0],
                self.shaft[0].jyy,
                "no shaft has a spin inertia: sum Jyy must be positive",
            ));
        }
        if !(self.d_spin.is_finite() && self.d_spin >= 0.0) {
            return Err(Invalid::new(
                "d_spin",
                self.d_spin,
                "must be zero or positive",
            ));
        }
        let s = (self.i_sprocket - 1) as usize;
        for g in 0..self.n_gears as usize {
            for k in 0..n {
                let r = self.rho[g][k];
                if !(r.is_finite() && r != 0.0) {
                    return Err(Invalid::new(
                        RHO_NAMES[g][k],
                        r,
                        "must be a finite, nonzero speed ratio (a shaft that does not turn with the sprocket shaft belongs to the casing)",
                    ));
                }
            }
            if self.rho[g][s] != 1.0 {
                return Err(Invalid::new(
                    RHO_NAMES[g][s],
                    self.rho[g][s],
                    format!(
                        "must be 1: shaft {} is the sprocket shaft (iSprocket)",
                        s + 1
                    ),
                ));
            }
            let set = self.gear_set(g as i32 + 1);
            // All shafts at one speed: disc B would have no spin inertia and the gear is a
            // single rigid body, which nShafts = 1 describes.
            if n > 1 && set.spread <= 1e-12 * self.mass.beta * set.delta {
                return Err(Invalid::new(
                    RHO_NAMES[g][0],
                    self.rho[g][0],
                    format!(
                        "in gear {}, every shaft with spin inertia turns at one speed: beta delta - gamma^2 = {} makes the fast model degenerate (disc B without spin inertia); model one rigid shaft with nShafts = 1",
                        g + 1,
                        set.spread
                    ),
                ));
            }
        }
        Ok(())
    }

    fn check_gear(&self) -> Result<(), Invalid> {
        if self.gear < 1 || self.gear > self.n_gears {
            return Err(Invalid::new(
                "gear",
                f64::from(self.gear),
                format!("this drivetrain has gears 1 to nGears = {}", self.n_gears),
            ));
        }
        Ok(())
    }

    /// Plastic re-engagement in the gear input: every shaft keeps its absolute spin Omega_k
    /// through the release, then the new ratios engage with an internal impulse only, so the
    /// momentum projected on them is conserved: p' = sum rho'_k Jyy_k Omega_k.
    fn shift(&mut self, t: f64) {
        let w = self.spin();
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
        let w_new = self.spin();
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

impl fmu_runtime::Equations<f64> for FastDrivetrain {
    fn derivatives(&self, _t: f64, dx: &mut [f64]) {
        let k = self.spinning();
        let w = k.w();
        let (s, dx) = (Self::STATE, &mut dx[..Self::STATES]);
        dx[s.theta_ds] = w;
        dx[s.p] = k.force(w);
        dx[s.energy_damping] = k.damping(w);
    }
    fn outputs(&mut self, _t: f64) {
        let o = self.spinning().outputs(self.theta_ds, self.theta_a_offset);
        (self.w_ds, self.w_eng, self.q) = (o.w_ds, o.w_eng, o.q);
        (self.theta_a, self.theta_b) = (o.theta_a, -o.theta_a);
        (self.w_a, self.w_b) = (o.w_a, -o.w_a);
        self.moment = o.moment;
        (self.e_kin, self.p_eng, self.p_damping) = (o.e_kin, o.p_eng, o.p_damping);
    }
}

impl Model for FastDrivetrain {
    const NAME: &'static str = "FastDrivetrain";
    const DESCRIPTION: &'static str =
        "Motorcycle internal drivetrain (up to 8 shafts, 8 gears) reduced to two counter-rotating discs: spin, gyroscopic and reaction moments on the casing, energy-consistent gear shifts";
    const DOCUMENTATION: &'static str = include_str!("../documentation.html");
    const DEFAULT_EXPERIMENT: Experiment = Experiment::until(2.0);

    // The shaft and ratio macros push one variable per index.
    #[allow(clippy::vec_init_then_push)]
    fn initialize(&mut self, t: f64) -> Result<(), Invalid> {
        self.mass = MassDistribution::of(&self.shaft[..self.n_shafts.clamp(1, 8) as usize]);
        self.check_parameters()?;
        self.check_gear()?;
        self.engage(self.gear);
        self.p = self.set.gamma * self.omega[1] + self.set.delta * self.w_ds_start;
        self.energy_damping = 0.0;
        (self.shift_from, self.shift_count, self.shift_time) = (0, 0, t);
        (self.shift_loss, self.shift_impulse, self.energy_shift) = (0.0, 0.0, 0.0);
        self.theta_a_offset = 0.0;
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

    /// The engaged gear and the last shift's are gears of this drivetrain, and the disc
    /// reduction it holds is the engaged gear's.
    fn check_state(&self) -> Result<(), Invalid> {
        for (name, gear, least) in [
            ("gear_engaged", self.gear_engaged, 1),
            ("shift_from", self.shift_from, 0),
        ] {
            if gear < least || gear > self.n_gears {
                return Err(Invalid::new(
                    name,
                    f64::from(gear),
                    format!("this drivetrain has gears 1 to nGears = {}", self.n_gears),
                ));
            }
        }
        let mut engaged = self.clone();
        engaged.engage(self.gear_engaged);
        engaged.set.spread = self.set.spread;
        if engaged.set != self.set {
            return Err(Invalid::new(
                "gamma",
                self.set.gamma,
                format!(
                    "the disc reduction it holds is not gear {}'s (gamma {})",
                    self.gear_engaged, engaged.set.gamma
                ),
            ));
        }
        Ok(())
    }

    fn describe_event(&self, t: f64) -> Option<String> {
        (self.shift_time == t).then(|| {
            format!(
                "shift from gear {} to {}: spin momentum p = {}, engine speed {} rad/s, {} J dissipated, angular impulse {} N.m.s on the casing",
                self.shift_from,
                self.gear_engaged,
                self.p,
                self.set.rho_eng * self.spin(),
                self.shift_loss,
                self.shift_impulse
            )
        })
    }

    type Jets = fmu_runtime::Unlifted;

    const PROVIDES_DERIVATIVES: bool = true;

    /// The same equations in dual numbers, in the engaged gear (a shift is an event).
    fn tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        self.tangent_with(seed, tangent, Dual::seeded(self.p, seed.p));
    }

    /// At the start the spin momentum is p = gamma omega_y + delta w_ds_start, and the mass
    /// distribution and the engaged gear's reduction move with the shafts' parameters and
    /// ratios.
    fn initial_tangent(&self, _t: f64, seed: &Self, tangent: &mut Self) {
        let (_, set, _) = self.moving(seed);
        let dual = Dual::seeded;
        let p = set.gamma * dual(self.omega[1], seed.omega[1])
            + set.delta * dual(self.w_ds_start, seed.w_ds_start);
        let (mass, set, rho_eng) = self.tangent_with(seed, tangent, p);
        tangent.p = p.eps;
        tangent.mass = MassDistribution::with(mass, |x| x.eps);
        tangent.set = GearSet::with(set, rho_eng.eps, |x| x.eps);
    }
}

export_fmu!(FastDrivetrain);
