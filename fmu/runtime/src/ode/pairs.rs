//! Which integration method a model gets at a tolerance, and the same choice in words for its
//! documentation: one table for both.

use super::dop853::DOP853;
use super::erk::Tableau;
use super::tsit5::TSIT5;
use super::vern6::VERN6;
use crate::model::Model;

/// The relative tolerance from which down the explicit pair is DOP853: there an eighth-order
/// step goes far enough to repay its twelve stages. At 1e-12 the VariableRatioTransmission
/// costs a quarter of Tsit5's instructions with it, and a CrankSlider at 1e-9 two thirds;
/// at 1e-8 a model that needs one Tsit5 step per millisecond would pay twice its stages
/// (`cargo xtask bench`, docs/performance.md).
pub const HIGH_ORDER_FROM: f64 = 1e-9;

/// An explicit pair and the relative tolerance from which down it integrates (to the next
/// pair's).
pub struct Pair {
    pub tableau: &'static Tableau,
    pub name: &'static str,
    pub from: f64,
}

/// The explicit pairs of model `M`, loosest tolerance first: Tsitouras' 5(4); Verner's 6(5)
/// from the model's [`Model::SIXTH_ORDER_FROM`] down (never, at its default 0); DOP853 from
/// [`HIGH_ORDER_FROM`] down. A stiff model is integrated with diffsol's BDF instead, whatever
/// the tolerance ([`Model::stiff`]).
pub fn pairs<M: Model>() -> [Pair; 3] {
    [
        Pair {
            tableau: &TSIT5,
            name: "Tsitouras' 5(4)",
            from: f64::INFINITY,
        },
        Pair {
            tableau: &VERN6,
            name: "Verner's 6(5)",
            from: M::SIXTH_ORDER_FROM,
        },
        Pair {
            tableau: &DOP853,
            name: "Dormand and Prince's 8(5,3)",
            from: HIGH_ORDER_FROM,
        },
    ]
}

/// The explicit pair for a relative tolerance: the last of [`pairs`] whose band holds it.
pub fn explicit_pair<M: Model>(rtol: f64) -> &'static Tableau {
    pairs::<M>()
        .iter()
        .rfind(|p| rtol <= p.from)
        .map_or(&TSIT5, |p| p.tableau)
}

/// The same choice in words: each pair with the tolerances it integrates (pairs whose band is
/// empty left out), and BDF.
pub fn describe<M: Model>() -> String {
    let pairs = pairs::<M>();
    // A band is empty when a later pair starts at a looser tolerance.
    let used: Vec<&Pair> = pairs
        .iter()
        .enumerate()
        .filter(|(i, p)| pairs[i + 1..].iter().all(|q| q.from < p.from))
        .map(|(_, p)| p)
        .collect();
    let mut text = String::new();
    for (i, p) in used.iter().enumerate() {
        let next = used.get(i + 1).map(|q| q.from);
        text += &match (i, next) {
            (0, Some(to)) => format!("{} above a relative tolerance of {to:e}", p.name),
            (_, Some(to)) => format!(", {} from there down to {to:e}", p.name),
            (_, None) => format!(", {} from there down", p.name),
        };
    }
    format!(
        "an explicit Runge-Kutta pair ({text}), or diffsol's BDF (implicit, variable order) while \
         the parameters make the model stiff"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_models::Ball;

    #[test]
    fn the_pair_follows_the_table_and_the_text_names_each_band() {
        assert!(std::ptr::eq(explicit_pair::<Ball>(1e-6), &TSIT5));
        assert!(std::ptr::eq(explicit_pair::<Ball>(1e-9), &DOP853));
        assert_eq!(
            describe::<Ball>(),
            "an explicit Runge-Kutta pair (Tsitouras' 5(4) above a relative tolerance of 1e-9, \
             Dormand and Prince's 8(5,3) from there down), or diffsol's BDF (implicit, variable \
             order) while the parameters make the model stiff"
        );
    }
}
