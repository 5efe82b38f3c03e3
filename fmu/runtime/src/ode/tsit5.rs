//! Tsitouras' explicit Runge-Kutta 5(4) pair (Ch. Tsitouras, "Runge-Kutta pairs of order 5(4)
//! satisfying only the first column simplifying assumption", Comput. Math. Appl. 62 (2011)
//! 770-775; the double-precision coefficients as OrdinaryDiffEq.jl and diffsol 0.18 list them),
//! the method diffsol's Tsit45 implements, with its fourth-order continuous extension.

use super::erk::{Dense, Tableau};

pub static TSIT5: Tableau = Tableau {
    c: &C,
    a: &A,
    e: &E,
    e_low: &[],
    exponent: 5,
    shrink_most: 0.5,
    grow_most: 2.0,
    dense: Dense::Polynomial {
        c: &[],
        a: &[],
        r: &R,
    },
};

/// The number of stages; the last is the derivative at the step's end (first same as last).
const S: usize = 7;

/// Nodes.
const C: [f64; S] = [0.0, 0.161, 0.327, 0.9, 0.9800255409045097, 1.0, 1.0];

/// Stage coefficients `a[i][j]`, `j < i`; the last row is the solution's weights `b`.
const A: [&[f64]; S] = [
    &[],
    &[0.161],
    &[-0.008480655492356989, 0.335480655492357],
    &[2.8971530571054935, -6.359448489975075, 4.3622954328695815],
    &[
        5.325864828439257,
        -11.748883564062828,
        7.4955393428898365,
        -0.09249506636175525,
    ],
    &[
        5.86145544294642,
        -12.92096931784711,
        8.159367898576159,
        -0.071584973281401,
        -0.028269050394068383,
    ],
    &[
        0.09646076681806523,
        0.01,
        0.4798896504144996,
        1.379008574103742,
        -3.290069515436081,
        2.324710524099774,
    ],
];

/// The error estimate's weights: the fifth-order weights less the embedded fourth-order ones.
const E: [f64; S] = [
    -0.0017800110522257774,
    -0.0008164344596567469,
    0.007880878010261995,
    -0.1447110071732629,
    0.5823571654525552,
    -0.45808210592918697,
    0.015151515151515152,
];

/// The continuous extension: stage `i` weighs `R[i][0] θ + R[i][1] θ² + R[i][2] θ³ + R[i][3] θ⁴`
/// at `t0 + θ h` (fourth order; at θ = 1 these are the weights `b`).
const R: [&[f64]; S] = [
    &[
        1.0,
        -2.763706197274826,
        2.9132554618219126,
        -1.0530884977290216,
    ],
    &[0.0, 0.13169999999999998, -0.2234, 0.1017],
    &[
        0.0,
        3.9302962368947516,
        -5.941033872131505,
        2.490627285651253,
    ],
    &[
        0.0,
        -12.411077166933676,
        30.33818863028232,
        -16.548102889244902,
    ],
    &[0.0, 37.50931341651104, -88.1789048947664, 47.37952196281928],
    &[
        0.0,
        -27.896526289197286,
        65.09189467479366,
        -34.87065786149661,
    ],
    &[0.0, 1.5, -4.0, 2.5],
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ode::erk::tests::{check_pair, converges_with_order, follows_the_exact_solution};

    #[test]
    fn the_coefficients_satisfy_the_order_conditions() {
        check_pair(&TSIT5, 5, 4);
    }

    #[test]
    fn steps_dense_output_and_roots_follow_the_exact_solution() {
        follows_the_exact_solution(&TSIT5, 1e-9, 1e-8);
    }

    #[test]
    fn the_solution_and_the_dense_output_have_their_orders() {
        converges_with_order(&TSIT5, 0.3, 5.0, 4.0);
    }
}
