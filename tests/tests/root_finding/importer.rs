//! The root-finding importer: one Dormand-Prince integration across the communication points,
//! events found by sign changes of the indicators, in FMI 2.0 or FMI 3.0 Model Exchange.

use super::*;

/// What the importer calls, in FMI 2.0 or FMI 3.0.
trait ModelExchange {
    fn set_time(&self, t: f64) -> i32;
    fn set_input(&self, name: &str, value: f64) -> i32;
    fn set_continuous_states(&self, x: &[f64]) -> i32;
    fn derivatives(&self) -> (i32, Vec<f64>);
    fn event_indicators(&self) -> (i32, Vec<f64>);
    fn continuous_states(&self) -> (i32, Vec<f64>);
    fn enter_event_mode(&self) -> i32;
    /// One update of the event iteration: status, whether another is needed.
    fn update(&self) -> (i32, bool);
    fn enter_continuous_time_mode(&self) -> i32;
    fn real(&self, name: &str) -> f64;
    fn log_text(&self) -> String;
}

impl ModelExchange for Instance<'_> {
    fn set_time(&self, t: f64) -> i32 {
        Instance::set_time(self, t)
    }
    fn set_input(&self, name: &str, value: f64) -> i32 {
        self.set(name, value)
    }
    fn set_continuous_states(&self, x: &[f64]) -> i32 {
        Instance::set_continuous_states(self, x)
    }
    fn derivatives(&self) -> (i32, Vec<f64>) {
        Instance::derivatives(self)
    }
    fn event_indicators(&self) -> (i32, Vec<f64>) {
        Instance::event_indicators(self)
    }
    fn continuous_states(&self) -> (i32, Vec<f64>) {
        Instance::continuous_states(self)
    }
    fn enter_event_mode(&self) -> i32 {
        Instance::enter_event_mode(self)
    }
    fn update(&self) -> (i32, bool) {
        let (s, info) = self.new_discrete_states();
        (s, info.new_discrete_states_needed != 0)
    }
    fn enter_continuous_time_mode(&self) -> i32 {
        Instance::enter_continuous_time_mode(self)
    }
    fn real(&self, name: &str) -> f64 {
        Instance::real(self, name)
    }
    fn log_text(&self) -> String {
        Instance::log_text(self)
    }
}

impl ModelExchange for Instance3<'_> {
    fn set_time(&self, t: f64) -> i32 {
        Instance3::set_time(self, t)
    }
    fn set_input(&self, name: &str, value: f64) -> i32 {
        self.set(name, value)
    }
    fn set_continuous_states(&self, x: &[f64]) -> i32 {
        Instance3::set_continuous_states(self, x)
    }
    fn derivatives(&self) -> (i32, Vec<f64>) {
        Instance3::derivatives(self)
    }
    fn event_indicators(&self) -> (i32, Vec<f64>) {
        Instance3::event_indicators(self)
    }
    fn continuous_states(&self) -> (i32, Vec<f64>) {
        Instance3::continuous_states(self)
    }
    fn enter_event_mode(&self) -> i32 {
        Instance3::enter_event_mode(self)
    }
    fn update(&self) -> (i32, bool) {
        let (s, needed, _, _) = self.update_discrete_states();
        (s, needed)
    }
    fn enter_continuous_time_mode(&self) -> i32 {
        Instance3::enter_continuous_time_mode(self)
    }
    fn real(&self, name: &str) -> f64 {
        Instance3::real(self, name)
    }
    fn log_text(&self) -> String {
        Instance3::log_text(self)
    }
}

/// A Model Exchange importer that integrates like CVode.
struct Importer<'a, I: ModelExchange> {
    inst: I,
    sc: &'a Scenario,
    /// Indicators at the last accepted point, and whether each is watched: one that was
    /// exactly zero there is ignored until it is nonzero (then watched from that value).
    z: Vec<f64>,
    active: Vec<bool>,
    events: Vec<f64>,
    zeros: Vec<String>,
    /// Roots reported on the near side of the crossing (else the far side).
    near_side: bool,
    /// Where the event update found nothing to change at a root: the root finder will find the
    /// same root again.
    repeats: Vec<f64>,
}

impl<I: ModelExchange> Importer<'_, I> {
    /// Time, inputs at that time, states: what every evaluation sets.
    fn at(&self, t: f64, x: &[f64]) {
        assert_eq!(self.inst.set_time(t), OK);
        for (n, v) in self.sc.names.iter().zip(self.sc.inputs_at(t)) {
            assert_eq!(self.inst.set_input(n, v), OK, "{n} = {v} at t = {t}");
        }
        let status = self.inst.set_continuous_states(x);
        assert_eq!(status, OK, "{}", self.inst.log_text());
    }

    fn rhs(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        let (s, dx) = self.inst.derivatives();
        assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
        dx
    }

    fn indicators(&self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        let (s, z) = self.inst.event_indicators();
        assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
        z
    }

    /// One Dormand-Prince 5(4) step through the FMU's derivatives.
    fn dp5(&self, t: f64, x: &[f64], h: f64) -> (Vec<f64>, f64) {
        dormand_prince(|t, x| self.rhs(t, x), t, x, h, RTOL)
    }

    /// CVode's test: a watched indicator that changed sign, or reached exactly zero.
    fn root(&self, z: &[f64]) -> bool {
        self.z
            .iter()
            .zip(z)
            .zip(&self.active)
            .any(|((a, b), on)| *on && (*b == 0.0 || a * b < 0.0))
    }

    /// Watches the indicators from the point `x` at `t` on (after an event: CVode's restart).
    fn restart(&mut self, t: f64, x: &[f64]) {
        self.z = self.indicators(t, x);
        self.active = self.z.iter().map(|z| *z != 0.0).collect();
        if let Some(i) = self.z.iter().position(|z| *z == 0.0) {
            self.zeros
                .push(format!("indicator {i} is exactly zero at t = {t}"));
        }
    }

    /// Moves the watch to an accepted point: indicators that left zero are watched again.
    fn accept(&mut self, z: Vec<f64>) {
        for (on, z) in self.active.iter_mut().zip(&z) {
            *on |= *z != 0.0;
        }
        self.z = z;
    }

    /// The event iteration at `t`, `x`; the states after it. Entered at a root: an iteration
    /// that changes nothing is recorded as a repeat.
    fn event(&mut self, t: f64, x: &[f64]) -> Vec<f64> {
        self.at(t, x);
        assert_eq!(self.inst.enter_event_mode(), OK);
        let mut changed = false;
        for _ in 0..1000 {
            let (s, needed) = self.inst.update();
            assert_eq!(s, OK, "t = {t}: {}", self.inst.log_text());
            if !needed {
                break;
            }
            changed = true;
        }
        if changed {
            self.events.push(t);
        } else {
            self.repeats.push(t);
        }
        assert_eq!(self.inst.enter_continuous_time_mode(), OK);
        let (_, x) = self.inst.continuous_states();
        self.restart(t, &x);
        x
    }

    /// Integrates from 0 to the scenario's stop time in one run, outputs at every
    /// communication point (steps end there, but nothing restarts).
    fn run(&mut self, names: &[String]) -> Vec<Vec<f64>> {
        let (_, mut x) = self.inst.continuous_states();
        self.restart(0.0, &x);
        let n = (self.sc.stop / self.sc.step).round() as usize;
        let (mut t, mut h, mut rows) = (0.0, 1e-4f64, vec![]);
        for k in 1..=n {
            let tk = k as f64 * self.sc.step;
            while t < tk - 1e-13 {
                assert!(self.events.len() < 10_000, "chattering");
                if self.repeats.len() > 20 {
                    // The same root found again and again: stop, the test reports it.
                    break;
                }
                let dt = h.min(tk - t);
                let (y, err) = self.dp5(t, &x, dt);
                if err > 1.0 {
                    h = dt * (0.9 * err.powf(-0.2)).max(0.2);
                    continue;
                }
                let zy = self.indicators(t + dt, &y);
                if self.root(&zy) {
                    // Bisection on single steps from t, to 1e-13 s (the near side: to 4 ulp of
                    // time).
                    let width = |hi: f64| match self.near_side {
                        true => 4.0 * ulp(t + hi),
                        false => 1e-13,
                    };
                    let (mut lo, mut hi) = (0.0, dt);
                    while hi - lo > width(hi) {
                        let mid = 0.5 * (lo + hi);
                        let (ym, _) = self.dp5(t, &x, mid);
                        if self.root(&self.indicators(t + mid, &ym)) {
                            hi = mid;
                        } else {
                            lo = mid;
                        }
                    }
                    let at = if self.near_side { lo } else { hi };
                    let (ye, _) = self.dp5(t, &x, at);
                    t += at;
                    x = self.event(t, &ye);
                    continue;
                }
                t += dt;
                x = y;
                self.accept(zy);
                if dt == h {
                    h = dt * (0.9 * err.max(1e-10).powf(-0.2)).min(5.0);
                }
            }
            t = tk;
            self.at(t, &x);
            rows.push(names.iter().map(|n| self.inst.real(n)).collect());
        }
        rows
    }
}

/// The distance from `t` to the next larger float.
pub(crate) fn ulp(t: f64) -> f64 {
    let t = t.abs();
    f64::from_bits(t.to_bits() + 1) - t
}

pub(crate) fn model_exchange(fmu: &Fmu, sc: &Scenario, names: &[String], near_side: bool) -> Run {
    let inst = fmu.instantiate_me("me");
    assert_eq!(inst.setup_experiment(None, 0.0, None), OK);
    sc.set_parameters(&inst);
    assert_eq!(inst.enter_initialization_mode(), OK);
    sc.set_inputs(&inst, 0.0);
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    let (s, _) = inst.event_iteration();
    assert_eq!(s, OK, "{}", inst.log_text());
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    import(inst, sc, names, near_side)
}

/// The same run through FMI 3.0.
pub(crate) fn model_exchange3(fmu: &Fmu3, fmu2: &Fmu, sc: &Scenario, names: &[String]) -> Run {
    let inst = fmu.model_exchange();
    for (n, v) in &sc.params {
        let integer = fmu2
            .md
            .variable(n)
            .is_some_and(|v| matches!(v.kind, VariableType::Integer { .. }));
        let s = if integer {
            inst.set_int(n, *v as i32)
        } else {
            inst.set(n, *v)
        };
        assert_eq!(s, OK, "{n}");
    }
    assert_eq!(inst.enter_initialization_mode(None, 0.0, sc.stop), OK);
    for (n, v) in sc.names.iter().zip(sc.inputs_at(0.0)) {
        assert_eq!(inst.set(n, v), OK);
    }
    assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
    assert_eq!(inst.event_iteration(), OK, "{}", inst.log_text());
    assert_eq!(inst.enter_continuous_time_mode(), OK);
    import(inst, sc, names, false)
}

fn import<I: ModelExchange>(inst: I, sc: &Scenario, names: &[String], near_side: bool) -> Run {
    let mut me = Importer {
        inst,
        sc,
        z: vec![],
        active: vec![],
        events: vec![],
        zeros: vec![],
        near_side,
        repeats: vec![],
    };
    let rows = me.run(names);
    Run {
        rows,
        events: me.events,
        zeros: me.zeros,
        repeats: me.repeats,
    }
}
