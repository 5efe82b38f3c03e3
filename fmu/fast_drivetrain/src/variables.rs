//! What the model declares beyond its fields' own attributes: the families of shaft parameters
//! and ratios (their names, declarations and the visitors that find them in a lifted model),
//! the dependency lists, and the default engine.

use crate::reduction::Shaft;
use crate::{FastDrivetrain, MAX_GEARS, MAX_SHAFTS};
use fmu_runtime::declare::{concat_names, Lens};
use fmu_runtime::{real, Param, Scalar, Var};

/// A 689 cc parallel twin with a balancer shaft and six gears: the ratios are the published
/// primary and gearbox ratios of such an engine (Yamaha MT-07: primary 1.925, gears 2.846 to
/// 0.964); masses, inertias and positions are our estimates for its parts (the thesis gives
/// no numbers). x points forward, z down, in metres from the crankshaft.
const PRIMARY: f64 = 1.925;
const GEARBOX: [f64; 6] = [2.846, 2.125, 1.632, 1.3, 1.091, 0.964];

/// The shafts of that engine: crankshaft, balancer, main shaft, counter shaft.
pub(crate) fn engine_shafts() -> [Shaft; MAX_SHAFTS] {
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
pub(crate) fn engine_ratios() -> [[f64; MAX_SHAFTS]; MAX_GEARS] {
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
pub(crate) const M_NAMES: [&str; MAX_SHAFTS] = names!("m"; "1", "2", "3", "4", "5", "6", "7", "8");
pub(crate) const JXX_NAMES: [&str; MAX_SHAFTS] =
    names!("Jxx"; "1", "2", "3", "4", "5", "6", "7", "8");
pub(crate) const JYY_NAMES: [&str; MAX_SHAFTS] =
    names!("Jyy"; "1", "2", "3", "4", "5", "6", "7", "8");
pub(crate) const HX_NAMES: [&str; MAX_SHAFTS] =
    names!("hx"; "1", "2", "3", "4", "5", "6", "7", "8");
pub(crate) const HZ_NAMES: [&str; MAX_SHAFTS] =
    names!("hz"; "1", "2", "3", "4", "5", "6", "7", "8");
/// RHO_NAMES[g][k] = "rho[g+1,k+1]".
pub(crate) const RHO_NAMES: [[&str; MAX_SHAFTS]; MAX_GEARS] = [
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
pub(crate) const SHAFT_NAMES: [&str; 5 * MAX_SHAFTS] =
    concat_names(&[&M_NAMES, &JXX_NAMES, &JYY_NAMES, &HX_NAMES, &HZ_NAMES]);

/// The parameters of every shaft, shaft by shaft.
pub(crate) fn shaft_variables<L: Lens<Inner = FastDrivetrain>>(v: &mut Vec<Var<L::Outer>>) {
    shaft_vars!(v; 0 "1", 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 "8");
}

/// The ratios of every gear, gear by gear.
pub(crate) fn ratio_variables<L: Lens<Inner = FastDrivetrain>>(v: &mut Vec<Var<L::Outer>>) {
    gear_ratio_vars!(v; 0 "1", 1 "2", 2 "3", 3 "4", 4 "5", 5 "6", 6 "7", 7 "8");
}

/// The Real variables `shaft_variables` declares, in its order, in a lifted model.
pub(crate) fn visit_shafts<D: Scalar>(
    shaft: &mut [Shaft<Param<D>>; MAX_SHAFTS],
    f: &mut dyn FnMut(Option<&mut D>),
) {
    for s in shaft {
        fmu_runtime::lift::Lifted::<Shaft>::visit(s, &mut |j| f(j.and_then(D::param_mut)));
    }
}

/// The Real variables `ratio_variables` declares, in its order, in a lifted model.
pub(crate) fn visit_ratios<D: Scalar>(
    rho: &mut [[Param<D>; MAX_SHAFTS]; MAX_GEARS],
    f: &mut dyn FnMut(Option<&mut D>),
) {
    for x in rho.iter_mut().flatten() {
        f(D::param_mut(x));
    }
}

// A change of `gear` shifts in the event iteration, which moves the momentum p and the ratios:
// whatever follows p or the ratios follows `gear` in Event Mode.
pub(crate) const SPIN: &[&str] = &["p", "omega_y", "gear"];
pub(crate) const PITCH: &[&str] = &["p", "omega_y", "tau_eng", "tau_ext", "gear"];
pub(crate) const ENERGY: &[&str] = &["p", "omega_x", "omega_y", "omega_z", "gear"];
pub(crate) const SHIFT: &[&str] = &["gear"];

// At the start: the selected gear's ratios (any gear can be selected, any shaft can be the
// crankshaft) reduce the shafts in use to the discs. iSprocket and nGears only decide which
// values are valid.
pub(crate) const RHO_ALL: [&str; MAX_SHAFTS * MAX_GEARS] = concat_names(&[
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
pub(crate) const REDUCTION: [&str; 74] =
    concat_names(&[&JYY_NAMES, &RHO_ALL, &["nShafts", "gear"]]);
/// And the discs' transverse inertias.
pub(crate) const TRANSVERSE: [&str; 82] = concat_names(&[&REDUCTION, &JXX_NAMES]);
pub(crate) const ENGINE_RATIO: [&str; 66] = concat_names(&[&RHO_ALL, &["iCrank", "gear"]]);
pub(crate) const INITIAL_W_ENG: [&str; 67] = concat_names(&[&ENGINE_RATIO, &["w_ds_start"]]);
pub(crate) const INITIAL_P_ENG: [&str; 68] = concat_names(&[&INITIAL_W_ENG, &["tau_eng"]]);
pub(crate) const INITIAL_Q: [&str; 70] =
    concat_names(&[&INITIAL_W_ENG, &["tau_eng", "tau_ext", "d_spin"]]);
pub(crate) const INITIAL_ANGLE: [&str; 75] = concat_names(&[&REDUCTION, &["theta_ds_start"]]);
pub(crate) const INITIAL_SPIN: [&str; 75] = concat_names(&[&REDUCTION, &["w_ds_start"]]);
pub(crate) const INITIAL_P: [&str; 76] = concat_names(&[&INITIAL_SPIN, &["omega_y"]]);
pub(crate) const INITIAL_M_X: [&str; 77] = concat_names(&[&INITIAL_P, &["omega_z"]]);
// At the start w_ds is w_ds_start itself, so M_y does not follow omega_y through p.
pub(crate) const INITIAL_M_Y: [&str; 79] =
    concat_names(&[&INITIAL_SPIN, &["iCrank", "tau_eng", "tau_ext", "d_spin"]]);
pub(crate) const INITIAL_M_Z: [&str; 77] = concat_names(&[&INITIAL_P, &["omega_x"]]);
pub(crate) const INITIAL_E_KIN: [&str; 86] =
    concat_names(&[&INITIAL_P, &JXX_NAMES, &["omega_x", "omega_z"]]);
pub(crate) const MASSES: [&str; 9] = concat_names(&[&M_NAMES, &["nShafts"]]);
pub(crate) const TRANSVERSE_SUM: [&str; 9] = concat_names(&[&JXX_NAMES, &["nShafts"]]);
pub(crate) const SPIN_SUM: [&str; 9] = concat_names(&[&JYY_NAMES, &["nShafts"]]);
pub(crate) const MASSES_X: [&str; 17] = concat_names(&[&MASSES, &HX_NAMES]);
pub(crate) const MASSES_Z: [&str; 17] = concat_names(&[&MASSES, &HZ_NAMES]);
pub(crate) const MASSES_XZ: [&str; 25] = concat_names(&[&MASSES_X, &HZ_NAMES]);
