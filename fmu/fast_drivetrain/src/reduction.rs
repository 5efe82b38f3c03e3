//! The reduction of n parallel shafts to two coaxial counter-rotating discs (thesis ch. 1,
//! corrected as in `documentation.html`): functions of the shaft set and a gear's ratios,
//! written over [`Scalar`]: `f64` for the simulation, jets for its exact derivatives.

use fmu_runtime::lift::Lifted;
use fmu_runtime::{Scalar, Variables};

/// One shaft: a solid of revolution about the casing's y axis, its centre of mass at (hx, 0, hz).
#[derive(Debug, Default, PartialEq)]
pub struct Shaft<S = f64> {
    pub m: S,
    /// Inertia about a transverse axis through the centre of mass (Jxx = Jzz).
    pub jxx: S,
    /// Inertia about the spin axis.
    pub jyy: S,
    pub hx: S,
    pub hz: S,
}

copied_clone!(Shaft);

/// A shaft's parameters over another number type, in the order `shaft_variables` declares them.
impl<D: Scalar> Lifted<Shaft> for Shaft<D> {
    type Moving = Shaft<D::Moving>;
    type Jet = D;
    fn lift(from: &Shaft) -> Self {
        Shaft {
            m: D::constant(from.m),
            jxx: D::constant(from.jxx),
            jyy: D::constant(from.jyy),
            hx: D::constant(from.hx),
            hz: D::constant(from.hz),
        }
    }
    #[inline]
    fn sync(&mut self, from: &Shaft) {
        self.m.set_value(from.m);
        self.jxx.set_value(from.jxx);
        self.jyy.set_value(from.jyy);
        self.hx.set_value(from.hx);
        self.hz.set_value(from.hz);
    }
    fn visit(&mut self, f: &mut dyn FnMut(Option<&mut D>)) {
        f(Some(&mut self.m));
        f(Some(&mut self.jxx));
        f(Some(&mut self.jyy));
        f(Some(&mut self.hx));
        f(Some(&mut self.hz));
    }
}

/// What does not depend on the gear: the rigid inertia of the spinning parts and their masses.
#[derive(Debug, PartialEq, Variables)]
pub struct MassDistribution<S = f64> {
    /// sum Jxx_k
    #[calculated_parameter(
        unit = "kg.m2",
        describe = "sum Jxx: transverse inertia of the spinning parts, gear-independent; Jxx_a + Jxx_b"
    )]
    pub alpha: S,
    /// sum Jyy_k
    #[calculated_parameter(
        unit = "kg.m2",
        describe = "sum Jyy: spin inertia of the shafts, gear-independent; Jyy_a + Jyy_b"
    )]
    pub beta: S,
    /// m_a = m_b = sum m_k / 2
    #[calculated_parameter(unit = "kg", describe = "Mass of each disc, m_a = m_b = sum m / 2")]
    pub m_disc: S,
    /// The discs' common position: the shafts' centre of mass.
    #[calculated_parameter(
        name = "hx_disc",
        unit = "m",
        describe = "x of the discs' common centre (the shafts' centre of mass) in the casing frame"
    )]
    pub hx: S,
    #[calculated_parameter(
        name = "hz_disc",
        unit = "m",
        describe = "z of the discs' common centre in the casing frame"
    )]
    pub hz: S,
    /// The inertia of the shaft point masses about their common centre of mass, which the
    /// casing gains in the fast model: dJ = sum m_k (|d_k|^2 I - d_k d_k^T), d_k = h_k - h~.
    #[calculated_parameter(
        name = "dJ_xx",
        unit = "kg.m2",
        describe = "Casing inertia correction (the shaft masses about their centre), xx entry"
    )]
    pub dj_xx: S,
    #[calculated_parameter(
        name = "dJ_yy",
        unit = "kg.m2",
        describe = "Casing inertia correction, yy entry"
    )]
    pub dj_yy: S,
    #[calculated_parameter(
        name = "dJ_zz",
        unit = "kg.m2",
        describe = "Casing inertia correction, zz entry"
    )]
    pub dj_zz: S,
    #[calculated_parameter(
        name = "dJ_xz",
        unit = "kg.m2",
        describe = "Casing inertia correction, xz = zx entry (xy, yz are zero)"
    )]
    pub dj_xz: S,
}

copied_clone!(MassDistribution);

/// A sum as `f64`'s `Sum` takes it (from -0.0), in any number type.
fn sum<S: Scalar>(terms: impl Iterator<Item = S>) -> S {
    terms.fold(S::constant(-0.0), |a, b| a + b)
}

impl<S: Scalar> MassDistribution<S> {
    pub fn of(shafts: &[Shaft<S>]) -> Self {
        let alpha = sum(shafts.iter().map(|s| s.jxx));
        let beta = sum(shafts.iter().map(|s| s.jyy));
        let m = sum(shafts.iter().map(|s| s.m));
        let (hx, hz) = if m.value() > 0.0 {
            (
                sum(shafts.iter().map(|s| s.m * s.hx)) / m,
                sum(shafts.iter().map(|s| s.m * s.hz)) / m,
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
        MassDistribution {
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

/// The fast model of one gear.
#[derive(Debug, PartialEq, Variables)]
pub struct GearSet<S = f64> {
    /// sum rho_k Jyy_k: couples the casing's pitch rate to the spin.
    #[output(
        unit = "kg.m2",
        discrete,
        describe = "sum rho_k Jyy_k in the engaged gear"
    )]
    pub gamma: S,
    /// sum rho_k^2 Jyy_k: the spin inertia referred to the sprocket shaft.
    #[output(
        unit = "kg.m2",
        discrete,
        describe = "sum rho_k^2 Jyy_k in the engaged gear: spin inertia at the sprocket shaft"
    )]
    pub delta: S,
    /// Disc A's speed over the sprocket shaft's, sqrt(delta/beta).
    #[output(
        discrete,
        describe = "Disc A speed over the sprocket shaft's, sqrt(delta/beta), engaged gear"
    )]
    pub rho_e: S,
    /// The engine's speed over the sprocket shaft's: the crankshaft's ratio, which the model
    /// that engages the gear sets (it knows which shaft is the crankshaft).
    #[output(
        discrete,
        describe = "Engine speed over the sprocket shaft's, engaged gear"
    )]
    pub rho_eng: S,
    /// The split of alpha between the discs, (1.72): gamma/(2 alpha rho_e).
    #[output(
        discrete,
        describe = "Split of alpha between the discs, (1.72), engaged gear"
    )]
    pub lambda: S,
    #[output(
        name = "Jxx_a",
        unit = "kg.m2",
        discrete,
        describe = "Disc A transverse inertia (Jxx = Jzz), engaged gear"
    )]
    pub jxx_a: S,
    #[output(
        name = "Jxx_b",
        unit = "kg.m2",
        discrete,
        describe = "Disc B transverse inertia (Jxx = Jzz), engaged gear"
    )]
    pub jxx_b: S,
    #[output(
        name = "Jyy_a",
        unit = "kg.m2",
        discrete,
        describe = "Disc A spin inertia, engaged gear"
    )]
    pub jyy_a: S,
    #[output(
        name = "Jyy_b",
        unit = "kg.m2",
        discrete,
        describe = "Disc B spin inertia, engaged gear"
    )]
    pub jyy_b: S,
    /// The pitch inertia the casing carries with the spin free: beta - gamma^2/delta.
    #[output(
        name = "J_pitch",
        unit = "kg.m2",
        discrete,
        describe = "Pitch inertia the casing carries for the drivetrain with its spin free, beta - gamma^2/delta, engaged gear"
    )]
    pub j_pitch: S,
    /// beta delta - gamma^2 = 1/2 sum_ij Jyy_i Jyy_j (rho_i - rho_j)^2 >= 0, summed in that
    /// form so that it has no cancellation.
    pub spread: S,
}

copied_clone!(GearSet);

impl<S: Scalar> GearSet<S> {
    /// `rho[k]`: shaft k's speed over the sprocket shaft's (relative to the casing);
    /// `rho_eng` the crankshaft's, which the model picks (it knows which shaft that is).
    pub fn of(shafts: &[Shaft<S>], rho: &[S], mass: &MassDistribution<S>, rho_eng: S) -> Self {
        let (alpha, beta) = (mass.alpha, mass.beta);
        let zero = S::constant(0.0);
        let (mut gamma, mut delta, mut spread) = (zero, zero, zero);
        for (i, (s, &r)) in shafts.iter().zip(rho).enumerate() {
            gamma = gamma + r * s.jyy;
            delta = delta + r * r * s.jyy;
            for (t, &q) in shafts.iter().zip(rho).take(i) {
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
        GearSet {
            gamma,
            delta,
            rho_e,
            rho_eng,
            lambda,
            jxx_a: (lambda + 1.0) * 0.5 * alpha,
            jxx_b: (one - lambda) * 0.5 * alpha,
            jyy_a: (beta + gamma / rho_e) * 0.5,
            jyy_b: (beta - gamma / rho_e) * 0.5,
            j_pitch: spread / delta,
            spread,
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
        let g = GearSet::of(&s, &[5.48, -5.48, -2.846, 1.0], &mass, 0.0);
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
