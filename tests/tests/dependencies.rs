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
//! For `Outputs` and `Derivatives` the declared lists must be exactly what the probe sees: a move
//! by an undeclared known fails (an importer would miss an algebraic loop or a changed output),
//! and so does a declared known that never moved over all samples (an importer would see a loop
//! that is not there). For `InitialUnknowns` an undeclared move fails; declared knowns never
//! seen to move are counted and printed (`FMU_DEPENDENCIES_VERBOSE=1` lists them).
//! `FMU_DEPENDENCIES_OBSERVED=1` prints what the probe saw of every unknown whose declaration
//! differs, the list to start from when declaring a new component's dependencies.

use fmu_harness::{Fmu, Instance, OK};
use model_description::{Causality, ModelDescription, Unknown, Variability, VariableType};
use std::collections::BTreeSet;

/// Random samples per FMU for each list.
const SAMPLES: usize = 400;

/// A small deterministic generator (xorshift64*), so that a failure repeats.
struct Random(u64);

impl Random {
    /// Uniform in [-1, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        bits as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// A variable the probe reads or moves: its value reference and whether it is an Integer.
#[derive(Clone, Copy)]
struct Variable {
    vr: u32,
    integer: bool,
}

fn variable(md: &ModelDescription, index: usize) -> Variable {
    let v = &md.model_variables[index - 1];
    Variable {
        vr: v.value_reference,
        integer: matches!(v.kind, VariableType::Integer { .. }),
    }
}

fn name(md: &ModelDescription, index: usize) -> &str {
    &md.model_variables[index - 1].name
}

/// Start, min and max of a variable (Integers as Reals).
fn range(md: &ModelDescription, index: usize) -> (f64, f64, f64) {
    match &md.model_variables[index - 1].kind {
        VariableType::Real {
            start, min, max, ..
        } => (
            start.unwrap_or(0.0),
            min.unwrap_or(f64::NEG_INFINITY),
            max.unwrap_or(f64::INFINITY),
        ),
        VariableType::Integer { start, min, max } => (
            f64::from(start.unwrap_or(0)),
            min.map_or(f64::NEG_INFINITY, f64::from),
            max.map_or(f64::INFINITY, f64::from),
        ),
        VariableType::Boolean { .. } => (0.0, 0.0, 1.0),
    }
}

fn read(inst: &Instance, v: Variable) -> f64 {
    if v.integer {
        let mut x = [0];
        let status = unsafe { (inst.fmu.api.get_integer)(inst.c, &v.vr, 1, x.as_mut_ptr()) };
        if status == OK {
            f64::from(x[0])
        } else {
            f64::NAN
        }
    } else {
        let mut x = [0.0];
        if inst.get_real(&[v.vr], &mut x) == OK {
            x[0]
        } else {
            f64::NAN
        }
    }
}

fn write(inst: &Instance, v: Variable, value: f64) -> bool {
    if v.integer {
        let x = value as i32;
        unsafe { (inst.fmu.api.set_integer)(inst.c, &v.vr, 1, &x) == OK }
    } else {
        inst.set_real(&[v.vr], &[value]) == OK
    }
}

/// Whether two readings differ beyond rounding.
fn moved(a: f64, b: f64) -> bool {
    (a - b).abs() > 1e-9 * a.abs().max(b.abs()).max(1e-3) || a.is_nan() != b.is_nan()
}

/// A random value near `base`, inside the variable's range: moved by up to `spread` of itself
/// (from zero by up to `spread`), an Integer to a random allowed neighbour.
fn random_value(
    md: &ModelDescription,
    index: usize,
    base: f64,
    spread: f64,
    rng: &mut Random,
) -> f64 {
    let (_, min, max) = range(md, index);
    if variable(md, index).integer {
        let (lo, hi) = (min.max(base - 1.0), max.min(base + 1.0));
        return (lo + ((rng.next() + 1.0) / 2.0 * (hi - lo + 1.0)).floor()).min(hi);
    }
    let value = if base == 0.0 {
        spread * rng.next()
    } else {
        base * (1.0 + spread * rng.next())
    };
    value.clamp(min, max)
}

/// An Integer anywhere in its range.
fn random_integer(md: &ModelDescription, index: usize, rng: &mut Random) -> f64 {
    let (_, min, max) = range(md, index);
    (min + ((rng.next() + 1.0) / 2.0 * (max - min + 1.0)).floor()).min(max)
}

/// The parameters the FMU can be given (not constants).
fn parameters(md: &ModelDescription) -> Vec<usize> {
    (1..=md.model_variables.len())
        .filter(|i| {
            let v = &md.model_variables[i - 1];
            v.causality == Causality::Parameter && v.variability != Variability::Constant
        })
        .collect()
}

/// A value drawn uniformly between two bounds.
struct Draw(f64, f64);

/// Parameter sets the probe samples around, besides the start values: the structural choices
/// that switch parts of a model on, which small random moves do not reach.
fn regimes(model: &str) -> Vec<Vec<(String, Draw)>> {
    let fixed = |name: &str, value: f64| (name.to_string(), Draw(value, value));
    let between = |name: &str, lo: f64, hi: f64| (name.to_string(), Draw(lo, hi));
    let mut regimes = vec![vec![]];
    match model {
        // Eight shafts in eight gears: every shaft and every ratio takes part.
        "FastDrivetrain" => {
            let mut eight = vec![fixed("nShafts", 8.0), fixed("nGears", 8.0)];
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
                    if g > 6 || k > 4 {
                        let ratio = if k == 4 {
                            1.0
                        } else {
                            (-1.0f64).powi(k) * (0.4 + 0.15 * (g + k) as f64)
                        };
                        eight.push(fixed(&format!("rho[{g},{k}]"), ratio));
                    }
                }
            }
            regimes.push(eight);
        }
        // Each chain model, with chain damping.
        "ChainDrive" => {
            for chain_model in [1.0, 2.0, 3.0] {
                regimes.push(vec![
                    fixed("chain_model", chain_model),
                    between("c_chain", 0.0, 100.0),
                ]);
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
        _ => {}
    }
    regimes
}

/// A random point of the parameter space near one of the model's regimes: each parameter moved
/// with probability `chance`, a zero one (an initial speed, an offset, a damping) with
/// probability 1/2 since zeros hide dependencies, every input at random (a discrete one anywhere
/// in its range).
fn random_knowns(md: &ModelDescription, chance: f64, rng: &mut Random) -> Vec<(usize, f64)> {
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
    let regime: Vec<(usize, f64)> = regime
        .iter()
        .map(|(name, Draw(lo, hi))| (index(name), lo + (hi - lo) * (rng.next() + 1.0) / 2.0))
        .collect();
    let base = |k: usize| {
        regime
            .iter()
            .find(|(i, _)| *i == k)
            .map_or(range(md, k).0, |(_, v)| *v)
    };
    let mut knowns = regime.clone();
    for k in parameters(md) {
        let b = base(k);
        let draw = (rng.next() + 1.0) / 2.0;
        if draw < chance || (b == 0.0 && !variable(md, k).integer && draw < 0.5) {
            knowns.push((k, random_value(md, k, b, 0.05, rng)));
        }
    }
    for i in inputs(md) {
        let (_, min, max) = range(md, i);
        let value = if variable(md, i).integer && max - min < 8.0 {
            random_integer(md, i, rng)
        } else {
            random_value(md, i, base(i), 0.5, rng)
        };
        knowns.push((i, value));
    }
    knowns
}

fn inputs(md: &ModelDescription) -> Vec<usize> {
    (1..=md.model_variables.len())
        .filter(|i| md.model_variables[i - 1].causality == Causality::Input)
        .collect()
}

/// The knowns an unknown declares: its list, or every known when it has none.
fn declared(unknown: &Unknown, knowns: &[usize]) -> BTreeSet<usize> {
    match &unknown.dependencies {
        Some(list) => list.iter().copied().collect(),
        None => knowns.iter().copied().collect(),
    }
}

/// How the observed dependencies differ from the declared ones, in words: those observed but
/// not declared, and those declared but never observed. `FMU_DEPENDENCIES_OBSERVED=1` prints
/// what was observed of each unknown whose declaration differs.
struct Mismatches {
    undeclared: Vec<String>,
    unseen: Vec<String>,
}

fn mismatches(
    md: &ModelDescription,
    list: &str,
    unknowns: &[Unknown],
    knowns: &[usize],
    observed: &[BTreeSet<usize>],
) -> Mismatches {
    let (mut undeclared, mut unseen) = (vec![], vec![]);
    for (u, seen) in unknowns.iter().zip(observed) {
        let declared = declared(u, knowns);
        let (model, unknown) = (&md.model_name, name(md, u.index));
        for k in seen.difference(&declared) {
            let known = name(md, *k);
            undeclared.push(format!(
                "{model}: {list} {unknown} moves with {known} but does not declare it"
            ));
        }
        for k in declared.difference(seen) {
            let known = name(md, *k);
            unseen.push(format!(
                "{model}: {list} {unknown} declares {known} but never moved with it"
            ));
        }
        if std::env::var_os("FMU_DEPENDENCIES_OBSERVED").is_some() && declared != *seen {
            let names: Vec<&str> = seen.iter().map(|k| name(md, *k)).collect();
            eprintln!("{model}: {list} {unknown} observed {names:?}");
        }
    }
    Mismatches { undeclared, unseen }
}

/// An instance of the given interface in Initialization Mode with the given knowns set (None
/// if one is refused).
fn initializing<'a>(fmu: &'a Fmu, me: bool, knowns: &[(usize, f64)]) -> Option<Instance<'a>> {
    let inst = if me {
        fmu.instantiate_me("probe")
    } else {
        fmu.instantiate("probe")
    };
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    for &(k, value) in knowns {
        if !write(&inst, variable(&fmu.md, k), value) {
            return None;
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
/// knowns (None if the run fails).
fn reachable(
    fmu: &Fmu,
    states: &[usize],
    knowns: &[(usize, f64)],
    rng: &mut Random,
) -> Option<Vec<f64>> {
    let md = &fmu.md;
    let inst = initializing(fmu, false, knowns)?;
    if inst.exit_initialization_mode() != OK {
        return None;
    }
    let steps = (175.0 + 125.0 * rng.next()) as usize;
    for k in 0..steps {
        if inst.do_step(k as f64 * 1e-3, 1e-3) != OK {
            return None;
        }
    }
    Some(
        states
            .iter()
            .map(|s| read(&inst, variable(md, *s)))
            .collect(),
    )
}

/// Notes `known` as a dependency of every unknown that moved from `base` to `moved_to`.
fn record(observed: &mut [BTreeSet<usize>], base: &[f64], moved_to: &[f64], known: usize) {
    for (u, (a, b)) in base.iter().zip(moved_to).enumerate() {
        if moved(*a, *b) {
            observed[u].insert(known);
        }
    }
}

/// Most samples must be inside the model's domain, or the probe saw too little.
fn enough(md: &ModelDescription, probed: usize) {
    assert!(
        probed >= SAMPLES / 8,
        "{}: {probed} samples probed",
        md.model_name
    );
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
    let mut observed = vec![BTreeSet::new(); unknowns.len()];
    let mut probed = 0;
    for _ in 0..SAMPLES {
        // A random point: random parameters and inputs, states the FMU reaches with them; the
        // event iteration sets the modes there (a state may be reset onto a stop).
        let chance = (2.0 / parameters(md).len().max(1) as f64).min(0.25);
        let given = random_knowns(md, chance, rng);
        let Some(x) = reachable(fmu, &states, &given, rng) else {
            continue;
        };
        let Some(inst) = initializing(fmu, true, &given) else {
            continue;
        };
        if inst.exit_initialization_mode() != OK || inst.event_iteration().0 != OK {
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
            continue;
        }
        assert_eq!(inst.enter_event_mode(), OK);
        if inst.event_iteration().0 != OK {
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
            continue; // outside the model's domain (a CVT sheave beyond its travel)
        }
        probed += 1;
        for &k in &knowns {
            let v = variable(md, k);
            let state = states.iter().position(|s| *s == k);
            let before = match state {
                Some(j) => x[j],
                None => read(&inst, v),
            };
            let after = if v.integer {
                before + 1.0
            } else {
                before + 1e-5 * before.abs().max(1.0)
            };
            // A discrete input changes in Event Mode only, where the event iteration acts on
            // it (a gear shift).
            if v.integer && state.is_none() {
                match event_move(&inst, v, state, &x, after, &values) {
                    Err(()) => break,
                    Ok(Some(moved_to)) => record(&mut observed, &base, &moved_to, k),
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
            if !set(after) {
                continue;
            }
            let moved_to = values(&inst);
            assert!(set(before));
            record(&mut observed, &base, &moved_to, k);
        }
    }
    enough(md, probed);
    mismatches(md, "output/derivative", &unknowns, &knowns, &observed)
}

/// InitialUnknowns against the parameters and inputs.
fn initial_dependencies(fmu: &Fmu, rng: &mut Random) -> Mismatches {
    let md = &fmu.md;
    let knowns: Vec<usize> = inputs(md).into_iter().chain(parameters(md)).collect();
    let unknowns = &md.model_structure.initial_unknowns;
    let mut observed = vec![BTreeSet::new(); unknowns.len()];
    let mut probed = 0;
    for sample in 0..SAMPLES {
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
            continue; // parameters the initialization refuses
        }
        probed += 1;
        for &k in &knowns {
            let v = variable(md, k);
            let before = read(&inst, v);
            let (_, _, max) = range(md, k);
            let after = if v.integer {
                if before + 1.0 <= max {
                    before + 1.0
                } else {
                    before - 1.0
                }
            } else {
                before + 1e-5 * before.abs().max(1.0)
            };
            if !write(&inst, v, after) {
                continue;
            }
            let moved_to = values(&inst);
            assert!(write(&inst, v, before));
            if moved_to.iter().any(|v| !v.is_finite()) {
                continue;
            }
            record(&mut observed, &base, &moved_to, k);
        }
    }
    enough(md, probed);
    mismatches(md, "initial unknown", unknowns, &knowns, &observed)
}

#[test]
fn declared_dependencies_are_the_equations_dependencies() {
    let mut rng = Random(0x9E37_79B9_7F4A_7C15);
    let mut found = vec![];
    for fmu in Fmu::all() {
        let step = step_dependencies(&fmu, &mut rng);
        let initial = initial_dependencies(&fmu, &mut rng);
        eprintln!(
            "{}: InitialUnknowns dependencies declared but never seen to move: {}",
            fmu.md.model_name,
            initial.unseen.len()
        );
        if std::env::var_os("FMU_DEPENDENCIES_VERBOSE").is_some() {
            for line in &initial.unseen {
                eprintln!("  {line}");
            }
        }
        found.extend(step.undeclared.into_iter().chain(step.unseen));
        found.extend(initial.undeclared);
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
