//! Every packaged FMU through rust-fmi, as a Rust user would take it: both model descriptions
//! parsed by fmi-schema and compared with the project's own reader, and every reference scenario
//! run through the fmi crate's API, Co-Simulation and Model Exchange, FMI 2.0 and 3.0, judged
//! against the references by the validation's bound (1e-6 of each output's largest magnitude).

use fmi::fmi2::import::Fmi2Import;
use fmi::fmi3::import::Fmi3Import;
use fmi::schema::fmi2::ScalarVariableElement;
use fmi::schema::fmi3::VariableDependency;
use fmi::traits::FmiImport;
use model_description::{ModelDescription, VariableType};
use rust_fmi_importer::run::{self, Run};
use rust_fmi_importer::scenario::{scenarios, Reference, Scenario};
use std::path::{Path, PathBuf};

const MODELS: [&str; 8] = [
    "CVT",
    "ChainDrive",
    "CrankSlider",
    "FastDrivetrain",
    "Gear",
    "LossyGear",
    "VariableRatioCoupling",
    "VariableRatioTransmission",
];

fn fmu(version: u8, model: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/fmu");
    let dir = if version == 3 { dir.join("fmi3") } else { dir };
    let path = dir.join(format!("{model}.fmu"));
    assert!(path.is_file(), "{} (cargo xtask package)", path.display());
    path
}

/// `causality` as the standard writes it, from fmi-schema's enum (`CalculatedParameter`).
fn attribute(debug: impl std::fmt::Debug) -> String {
    let text = format!("{debug:?}");
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_lowercase().chain(chars).collect())
}

#[test]
fn fmi_schema_reads_both_model_descriptions_as_the_project_writes_them() {
    for model in MODELS {
        let fmi2: Fmi2Import = fmi::import::from_path(fmu(2, model)).expect("FMI 2.0 imported");
        let xml =
            std::fs::read_to_string(fmi2.archive_path().join("modelDescription.xml")).unwrap();
        let ours = ModelDescription::from_xml(&xml).expect("our reader");
        let theirs = fmi2.model_description();
        assert_eq!(theirs.model_name, ours.model_name, "{model}");
        assert_eq!(
            theirs.num_variables(),
            ours.model_variables.len(),
            "{model}"
        );
        for (v, w) in ours
            .model_variables
            .iter()
            .zip(theirs.get_model_variables())
        {
            let at = format!("{model}: {}", v.name);
            assert_eq!(w.name, v.name, "{at}");
            assert_eq!(w.value_reference, v.value_reference, "{at}");
            assert_eq!(attribute(&w.causality), v.causality.as_str(), "{at}");
            let variability = w
                .variability
                .as_ref()
                .map_or("continuous".into(), attribute);
            assert_eq!(variability, v.variability.as_str(), "{at}");
            match (&v.kind, &w.elem) {
                (
                    VariableType::Real {
                        start, derivative, ..
                    },
                    ScalarVariableElement::Real(r),
                ) => {
                    assert_eq!(r.start, *start, "{at}");
                    assert_eq!(r.derivative.map(|d| d as usize), *derivative, "{at}");
                }
                (VariableType::Integer { start, .. }, ScalarVariableElement::Integer(i)) => {
                    assert_eq!(i.start, *start, "{at}")
                }
                (VariableType::Boolean { start }, ScalarVariableElement::Boolean(b)) => {
                    assert_eq!(b.start, *start, "{at}")
                }
                (a, b) => panic!("{at}: {a:?} read as {b:?}"),
            }
        }
        let structure = &theirs.model_structure;
        let pairs = [
            (&ours.model_structure.outputs, &structure.outputs.unknowns),
            (
                &ours.model_structure.derivatives,
                &structure.derivatives.unknowns,
            ),
            (
                &ours.model_structure.initial_unknowns,
                &structure.initial_unknowns.unknowns,
            ),
        ];
        for (ours, theirs) in pairs {
            assert_eq!(ours.len(), theirs.len(), "{model}");
            for (u, w) in ours.iter().zip(theirs) {
                assert_eq!(w.index as usize, u.index, "{model}");
                // fmi-schema reads a missing `dependencies` (on every known) and an empty one
                // (on none) both as an empty list.
                let deps: Vec<usize> = w.dependencies.iter().map(|d| *d as usize).collect();
                assert_eq!(deps, u.dependencies.clone().unwrap_or_default(), "{model}");
            }
        }

        // FMI 3.0: the same variables, by name, value reference and causality, and as many
        // states and event indicators.
        let fmi3: Fmi3Import = fmi::import::from_path(fmu(3, model)).expect("FMI 3.0 imported");
        let md3 = fmi3.model_description();
        assert_eq!(md3.model_name, ours.model_name, "{model}");
        for v in &ours.model_variables {
            let w = md3
                .model_variables
                .find_by_name(&v.name)
                .unwrap_or_else(|| panic!("{model}: {} not in FMI 3.0", v.name));
            assert_eq!(
                w.value_reference(),
                v.value_reference,
                "{model}: {}",
                v.name
            );
            assert_eq!(
                attribute(w.causality()),
                v.causality.as_str(),
                "{model}: {}",
                v.name
            );
        }
        let count = |f: fn(&VariableDependency) -> bool| {
            md3.model_structure.unknowns.iter().filter(|u| f(u)).count()
        };
        let derivatives = count(|u| matches!(u, VariableDependency::ContinuousStateDerivative(_)));
        let indicators = count(|u| matches!(u, VariableDependency::EventIndicator(_)));
        assert_eq!(derivatives, theirs.num_states(), "{model}");
        assert_eq!(indicators, theirs.num_event_indicators(), "{model}");
        println!(
            "{model}: {} variables, {} states, {} event indicators, both read alike",
            ours.model_variables.len(),
            derivatives,
            indicators
        );
    }
}

/// Every scenario of every model run by `run`, each judged; all failures listed at once.
fn every_scenario(
    interface: &str,
    version: u8,
    run: fn(&Path, &Scenario, &[String]) -> Result<Run, String>,
) {
    let mut failures = vec![];
    for model in MODELS {
        let path = fmu(version, model);
        for sc in scenarios(model) {
            let name = sc.dir.file_name().unwrap().to_string_lossy().into_owned();
            let started = std::time::Instant::now();
            let reference = Reference::of(model, &sc);
            let verdict = run(&path, &sc, &reference.names[1..]).and_then(|r| {
                let worst = reference.judge(&r.time, &r.names, &r.rows)?;
                Ok((worst, r.events))
            });
            let took = started.elapsed().as_secs_f64();
            match verdict {
                Ok((worst, events)) => println!(
                    "{interface} {model}/{name}: largest deviation {worst:.1e}, {events} events, {took:.1} s"
                ),
                Err(e) => failures.push(format!("{interface} {model}/{name}: {e}")),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn fmi2_co_simulation_meets_the_references() {
    every_scenario("FMI 2.0 CS", 2, run::co_simulation2);
}

#[test]
fn fmi3_co_simulation_meets_the_references() {
    every_scenario("FMI 3.0 CS", 3, run::co_simulation3);
}

#[test]
fn fmi2_model_exchange_meets_the_references() {
    every_scenario("FMI 2.0 ME", 2, run::model_exchange2);
}

#[test]
fn fmi3_model_exchange_meets_the_references() {
    every_scenario("FMI 3.0 ME", 3, run::model_exchange3);
}

/// fmi2GetDirectionalDerivative through the fmi crate, one unit seed per state, at the start of
/// each model's reference scenario: the columns of df/dx against central differences of
/// fmi2GetDerivatives through the same crate, each entry within 1e-6 of its row's largest.
/// (The crate checks a call's counts wrongly, `known_vrs.len() == dv_unknown_values.len()`: a
/// call with fewer knowns than unknowns panics in it; df/dx asks as many as it answers.)
#[test]
fn fmi2_directional_derivatives_through_the_fmi_crate_match_differences() {
    use fmi::fmi2::instance::{Common, InstanceME, ModelExchange};
    for model in MODELS {
        let sc = &scenarios(model)[0];
        let (import, mut inst, _, x) = run::fmi2_at_start(&fmu(2, model), sc).unwrap();
        let md = import.model_description();
        let vars: Vec<_> = md.get_model_variables().collect();
        let variable = |index: u32| vars[index as usize - 1];
        let derivatives = &md.model_structure.derivatives.unknowns;
        let unknowns: Vec<u32> = derivatives
            .iter()
            .map(|u| variable(u.index).value_reference)
            .collect();
        let knowns: Vec<u32> = derivatives
            .iter()
            .map(|u| match &variable(u.index).elem {
                ScalarVariableElement::Real(r) => variable(r.derivative.unwrap()).value_reference,
                other => panic!("{model}: a derivative {other:?}"),
            })
            .collect();
        let n = knowns.len();
        let f = |inst: &mut InstanceME, x: &[f64]| {
            inst.set_continuous_states(x).unwrap();
            let mut dx = vec![0.0; n];
            inst.get_derivatives(&mut dx).unwrap();
            dx
        };
        let (mut exact, mut differences) = (vec![vec![0.0; n]; n], vec![vec![0.0; n]; n]);
        for j in 0..n {
            f(&mut inst, &x);
            let mut seed = vec![0.0; n];
            seed[j] = 1.0;
            let mut column = vec![0.0; n];
            inst.get_directional_derivative(&unknowns, &knowns, &seed, &mut column)
                .unwrap_or_else(|e| panic!("{model}: {e:?}"));
            let h = 1e-6 * (1.0 + x[j].abs());
            let (mut up, mut down) = (x.clone(), x.clone());
            up[j] += h;
            down[j] -= h;
            let (fu, fd) = (f(&mut inst, &up), f(&mut inst, &down));
            for i in 0..n {
                exact[i][j] = column[i];
                differences[i][j] = (fu[i] - fd[i]) / (2.0 * h);
            }
        }
        let mut worst = 0.0f64;
        for (i, (e, d)) in exact.iter().zip(&differences).enumerate() {
            // A row the states do not enter (differences of zero) is judged absolutely.
            let scale = d.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-9);
            for (j, (a, b)) in e.iter().zip(d).enumerate() {
                let gap = (a - b).abs() / scale;
                assert!(
                    gap <= 1e-6,
                    "{model}: df/dx[{i}][{j}] = {a}, differences {b}"
                );
                worst = worst.max(gap);
            }
        }
        println!(
            "{model}: df/dx ({n} x {n}) through the fmi crate against differences: {worst:.1e}"
        );
    }
}
