//! The FMI 3.0 call sequences, Model Exchange and Co-Simulation.

use super::*;

/// A sequence of up to `calls` FMI 3.0 calls of every kind, on a Model Exchange or a
/// Co-Simulation instance (with or without Event Mode and early return), with values from
/// `rng`; panics with `label` and the log where an oracle fails.
pub fn fmi3_sequence(fmu3: &Fmu3, rng: &mut impl Choices, calls: usize, label: &str) {
    let md = &fmu3.md;
    let name = &md.model_name;
    let n_vars = md.model_variables.len() as u64;
    let n_states = md.model_structure.derivatives.len();
    let n_indicators = md.number_of_event_indicators;
    let reals: Vec<u32> = md
        .model_variables
        .iter()
        .filter(|v| matches!(v.kind, model_description::VariableType::Real { .. }))
        .map(|v| v.value_reference)
        .collect();
    let kind = match rng.below(3) {
        0 => Kind::ModelExchange,
        1 => Kind::CoSimulation {
            event_mode: true,
            early_return: true,
        },
        _ => Kind::CoSimulation {
            event_mode: false,
            early_return: rng.below(2) == 0,
        },
    };
    let inst = fmu3.instantiate(kind).unwrap();
    if rng.below(2) == 0 {
        *inst.env.early_at.lock().unwrap() = Some((rng.below(20) as usize, None));
    }
    let api = &fmu3.api;
    let c = inst.c;
    let mut t = 0.0;
    let mut states = Vec::new();
    let mut origins = Vec::new();
    let mut protocol = Protocol::default();
    let observe = |inst: &Instance3| {
        reals
            .iter()
            .map(|vr| {
                let (s, v) = inst.get(&[*vr]);
                (s, v[0].to_bits())
            })
            .collect::<Vec<_>>()
    };
    for _ in 0..calls {
        if rng.exhausted() {
            break;
        }
        let began = std::time::Instant::now();
        let before = observe(&inst);
        let kind = rng.below(24);
        let mut restored = None;
        let status = unsafe {
            match kind {
                0 => inst.enter_initialization_mode(Some(1e-6), 0.0, 10.0),
                1 => inst.exit_initialization_mode(),
                2..=4 => {
                    let h = [1e-3, 1e-2, 0.1, -1.0, 0.0][rng.below(5) as usize];
                    let at = if rng.below(8) == 0 { t + 0.5 } else { t };
                    let step = inst.do_step(at, h);
                    if step.status == OK {
                        t = step.last_successful_time;
                        let finite = outputs_finite(md, |vr| {
                            let (s, v) = inst.get(&[vr]);
                            (s, v[0])
                        });
                        if let Err(e) = finite {
                            panic!(
                                "{name} {label}: after an accepted step, {e}\n{}",
                                inst.log_text()
                            );
                        }
                    }
                    step.status
                }
                5 | 6 => inst.set_vr(rng.below(n_vars + 3) as u32, rng.value()),
                7 => inst.get(&[rng.below(n_vars + 3) as u32, 0]).0,
                8 => {
                    t = 0.0;
                    (api.reset)(c)
                }
                9 => (api.terminate)(c),
                10 => {
                    let (s, st) = inst.get_state();
                    if s == OK {
                        states.push(st);
                        origins.push(GOT);
                    }
                    s
                }
                11 => match states.pop() {
                    Some(st) => {
                        let s = inst.set_state(&st);
                        restored = origins.pop();
                        let (got, now) = inst.get(&[n_vars as u32]);
                        if s == OK && got == OK {
                            t = now[0];
                        }
                        inst.free_state(st);
                        s
                    }
                    None => OK,
                },
                12 => match states.last() {
                    Some(st) => match inst.serialize(st) {
                        Ok(mut bytes) => {
                            let i = rng.below(bytes.len() as u64) as usize;
                            match rng.below(3) {
                                0 => bytes[i] ^= 1 << rng.below(8),
                                1 => bytes.truncate(i),
                                _ => {
                                    let vr = rng.below(n_vars) as u32;
                                    bytes = crafted(&bytes, &[(vr, rng.value())]);
                                }
                            }
                            let (s, st) = inst.deserialize(&bytes);
                            if s == OK {
                                states.push(st);
                                origins.push(DESERIALIZED);
                            }
                            s
                        }
                        Err(s) => s,
                    },
                    None => OK,
                },
                13 => inst.enter_event_mode(),
                14 => inst.update_discrete_states().0,
                15 => inst.enter_step_mode(),
                16 => inst.enter_continuous_time_mode(),
                17 => inst.set_time(t + rng.below(3) as f64 * 1e-3),
                18 => {
                    let x: Vec<f64> = (0..=n_states).map(|_| rng.value()).collect();
                    let n = if rng.below(4) == 0 {
                        n_states + 1
                    } else {
                        n_states
                    };
                    (api.set_continuous_states)(c, x.as_ptr(), n)
                }
                19 => {
                    let mut v = vec![0.0; n_states.max(n_indicators) + 1];
                    let n = [n_states, n_indicators, 1][rng.below(3) as usize];
                    match rng.below(4) {
                        0 => (api.get_continuous_state_derivatives)(c, v.as_mut_ptr(), n),
                        1 => (api.get_event_indicators)(c, v.as_mut_ptr(), n),
                        2 => (api.get_continuous_states)(c, v.as_mut_ptr(), n),
                        _ => (api.get_nominals_of_continuous_states)(c, v.as_mut_ptr(), n),
                    }
                }
                20 => {
                    let (mut a, mut b) = (false, false);
                    (api.completed_integrator_step)(c, true, &mut a, &mut b)
                }
                21 => {
                    let (vr, x) = (rng.below(n_vars + 2) as u32, rng.below(40) as i32 - 20);
                    (api.set_int32)(c, &vr, 1, &x, 1)
                }
                22 => {
                    let mut v = [0.0];
                    let vr = rng.below(n_vars) as u32;
                    match rng.below(3) {
                        0 => (api.get_output_derivatives)(c, &vr, 1, &1, v.as_mut_ptr(), 1),
                        // Any variable by any other (some beyond the table), nSeed sometimes
                        // not nKnowns: refused unless the mode has them as unknown and known.
                        kind => {
                            let known = rng.below(n_vars + 2) as u32;
                            let n_seed = rng.below(2) as usize;
                            let f = if kind == 1 {
                                api.get_directional_derivative
                            } else {
                                api.get_adjoint_derivative
                            };
                            f(c, &vr, 1, &known, 1, &1.0, n_seed, v.as_mut_ptr(), 1)
                        }
                    }
                }
                _ => {
                    let on = rng.below(2) == 0;
                    let categories = [c"logEvents".as_ptr(), c"bogus".as_ptr()];
                    (api.set_debug_logging)(c, on, rng.below(3) as usize, categories.as_ptr())
                }
            }
        };
        let what = format!("{name} {label}: call kind {kind}");
        judge(
            &what,
            status,
            &before,
            || observe(&inst),
            || inst.log_text(),
            began,
        );
        let reads = [7, 10, 12, 19, 22, 23].contains(&kind);
        rng.reached(protocol.call(1, kind, status == OK, restored, reads));
    }
    for st in states {
        inst.free_state(st);
    }
}
