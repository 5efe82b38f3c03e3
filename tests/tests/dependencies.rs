//! The ModelStructure's dependencies against the equations. Every FMU is probed through the C ABI
//! as a Model Exchange instance at random states, inputs and parameters: each known is moved a
//! little, and the unknowns that move with it are its dependents.
//! - `Outputs` and `Derivatives`: the knowns are the states and the inputs; at each sample the
//!   event iteration first sets the modes, which then stay fixed while the knowns move.
//! - `InitialUnknowns`: the knowns are the parameters and the inputs, in Initialization Mode.
//!
//! A move of an unknown by a known it does not declare fails the test, with the variables named:
//! an importer that trusts the declaration would miss an algebraic loop or a changed output. A
//! declared dependency that never moved over all samples is counted and reported, not failed:
//! with zero start values and modes the samples do not reach, "never moved" is no proof of
//! independence (most come from unknowns that declare no list, that is every known).

use fmu_harness::{Fmu, Instance, OK};
use model_description::{Causality, ModelDescription, Unknown, Variability, VariableType};
use std::collections::BTreeSet;

/// Random samples per FMU for each list.
const SAMPLES: usize = 24;

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

/// A random value near a variable's start, inside its range: the start moved by up to `spread`
/// of itself (from zero by up to `spread`), an Integer to a random allowed neighbour.
fn random_value(md: &ModelDescription, index: usize, spread: f64, rng: &mut Random) -> f64 {
    let (start, min, max) = range(md, index);
    if variable(md, index).integer {
        let (lo, hi) = (min.max(start - 1.0), max.min(start + 1.0));
        return (lo + ((rng.next() + 1.0) / 2.0 * (hi - lo + 1.0)).floor()).min(hi);
    }
    let value = if start == 0.0 {
        spread * rng.next()
    } else {
        start * (1.0 + spread * rng.next())
    };
    value.clamp(min, max)
}

/// The knowns an unknown declares: its list, or every known when it has none.
fn declared(unknown: &Unknown, knowns: &[usize]) -> BTreeSet<usize> {
    match &unknown.dependencies {
        Some(list) => list.iter().copied().collect(),
        None => knowns.iter().copied().collect(),
    }
}

/// Observed dependencies that are not declared, in words, and how many declared ones were never
/// observed.
fn mismatches(
    md: &ModelDescription,
    list: &str,
    unknowns: &[Unknown],
    knowns: &[usize],
    observed: &[BTreeSet<usize>],
) -> (Vec<String>, usize) {
    let (mut undeclared, mut unseen) = (vec![], 0);
    for (u, seen) in unknowns.iter().zip(observed) {
        let declared = declared(u, knowns);
        for k in seen.difference(&declared) {
            undeclared.push(format!(
                "{}: {list} {} moves with {} but does not declare it",
                md.model_name,
                name(md, u.index),
                name(md, *k)
            ));
        }
        for k in declared.difference(seen) {
            unseen += 1;
            if std::env::var_os("FMU_DEPENDENCIES_VERBOSE").is_some() {
                eprintln!(
                    "  {}: {list} {} declares {} but never moved with it",
                    md.model_name,
                    name(md, u.index),
                    name(md, *k)
                );
            }
        }
    }
    (undeclared, unseen)
}

/// States the FMU reaches: a Co-Simulation run from its start for 50 to 300 ms with random
/// constant Real inputs (None if the run fails).
fn reachable(fmu: &Fmu, states: &[usize], inputs: &[usize], rng: &mut Random) -> Option<Vec<f64>> {
    let md = &fmu.md;
    let inst = fmu.instantiate("run");
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    assert_eq!(inst.enter_initialization_mode(), OK);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    for &i in inputs.iter().filter(|i| !variable(md, **i).integer) {
        write(&inst, variable(md, i), random_value(md, i, 0.5, rng));
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
        probed >= SAMPLES / 2,
        "{}: {probed} samples probed",
        md.model_name
    );
}

/// Outputs and Derivatives against the states and inputs.
fn step_dependencies(fmu: &Fmu, rng: &mut Random) -> (Vec<String>, usize) {
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
    let inputs: Vec<usize> = (1..=md.model_variables.len())
        .filter(|i| md.model_variables[i - 1].causality == Causality::Input)
        .collect();
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
        let inst = fmu.instantiate_me("probe");
        assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
        assert_eq!(inst.event_iteration().0, OK);
        // A random point: states the FMU reaches, random inputs; the event iteration sets the
        // modes there (a state may be reset onto a stop).
        let Some(x) = reachable(fmu, &states, &inputs, rng) else {
            continue;
        };
        for &i in &inputs {
            write(&inst, variable(md, i), random_value(md, i, 0.5, rng));
        }
        assert_eq!(inst.enter_continuous_time_mode(), OK);
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
            let set = |value: f64| match state {
                Some(j) => {
                    let mut y = x.clone();
                    y[j] = value;
                    inst.set_continuous_states(&y) == OK
                }
                // A discrete input changes in Event Mode only.
                None if v.integer => {
                    inst.enter_event_mode();
                    let ok = write(&inst, v, value);
                    inst.enter_continuous_time_mode();
                    ok
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
fn initial_dependencies(fmu: &Fmu, rng: &mut Random) -> (Vec<String>, usize) {
    let md = &fmu.md;
    let knowns: Vec<usize> = (1..=md.model_variables.len())
        .filter(|i| {
            let v = &md.model_variables[i - 1];
            v.causality == Causality::Input
                || (v.causality == Causality::Parameter && v.variability != Variability::Constant)
        })
        .collect();
    let unknowns = &md.model_structure.initial_unknowns;
    let mut observed = vec![BTreeSet::new(); unknowns.len()];
    let mut probed = 0;
    for sample in 0..SAMPLES {
        let inst = fmu.instantiate_me("probe");
        assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        // The first sample at the start values; then a few nonzero knowns (two on average, a
        // quarter at most) moved by up to 5 %: more breaks the rules the initialization
        // enforces (the FastDrivetrain's ratios, the CVT's geometry); a zero start, such as a
        // sheave's initial position, has no scale to move by.
        let chance = (2.0 / knowns.len() as f64).min(0.25);
        if sample > 0 {
            for &k in &knowns {
                if (rng.next() + 1.0) / 2.0 < chance && range(md, k).0 != 0.0 {
                    write(&inst, variable(md, k), random_value(md, k, 0.05, rng));
                }
            }
        }
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
        let (step, step_unseen) = step_dependencies(&fmu, &mut rng);
        let (initial, initial_unseen) = initial_dependencies(&fmu, &mut rng);
        eprintln!(
            "{}: declared dependencies never seen to move: {step_unseen} of outputs and \
             derivatives, {initial_unseen} of initial unknowns",
            fmu.md.model_name
        );
        found.extend(step.into_iter().chain(initial));
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
