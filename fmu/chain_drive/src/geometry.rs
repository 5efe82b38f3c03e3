//! The chain's geometry on the planar half-bike: the open-belt tangents between the fixed drive
//! sprocket and the wheel sprocket on the swinging arm, and the lengths of the two runs between
//! material points of the chain.
//!
//! Frame: x forward, z up, seen from the bike's right side, origin at the swing-arm pivot;
//! angles positive clockwise. The wheel centre is `W = (-l cos th_sa, l sin th_sa)`, the drive
//! sprocket centre `P` is fixed. With `c = P - W`, `d = |c|`, `phi = atan2(c_z, c_x)`,
//! `dr = r_ws - r_ds`, `alpha = acos(dr/d)` and `T = sqrt(d^2 - dr^2)` (the free length of each
//! run), the upper run leaves both sprockets along the normal at angle `phi + alpha`, the lower
//! run at `phi - alpha`, and between material marks (constants dropped)
//!
//! `L_u = G_u(th_sa) - r_ws (th_sa + th_rw) + r_ds th_ds`, `G_u = T - dr (phi + alpha)`,
//! `L_l = G_l(th_sa) + r_ws (th_sa + th_rw) - r_ds th_ds`, `G_l = T + dr (phi - alpha)`.
//!
//! The wrapped arcs turn with their sprockets; only `G_u`, `G_l` depend on the swing arm, and
//! their first two derivatives are computed in closed form here (the thesis's printed lengths
//! lack the arm's contribution, see the documentation).

use fmu_runtime::{Param, Scalar, Variables};

/// What does not change during a run: where the pivot, the sprockets and the swing arm's centre
/// of mass are. The start values are Table 2.2 of the thesis. Generic over the number type of
/// the model (`fmu_runtime::lift`).
#[derive(Debug, Clone, Copy, PartialEq, Variables)]
pub struct Layout<S: Scalar = f64> {
    /// Swing-arm length, pivot to wheel axle.
    #[parameter(
        start = 0.7,
        unit = "m",
        min = 0.0,
        describe = "Swing-arm length, pivot to wheel axle (> 0)"
    )]
    pub l_sa: Param<S>,
    /// Distance from the pivot to the swing arm's centre of mass.
    #[parameter(
        start = 0.35,
        unit = "m",
        describe = "Distance from the pivot to the swing arm's centre of mass, along the arm"
    )]
    pub d_sa: Param<S>,
    #[parameter(
        start = 0.03,
        unit = "m",
        min = 0.0,
        describe = "Pitch radius of the drive sprocket (> 0)"
    )]
    pub r_ds: Param<S>,
    #[parameter(
        start = 0.08,
        unit = "m",
        min = 0.0,
        describe = "Pitch radius of the wheel sprocket (> 0)"
    )]
    pub r_ws: Param<S>,
    /// Drive sprocket centre, forward of the pivot.
    #[parameter(
        start = 0.08,
        unit = "m",
        describe = "Drive sprocket centre, forward of the swing-arm pivot"
    )]
    pub ds_x: Param<S>,
    /// Drive sprocket centre, above the pivot.
    #[parameter(start = -0.02, unit = "m", describe = "Drive sprocket centre, above the swing-arm pivot (negative: below)")]
    pub ds_z: Param<S>,
}

/// The layout's lengths as the equations read them.
#[derive(Debug, Clone, Copy)]
pub struct Frame<S: Scalar> {
    pub l_sa: Param<S>,
    pub d_sa: Param<S>,
    pub r_ds: Param<S>,
    pub r_ws: Param<S>,
    pub ds_x: Param<S>,
    pub ds_z: Param<S>,
}

/// The geometric parts of the run lengths at one swing-arm angle, with their first and second
/// derivatives with respect to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Runs<S: Scalar = f64> {
    /// Distance between the sprocket centres.
    pub d: S,
    /// Free length of each run, `sqrt(d^2 - dr^2)`.
    pub span: S,
    /// Direction of the line of centres, wheel to sprocket, counter-clockwise from x (math sense).
    pub phi: S,
    pub alpha: S,
    pub g_u: [S; 3],
    pub g_l: [S; 3],
}

// Inlined like the half-bike's equations, so that the frame is read in place.
impl<S: Scalar> Frame<S> {
    /// `c = P - W` and its first two derivatives with respect to `th_sa`.
    #[inline(always)]
    fn centres(&self, th_sa: S) -> [[S; 2]; 3] {
        let (s, c) = th_sa.sin_cos();
        let l = self.l_sa;
        [
            [self.ds_x + l * c, self.ds_z - l * s],
            [-l * s, -l * c],
            [-l * c, l * s],
        ]
    }

    #[inline(always)]
    pub fn runs(&self, th_sa: S) -> Runs<S> {
        let [c, c1, c2] = self.centres(th_sa);
        let dot = |a: [S; 2], b: [S; 2]| a[0] * b[0] + a[1] * b[1];
        let cross = |a: [S; 2], b: [S; 2]| a[0] * b[1] - a[1] * b[0];
        let dr = self.r_ws - self.r_ds;
        let d2 = dot(c, c);
        let d = d2.sqrt();
        let d1 = dot(c, c1) / d;
        let dd = (dot(c1, c1) + dot(c, c2) - d1 * d1) / d;
        let span = (d2 - dr * dr).sqrt();
        let span1 = d * d1 / span;
        let span2 = (d1 * d1 + d * dd - span1 * span1) / span;
        let phi = c[1].atan2(c[0]);
        let phi1 = cross(c, c1) / d2;
        let phi2 = cross(c, c2) / d2 - cross(c, c1) * 2.0 * dot(c, c1) / (d2 * d2);
        // alpha = acos(dr/d): sin(alpha) = span/d, so alpha' = dr d' / (d span).
        let alpha = (dr / d).acos();
        let q = d * span;
        let alpha1 = dr * d1 / q;
        let alpha2 = dr * (dd * q - d1 * (d1 * span + d * span1)) / (q * q);
        Runs {
            d,
            span,
            phi,
            alpha,
            g_u: [
                span - dr * (phi + alpha),
                span1 - dr * (phi1 + alpha1),
                span2 - dr * (phi2 + alpha2),
            ],
            g_l: [
                span + dr * (phi - alpha),
                span1 + dr * (phi1 - alpha1),
                span2 + dr * (phi2 - alpha2),
            ],
        }
    }
}

impl<S: Scalar> Layout<S> {
    #[inline(always)]
    pub fn frame(&self) -> Frame<S> {
        self.frame_over()
    }

    /// The lengths as the equations over `T` read them (`T = S`, or `Param<S>`).
    #[inline(always)]
    pub fn frame_over<T: Scalar<P = Param<S>>>(&self) -> Frame<T> {
        Frame {
            l_sa: self.l_sa,
            d_sa: self.d_sa,
            r_ds: self.r_ds,
            r_ws: self.r_ws,
            ds_x: self.ds_x,
            ds_z: self.ds_z,
        }
    }
}

impl<S: Scalar> Frame<S> {
    /// The lengths' values, without their derivatives.
    #[inline(always)]
    pub fn value(&self) -> Frame<f64> {
        Frame {
            l_sa: self.l_sa.value(),
            d_sa: self.d_sa.value(),
            r_ds: self.r_ds.value(),
            r_ws: self.r_ws.value(),
            ds_x: self.ds_x.value(),
            ds_z: self.ds_z.value(),
        }
    }
}

impl Layout {
    /// The sprockets' clearance at `th_sa`: the distance between their centres less
    /// `r_ds + r_ws`. The chain can wrap only while it is positive (the sprockets do not
    /// overlap); the open-belt formulas themselves hold down to `d = |r_ws - r_ds|`.
    pub fn clearance(&self, th_sa: f64) -> f64 {
        let [c, _, _] = self.frame().centres(th_sa);
        (c[0] * c[0] + c[1] * c[1]).sqrt() - (self.r_ds + self.r_ws)
    }

    /// Whether the chain can wrap at `th_sa`.
    pub fn wraps(&self, th_sa: f64) -> bool {
        self.clearance(th_sa) > 0.0
    }

    pub fn runs(&self, th_sa: f64) -> Runs {
        self.frame().runs(th_sa)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2.2 of the thesis.
    const TABLE_2_2: Layout = Layout {
        l_sa: 0.7,
        d_sa: 0.35,
        ds_x: 0.08,
        ds_z: -0.02,
        r_ds: 0.03,
        r_ws: 0.08,
    };

    #[test]
    fn derivatives_match_finite_differences() {
        let g = TABLE_2_2;
        let h = 1e-5;
        for k in 0..=60 {
            let th = -0.6 + k as f64 * 0.02;
            let (a, m, b) = (g.runs(th - h), g.runs(th), g.runs(th + h));
            for (lo, mid, hi) in [(a.g_u, m.g_u, b.g_u), (a.g_l, m.g_l, b.g_l)] {
                let fd1 = (hi[0] - lo[0]) / (2.0 * h);
                let fd2 = (hi[1] - lo[1]) / (2.0 * h);
                assert!(
                    (fd1 - mid[1]).abs() < 1e-10,
                    "th = {th}: {fd1} vs {}",
                    mid[1]
                );
                assert!(
                    (fd2 - mid[2]).abs() < 1e-9,
                    "th = {th}: {fd2} vs {}",
                    mid[2]
                );
            }
        }
    }

    /// The thesis-notes figures at th_sa = 0 (converted to our signs): d_ia = 0.78026,
    /// AC = 0.77865, alpha = 1.50667.
    #[test]
    fn table_2_2_at_the_reference_angle() {
        let r = TABLE_2_2.runs(0.0);
        assert!((r.d - 0.78026).abs() < 5e-6, "{}", r.d);
        assert!((r.span - 0.77865).abs() < 5e-6, "{}", r.span);
        assert!((r.alpha - 1.50667).abs() < 5e-6, "{}", r.alpha);
    }
}
