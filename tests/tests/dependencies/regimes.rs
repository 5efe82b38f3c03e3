//! Where the probe samples: each model's regimes (the structural choices small random moves do not
//! reach) and random points of the parameter space near them.

use super::*;

/// How a regime sets a known: a value drawn uniformly between two bounds, or the value another
/// variable takes once the rest is set (a sheave started exactly on its computed stop), which
/// the FMU gives only once the known lies somewhere valid between the values of two others
/// (the sheave between its limits).
enum Draw {
    Between(f64, f64),
    ValueOf(&'static str, &'static str, &'static str),
}

/// A known's value in a sample: a value, or that of `other`, found once the known lies between
/// the values of `lo` and `hi` (indices, as `other`).
#[derive(Clone, Copy)]
pub(crate) enum Value {
    Is(f64),
    Of { other: usize, lo: usize, hi: usize },
}

/// Parameter sets the probe samples around, besides the start values: the structural choices
/// that switch parts of a model on, which small random moves do not reach.
fn regimes(model: &str) -> Vec<Vec<(String, Draw)>> {
    let fixed = |name: &str, value: f64| (name.to_string(), Draw::Between(value, value));
    let between = |name: &str, lo: f64, hi: f64| (name.to_string(), Draw::Between(lo, hi));
    let at = |name: &str, other: &'static str, (lo, hi): (&'static str, &'static str)| {
        (name.to_string(), Draw::ValueOf(other, lo, hi))
    };
    let mut regimes = vec![vec![]];
    match model {
        // Eight shafts in eight gears, the sprocket on shaft 4 or 8: every shaft and every
        // ratio takes part.
        "FastDrivetrain" => {
            for sprocket in [4, 8] {
                let mut eight = vec![
                    fixed("nShafts", 8.0),
                    fixed("nGears", 8.0),
                    fixed("iSprocket", sprocket as f64),
                    between("iCrank", 1.0, 8.99), // an Integer: truncated
                ];
                for k in 5..=8 {
                    let k_f = k as f64;
                    for (name, value) in [
                        ("m", 1.0),
                        ("Jxx", 0.01),
                        ("Jyy", 0.004),
                        ("hx", 0.02),
                        ("hz", -0.03),
                    ] {
                        eight.push(fixed(&format!("{name}[{k}]"), value * (1.0 + 0.1 * k_f)));
                    }
                }
                for g in 1..=8 {
                    for k in 1..=8 {
                        let ratio = if k == sprocket {
                            1.0
                        } else {
                            (-1.0f64).powi(k) * (0.4 + 0.15 * (g + k) as f64)
                        };
                        eight.push(fixed(&format!("rho[{g},{k}]"), ratio));
                    }
                }
                regimes.push(eight);
            }
        }
        // Each chain model, with chain damping, the wheel at rest or turning at the start
        // (friction and brake then load the chain), and an engine torque that snatches the
        // chain taut and slack.
        "ChainDrive" => {
            for chain_model in [1.0, 2.0, 3.0] {
                for w_rw_start in [0.0, 50.0] {
                    regimes.push(vec![
                        fixed("chain_model", chain_model),
                        between("c_chain", 0.0, 2000.0),
                        between("w_rw_start", -w_rw_start, w_rw_start),
                        between("tau_eng", -150.0, 150.0),
                    ]);
                }
            }
        }
        // Ten loss-table rows with breakpoints inside the speeds the samples start from.
        "LossyGear" => {
            let mut rows = vec![fixed("nLossRows", 10.0), between("w_b_start", -20.0, 20.0)];
            for i in 0..10 {
                let x = i as f64;
                for (j, value) in [
                    2.0 * x,
                    0.9 - 0.05 * x,
                    0.85 - 0.04 * x,
                    0.1 + 0.02 * x,
                    0.12 + 0.03 * x,
                ]
                .into_iter()
                .enumerate()
                {
                    rows.push(fixed(&format!("lossTable[{},{}]", i + 1, j + 1), value));
                }
            }
            regimes.push(rows);
        }
        // The secondary sheave starting inside its travel (+-6 mm), or on one of its stops,
        // pushed into it or away by the actuator or the belt; the stop set by its own limit or
        // by the primary's.
        // The sheaves' rest positions inside their travel (+-6 mm), which a zero parameter's
        // random draw (+-50 mm) leaves.
        "CVT" => {
            regimes[0].push(between("s2_start", -0.0055, 0.0055));
            for (end, limit, wide) in [("s2_lo", "s2_min", -0.05), ("s2_hi", "s2_max", 0.05)] {
                for limit in [None, Some((limit, wide))] {
                    let mut stop = vec![
                        at("s2_start", end, ("s2_min", "s2_max")),
                        between("F_2", -100.0, 100.0),
                        between("w1_start", -30.0, 30.0),
                    ];
                    stop.extend(limit.map(|(name, value)| fixed(name, value)));
                    regimes.push(stop);
                }
            }
            for regime in &mut regimes {
                regime.push(between("s1_bar", -0.005, 0.005));
                regime.push(between("s2_bar", -0.005, 0.005));
            }
        }
        _ => {}
    }
    regimes
}

/// A random point of the parameter space near one of the model's regimes: each parameter moved
/// with probability `chance`, a zero one (an initial speed, an offset, a damping) with
/// probability 1/2 since zeros hide dependencies, every input at random (a discrete one anywhere
/// in its range).
pub(crate) fn random_knowns(
    md: &ModelDescription,
    chance: f64,
    rng: &mut Random,
) -> Vec<(usize, Value)> {
    let regimes = regimes(&md.model_name);
    let regime =
        &regimes[((rng.next() + 1.0) / 2.0 * regimes.len() as f64) as usize % regimes.len()];
    let index = |name: &str| {
        1 + md
            .model_variables
            .iter()
            .position(|v| v.name == name)
            .unwrap_or_else(|| panic!("{}: no variable {name}", md.model_name))
    };
    let regime: Vec<(usize, Value)> = regime
        .iter()
        .map(|(name, draw)| {
            let value = match draw {
                Draw::Between(lo, hi) => Value::Is(lo + (hi - lo) * (rng.next() + 1.0) / 2.0),
                Draw::ValueOf(other, lo, hi) => Value::Of {
                    other: index(other),
                    lo: index(lo),
                    hi: index(hi),
                },
            };
            (index(name), value)
        })
        .collect();
    let base = |k: usize| match regime.iter().find(|(i, _)| *i == k) {
        Some((_, Value::Is(v))) => Some(*v),
        Some((_, Value::Of { .. })) => None,
        None => Some(range(md, k).0),
    };
    let mut knowns = regime.clone();
    for k in parameters(md) {
        let Some(b) = base(k) else { continue };
        let draw = (rng.next() + 1.0) / 2.0;
        if draw < chance || (b == 0.0 && !variable(md, k).integer && draw < 0.5) {
            knowns.push((k, Value::Is(random_value(md, k, b, 0.05, rng))));
        }
    }
    for i in inputs(md) {
        let (_, min, max) = range(md, i);
        let value = if variable(md, i).integer && max - min < 8.0 {
            random_integer(md, i, rng)
        } else {
            random_value(md, i, base(i).unwrap_or(0.0), 0.5, rng)
        };
        knowns.push((i, Value::Is(value)));
    }
    knowns
}
