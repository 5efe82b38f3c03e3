//! Runs of a reference scenario in both versions: instances started from it, the FMI 2.0 run on a
//! grid, the events it logged, and the FMI 3.0 run with Event Mode and early return.

use super::*;

fn start2<'a>(fmu: &'a Fmu, sc: &Scenario) -> Instance<'a> {
    let inst = fmu.instantiate("fmi2");
    assert_eq!(inst.setup_experiment(Some(sc.tol), 0.0, Some(sc.stop)), OK);
    sc.set_parameters(&inst);
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.enter_initialization_mode(), OK);
    let vrs = reals(fmu);
    let mut v = vec![0.0; vrs.len()];
    assert_eq!(inst.get_real(&vrs, &mut v), OK);
    assert_finite(fmu, &vrs, &v, "in Initialization Mode (FMI 2.0)");
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    assert_eq!(inst.get_real(&vrs, &mut v), OK);
    assert_finite(fmu, &vrs, &v, "after initialization (FMI 2.0)");
    inst
}

pub(crate) fn start3<'a>(fmu: &'a Fmu3, fmu2: &Fmu, sc: &Scenario, kind: Kind) -> Instance3<'a> {
    let inst = fmu.instantiate(kind).unwrap();
    for (n, v) in &sc.params {
        let s = if is_integer(fmu2, n) {
            inst.set_int(n, *v as i32)
        } else {
            inst.set(n, *v)
        };
        assert_eq!(s, OK, "{n}: {}", inst.log_text());
    }
    assert_eq!(
        inst.enter_initialization_mode(Some(sc.tol), 0.0, sc.stop),
        OK
    );
    let vrs = reals(fmu2);
    let (s, v) = inst.get(&vrs);
    assert_eq!(s, OK);
    assert_finite(fmu2, &vrs, &v, "in Initialization Mode (FMI 3.0)");
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let (s, v) = inst.get(&vrs);
    assert_eq!(s, OK);
    assert_finite(fmu2, &vrs, &v, "after initialization (FMI 3.0)");
    inst
}

pub(crate) fn grid(sc: &Scenario) -> Vec<f64> {
    let n = (sc.stop / sc.step).round() as usize;
    (0..=n).map(|k| k as f64 * sc.step).collect()
}

/// The FMI 2.0 run of a scenario: the Real values at every communication point.
pub(crate) fn run2(fmu: &Fmu, sc: &Scenario, vrs: &[u32]) -> (Vec<Vec<f64>>, Vec<f64>) {
    run2_on(fmu, sc, vrs, &grid(sc))
}

/// [`run2`] on the communication points `g`.
pub(crate) fn run2_on(
    fmu: &Fmu,
    sc: &Scenario,
    vrs: &[u32],
    g: &[f64],
) -> (Vec<Vec<f64>>, Vec<f64>) {
    let inst = start2(fmu, sc);
    let mut rows = Vec::new();
    let mut v = vec![0.0; vrs.len()];
    for w in g.windows(2) {
        sc.set_inputs(&inst, w[0]);
        assert_eq!(inst.do_step(w[0], w[1] - w[0]), OK, "{}", inst.log_text());
        assert_eq!(inst.get_real(vrs, &mut v), OK);
        assert_finite(fmu, vrs, &v, &format!("at t = {} (FMI 2.0)", w[1]));
        rows.push(v.clone());
    }
    (rows, events(&inst.log()))
}

/// The times of the events logged (category logEvents) but mode changes at a communication
/// point, once per time.
fn events(log: &[LogLine]) -> Vec<f64> {
    let mut times: Vec<f64> = log
        .iter()
        .filter(|l| l.category == "logEvents" && !l.message.contains("communication point"))
        .filter_map(|l| {
            let after = l.message.split_once("t = ")?.1;
            after.split(": ").next()?.trim().parse().ok()
        })
        .collect();
    times.dedup();
    times
}
/// Runs a scenario as FMPy does with `use_event_mode` and `early_return_allowed`: a step that
/// ends early at an event is followed by Event Mode, the event iteration and Step Mode, and the
/// next step goes on from there to the same communication point.
pub(crate) fn run_event_mode(
    fmu3: &Fmu3,
    fmu2: &Fmu,
    sc: &Scenario,
    vrs: &[u32],
) -> (Vec<Vec<f64>>, Vec<f64>, usize) {
    let inst = start3(
        fmu3,
        fmu2,
        sc,
        Kind::CoSimulation {
            event_mode: true,
            early_return: true,
        },
    );
    // FMI 3.0: with Event Mode the instance starts in it after initialization.
    assert_eq!(inst.event_iteration(), OK, "{}", inst.log_text());
    assert_eq!(inst.enter_step_mode(), OK);
    let (mut rows, mut returns) = (Vec::new(), Vec::new());
    let g = grid(sc);
    for w in g.windows(2) {
        sc.set_inputs(&inst, w[0]);
        let mut t = w[0];
        loop {
            let step = inst.do_step(t, w[1] - t);
            assert_eq!(step.status, OK, "{}", inst.log_text());
            t = step.last_successful_time;
            // Only an event ends a step early here; one at the step's end does not.
            assert_eq!(
                step.early_return,
                step.event_handling_needed && t < w[1],
                "{step:?}"
            );
            assert!(t >= w[0] && t <= w[1], "{step:?}");
            if step.event_handling_needed {
                returns.push(t);
                assert_eq!(inst.enter_event_mode(), OK);
                assert_eq!(inst.event_iteration(), OK, "{}", inst.log_text());
                assert_eq!(inst.enter_step_mode(), OK);
            }
            if !step.early_return {
                assert_eq!(t, w[1]);
                break;
            }
        }
        let (s, v) = inst.get(vrs);
        assert_eq!(s, OK);
        rows.push(v);
    }
    let events = events(&inst.env.log.lock().unwrap());
    assert_eq!(
        events.len(),
        returns.len(),
        "every early return is one logged event: {returns:?} {events:?}"
    );
    (rows, events, returns.len())
}
