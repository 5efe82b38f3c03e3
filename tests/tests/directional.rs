//! Exact directional derivatives (fmi2GetDirectionalDerivative) of every FMU that provides
//! them, as a Model Exchange importer uses them for its Jacobian: the state derivatives and
//! the Real outputs with respect to the states and the continuous inputs, at perturbed states
//! and inputs, against central differences with Richardson extrapolation (error O(h^4)), and
//! against the dependencies the modelDescription.xml declares: an entry that is not zero where
//! no dependency is declared fails.

use fmu_harness::{Fmu, Instance, OK};
use model_description::{Causality, VariableType};

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
        let states: Vec<u32> = md
            .model_structure
            .derivatives
            .iter()
            .map(|d| match vars[d.index - 1].kind {
                VariableType::Real {
                    derivative: Some(s),
                    ..
                } => vr_of_index(s),
                _ => unreachable!("a derivative names its state"),
            })
            .collect();
        let derivatives: Vec<u32> = md
            .model_structure
            .derivatives
            .iter()
            .map(|d| vr_of_index(d.index))
            .collect();
        let outputs: Vec<u32> = md
            .model_structure
            .outputs
            .iter()
            .map(|o| vr_of_index(o.index))
            .filter(|vr| matches!(vars[*vr as usize].kind, VariableType::Real { .. }))
            .collect();
        let inputs: Vec<u32> = vars
            .iter()
            .filter(|v| v.causality == Causality::Input)
            .filter(|v| matches!(v.kind, VariableType::Real { .. }))
            .map(|v| v.value_reference)
            .collect();
        // The declared dependencies of each unknown (None: on every known).
        let declared: Vec<Option<Vec<u32>>> = md
            .model_structure
            .derivatives
            .iter()
            .chain(md.model_structure.outputs.iter().filter(|o| {
                matches!(vars[o.index - 1].kind, VariableType::Real { .. })
            }))
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
            .chain(inputs.iter().zip(&u).map(|(vr, u)| (*vr, Known::Input(*vr, *u))))
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
                up.iter().zip(&down).map(|(a, b)| (a - b) / (2.0 * h)).collect()
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
