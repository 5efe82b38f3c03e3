//! The reduction of n parallel shafts to two coaxial counter-rotating discs (thesis ch. 1,
//! corrected as in `documentation.html`): pure functions of the shaft set and a gear's ratios,
//! written over [`Scalar`]: `f64` for the simulation, `Dual` for its exact derivatives.

use fmu_runtime::{Dual, Scalar, Variables};

/// One shaft: a solid of revolution about the casing's y axis, its centre of mass at (hx, 0, hz).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Shaft {
    pub m: f64,
    /// Inertia about a transverse axis through the centre of mass (Jxx = Jzz).
    pub jxx: f64,
    /// Inertia about the spin axis.
    pub jyy: f64,
    pub hx: f64,
    pub hz: f64,
}

/// A shaft's mass and inertias in the number type of the equations (`f64` for the simulation,
/// `Dual` for its exact derivatives). [`Shaft`] stays a plain `f64` struct: the instance
/// clones the model at every step, and a generic struct's clone is field by field.
#[derive(Debug, Clone, Copy)]
pub struct Body<S> {
    pub m: S,
    pub jxx: S,
    pub jyy: S,
    pub hx: S,
    pub hz: S,
}

impl Shaft {
    pub fn body(&self) -> Body<f64> {
        Body {
            m: self.m,
            jxx: self.jxx,
            jyy: self.jyy,
            hx: self.hx,
            hz: self.hz,
        }
    }

    /// The shaft moving as `seed`'s fields say.
    pub fn along(&self, seed: &Shaft) -> Body<Dual> {
        let dual = Dual::seeded;
        Body {
            m: dual(self.m, seed.m),
            jxx: dual(self.jxx, seed.jxx),
            jyy: dual(self.jyy, seed.jyy),
            hx: dual(self.hx, seed.hx),
            hz: dual(self.hz, seed.hz),
        }
    }
}

/// What does not depend on the gear: the rigid inertia of the spinning parts and their masses.
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct MassDistribution {
    /// sum Jxx_k
    #[calculated_parameter(
        unit = "kg.m2",
        describe = "sum Jxx: transverse inertia of the spinning parts, gear-independent; Jxx_a + Jxx_b"
    )]
    pub alpha: f64,
    /// sum Jyy_k
    #[calculated_parameter(
        unit = "kg.m2",
        describe = "sum Jyy: spin inertia of the shafts, gear-independent; Jyy_a + Jyy_b"
    )]
    pub beta: f64,
    /// m_a = m_b = sum m_k / 2
    #[calculated_parameter(unit = "kg", describe = "Mass of each disc, m_a = m_b = sum m / 2")]
    pub m_disc: f64,
    /// The discs' common position: the shafts' centre of mass.
    #[calculated_parameter(
        name = "hx_disc",
        unit = "m",
        describe = "x of the discs' common centre (the shafts' centre of mass) in the casing frame"
    )]
    pub hx: f64,
    #[calculated_parameter(
        name = "hz_disc",
        unit = "m",
        describe = "z of the discs' common centre in the casing frame"
    )]
    pub hz: f64,
    /// The inertia of the shaft point masses about their common centre of mass, which the
    /// casing gains in the fast model: dJ = sum m_k (|d_k|^2 I - d_k d_k^T), d_k = h_k - h~.
    #[calculated_parameter(
        name = "dJ_xx",
        unit = "kg.m2",
        describe = "Casing inertia correction (the shaft masses about their centre), xx entry"
    )]
    pub dj_xx: f64,
    #[calculated_parameter(
        name = "dJ_yy",
        unit = "kg.m2",
        describe = "Casing inertia correction, yy entry"
    )]
    pub dj_yy: f64,
    #[calculated_parameter(
        name = "dJ_zz",
        unit = "kg.m2",
        describe = "Casing inertia correction, zz entry"
    )]
    pub dj_zz: f64,
    #[calculated_parameter(
        name = "dJ_xz",
        unit = "kg.m2",
        describe = "Casing inertia correction, xz = zx entry (xy, yz are zero)"
    )]
    pub dj_xz: f64,
}

/// [`MassDistribution`] in the number type of the equations.
#[derive(Debug, Clone, Copy)]
pub struct Distribution<S> {
    pub alpha: S,
    pub beta: S,
    pub m_disc: S,
    pub hx: S,
    pub hz: S,
    pub dj_xx: S,
    pub dj_yy: S,
    pub dj_zz: S,
    pub dj_xz: S,
}

/// A sum as `f64`'s `Sum` takes it (from -0.0), in any number type.
fn sum<S: Scalar>(terms: impl Iterator<Item = S>) -> S {
    terms.fold(S::constant(-0.0), |a, b| a + b)
}

impl<S: Scalar> Distribution<S> {
    pub fn of(shafts: impl Iterator<Item = Body<S>> + Clone) -> Self {
        let alpha = sum(shafts.clone().map(|s| s.jxx));
        let beta = sum(shafts.clone().map(|s| s.jyy));
        let m = sum(shafts.clone().map(|s| s.m));
        let (hx, hz) = if m.value() > 0.0 {
            (
                sum(shafts.clone().map(|s| s.m * s.hx)) / m,
                sum(shafts.clone().map(|s| s.m * s.hz)) / m,
            )
        } else {
            (S::constant(0.0), S::constant(0.0))
        };
        let zero = S::constant(0.0);
        let (mut dj_xx, mut dj_zz, mut dj_xz) = (zero, zero, zero);
        for s in shafts {
            let (dx, dz) = (s.hx - hx, s.hz - hz);
            dj_xx = dj_xx + s.m * dz * dz;
            dj_zz = dj_zz + s.m * dx * dx;
            dj_xz = dj_xz - s.m * dx * dz;
        }
        Distribution {
            alpha,
            beta,
            m_disc: m * 0.5,
            hx,
            hz,
            dj_xx,
            dj_yy: dj_xx + dj_zz,
            dj_zz,
            dj_xz,
        }
    }
}

impl MassDistribution {
    pub fn of(shafts: &[Shaft]) -> Self {
        Self::with(Distribution::of(shafts.iter().map(Shaft::body)), |x| x)
    }

    /// The calculated parameters of `d`, each through `f` (its value, or its derivative).
    pub fn with<S: Copy>(d: Distribution<S>, f: impl Fn(S) -> f64) -> Self {
        MassDistribution {
            alpha: f(d.alpha),
            beta: f(d.beta),
            m_disc: f(d.m_disc),
            hx: f(d.hx),
            hz: f(d.hz),
            dj_xx: f(d.dj_xx),
            dj_yy: f(d.dj_yy),
            dj_zz: f(d.dj_zz),
            dj_xz: f(d.dj_xz),
        }
    }
}

/// The fast model of one gear.
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct GearSet {
    /// sum rho_k Jyy_k: couples the casing's pitch rate to the spin.
    #[output(
        unit = "kg.m2",
        discrete,
        describe = "sum rho_k Jyy_k in the engaged gear"
    )]
    pub gamma: f64,
    /// sum rho_k^2 Jyy_k: the spin inertia referred to the sprocket shaft.
    #[output(
        unit = "kg.m2",
        discrete,
        describe = "sum rho_k^2 Jyy_k in the engaged gear: spin inertia at the sprocket shaft"
    )]
    pub delta: f64,
    /// Disc A's speed over the sprocket shaft's, sqrt(delta/beta).
    #[output(
        discrete,
        describe = "Disc A speed over the sprocket shaft's, sqrt(delta/beta), engaged gear"
    )]
    pub rho_e: f64,
    /// The engine's speed over the sprocket shaft's: the crankshaft's ratio, which the model
    /// that engages the gear sets (it knows which shaft is the crankshaft).
    #[output(
        discrete,
        describe = "Engine speed over the sprocket shaft's, engaged gear"
    )]
    pub rho_eng: f64,
    /// The split of alpha between the discs, (1.72): gamma/(2 alpha rho_e).
    #[output(
        discrete,
        describe = "Split of alpha between the discs, (1.72), engaged gear"
    )]
    pub lambda: f64,
    #[output(
        name = "Jxx_a",
        unit = "kg.m2",
        discrete,
        describe = "Disc A transverse inertia (Jxx = Jzz), engaged gear"
    )]
    pub jxx_a: f64,
    #[output(
        name = "Jxx_b",
        unit = "kg.m2",
        discrete,
        describe = "Disc B transverse inertia (Jxx = Jzz), engaged gear"
    )]
    pub jxx_b: f64,
    #[output(
        name = "Jyy_a",
        unit = "kg.m2",
        discrete,
        describe = "Disc A spin inertia, engaged gear"
    )]
    pub jyy_a: f64,
    #[output(
        name = "Jyy_b",
        unit = "kg.m2",
        discrete,
        describe = "Disc B spin inertia, engaged gear"
    )]
    pub jyy_b: f64,
    /// The pitch inertia the casing carries with the spin free: beta - gamma^2/delta.
    #[output(
        name = "J_pitch",
        unit = "kg.m2",
        discrete,
        describe = "Pitch inertia the casing carries for the drivetrain with its spin free, beta - gamma^2/delta, engaged gear"
    )]
    pub j_pitch: f64,
    /// beta delta - gamma^2 = 1/2 sum_ij Jyy_i Jyy_j (rho_i - rho_j)^2 >= 0, summed in that
    /// form so that it has no cancellation.
    pub spread: f64,
}

/// [`GearSet`] in the number type of the equations (`rho_eng` apart: a ratio picked, not
/// computed).
#[derive(Debug, Clone, Copy)]
pub struct Reduction<S> {
    pub gamma: S,
    pub delta: S,
    pub spread: S,
    pub rho_e: S,
    pub jyy_a: S,
    pub jyy_b: S,
    pub lambda: S,
    pub jxx_a: S,
    pub jxx_b: S,
    pub j_pitch: S,
}

impl<S: Scalar> Reduction<S> {
    /// `rho[k]`: shaft k's speed over the sprocket shaft's (relative to the casing); `alpha`,
    /// `beta` the gear-independent sums of the [`Distribution`].
    pub fn of(shafts: impl Iterator<Item = Body<S>> + Clone, rho: &[S], alpha: S, beta: S) -> Self {
        let zero = S::constant(0.0);
        let (mut gamma, mut delta, mut spread) = (zero, zero, zero);
        for (i, (s, &r)) in shafts.clone().zip(rho).enumerate() {
            gamma = gamma + r * s.jyy;
            delta = delta + r * r * s.jyy;
            for (t, &q) in shafts.clone().zip(rho).take(i) {
                spread = spread + s.jyy * t.jyy * (r - q) * (r - q);
            }
        }
        let rho_e = (delta / beta).sqrt();
        // (1.57)-(1.58), corrected: Jyy_a + Jyy_b = beta, Jyy_a - Jyy_b = gamma/rho_e.
        let lambda = if alpha.value() > 0.0 {
            gamma / (alpha * 2.0 * rho_e)
        } else {
            zero
        };
        let one = S::constant(1.0);
        Reduction {
            gamma,
            delta,
            spread,
            rho_e,
            jyy_a: (beta + gamma / rho_e) * 0.5,
            jyy_b: (beta - gamma / rho_e) * 0.5,
            lambda,
            jxx_a: (lambda + 1.0) * 0.5 * alpha,
            jxx_b: (one - lambda) * 0.5 * alpha,
            j_pitch: spread / delta,
        }
    }
}

impl GearSet {
    /// `rho[k]`: shaft k's speed over the sprocket shaft's (relative to the casing).
    pub fn of(shafts: &[Shaft], rho: &[f64], mass: &MassDistribution) -> Self {
        let r = Reduction::of(shafts.iter().map(Shaft::body), rho, mass.alpha, mass.beta);
        Self::with(r, 0.0, |x| x)
    }

    /// The set of `r` with the engine's ratio `rho_eng`, each through `f` (its value, or its
    /// derivative).
    pub fn with<S: Copy>(r: Reduction<S>, rho_eng: f64, f: impl Fn(S) -> f64) -> Self {
        GearSet {
            gamma: f(r.gamma),
            delta: f(r.delta),
            spread: f(r.spread),
            rho_e: f(r.rho_e),
            rho_eng,
            jyy_a: f(r.jyy_a),
            jyy_b: f(r.jyy_b),
            lambda: f(r.lambda),
            jxx_a: f(r.jxx_a),
            jxx_b: f(r.jxx_b),
            j_pitch: f(r.j_pitch),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shafts() -> Vec<Shaft> {
        vec![
            Shaft {
                m: 8.0,
                jxx: 0.06,
                jyy: 0.009,
                hx: 0.0,
                hz: 0.0,
            },
            Shaft {
                m: 1.8,
                jxx: 0.012,
                jyy: 0.0012,
                hx: 0.08,
                hz: 0.02,
            },
            Shaft {
                m: 3.5,
                jxx: 0.02,
                jyy: 0.0045,
                hx: -0.11,
                hz: -0.06,
            },
            Shaft {
                m: 2.8,
                jxx: 0.016,
                jyy: 0.0012,
                hx: -0.2,
                hz: -0.02,
            },
        ]
    }

    #[test]
    fn the_discs_reproduce_the_four_sums() {
        let s = shafts();
        let mass = MassDistribution::of(&s);
        let g = GearSet::of(&s, &[5.48, -5.48, -2.846, 1.0], &mass);
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-15 * b.abs().max(1.0), "{a} {b}");
        close(g.jxx_a + g.jxx_b, mass.alpha);
        close(g.jyy_a + g.jyy_b, mass.beta);
        close(g.rho_e * (g.jyy_a - g.jyy_b), g.gamma);
        close(g.rho_e * g.rho_e * mass.beta, g.delta);
        close(g.spread, mass.beta * g.delta - g.gamma * g.gamma);
    }

    #[test]
    fn the_casing_correction_is_the_point_masses_about_their_centre() {
        let s = shafts();
        let mass = MassDistribution::of(&s);
        // The inertia of the point masses about the origin equals that of the total mass at
        // the centre of mass plus dJ (parallel axes), for each entry.
        let about_origin = |f: fn(&Shaft) -> f64| s.iter().map(|s| s.m * f(s)).sum::<f64>();
        let m = 2.0 * mass.m_disc;
        let xx = about_origin(|s| s.hz * s.hz);
        let zz = about_origin(|s| s.hx * s.hx);
        let xz = -about_origin(|s| s.hx * s.hz);
        assert!((xx - (m * mass.hz * mass.hz + mass.dj_xx)).abs() < 1e-15);
        assert!((zz - (m * mass.hx * mass.hx + mass.dj_zz)).abs() < 1e-15);
        assert!((xz - (-m * mass.hx * mass.hz + mass.dj_xz)).abs() < 1e-15);
        assert!(
            mass.dj_xx * mass.dj_zz >= mass.dj_xz * mass.dj_xz,
            "dJ is not positive"
        );
    }
}
