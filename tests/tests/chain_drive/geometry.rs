//! The chain's geometry built here, independently of the FMU: the run lengths from the tangent
//! points, the open belt's length and the free spans.

use super::*;

/// The run lengths between material marks at th_ds = th_rw = 0 and swing-arm angle `th`, built
/// here from the tangent points: the unit normal n of an open-belt tangent satisfies
/// n.(P - W) = r_ws - r_ds; the run is tangent at W + r_ws n and P + r_ds n; a run's length
/// between marks is the arc on the wheel sprocket from its mark, the straight span and the arc
/// on the drive sprocket to its mark. The wheel's mark turns clockwise with the arm.
pub(crate) fn independent_lengths(th: f64) -> (f64, f64) {
    let w = [-L_SA * th.cos(), L_SA * th.sin()];
    let c = [P[0] - w[0], P[1] - w[1]];
    let d = (c[0] * c[0] + c[1] * c[1]).sqrt();
    let base = c[1].atan2(c[0]);
    // n.c = d cos(angle between) = r_ws - r_ds: two normals, above and below the centre line.
    let off = ((R_WS - R_DS) / d).acos();
    let normal = |a: f64| [a.cos(), a.sin()];
    let (n_u, n_l) = (normal(base + off), normal(base - off));
    let span = |n: [f64; 2]| {
        let a = [w[0] + R_WS * n[0], w[1] + R_WS * n[1]];
        let b = [P[0] + R_DS * n[0], P[1] + R_DS * n[1]];
        ((b[0] - a[0]).powi(2) + (b[1] - a[1]).powi(2)).sqrt()
    };
    let angle = |n: [f64; 2]| n[1].atan2(n[0]);
    let ccw = |from: f64, to: f64| (to - from).rem_euclid(2.0 * PI);
    // Marks: at the back of the wheel sprocket (math angle pi, turned clockwise by th), at the
    // front of the drive sprocket (angle 0).
    let mark_w = PI - th;
    let upper = R_WS * ccw(angle(n_u), mark_w) + span(n_u) + R_DS * ccw(0.0, angle(n_u));
    let lower = R_WS * ccw(mark_w, angle(n_l)) + span(n_l) + R_DS * ccw(angle(n_l), 0.0);
    (upper, lower)
}
/// The open belt's length `2 span + pi (r1 + r2) + 2 (r1 - r2) asin((r1 - r2)/d)`.
pub(crate) fn belt(th: f64) -> f64 {
    let d = ((P[0] + L_SA * th.cos()).powi(2) + (P[1] - L_SA * th.sin()).powi(2)).sqrt();
    2.0 * (d * d - (R_WS - R_DS).powi(2)).sqrt()
        + PI * (R_WS + R_DS)
        + 2.0 * (R_WS - R_DS) * ((R_WS - R_DS) / d).asin()
}
/// The free length of each run, `sqrt(d^2 - (r_ws - r_ds)^2)` (the thesis's AC = BD).
pub(crate) fn spans(th: f64) -> f64 {
    let d2 = (P[0] + L_SA * th.cos()).powi(2) + (P[1] - L_SA * th.sin()).powi(2);
    (d2 - (R_WS - R_DS).powi(2)).sqrt()
}
