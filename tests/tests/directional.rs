//! FMI 3.0's directional and adjoint derivatives of every FMU that provides them: the same
//! Jacobian as FMI 2.0's, its transpose, in Initialization Mode and in Continuous-Time Mode,
//! and the knowns and unknowns each mode refuses. The entries themselves are checked against
//! differences and the declared dependencies at the dependency probe's random reachable points
//! (tests/dependencies.rs).

use fmu_harness::structure::{structure, Structure};
use fmu_harness::{Fmu, OK};

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
        // A discrete output changes at events only: no unknown in Continuous-Time Mode.
        let mut unknowns = derivatives.clone();
        unknowns.extend(outputs.iter().filter(|vr| {
            md.model_variables[**vr as usize].variability
                != model_description::Variability::Discrete
        }));
        let mut knowns = states.clone();
        knowns.extend(&inputs);
        let columns = check(&unknowns, &knowns, "Continuous-Time Mode");
        // The same Jacobian as FMI 2.0's.
        let inst2 = fmu.instantiate_me("fmi2");
        inst2.initialize(0.0, None, &[]);
        assert_eq!(inst2.enter_continuous_time_mode(), OK);
        for (k, column) in columns.iter().enumerate() {
            let mut out = vec![0.0; unknowns.len()];
            let status = inst2.directional_derivative(&unknowns, &[knowns[k]], &[1.0], &mut out);
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

/// FMI 2.0: with logCalls on, every derivative call is logged, the one at a point already
/// swept too (the C ABI answers such a call ahead of the call's guard only while calls are not
/// logged), and either way a call at a swept point writes the sensitivity of the first.
#[test]
fn derivative_calls_at_a_swept_point_are_logged_and_answered() {
    let fmu = Fmu::load("Gear");
    let Structure {
        states,
        derivatives,
        ..
    } = structure(&fmu.md);
    let inst = fmu.instantiate("logged");
    inst.initialize(0.0, Some(10.0), &[("w_b_start", 0.25)]);
    assert_eq!(inst.do_step(0.0, 1e-3), OK);
    let column = || {
        let mut sensitivity = vec![f64::NAN; derivatives.len()];
        let status =
            inst.directional_derivative(&derivatives, &states[1..2], &[1.0], &mut sensitivity);
        assert_eq!(status, OK, "{}", inst.log_text());
        sensitivity
    };
    // The column of the Gear's speed: d(der(phi))/dw = 1.
    let first = column();
    assert_eq!(first[0], 1.0, "{first:?}");
    assert_eq!(column(), first, "at the swept point");
    assert_eq!(inst.set_debug_logging(true, &["logCalls"]), OK);
    inst.clear_log();
    assert_eq!(column(), first, "logged, at the swept point");
    assert_eq!(column(), first, "logged, again");
    let logged = inst
        .log()
        .iter()
        .filter(|l| l.category == "logCalls" && l.message == "fmi2GetDirectionalDerivative")
        .count();
    assert_eq!(logged, 2, "{}", inst.log_text());
    assert_eq!(inst.set_debug_logging(false, &[]), OK);
    inst.clear_log();
    assert_eq!(column(), first, "not logged");
    assert!(inst.log().is_empty(), "{}", inst.log_text());
}
