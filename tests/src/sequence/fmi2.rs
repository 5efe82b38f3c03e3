//! The FMI 2.0 call sequences, Co-Simulation and Model Exchange.

use super::*;

/// A sequence of up to `calls` calls of every kind of the FMI 2.0 CS and ME APIs, on CS and ME
/// instances, with values and value references from `rng`; panics with `label` and the log
/// where an oracle fails.
pub fn fmi2_sequence(fmu: &Fmu, rng: &mut impl Choices, calls: usize, label: &str) {
    let name = &fmu.md.model_name;
    let n_vars = fmu.md.model_variables.len() as u64;
    let mut inst = fuzz_instance(fmu, rng);
    let n_states = fmu.states();
    let n_indicators = fmu.md.number_of_event_indicators;
    let mut t = 0.0;
    let mut states = Vec::new();
    let mut origins = Vec::new();
    let mut protocol = Protocol::default();
    let categories = [
        c"logEvents".as_ptr(),
        c"logStatusError".as_ptr(),
        c"bogus".as_ptr(),
    ];
    let text = c"text".as_ptr();
    for _ in 0..calls {
        if rng.exhausted() {
            break;
        }
        let began = std::time::Instant::now();
        let before = observable(&inst);
        let vrs = [rng.below(n_vars + 2) as u32, rng.below(n_vars + 2) as u32];
        let c = inst.c;
        let api = &fmu.api;
        let kind = rng.below(37);
        let mut restored = None;
        let status = match kind {
            0 => inst.setup_experiment(Some(1e-6), 0.0, None),
            1 => inst.enter_initialization_mode(),
            2 => inst.exit_initialization_mode(),
            3..=5 => {
                let h = [1e-3, 1e-2, 0.1, -1.0, 0.0][rng.below(5) as usize];
                // Now and then a communication point that does not match.
                let at = if rng.below(8) == 0 { t + 0.5 } else { t };
                let s = inst.do_step(at, h);
                if s == OK {
                    t += h;
                    let finite = outputs_finite(&fmu.md, |vr| {
                        let mut x = [0.0];
                        (inst.get_real(&[vr], &mut x), x[0])
                    });
                    if let Err(e) = finite {
                        panic!(
                            "{name} {label}: after an accepted step, {e}\n{}",
                            inst.log_text()
                        );
                    }
                }
                s
            }
            6 | 7 => {
                let vr = rng.below(n_vars + 2) as u32;
                inst.set_real(&[vr], &[rng.value()])
            }
            8 => {
                let mut v = [0.0; 3];
                let vrs = [0, 1, rng.below(n_vars + 2) as u32];
                inst.get_real(&vrs, &mut v)
            }
            9 => inst.reset(),
            10 => inst.terminate(),
            11 => {
                let (s, st) = inst.get_state();
                if s == OK {
                    states.push(st);
                    origins.push(GOT);
                }
                s
            }
            12 => match states.pop() {
                Some(st) => {
                    let s = inst.set_state(&st);
                    restored = origins.pop();
                    inst.free_state(st);
                    s
                }
                None => OK,
            },
            13 => {
                let (vr, value) = (rng.below(n_vars + 2) as u32, rng.below(40) as i32 - 20);
                unsafe { (fmu.api.set_integer)(inst.c, &vr, 1, &value) }
            }
            14 => match states.last() {
                // A serialized state with one random byte changed, cut short, or with one
                // value changed and its checksum made right (crafted).
                Some(st) => match inst.serialize(st) {
                    Ok(mut bytes) => {
                        let i = rng.below(bytes.len() as u64) as usize;
                        match rng.below(3) {
                            0 => bytes[i] ^= 1 << rng.below(8),
                            1 => bytes.truncate(i),
                            _ => {
                                let vr = rng.below(n_vars) as u32;
                                let x = match rng.below(3) {
                                    0 => rng.value(),
                                    1 => value(&bytes, vr) + rng.below(3) as f64 - 1.0,
                                    _ => value(&bytes, vr) * 10.0,
                                };
                                bytes = crafted(&bytes, &[(vr, x)]);
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
            15 | 16 => {
                let vr = rng.below(n_vars) as u32;
                inst.set_input_derivatives(&[vr], &[1], &[rng.value()])
            }
            17 => {
                let mut v = [0; 2];
                unsafe { (api.get_integer)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            18 => {
                let mut v = [0; 2];
                unsafe { (api.get_boolean)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            19 => {
                let mut v = [null(); 2];
                unsafe { (api.get_string)(c, vrs.as_ptr(), 2, v.as_mut_ptr()) }
            }
            20 => {
                let v = [rng.below(2) as c_int];
                unsafe { (api.set_boolean)(c, vrs.as_ptr(), 1, v.as_ptr()) }
            }
            21 => unsafe { (api.set_string)(c, vrs.as_ptr(), 1, &text) },
            22 => {
                let n = rng.below(4) as usize;
                let on = rng.below(2) as c_int;
                unsafe { (api.set_debug_logging)(c, on, n.min(3), categories.as_ptr()) }
            }
            23 => {
                // fmi2DoStepStatus, fmi2PendingStatus, fmi2LastSuccessfulTime, fmi2Terminated.
                let kind = rng.below(4) as c_int;
                let (mut i, mut x, mut p) = (0, 0.0, null());
                match rng.below(5) {
                    0 => unsafe { (api.get_status)(c, kind, &mut i) },
                    1 => unsafe { (api.get_real_status)(c, kind, &mut x) },
                    2 => unsafe { (api.get_integer_status)(c, kind, &mut i) },
                    3 => unsafe { (api.get_boolean_status)(c, kind, &mut i) },
                    _ => unsafe { (api.get_string_status)(c, kind, &mut p) },
                }
            }
            24 => unsafe { (api.cancel_step)(c) },
            25 => {
                let (seed, mut out) = ([1.0], [0.0]);
                unsafe {
                    (api.get_directional_derivative)(
                        c,
                        vrs.as_ptr(),
                        1,
                        vrs[1..].as_ptr(),
                        1,
                        seed.as_ptr(),
                        out.as_mut_ptr(),
                    )
                }
            }
            26 => {
                let (order, mut out) = ([1 + rng.below(2) as c_int], [0.0]);
                unsafe {
                    (api.get_real_output_derivatives)(
                        c,
                        vrs.as_ptr(),
                        1,
                        order.as_ptr(),
                        out.as_mut_ptr(),
                    )
                }
            }
            // Model Exchange calls (refused on a CS instance).
            27 => {
                let time = [t + 1e-3, t, f64::NAN, -1.0][rng.below(4) as usize];
                inst.set_time(time)
            }
            28 | 29 => {
                // The current states moved a little, now and then a wrong length or a NaN.
                let (_, mut x) = inst.continuous_states();
                for v in x.iter_mut() {
                    *v += 1e-3 * rng.value().clamp(-1.0, 1.0);
                }
                match rng.below(6) {
                    0 => x.push(0.0),
                    1 if !x.is_empty() => x[0] = f64::NAN,
                    _ => {}
                }
                inst.set_continuous_states(&x)
            }
            30 => {
                // A getter of states, derivatives, indicators or nominals, sometimes too short.
                let which = rng.below(4);
                let n = if which == 2 { n_indicators } else { n_states };
                let n = n.saturating_sub(rng.below(2) as usize);
                let mut v = vec![0.0; n];
                let f = [
                    api.get_continuous_states,
                    api.get_derivatives,
                    api.get_event_indicators,
                    api.get_nominals_of_continuous_states,
                ][which as usize];
                unsafe { f(c, v.as_mut_ptr(), n) }
            }
            31 => inst.enter_event_mode(),
            32 | 33 => {
                if rng.below(8) == 0 {
                    unsafe { (api.new_discrete_states)(c, std::ptr::null_mut()) }
                } else {
                    inst.new_discrete_states().0
                }
            }
            34 => inst.enter_continuous_time_mode(),
            35 => inst.completed_integrator_step().0,
            _ => {
                // Free the instance mid-sequence (its states first) and go on with a new one.
                for st in states.drain(..) {
                    inst.free_state(st);
                }
                origins.clear();
                protocol = Protocol::default();
                inst = fuzz_instance(fmu, rng);
                t = 0.0;
                continue;
            }
        };
        let what = format!("{name} {label}: call kind {kind}");
        judge(
            &what,
            status,
            &before,
            || observable(&inst),
            || inst.log_text(),
            began,
        );
        let reads = [8, 11, 14, 17, 18, 19, 22, 23, 25, 26, 30].contains(&kind);
        rng.reached(protocol.call(0, kind, status == OK, restored, reads));
    }
    for st in states {
        inst.free_state(st);
    }
}
