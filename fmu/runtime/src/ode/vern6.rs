//! Verner's "most efficient" explicit Runge-Kutta 6(5) pair, RKV65.IIIXb (J. H. Verner,
//! "Numerically optimal Runge-Kutta pairs with interpolants", Numer. Algorithms 53 (2010)
//! 383-396): nine stages, the last the derivative at the solution (first same as last: eight
//! evaluations a step), a fifth-order error estimate, and a sixth-order continuous extension
//! with three more stages, evaluated only for a step with a crossing. The coefficients are the
//! exact rationals Verner publishes (as OrdinaryDiffEq.jl's `Vern6Tableau` lists them), rounded
//! once to the nearest double; the tests below check the order conditions they must meet.
//!
//! It is worth its two extra evaluations over Tsitouras' 5(4) where the steps are limited by
//! accuracy, not by the communication step: on the CrankSlider spun up to 490 rad/s in 5 s,
//! 9.5 evaluations per 1 ms communication step keep the speed within 3.4e-7 of its range at a
//! tolerance of 1e-6, where Tsitouras' pair needs 13.4 for 4.7e-7 (at 1e-7), and DOP853 13.

use super::erk::{Dense, Tableau};

pub static VERN6: Tableau = Tableau {
    c: &C,
    a: &A,
    e: &E,
    e_low: &[],
    exponent: 6,
    // Hairer's bounds for explicit pairs (dopri5), as OrdinaryDiffEq.jl keeps for Verner's.
    shrink_most: 0.2,
    grow_most: 10.0,
    dense: Dense::Polynomial {
        c: &C_DENSE,
        a: &A_DENSE,
        r: &R,
    },
};

/// The number of stages; the last is the derivative at the step's end.
const S: usize = 9;

/// Nodes.
const C: [f64; S] = [
    0.0,
    0.06,
    0.09593333333333333,
    0.1439,
    0.4973,
    0.9725,
    0.9995,
    1.0,
    1.0,
];

/// Stage coefficients `a[i][j]`, `j < i`; the last row is the solution's weights `b`.
const A: [&[f64]; S] = [
    &[],
    &[0.06],
    &[0.019239962962962962, 0.07669337037037037],
    &[0.035975, 0.0, 0.107925],
    &[
        1.3186834152331484,
        0.0,
        -5.042058063628562,
        4.220674648395414,
    ],
    &[
        -41.872591664327516,
        0.0,
        159.4325621631375,
        -122.11921356501003,
        5.531743066200054,
    ],
    &[
        -54.430156935316504,
        0.0,
        207.06725136501848,
        -158.61081378459,
        6.991816585950242,
        -0.018597231062203234,
    ],
    &[
        -54.66374178728198,
        0.0,
        207.95280625538936,
        -159.2889574744995,
        7.018743740796944,
        -0.018338785905045722,
        -0.0005119484997882099,
    ],
    &[
        0.03438957868357036,
        0.0,
        0.0,
        0.2582624555633503,
        0.4209371189673537,
        4.40539646966931,
        -176.48311902429865,
        172.36413340141507,
    ],
];

/// The error estimate's weights: the embedded fifth-order weights less the sixth-order ones.
const E: [f64; S] = [
    0.008623404282200852,
    0.0,
    0.0,
    -0.019434029953152708,
    0.028450072588037983,
    -2.109711061065291,
    103.45854289996399,
    -101.39980461914911,
    0.03333333333333333,
];

/// The continuous extension's extra stages: nodes, and rows over all earlier stages.
const C_DENSE: [f64; 3] = [0.5, 0.828, 0.28];
const A_DENSE: [&[f64]; 3] = [
    &[
        0.016524159013572806,
        0.0,
        0.0,
        0.3053128187514179,
        0.2071200938201979,
        -1.293879140655123,
        57.11988411588149,
        -55.87979207510932,
        0.024830028297766014,
    ],
    &[
        0.038150081818627744,
        0.0,
        0.0,
        0.2502358252513705,
        0.3249441447817608,
        1.8224606658327962,
        -67.7137233269262,
        66.03587911808127,
        -0.0363881087495127,
        0.106441599909888,
    ],
    &[
        0.11178168039666012,
        0.0,
        0.0,
        0.025757505109345213,
        3.785140856363646,
        92.34088993695727,
        -3819.461508432344,
        3732.492711530704,
        -1.0756940209963033,
        -3.231539970732086,
        -4.7075390854586345,
    ],
];

/// The continuous extension: stage `i` weighs `R[i][0] θ + R[i][1] θ² + ... + R[i][5] θ⁶` at
/// `t0 + θ h` (sixth order; at θ = 1 these are the weights `b`, and the extra stages weigh nothing).
const R: [&[f64]; 12] = [
    &[
        1.0,
        -7.778593856495575,
        27.0524385722671,
        -45.780190114576975,
        36.72377741043638,
        -11.183042432947357,
    ],
    &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    &[0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    &[
        0.0,
        16.632102138279762,
        -86.25583404770623,
        171.7330546182696,
        -149.67744091315947,
        47.826380659879696,
    ],
    &[
        0.0,
        27.10835046149758,
        -140.58676162962996,
        279.9044757968917,
        -243.95644583707966,
        77.95131832728772,
    ],
    &[
        0.0,
        283.70753264670356,
        -1471.3371557366656,
        2929.3928569314394,
        -2553.17199842168,
        815.8141610498723,
    ],
    &[
        0.0,
        -11365.512865164834,
        58942.74718938947,
        -117353.43045697975,
        102281.77209230464,
        -32682.059078573824,
    ],
    &[
        0.0,
        11100.250191051131,
        -57567.067013355576,
        114614.48808378985,
        -99894.591091309,
        31919.283963225014,
    ],
    &[
        0.0,
        -3.0022825150732126,
        14.946122435958785,
        -27.826954732510288,
        21.824672217437076,
        -5.941557405812358,
    ],
    &[
        0.0,
        -19.610347376201034,
        93.13370014508226,
        -165.3493635542416,
        129.73901617804057,
        -37.91300539268019,
    ],
    &[
        0.0,
        -18.23029074639409,
        96.74593449012313,
        -199.08634973839895,
        180.85605899200485,
        -60.285352997334954,
    ],
    &[
        0.0,
        -13.563796638614157,
        90.62137973668116,
        -204.04515601697273,
        190.48135937835858,
        -63.493786459452856,
    ],
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ode::erk::tests::{check_pair, converges_with_order, follows_the_exact_solution};

    #[test]
    fn the_coefficients_satisfy_the_order_conditions() {
        check_pair(&VERN6, 6, 5);
    }

    #[test]
    fn steps_dense_output_and_roots_follow_the_exact_solution() {
        follows_the_exact_solution(&VERN6, 1e-9, 1e-8);
    }

    #[test]
    fn the_solution_and_the_dense_output_have_their_orders() {
        // Sixth order for the steps and for the continuous extension (its local error is
        // O(h^7)).
        converges_with_order(&VERN6, 0.3, 6.0, 6.0);
    }
}
