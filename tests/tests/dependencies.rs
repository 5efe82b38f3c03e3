//! The ModelStructure's dependencies against the equations. Every FMU is probed through the C ABI
//! as a Model Exchange instance at random points: parameters near the start values or near one
//! of the model's regimes (`regimes`: eight shafts in eight gears, each chain model, a ten-row
//! loss table), zero parameters made nonzero half the time (a zero hides what it multiplies),
//! random inputs, and states the FMU reaches from there. At each point every known is moved a
//! little, and the unknowns that move with it are its dependents.
//! - `Outputs` and `Derivatives`: the knowns are the states and the inputs; the event iteration
//!   first sets the modes, which then stay fixed while a continuous known moves. A discrete input
//!   moves in Event Mode and the event iteration follows (a gear shift), as an importer does it.
//!   So a mode or a count that only the model's own events change (at a state or time event,
//!   from the values before it) declares no known: between events it is a constant, and at an
//!   event it is part of the event iteration the importer runs anyway.
//! - `InitialUnknowns`: the knowns are the parameters and the inputs, in Initialization Mode.
//!
//! In both lists the declared dependencies must be exactly what the probe sees: a move by an
//! undeclared known fails (an importer would miss an algebraic loop or a changed output), and so
//! does a declared known that never moved over all samples (an importer would see a loop that
//! is not there). In Initialization Mode a known also moves far (to zero, to minus itself, well
//! beyond) and both ways, which crosses the switches a start can meet (a sheave on its stop, a
//! mode); regimes put the start on such a switch where it is rare (`at`).
//! An FMU that provides exact derivatives is judged at the same points by its Jacobian as well
//! (`Exact`): each entry against Richardson-extrapolated differences within 1e-8, and the
//! entries that are nonzero against the declarations by the same rule.
//! `FMU_DEPENDENCIES_OBSERVED=1` prints what the probe saw of every unknown whose declaration
//! differs, the list to start from when declaring a new component's dependencies;
//! `FMU_DEPENDENCIES_SEED=<u64>` draws other samples: "moves with ... but does not declare it"
//! is then still a real dependency, while "never moved" can be a rare pair those samples missed
//! (a gear and crankshaft pair, a limit that binds at a stop).

use fmu_harness::{Fmu, Instance, OK};
use model_description::{Causality, ModelDescription, Unknown, Variability, VariableType};
use std::collections::{BTreeMap, BTreeSet};

// The probe is here; the parts it stands on are in tests/tests/dependencies/.
#[path = "dependencies/exact.rs"]
mod exact;
#[path = "dependencies/observed.rs"]
mod observed;
#[path = "dependencies/random.rs"]
mod random;
#[path = "dependencies/regimes.rs"]
mod regimes;
#[path = "dependencies/tally.rs"]
mod tally;
#[path = "dependencies/variables.rs"]
mod variables;

use exact::Exact;
use observed::{declared, mismatches, Mismatches, Observed};
use random::{random_integer, random_value, Random};
use regimes::{random_knowns, Value};
use tally::Tally;
use variables::{inputs, moved, name, parameters, range, read, variable, write, Variable};

/// Random samples per FMU for Outputs and Derivatives (each runs the FMU for a while first) and
/// for InitialUnknowns (cheap; the FastDrivetrain needs each of 64 gear and crank pairs).
const SAMPLES: usize = 1000;
const INITIAL_SAMPLES: usize = 3000;
/// The exact derivatives of the initial unknowns are judged at every third sample: as many
/// points as for the outputs and derivatives.
const EXACT_EVERY: usize = 3;

/// An instance of the given interface in Initialization Mode with the given knowns set (None
/// if one is refused).
fn initializing<'a>(fmu: &'a Fmu, me: bool, knowns: &[(usize, Value)]) -> Option<Instance<'a>> {
    let inst = if me {
        fmu.instantiate_me("probe")
    } else {
        fmu.instantiate("probe")
    };
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    let md = &fmu.md;
    for &(k, value) in knowns {
        if let Value::Is(value) = value {
            if !write(&inst, variable(md, k), value) {
                return None;
            }
        }
    }
    for &(k, value) in knowns {
        if let Value::Of { other, lo, hi } = value {
            // Their values as the sample gives them (a get refuses while `k` is invalid).
            let given = |i: usize| match knowns.iter().find(|(j, _)| *j == i) {
                Some((_, Value::Is(v))) => *v,
                _ => range(md, i).0,
            };
            let (k, lo, hi) = (variable(md, k), given(lo), given(hi));
            // `other` is given once `k` lies somewhere valid between `lo` and `hi`: tried on a grid.
            let mut value = read(&inst, variable(md, other));
            for i in 1..32 {
                if value.is_finite() {
                    break;
                }
                if write(&inst, k, lo + (hi - lo) * f64::from(i) / 32.0) {
                    value = read(&inst, variable(md, other));
                }
            }
            if !write(&inst, k, value) {
                return None;
            }
        }
    }
    Some(inst)
}

/// Moves a known as an importer can (a state in Continuous-Time Mode, an input in Event Mode),
/// runs the event iteration and reads the unknowns, then restores the FMU state taken before.
/// `Ok(None)` if the move was refused; `Err` if the event iteration failed, which leaves the
/// instance in error.
fn event_move(
    inst: &Instance,
    v: Variable,
    state: Option<usize>,
    x: &[f64],
    value: f64,
    values: &dyn Fn(&Instance) -> Vec<f64>,
) -> Result<Option<Vec<f64>>, ()> {
    let (status, saved) = inst.get_state();
    assert_eq!(status, OK);
    let accepted = match state {
        Some(j) => {
            let mut y = x.to_vec();
            y[j] = value;
            let ok = inst.set_continuous_states(&y) == OK;
            assert_eq!(inst.enter_event_mode(), OK);
            ok
        }
        None => {
            assert_eq!(inst.enter_event_mode(), OK);
            write(inst, v, value)
        }
    };
    let result = if !accepted {
        None
    } else if inst.event_iteration().0 == OK {
        Some(())
    } else {
        assert_eq!(inst.free_state(saved), OK);
        return Err(());
    };
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    let result = result.map(|()| values(inst));
    assert_eq!(inst.set_state(&saved), OK);
    assert_eq!(inst.free_state(saved), OK);
    Ok(result)
}

/// States the FMU reaches: a Co-Simulation run from its start for 50 to 300 ms with the given
/// knowns; if there is none, why.
fn reachable(
    fmu: &Fmu,
    states: &[usize],
    knowns: &[(usize, Value)],
    rng: &mut Random,
) -> Result<Vec<f64>, &'static str> {
    let md = &fmu.md;
    let inst = initializing(fmu, false, knowns).ok_or("the run's start refused")?;
    if inst.exit_initialization_mode() != OK {
        return Err("the run's initialization refused");
    }
    let steps = (175.0 + 125.0 * rng.next()) as usize;
    for k in 0..steps {
        if inst.do_step(k as f64 * 1e-3, 1e-3) != OK {
            return Err("the run failed");
        }
    }
    Ok(states
        .iter()
        .map(|s| read(&inst, variable(md, *s)))
        .collect())
}

/// Outputs and Derivatives against the states and inputs.
fn step_dependencies(fmu: &Fmu, rng: &mut Random) -> Mismatches {
    let md = &fmu.md;
    let structure = &md.model_structure;
    let states: Vec<usize> = structure
        .derivatives
        .iter()
        .map(|d| match md.model_variables[d.index - 1].kind {
            VariableType::Real {
                derivative: Some(s),
                ..
            } => s,
            _ => panic!("{}: derivative without its state", md.model_name),
        })
        .collect();
    let inputs = inputs(md);
    let knowns: Vec<usize> = states.iter().chain(&inputs).copied().collect();
    let unknowns: Vec<Unknown> = structure
        .outputs
        .iter()
        .chain(&structure.derivatives)
        .cloned()
        .collect();
    let mut observed = Observed::new(unknowns.len());
    let mut local = Observed::new(unknowns.len());
    let mut exact = Exact::new(md, &unknowns, true);
    let mut tally = Tally::of(SAMPLES);
    for _ in 0..SAMPLES {
        // A random point: random parameters and inputs, states the FMU reaches with them; the
        // event iteration sets the modes there (a state may be reset onto a stop).
        let chance = (2.0 / parameters(md).len().max(1) as f64).min(0.25);
        let given = random_knowns(md, chance, rng);
        let mut x = match reachable(fmu, &states, &given, rng) {
            Ok(x) => x,
            Err(why) => {
                tally.skip(why);
                continue;
            }
        };
        // Half the points leave the trajectory a little (a chain run stretched while its
        // damper pushes, a sheave moving against its push): states a run passes through only
        // briefly.
        if rng.next() > 0.0 {
            for xj in &mut x {
                *xj += 0.05 * rng.next() * xj.abs().max(1.0);
            }
        }
        let Some(inst) = initializing(fmu, true, &given) else {
            tally.skip("start refused");
            continue;
        };
        if inst.exit_initialization_mode() != OK || inst.event_iteration().0 != OK {
            tally.skip("initialization refused");
            continue;
        }
        assert_eq!(inst.enter_continuous_time_mode(), OK);
        for &i in inputs.iter().filter(|i| !variable(md, **i).integer) {
            write(
                &inst,
                variable(md, i),
                random_value(md, i, range(md, i).0, 0.5, rng),
            );
        }
        if inst.set_continuous_states(&x) != OK {
            tally.skip("states refused");
            continue;
        }
        assert_eq!(inst.enter_event_mode(), OK);
        if inst.event_iteration().0 != OK {
            tally.skip("event iteration refused");
            continue;
        }
        assert_eq!(inst.enter_continuous_time_mode(), OK);
        let (_, x) = inst.continuous_states();
        let values = |inst: &Instance| -> Vec<f64> {
            let mut dx = inst.derivatives().1;
            let mut all: Vec<f64> = structure
                .outputs
                .iter()
                .map(|u| read(inst, variable(md, u.index)))
                .collect();
            all.append(&mut dx);
            all
        };
        let base = values(&inst);
        if base.iter().any(|v| !v.is_finite()) {
            tally.skip("outside the domain"); // a CVT sheave beyond its travel
            continue;
        }
        observed.base(&base);
        local.base(&base);
        tally.probed += 1;
        for &k in &knowns {
            let v = variable(md, k);
            let state = states.iter().position(|s| *s == k);
            let before = match state {
                Some(j) => x[j],
                None => read(&inst, v),
            };
            // A discrete input changes in Event Mode only, where the event iteration acts on
            // it (a gear shift).
            if v.integer && state.is_none() {
                match event_move(&inst, v, state, &x, before + 1.0, &values) {
                    Err(()) => break,
                    Ok(Some(moved_to)) => observed.record(&base, &moved_to, k),
                    Ok(None) => {}
                }
                continue;
            }
            let set = |value: f64| match state {
                Some(j) => {
                    let mut y = x.clone();
                    y[j] = value;
                    inst.set_continuous_states(&y) == OK
                }
                None => write(&inst, v, value),
            };
            // The exact derivatives first: where a value jumps, a small move is no derivative.
            let jumped = match &mut exact {
                Some(exact) => {
                    let at = |value: f64| {
                        let moved_to = set(value).then(|| values(&inst));
                        assert!(set(before));
                        moved_to.filter(|v| v.iter().all(|v| v.is_finite()))
                    };
                    exact.column(&inst, md, (k, before), &base, &at)
                }
                None => vec![],
            };
            // Small moves either way, and larger ones that cross where a tension is clipped
            // at zero or a friction saturates (the modes stay fixed meanwhile).
            let scale = before.abs().max(1.0);
            let mut moved = false;
            for d in [1e-5_f64, -1e-5, 1e-2, -1e-2] {
                let small = d.abs() < 1e-2;
                if !set(before + d * scale) {
                    tally.move_to(small, false, false);
                    continue;
                }
                let moved_to = values(&inst);
                assert!(set(before));
                let finite = moved_to.iter().all(|v| v.is_finite());
                tally.move_to(small, true, finite);
                moved |= small && finite;
                if finite {
                    observed.record(&base, &moved_to, k);
                    if d.abs() < 1e-2 {
                        local.record_except(&base, &moved_to, k, &jumped);
                    }
                }
            }
            tally.known(moved);
        }
    }
    tally.check(md, "output/derivative");
    let mut found = mismatches(
        md,
        "output/derivative",
        &unknowns,
        &knowns,
        &observed.dependencies(),
    );
    if let Some(exact) = exact {
        found.extend(exact.mismatches(
            md,
            "output/derivative",
            &unknowns,
            &knowns,
            &local.dependencies(),
        ));
    }
    found
}

/// InitialUnknowns against the parameters and inputs.
fn initial_dependencies(fmu: &Fmu, rng: &mut Random) -> Mismatches {
    let md = &fmu.md;
    let knowns: Vec<usize> = inputs(md).into_iter().chain(parameters(md)).collect();
    let unknowns = &md.model_structure.initial_unknowns;
    let mut observed = Observed::new(unknowns.len());
    let mut local = Observed::new(unknowns.len());
    let mut exact = Exact::new(md, unknowns, false);
    let mut tally = Tally::of(INITIAL_SAMPLES);
    for sample in 0..INITIAL_SAMPLES {
        // The first sample at the start values; then random inputs and a few parameters (two
        // on average, a quarter at most) moved: more breaks the rules the initialization
        // enforces (the FastDrivetrain's ratios, the CVT's geometry).
        let given = if sample == 0 {
            vec![]
        } else {
            let chance = (2.0 / knowns.len() as f64).min(0.25);
            random_knowns(md, chance, rng)
        };
        let Some(inst) = initializing(fmu, true, &given) else {
            tally.skip("start refused");
            continue;
        };
        let values = |inst: &Instance| -> Vec<f64> {
            unknowns
                .iter()
                .map(|u| read(inst, variable(md, u.index)))
                .collect()
        };
        let base = values(&inst);
        if base.iter().any(|v| !v.is_finite()) {
            tally.skip("initialization refused");
            continue;
        }
        observed.base(&base);
        local.base(&base);
        tally.probed += 1;
        for &k in &knowns {
            let v = variable(md, k);
            let before = read(&inst, v);
            // A Real moves a little either way (one way may leave the valid set: a sheave on its
            // stop), and far (to zero, to minus itself, well beyond) to cross
            // the switches (a mode, an impact at the start) that a small move does not reach;
            // an Integer takes each other value of its range.
            let (_, min, max) = range(md, k);
            // The exact derivatives first: where a value jumps, a small move is no derivative.
            let judged = sample % EXACT_EVERY == 0;
            let jumped = match (&mut exact, v.integer || !judged) {
                (Some(exact), false) => {
                    let at = |value: f64| {
                        let moved_to = write(&inst, v, value).then(|| values(&inst));
                        assert!(write(&inst, v, before));
                        moved_to.filter(|v| v.iter().all(|v| v.is_finite()))
                    };
                    exact.column(&inst, md, (k, before), &base, &at)
                }
                _ => vec![],
            };
            let small = 1e-5 * before.abs().max(1.0);
            // Each move, and whether it is a small one.
            let moves: Vec<(f64, bool)> = if v.integer {
                let (lo, hi) = if max - min <= 16.0 {
                    (min, max)
                } else {
                    (before - 1.0, before + 1.0)
                };
                (lo as i64..=hi as i64).map(|i| (i as f64, false)).collect()
            } else {
                let far = 1.0 + before.abs();
                vec![
                    (before + small, true),
                    (before - small, true),
                    (0.0, false),
                    (-before, false),
                    (before + 2.0 * far, false),
                    (before - 2.0 * far, false),
                ]
            };
            let mut moved = false;
            for (after, is_small) in moves.into_iter().filter(|m| m.0 != before) {
                if !write(&inst, v, after) {
                    tally.move_to(is_small, false, false);
                    continue;
                }
                let moved_to = values(&inst);
                assert!(write(&inst, v, before));
                let finite = moved_to.iter().all(|v| v.is_finite());
                tally.move_to(is_small, true, finite);
                moved |= is_small && finite;
                if !finite {
                    continue;
                }
                observed.record(&base, &moved_to, k);
                if is_small && judged {
                    local.record_except(&base, &moved_to, k, &jumped);
                }
            }
            if !v.integer {
                tally.known(moved);
            }
        }
    }
    tally.check(md, "initial unknown");
    let mut found = mismatches(
        md,
        "initial unknown",
        unknowns,
        &knowns,
        &observed.dependencies(),
    );
    if let Some(exact) = exact {
        found.extend(exact.mismatches(
            md,
            "initial unknown",
            unknowns,
            &knowns,
            &local.dependencies(),
        ));
    }
    found
}

#[test]
fn declared_dependencies_are_the_equations_dependencies() {
    let seed: u64 = std::env::var("FMU_DEPENDENCIES_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15);
    // Each model its own random stream (from the seed and its name), so that what one finds
    // does not depend on which others are probed; two at a time.
    let models = fmu_harness::models_under_test();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let found = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(model) = models.get(i) else { break };
                let fmu = Fmu::load(model);
                let own = model.bytes().fold(seed, |h, b| {
                    (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01B3)
                });
                let mut rng = Random(own | 1);
                for list in [
                    step_dependencies(&fmu, &mut rng),
                    initial_dependencies(&fmu, &mut rng),
                ] {
                    let mut found = found.lock().unwrap();
                    found.extend(list.undeclared);
                    found.extend(list.unseen);
                }
            });
        }
    });
    let found = found.into_inner().unwrap();
    assert!(found.is_empty(), "{}", found.join("\n"));
}
