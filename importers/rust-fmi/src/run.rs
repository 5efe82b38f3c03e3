//! A reference scenario run through the fmi crate: Co-Simulation (FMI 2.0 and 3.0) as the
//! validation's importers run it, the inputs set at each communication point and held over the
//! step; Model Exchange (FMI 2.0 and 3.0) integrated here with Dormand-Prince 5(4) (the test
//! importers' `tests/src/ode.rs`), the inputs set in Event Mode at each communication point,
//! state events located by bisection and the FMU's event iteration done at each.

use crate::access::{checked, Access, Kind, Layout, Port};
use crate::scenario::{grid, inputs_at, Scenario, Value};
use fmi::fmi2::import::Fmi2Import;
use fmi::fmi2::instance::InstanceME;
use fmi::fmi3::import::Fmi3Import;
use fmi::fmi3::Fmi3Model;
use fmi::traits::{FmiInstance, FmiModelExchange};
use fmi::EventFlags;
use std::cell::RefCell;
use std::path::Path;

#[path = "../../../tests/src/ode.rs"]
mod ode;

/// The outputs asked for, at every communication point after the start.
pub struct Run {
    pub names: Vec<String>,
    pub time: Vec<f64>,
    pub rows: Vec<Vec<f64>>,
    /// Event iterations that changed something (Model Exchange).
    pub events: usize,
}

impl Run {
    fn new(outputs: &[String]) -> Run {
        Run {
            names: outputs.to_vec(),
            time: vec![],
            rows: vec![],
            events: 0,
        }
    }

    fn record(&mut self, inst: &mut impl Access, layout: &Layout, t: f64) -> Result<(), String> {
        let values = self
            .names
            .iter()
            .map(|n| inst.get(layout.port(n)?))
            .collect::<Result<Vec<_>, _>>()?;
        self.time.push(t);
        self.rows.push(values);
        Ok(())
    }
}

/// The scenario's parameters, each as the variable's type reads what the file writes.
fn set_parameters(inst: &mut impl Access, layout: &Layout, sc: &Scenario) -> Result<(), String> {
    for (name, v) in &sc.params {
        let port = layout.port(name)?;
        let value = if port.kind == Kind::Integer {
            Value::Integer(*v as i32)
        } else {
            Value::Real(*v)
        };
        inst.set(port, value)?;
    }
    Ok(())
}

fn set_inputs(
    inst: &mut impl Access,
    layout: &Layout,
    sc: &Scenario,
    t: f64,
) -> Result<(), String> {
    for (name, value) in inputs_at(sc, t) {
        let port: Port = layout.port(name)?;
        inst.set(port, value)?;
    }
    Ok(())
}

/// Instantiated, the parameters set, initialized with the scenario's tolerance.
fn initialize<I: FmiInstance + Access>(
    inst: &mut I,
    layout: &Layout,
    sc: &Scenario,
) -> Result<(), String> {
    set_parameters(inst, layout, sc)?;
    checked(
        "enter initialization mode",
        inst.enter_initialization_mode(Some(sc.tol), 0.0, None),
    )?;
    checked("exit initialization mode", inst.exit_initialization_mode()).map(|_| ())
}

/// Co-Simulation: at each communication point the inputs, then `step` from it.
fn co_simulation<I: FmiInstance + Access>(
    mut inst: I,
    layout: &Layout,
    sc: &Scenario,
    outputs: &[String],
    step: impl Fn(&mut I, f64, f64) -> Result<(), String>,
) -> Result<Run, String> {
    initialize(&mut inst, layout, sc)?;
    let mut run = Run::new(outputs);
    for w in grid(sc).windows(2) {
        set_inputs(&mut inst, layout, sc, w[0])?;
        step(&mut inst, w[0], w[1] - w[0]).map_err(|e| format!("t = {}: {e}", w[0]))?;
        run.record(&mut inst, layout, w[1])?;
    }
    checked("terminate", inst.terminate())?;
    Ok(run)
}

/// The FMU unpacked by the fmi crate, and its variables as the runs address them.
fn open2(fmu: &Path) -> Result<(Fmi2Import, Layout), String> {
    let import: Fmi2Import = fmi::import::from_path(fmu).map_err(|e| e.to_string())?;
    let layout = Layout::of_fmi2(&import);
    Ok((import, layout))
}

fn open3(fmu: &Path) -> Result<(Fmi3Import, Layout), String> {
    let import: Fmi3Import = fmi::import::from_path(fmu).map_err(|e| e.to_string())?;
    let layout = Layout::of_fmi3(&import);
    Ok((import, layout))
}

pub fn co_simulation2(fmu: &Path, sc: &Scenario, outputs: &[String]) -> Result<Run, String> {
    use fmi::fmi2::instance::CoSimulation;
    let (import, layout) = open2(fmu)?;
    let inst = checked("fmi2Instantiate", import.instantiate_cs("cs", false, false))?;
    co_simulation(inst, &layout, sc, outputs, |inst, t, h| {
        checked("fmi2DoStep", inst.do_step(t, h, true)).map(|_| ())
    })
}

pub fn co_simulation3(fmu: &Path, sc: &Scenario, outputs: &[String]) -> Result<Run, String> {
    use fmi::fmi3::CoSimulation;
    let (import, layout) = open3(fmu)?;
    let inst = checked(
        "fmi3InstantiateCoSimulation",
        import.instantiate_cs("cs", false, false, false, false, &[]),
    )?;
    co_simulation(inst, &layout, sc, outputs, |inst, t, h| {
        let (mut event, mut terminate, mut early) = (false, false, false);
        let mut reached = t;
        let step = inst.do_step(
            t,
            h,
            true,
            &mut event,
            &mut terminate,
            &mut early,
            &mut reached,
        );
        checked("fmi3DoStep", step)?;
        if terminate || early {
            return Err(format!(
                "fmi3DoStep: terminate {terminate}, early return {early}"
            ));
        }
        Ok(())
    })
}

pub fn model_exchange2(fmu: &Path, sc: &Scenario, outputs: &[String]) -> Result<Run, String> {
    let (import, layout) = open2(fmu)?;
    let inst = checked("fmi2Instantiate", import.instantiate_me("me", false, false))?;
    model_exchange(inst, &layout, sc, outputs)
}

pub fn model_exchange3(fmu: &Path, sc: &Scenario, outputs: &[String]) -> Result<Run, String> {
    let (import, layout) = open3(fmu)?;
    let inst = checked(
        "fmi3InstantiateModelExchange",
        import.instantiate_me("me", false, false),
    )?;
    model_exchange(inst, &layout, sc, outputs)
}

/// The relative tolerance of the Model Exchange integration: the validation's FMPy ME one
/// (`me_tolerance`: the scenario's times 1e-4), no tighter than 1e-13.
fn me_tolerance(sc: &Scenario) -> f64 {
    (sc.tol * 1e-4).max(1e-13)
}

/// The instance initialized with the scenario's parameters, its first event iteration done
/// with the inputs at the start set, in Continuous-Time Mode; and its states.
fn start<'a, I: FmiModelExchange + Access>(
    mut inst: I,
    layout: &'a Layout,
    sc: &Scenario,
) -> Result<(Me<'a, I>, Vec<f64>), String> {
    initialize(&mut inst, layout, sc)?;
    // After initialization the instance is in Event Mode.
    set_inputs(&mut inst, layout, sc, 0.0)?;
    let mut me = Me {
        inst: RefCell::new(inst),
        layout,
        rtol: me_tolerance(sc),
        events: 0,
    };
    me.iterate(0.0)?;
    let mut x = vec![0.0; layout.states];
    me.call("get states", |i| i.get_continuous_states(&mut x))?;
    Ok((me, x))
}

/// An FMI 2.0 Model Exchange instance at the start of `sc` ([`start`]), with its import (which
/// holds the unpacked FMU) and layout.
pub fn fmi2_at_start(
    fmu: &Path,
    sc: &Scenario,
) -> Result<(Fmi2Import, InstanceME, Layout, Vec<f64>), String> {
    let (import, layout) = open2(fmu)?;
    let inst = checked("fmi2Instantiate", import.instantiate_me("me", false, false))?;
    let (me, x) = start(inst, &layout, sc)?;
    Ok((import, me.inst.into_inner(), layout, x))
}

fn model_exchange<I: FmiModelExchange + Access>(
    inst: I,
    layout: &Layout,
    sc: &Scenario,
    outputs: &[String],
) -> Result<Run, String> {
    let (mut me, mut x) = start(inst, layout, sc)?;
    let mut run = Run::new(outputs);
    let mut h = sc.step / 10.0;
    for w in grid(sc).windows(2) {
        let (t0, t1) = (w[0], w[1]);
        me.call("enter event mode", |i| i.enter_event_mode())?;
        set_inputs(me.inst.get_mut(), layout, sc, t0)?;
        let mut next = me.iterate(t0)?;
        me.call("get states", |i| i.get_continuous_states(&mut x))?;
        let mut t = t0;
        while t < t1 - 1e-13 {
            // A time event ends the integration there.
            let end = next.filter(|te| *te > t && *te < t1).unwrap_or(t1);
            let (tn, xn, event) = me.integrate(t, end, x, &mut h)?;
            (t, x) = (tn, xn);
            let (mut enter, mut terminate) = (false, false);
            me.call("completed integrator step", |i| {
                i.completed_integrator_step(true, &mut enter, &mut terminate)
            })?;
            if event || enter || (end < t1 && t >= end - 1e-13) {
                me.call("enter event mode", |i| i.enter_event_mode())?;
                next = me.iterate(t)?;
                me.call("get states", |i| i.get_continuous_states(&mut x))?;
            }
        }
        me.at(t1, &x)?;
        run.record(me.inst.get_mut(), layout, t1)?;
    }
    run.events = me.events;
    checked("terminate", me.inst.get_mut().terminate())?;
    Ok(run)
}

struct Me<'a, I> {
    inst: RefCell<I>,
    layout: &'a Layout,
    rtol: f64,
    events: usize,
}

impl<I: FmiModelExchange + Access> Me<'_, I> {
    fn call<T, E: std::fmt::Debug>(
        &self,
        what: &str,
        f: impl FnOnce(&mut I) -> Result<T, E>,
    ) -> Result<T, String> {
        checked(what, f(&mut self.inst.borrow_mut()))
    }

    fn at(&self, t: f64, x: &[f64]) -> Result<(), String> {
        self.call("set time", |i| i.set_time(t))?;
        self.call("set states", |i| i.set_continuous_states(x))
            .map(|_| ())
    }

    fn indicators(&self, t: f64, x: &[f64]) -> Result<Vec<f64>, String> {
        self.at(t, x)?;
        let mut z = vec![0.0; self.layout.indicators];
        self.call("get event indicators", |i| i.get_event_indicators(&mut z))?;
        Ok(z)
    }

    /// The event iteration in Event Mode, then Continuous-Time Mode: the next time event.
    fn iterate(&mut self, t: f64) -> Result<Option<f64>, String> {
        let mut flags = EventFlags::default();
        for updates in 0.. {
            flags.reset();
            self.call("update discrete states", |i| {
                i.update_discrete_states(&mut flags)
            })?;
            if flags.terminate_simulation {
                return Err(format!("t = {t}: the FMU asked to terminate"));
            }
            if !flags.discrete_states_need_update {
                self.events += usize::from(updates > 0);
                break;
            }
        }
        self.call("enter continuous-time mode", |i| {
            i.enter_continuous_time_mode()
        })?;
        Ok(flags.next_event_time)
    }

    /// One Dormand-Prince step from (t, x).
    fn step(&self, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        let failed = RefCell::new(None);
        let rhs = |t: f64, x: &[f64]| {
            let mut dx = vec![0.0; x.len()];
            let r = self.at(t, x).and_then(|_| {
                self.call("get derivatives", |i| {
                    i.get_continuous_state_derivatives(&mut dx)
                })
            });
            if let Err(e) = r {
                failed.borrow_mut().get_or_insert(format!("t = {t}: {e}"));
            }
            dx
        };
        let (y, err) = ode::dormand_prince(rhs, t, x, h, self.rtol);
        match failed.into_inner() {
            Some(_) => (y, f64::INFINITY),
            None => (y, err),
        }
    }

    /// From `t` towards `end`: where it stopped (at `end`, or at a state event located to
    /// 1e-13 s), the states there, and whether an event is due.
    fn integrate(
        &self,
        t: f64,
        end: f64,
        mut x: Vec<f64>,
        h: &mut f64,
    ) -> Result<(f64, Vec<f64>, bool), String> {
        let crossed = |a: &[f64], b: &[f64]| {
            a.iter()
                .zip(b)
                .any(|(a, b)| *a != 0.0 && (*a > 0.0) != (*b > 0.0))
        };
        let mut t = t;
        let mut z = self.indicators(t, &x)?;
        while t < end - 1e-13 {
            let dt = h.min(end - t);
            if dt < 1e-14 {
                return Err(format!("t = {t}: the step size fell to {dt}"));
            }
            let (y, err) = self.step(t, &x, dt);
            if err.is_nan() || err > 1.0 {
                *h = dt * ode::next_step_factor(err.min(1e10), 5);
                continue;
            }
            let zy = self.indicators(t + dt, &y)?;
            if crossed(&z, &zy) {
                let (mut lo, mut hi) = (0.0, dt);
                while hi - lo > 1e-13 {
                    let mid = 0.5 * (lo + hi);
                    let (ym, _) = self.step(t, &x, mid);
                    if crossed(&z, &self.indicators(t + mid, &ym)?) {
                        hi = mid;
                    } else {
                        lo = mid;
                    }
                }
                let (ye, _) = self.step(t, &x, hi);
                self.at(t + hi, &ye)?;
                return Ok((t + hi, ye, true));
            }
            (t, x, z) = (t + dt, y, zy);
            *h = dt * ode::next_step_factor(err, 5);
        }
        self.at(t, &x)?;
        Ok((t, x, false))
    }
}
