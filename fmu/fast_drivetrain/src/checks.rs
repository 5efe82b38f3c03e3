//! The checks of the parameters, the gear input and a restored state: each refusal names the
//! variable and the reason.

use crate::reduction::{GearSet, MassDistribution};
use crate::variables::{JXX_NAMES, JYY_NAMES, M_NAMES, RHO_NAMES};
use crate::{FastDrivetrain, MAX_GEARS, MAX_SHAFTS};
use fmu_runtime::Invalid;

impl FastDrivetrain {
    // The indices name the variable in the refusal, not only the entry.
    #[allow(clippy::needless_range_loop)]
    pub(crate) fn check_parameters(&self) -> Result<(), Invalid> {
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
        let mass = MassDistribution::of(self.shafts());
        if mass.beta <= 0.0 {
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
            let set = GearSet::of(self.shafts(), &self.rho[g][..n], &mass, 0.0);
            // All shafts at one speed: disc B would have no spin inertia and the gear is a
            // single rigid body, which nShafts = 1 describes.
            if n > 1 && set.spread <= 1e-12 * mass.beta * set.delta {
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

    pub(crate) fn check_gear(&self) -> Result<(), Invalid> {
        if self.gear < 1 || self.gear > self.n_gears {
            return Err(Invalid::new(
                "gear",
                f64::from(self.gear),
                format!("this drivetrain has gears 1 to nGears = {}", self.n_gears),
            ));
        }
        Ok(())
    }

    /// The engaged gear and the last shift's are gears of this drivetrain, and the disc
    /// reduction it holds is the engaged gear's.
    pub(crate) fn check_engaged(&self) -> Result<(), Invalid> {
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
        let mut engaged = self.gear_set(self.gear_engaged);
        engaged.spread = self.set.spread;
        if engaged != self.set {
            return Err(Invalid::new(
                "gamma",
                self.set.gamma,
                format!(
                    "the disc reduction it holds is not gear {}'s (gamma {})",
                    self.gear_engaged, engaged.gamma
                ),
            ));
        }
        Ok(())
    }
}
