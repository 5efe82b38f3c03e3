//! Exact directional derivatives (fmi2GetDirectionalDerivative) of every FMU that provides
//! them, as a Model Exchange importer uses them for its Jacobian: the state derivatives and
//! the Real outputs with respect to the states and the continuous inputs, at perturbed states
//! and inputs, against central differences with Richardson extrapolation (error O(h^4)), and
//! against the dependencies the modelDescription.xml declares: an entry that is not zero where
//! no dependency is declared fails.

use fmu_harness::structure::{structure, Structure};
use fmu_harness::{Fmu, Instance, OK};
use model_description::VariableType;

/// The unknowns' values at the instance's states and inputs: derivatives, then outputs.
fn unknowns(inst: &Instance, outputs: &[u32]) -> Vec<f64> {
    let (status, mut v) = inst.derivatives();
    assert_eq!(status, OK, "{}", inst.log_text());
    let mut y = vec![0.0; outputs.len()];
    assert_eq!(inst.get_real(outputs, &mut y), OK, "{}", inst.log_text());
    v.extend(y);
    v
}

/// Moves known `k` (a state's index below `n_states`, else an input's vr) by `delta`.
fn moved(inst: &Instance, x: &[f64], k: Known, delta: f64, outputs: &[u32]) -> Vec<f64> {
    match k {
        Known::State(i) => {
            let mut y = x.to_vec();
            y[i] += delta;
            assert_eq!(inst.set_continuous_states(&y), OK);
            let v = unknowns(inst, outputs);
            assert_eq!(inst.set_continuous_states(x), OK);
            v
        }
        Known::Input(vr, u) => {
            assert_eq!(inst.set_real(&[vr], &[u + delta]), OK);
            let v = unknowns(inst, outputs);
            assert_eq!(inst.set_real(&[vr], &[u]), OK);
            v
        }
    }
}

#[derive(Clone, Copy, Debug)]
enum Known {
    State(usize),
    Input(u32, f64),
}

#[test]
fn directional_derivatives_match_richardson_extrapolated_differences_and_the_declared_sparsity() {
    let mut checked = 0;
    for fmu in Fmu::all() {
        let md = &fmu.md;
        let provides = md
            .model_exchange
            .as_ref()
            .is_some_and(|me| me.provides_directional_derivative);
        assert_eq!(
            provides, md.co_simulation.provides_directional_derivative,
            "{}: both interfaces declare the same",
            md.model_name
        );
        if !provides {
            continue;
        }
        let vars = &md.model_variables;
        let vr_of_index = |i: usize| vars[i - 1].value_reference;
        let Structure {
            states,
            derivatives,
            outputs,
            inputs,
            ..
        } = structure(md);
        // The declared dependencies of each unknown (None: on every known).
        let declared: Vec<Option<Vec<u32>>> = md
            .model_structure
            .derivatives
            .iter()
            .chain(
                md.model_structure
                    .outputs
                    .iter()
                    .filter(|o| matches!(vars[o.index - 1].kind, VariableType::Real { .. })),
            )
            .map(|u| {
                u.dependencies
                    .as_ref()
                    .map(|d| d.iter().map(|i| vr_of_index(*i)).collect())
            })
            .collect();

        let inst = fmu.instantiate_me("directional");
        inst.initialize(0.0, None, &[]);
        assert_eq!(inst.enter_continuous_time_mode(), OK, "{}", inst.log_text());
        // Away from the start values: states moved, inputs set.
        let (_, mut x) = inst.continuous_states();
        for (i, xi) in x.iter_mut().enumerate() {
            *xi += 0.3 + 0.1 * i as f64;
        }
        assert_eq!(inst.set_continuous_states(&x), OK);
        let u: Vec<f64> = (0..inputs.len()).map(|i| 1.5 - 0.7 * i as f64).collect();
        assert_eq!(inst.set_real(&inputs, &u), OK);

        let mut all_unknowns = derivatives.clone();
        all_unknowns.extend(&outputs);
        let knowns: Vec<(u32, Known)> = states
            .iter()
            .enumerate()
            .map(|(i, vr)| (*vr, Known::State(i)))
            .chain(
                inputs
                    .iter()
                    .zip(&u)
                    .map(|(vr, u)| (*vr, Known::Input(*vr, *u))),
            )
            .collect();
        for (known_vr, known) in &knowns {
            let mut exact = vec![0.0; all_unknowns.len()];
            let status = unsafe {
                (fmu.api.get_directional_derivative)(
                    inst.c,
                    all_unknowns.as_ptr(),
                    all_unknowns.len(),
                    [*known_vr].as_ptr(),
                    1,
                    [1.0].as_ptr(),
                    exact.as_mut_ptr(),
                )
            };
            assert_eq!(status, OK, "{}", inst.log_text());
            let value = match known {
                Known::State(i) => x[*i],
                Known::Input(_, u) => *u,
            };
            let h = 1e-3 * value.abs().max(1.0);
            let central = |h: f64| -> Vec<f64> {
                let (up, down) = (
                    moved(&inst, &x, *known, h, &outputs),
                    moved(&inst, &x, *known, -h, &outputs),
                );
                up.iter()
                    .zip(&down)
                    .map(|(a, b)| (a - b) / (2.0 * h))
                    .collect()
            };
            let (coarse, fine) = (central(h), central(h / 2.0));
            for (j, unknown) in all_unknowns.iter().enumerate() {
                let richardson = (4.0 * fine[j] - coarse[j]) / 3.0;
                let name = &vars[*unknown as usize].name;
                let known_name = &vars[*known_vr as usize].name;
                let scale = exact[j].abs().max(richardson.abs()).max(1.0);
                assert!(
                    (exact[j] - richardson).abs() <= 1e-8 * scale,
                    "{}: d{name}/d{known_name} = {}, differences {richardson}",
                    md.model_name,
                    exact[j]
                );
                if let Some(deps) = &declared[j] {
                    assert!(
                        exact[j] == 0.0 || deps.contains(known_vr),
                        "{}: d{name}/d{known_name} = {} but {name} declares no dependency on {known_name}",
                        md.model_name,
                        exact[j]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no FMU provides directional derivatives");
}

/// FMI 3.0: the directional derivatives are FMI 2.0's (one Jacobian, column by column), and the
/// adjoint derivatives are their transpose to rounding (seeded with each unknown in turn), in
/// Continuous-Time Mode and for the initial unknowns in Initialization Mode. Knowns and
/// unknowns the mode does not have, and serialized lengths that do not match, are refused.
#[test]
fn adjoint_derivatives_are_the_transpose_of_the_directional_ones() {
    use fmu_harness::fmi3::Fmu3;
    use fmu_harness::ERROR;
    let mut checked = 0;
    for fmu in Fmu::all() {
        if !fmu.md.co_simulation.provides_directional_derivative {
            continue;
        }
        let name = fmu.md.model_name.clone();
        let fmu3 = Fmu3::load(&name);
        assert!(
            fmu3.xml
                .contains(r#"providesDirectionalDerivatives="true""#)
                && fmu3.xml.contains(r#"providesAdjointDerivatives="true""#),
            "{name}: the FMI 3.0 description declares both"
        );
        let md = &fmu.md;
        let Structure {
            states,
            derivatives,
            outputs,
            inputs,
            parameters,
            initial,
        } = structure(md);

        let inst = fmu3.model_exchange();
        // J (unknowns x knowns) column by column, and J^T row by row; compared entry by entry.
        let check = |unknowns: &[u32], knowns: &[u32], mode: &str| {
            let call = |adjoint: bool, seed: &[f64], out: &mut [f64]| unsafe {
                let f = if adjoint {
                    fmu3.api.get_adjoint_derivative
                } else {
                    fmu3.api.get_directional_derivative
                };
                f(
                    inst.c,
                    unknowns.as_ptr(),
                    unknowns.len(),
                    knowns.as_ptr(),
                    knowns.len(),
                    seed.as_ptr(),
                    seed.len(),
                    out.as_mut_ptr(),
                    out.len(),
                )
            };
            let unit = |n: usize, i: usize| {
                (0..n)
                    .map(|j| f64::from(u8::from(i == j)))
                    .collect::<Vec<_>>()
            };
            let mut columns = vec![vec![0.0; unknowns.len()]; knowns.len()];
            for (k, column) in columns.iter_mut().enumerate() {
                assert_eq!(
                    call(false, &unit(knowns.len(), k), column),
                    OK,
                    "{}",
                    inst.log_text()
                );
            }
            for u in 0..unknowns.len() {
                let mut row = vec![0.0; knowns.len()];
                assert_eq!(
                    call(true, &unit(unknowns.len(), u), &mut row),
                    OK,
                    "{}",
                    inst.log_text()
                );
                for k in 0..knowns.len() {
                    let (j, jt) = (columns[k][u], row[k]);
                    assert!(
                        (j - jt).abs() <= 4.0 * f64::EPSILON * j.abs().max(1.0),
                        "{name} ({mode}): directional {j}, adjoint {jt} for vr {} by vr {}",
                        unknowns[u],
                        knowns[k]
                    );
                }
            }
            // nSeed must be the number of knowns (directional).
            let mut out = vec![0.0; unknowns.len()];
            assert_eq!(
                call(false, &[1.0; 0], &mut out),
                if knowns.is_empty() { OK } else { ERROR }
            );
            columns
        };
        assert_eq!(inst.enter_initialization_mode(None, 0.0, 1.0), OK);
        let mut initial_knowns = parameters.clone();
        initial_knowns.extend(&inputs);
        check(&initial, &initial_knowns, "Initialization Mode");
        assert_eq!(inst.exit_initialization_mode(), OK);
        assert_eq!(inst.event_iteration(), OK);
        assert_eq!(inst.enter_continuous_time_mode(), OK);
        let mut unknowns = derivatives.clone();
        unknowns.extend(&outputs);
        let mut knowns = states.clone();
        knowns.extend(&inputs);
        let columns = check(&unknowns, &knowns, "Continuous-Time Mode");
        // The same Jacobian as FMI 2.0's.
        let inst2 = fmu.instantiate_me("fmi2");
        inst2.initialize(0.0, None, &[]);
        assert_eq!(inst2.enter_continuous_time_mode(), OK);
        for (k, column) in columns.iter().enumerate() {
            let mut out = vec![0.0; unknowns.len()];
            let status = unsafe {
                (fmu.api.get_directional_derivative)(
                    inst2.c,
                    unknowns.as_ptr(),
                    unknowns.len(),
                    [knowns[k]].as_ptr(),
                    1,
                    [1.0].as_ptr(),
                    out.as_mut_ptr(),
                )
            };
            assert_eq!(status, OK);
            assert_eq!(
                &out, column,
                "{name}: FMI 3.0 and FMI 2.0 agree bit for bit"
            );
        }
        // A parameter is no known once initialized, an input no unknown.
        let (p, mut out) = (parameters[0], [0.0]);
        let refused = |unknown: u32, known: u32, out: &mut [f64; 1]| unsafe {
            (fmu3.api.get_directional_derivative)(
                inst.c,
                [unknown].as_ptr(),
                1,
                [known].as_ptr(),
                1,
                [1.0].as_ptr(),
                1,
                out.as_mut_ptr(),
                1,
            )
        };
        assert_eq!(refused(derivatives[0], p, &mut out), ERROR);
        assert!(
            inst.log_text().contains("is no known here"),
            "{}",
            inst.log_text()
        );
        if let Some(input) = inputs.first() {
            assert_eq!(refused(*input, states[0], &mut out), ERROR);
            assert!(inst.log_text().contains("is no unknown here"));
        }
        checked += 1;
    }
    assert!(checked > 0, "no FMU provides derivatives");
}

/// In Initialization Mode the initial unknowns move with the parameters and start values:
/// against Richardson-extrapolated central differences of the values the FMU computes there.
#[test]
fn initial_unknowns_move_with_the_parameters_as_the_differences_say() {
    let mut checked = 0;
    for fmu in Fmu::all() {
        let md = &fmu.md;
        if !md.co_simulation.provides_directional_derivative {
            continue;
        }
        let vars = &md.model_variables;
        let Structure {
            initial: unknowns,
            parameters,
            ..
        } = structure(md);
        let inst = fmu.instantiate_me("initial");
        assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        let values = |inst: &Instance| {
            let mut v = vec![0.0; unknowns.len()];
            assert_eq!(inst.get_real(&unknowns, &mut v), OK, "{}", inst.log_text());
            v
        };
        for p in &parameters {
            let mut p0 = [0.0];
            assert_eq!(inst.get_real(&[*p], &mut p0), OK);
            let mut exact = vec![0.0; unknowns.len()];
            let status = unsafe {
                (fmu.api.get_directional_derivative)(
                    inst.c,
                    unknowns.as_ptr(),
                    unknowns.len(),
                    [*p].as_ptr(),
                    1,
                    [1.0].as_ptr(),
                    exact.as_mut_ptr(),
                )
            };
            assert_eq!(status, OK, "{}", inst.log_text());
            let h = 1e-3 * p0[0].abs().max(1e-2);
            let central = |h: f64| -> Vec<f64> {
                assert_eq!(inst.set_real(&[*p], &[p0[0] + h]), OK);
                let up = values(&inst);
                assert_eq!(inst.set_real(&[*p], &[p0[0] - h]), OK);
                let down = values(&inst);
                assert_eq!(inst.set_real(&[*p], &p0), OK);
                up.iter()
                    .zip(&down)
                    .map(|(a, b)| (a - b) / (2.0 * h))
                    .collect()
            };
            let (coarse, fine) = (central(h), central(h / 2.0));
            for (j, u) in unknowns.iter().enumerate() {
                let richardson = (4.0 * fine[j] - coarse[j]) / 3.0;
                let scale = exact[j].abs().max(richardson.abs()).max(1.0);
                assert!(
                    (exact[j] - richardson).abs() <= 1e-8 * scale,
                    "{}: d{}/d{} = {} in Initialization Mode, differences {richardson}",
                    md.model_name,
                    vars[*u as usize].name,
                    vars[*p as usize].name,
                    exact[j]
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "no FMU provides derivatives");
}
