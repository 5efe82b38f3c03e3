//! The state tables cell by cell (docs/state-tables.md): for FMI 2.0.4 and FMI 3.0.2, Model
//! Exchange and Co-Simulation, every mode × variable class × call (get, set), each cell citing
//! the table row, condition or section that decides it. The FastDrivetrain has every class:
//! fixed parameters, calculated parameters, continuous and discrete inputs, continuous-time
//! states and their derivatives, continuous and discrete outputs, locals, and in FMI 3.0 the
//! independent `time`. Every variable of a class is called: an allowed call returns OK, a
//! refused one Error, and a refused set changes no value the instance shows.
//!
//! Citation keys as in docs/state-tables.md: M-cN, M-x, M-∅ = FMI 2.0.4 section 3.2.3's table,
//! condition N, "x" or blank; C-… the same for section 4.2.4; 3:§… = FMI 3.0.2's section.

use fmu_harness::fmi3::Fmu3;
use fmu_harness::{Fmu, ERROR, OK};
use model_description::{Causality, VariableType};
use std::collections::BTreeMap;

const MODEL: &str = "FastDrivetrain";

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Class {
    Parameter,
    CalculatedParameter,
    ContinuousInput,
    DiscreteInput,
    State,
    Derivative,
    ContinuousOutput,
    DiscreteOutput,
    Local,
    Independent,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Mode {
    Instantiated,
    Initialization,
    Event,
    ContinuousTime,
    Step,
    Terminated,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Call {
    Get,
    Set,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Standard {
    Fmi2ModelExchange,
    Fmi2CoSimulation,
    Fmi3ModelExchange,
    Fmi3CoSimulation,
}

use Call::*;
use Class::*;
use Mode::*;
use Standard::*;

/// What the standard's text says of a cell (as implemented, where the runtime accepts more
/// than the letter, the reason is given), and where it says it.
fn cell(standard: Standard, mode: Mode, class: Class, call: Call) -> (bool, &'static str) {
    match standard {
        Fmi2ModelExchange | Fmi2CoSimulation => {
            fmi2(standard == Fmi2ModelExchange, mode, class, call)
        }
        Fmi3ModelExchange | Fmi3CoSimulation => fmi3(mode, class, call),
    }
}

fn fmi2(me: bool, mode: Mode, class: Class, call: Call) -> (bool, &'static str) {
    let input = matches!(class, ContinuousInput | DiscreteInput);
    match (call, mode) {
        (Get, Instantiated) => (false, if me { "M-∅" } else { "C-∅" }),
        (Get, Initialization) => match class {
            Parameter | ContinuousInput | DiscreteInput | Local => (
                true,
                "beyond c2's letter (outputs and InitialUnknowns), kept: state-tables.md, As implemented",
            ),
            _ => (true, "c2: an output or an InitialUnknown (§2.2.8)"),
        },
        (Get, _) => (true, if me { "M-x" } else { "C-x" }),
        (Set, Instantiated) => match class {
            Parameter => (true, "c1: initial = exact"),
            _ if input => (
                true,
                "beyond c1's letter (inputs have no initial), kept: state-tables.md, As implemented",
            ),
            _ => (false, "c1: initial = calculated"),
        },
        (Set, Initialization) => match class {
            Parameter => (true, "c3: initial = exact"),
            _ if input => (true, "c3: causality = input"),
            _ => (false, "c3: neither initial = exact nor an input"),
        },
        (Set, Event | Step) => match class {
            _ if input => (true, if me { "M-c4: an input" } else { "C-c6: an input" }),
            Parameter => (false, "c4 / c6: a fixed parameter is not tunable"),
            _ => (false, "c4 / c6: neither an input nor a tunable parameter"),
        },
        (Set, ContinuousTime) => match class {
            ContinuousInput => (true, "M-c5: a continuous input"),
            State => (true, "M-c5: a continuous-time state (the FMI 2.0.1 clarification)"),
            DiscreteInput => (false, "M-c5 (Real: continuous inputs); M-∅ for fmi2SetInteger"),
            _ => (false, "M-c5: neither a continuous input nor a continuous-time state"),
        },
        (Set, Terminated) => (false, if me { "M-∅" } else { "C-∅" }),
    }
}

fn fmi3(mode: Mode, class: Class, call: Call) -> (bool, &'static str) {
    let input = matches!(class, ContinuousInput | DiscreteInput);
    match (call, mode) {
        (Get, Instantiated) => (false, "3:§2.3.2 lists no fmi3Get (D8)"),
        (Get, Initialization) => (true, "3:§2.3.3: fmi3Get{VariableType}, no restriction"),
        (Get, Event) => (true, "3:§2.3.5"),
        (Get, ContinuousTime) => (true, "3:§3.2.1"),
        (Get, Step) => (true, "3:§4.2.1"),
        (Get, Terminated) => (true, "3:§2.3.8"),
        (Set, Instantiated | Initialization) => match class {
            Parameter => (true, "3:§2.3.2 / §2.3.3: initial = exact"),
            _ if input => (
                true,
                "3:§2.3.2 / §2.3.3: inputs are initial = exact (§2.4.7.5)",
            ),
            Independent => (false, "3:§2.4.7.4: an independent variable is never set"),
            _ => (false, "3:§2.3.2 / §2.3.3: initial = calculated"),
        },
        (Set, Event) => match class {
            _ if input => (true, "3:§2.3.5: causality = input"),
            State => (
                false,
                "3:§2.3.5: states with reinit = false only (these declare true)",
            ),
            _ => (false, "3:§2.3.5: neither an input nor a tunable parameter"),
        },
        (Set, ContinuousTime) => match class {
            ContinuousInput => (true, "3:§3.2.1: a continuous input"),
            State => (true, "3:§3.2.1: continuous-time states (fmi3SetFloat64)"),
            _ => (
                false,
                "3:§3.2.1: neither a continuous input nor a continuous-time state",
            ),
        },
        (Set, Step) => match class {
            _ if input => (true, "3:§4.2.1: causality = input"),
            _ => (false, "3:§4.2.1: neither an input nor a tunable parameter"),
        },
        (Set, Terminated) => (false, "3:§2.3.8 lists no fmi3Set"),
    }
}

/// A variable of the FMU: its value reference, whether it is an Integer, its class and a value
/// to set before initialization (its start, or 1).
#[derive(Clone, Copy)]
struct Variable {
    vr: u32,
    integer: bool,
    class: Class,
    start: f64,
}

fn variables(fmu: &Fmu, fmi3: bool) -> Vec<Variable> {
    let vars = &fmu.md.model_variables;
    let derivative_of = |i: usize| match vars[i].kind {
        VariableType::Real { derivative, .. } => derivative,
        _ => None,
    };
    let mut all: Vec<Variable> = vars
        .iter()
        .enumerate()
        .filter(|(_, v)| !matches!(v.kind, VariableType::Boolean { .. }))
        .map(|(i, v)| {
            let continuous = v.variability == model_description::Variability::Continuous;
            let class = if derivative_of(i).is_some() {
                Derivative
            } else if (0..vars.len()).any(|j| derivative_of(j) == Some(i + 1)) {
                State
            } else {
                match (v.causality, continuous) {
                    (Causality::Parameter, _) => Parameter,
                    (Causality::CalculatedParameter, _) => CalculatedParameter,
                    (Causality::Input, true) => ContinuousInput,
                    (Causality::Input, false) => DiscreteInput,
                    (Causality::Output, true) => ContinuousOutput,
                    (Causality::Output, false) => DiscreteOutput,
                    _ => Local,
                }
            };
            let (integer, start) = match v.kind {
                VariableType::Integer { start, .. } => (true, f64::from(start.unwrap_or(1))),
                VariableType::Real { start, .. } => (false, start.unwrap_or(1.0)),
                VariableType::Boolean { .. } => unreachable!(),
            };
            Variable {
                vr: v.value_reference,
                integer,
                class,
                start,
            }
        })
        .collect();
    if fmi3 {
        all.push(Variable {
            vr: vars.len() as u32,
            integer: false,
            class: Independent,
            start: 0.0,
        });
    }
    all
}

/// Get and set one variable, and go from mode to mode, through either standard's C ABI.
trait Calls {
    fn get(&self, v: &Variable) -> (i32, f64);
    fn set(&self, v: &Variable, value: f64) -> i32;
    fn log(&self) -> String;
    /// Into Initialization Mode.
    fn initialization(&self) -> i32;
    fn exit_initialization(&self) -> i32;
    /// From Event Mode, the discrete states updated, into Continuous-Time Mode.
    fn continuous_time(&self) -> i32;
    fn terminate(&self) -> i32;
}

/// The instance through its modes, every variable got and set in each.
fn walk(
    standard: Standard,
    inst: &impl Calls,
    vars: &[Variable],
    o: &mut Outcomes,
    f: &mut Vec<String>,
) {
    let me = matches!(standard, Fmi2ModelExchange | Fmi3ModelExchange);
    let mut at = |mode| check_mode(standard, mode, inst, vars, o, f);
    at(Instantiated);
    assert_eq!(inst.initialization(), OK, "{}", inst.log());
    at(Initialization);
    assert_eq!(inst.exit_initialization(), OK, "{}", inst.log());
    if me {
        at(Event);
        assert_eq!(inst.continuous_time(), OK, "{}", inst.log());
        at(ContinuousTime);
    } else {
        at(Step);
    }
    assert_eq!(inst.terminate(), OK, "{}", inst.log());
    at(Terminated);
}

impl Calls for fmu_harness::Instance<'_> {
    fn get(&self, v: &Variable) -> (i32, f64) {
        if v.integer {
            let mut x = 0;
            let s = unsafe { (self.fmu.api.get_integer)(self.c, &v.vr, 1, &mut x) };
            (s, f64::from(x))
        } else {
            let mut x = [0.0];
            (self.get_real(&[v.vr], &mut x), x[0])
        }
    }
    fn set(&self, v: &Variable, value: f64) -> i32 {
        if v.integer {
            let x = value as i32;
            unsafe { (self.fmu.api.set_integer)(self.c, &v.vr, 1, &x) }
        } else {
            self.set_real(&[v.vr], &[value])
        }
    }
    fn log(&self) -> String {
        self.log_text()
    }
    fn initialization(&self) -> i32 {
        match self.setup_experiment(None, 0.0, Some(1.0)) {
            OK => self.enter_initialization_mode(),
            status => status,
        }
    }
    fn exit_initialization(&self) -> i32 {
        self.exit_initialization_mode()
    }
    fn continuous_time(&self) -> i32 {
        match self.new_discrete_states().0 {
            OK => self.enter_continuous_time_mode(),
            status => status,
        }
    }
    fn terminate(&self) -> i32 {
        fmu_harness::Instance::terminate(self)
    }
}

impl Calls for fmu_harness::fmi3::Instance3<'_> {
    fn get(&self, v: &Variable) -> (i32, f64) {
        if v.integer {
            let mut x = 0;
            let s = unsafe { (self.fmu.api.get_int32)(self.c, &v.vr, 1, &mut x, 1) };
            (s, f64::from(x))
        } else {
            let (s, x) = fmu_harness::fmi3::Instance3::get(self, &[v.vr]);
            (s, x[0])
        }
    }
    fn set(&self, v: &Variable, value: f64) -> i32 {
        if v.integer {
            let x = value as i32;
            unsafe { (self.fmu.api.set_int32)(self.c, &v.vr, 1, &x, 1) }
        } else {
            self.set_vr(v.vr, value)
        }
    }
    fn log(&self) -> String {
        self.log_text()
    }
    fn initialization(&self) -> i32 {
        self.enter_initialization_mode(None, 0.0, 1.0)
    }
    fn exit_initialization(&self) -> i32 {
        self.exit_initialization_mode()
    }
    fn continuous_time(&self) -> i32 {
        match self.update_discrete_states().0 {
            OK => self.enter_continuous_time_mode(),
            status => status,
        }
    }
    fn terminate(&self) -> i32 {
        unsafe { (self.fmu.api.terminate)(self.c) }
    }
}

/// One cell's outcome: how many variables behaved as the cell says, of how many.
type Outcomes = BTreeMap<(Standard, Mode, Class, Call), (usize, usize)>;

/// Every variable got and set in `mode`, each against its cell. A set the cell allows writes
/// the variable's current value (its start before initialization), so nothing moves; a refused
/// set writes another value and must change no value the instance shows (where gets are
/// allowed to look).
fn check_mode(
    standard: Standard,
    mode: Mode,
    inst: &impl Calls,
    vars: &[Variable],
    outcomes: &mut Outcomes,
    failures: &mut Vec<String>,
) {
    let readable = cell(standard, mode, Parameter, Get).0;
    let values = || -> Vec<f64> { vars.iter().map(|v| inst.get(v).1).collect() };
    for v in vars {
        for call in [Get, Set] {
            let (allowed, cites) = cell(standard, mode, v.class, call);
            let before = readable.then(values);
            let status = match call {
                Get => inst.get(v).0,
                Set if allowed => {
                    let current = before.as_ref().map_or(v.start, |b| {
                        b[vars.iter().position(|w| w.vr == v.vr).unwrap()]
                    });
                    inst.set(v, current)
                }
                Set => inst.set(v, v.start + 1.0),
            };
            let expected = if allowed { OK } else { ERROR };
            let mut ok = status == expected;
            if ok && !allowed && call == Set && before.is_some() && before != Some(values()) {
                ok = false;
            }
            let entry = outcomes.entry((standard, mode, v.class, call)).or_default();
            entry.1 += 1;
            if ok {
                entry.0 += 1;
            } else {
                let last = inst.log().lines().last().unwrap_or_default().to_string();
                failures.push(format!(
                    "{standard:?}, {mode:?}, {call:?} of {:?} vr {}: status {status}, the cell says {} ({cites}); {last}",
                    v.class, v.vr, if allowed { "allowed" } else { "refused" }
                ));
            }
        }
    }
}

#[test]
fn every_cell_of_the_state_tables() {
    let fmu = Fmu::load(MODEL);
    let fmu3 = Fmu3::load(MODEL);
    let (vars2, vars3) = (variables(&fmu, false), variables(&fmu, true));
    let mut outcomes = Outcomes::new();
    let mut failures = Vec::new();
    let (o, f) = (&mut outcomes, &mut failures);
    for me in [true, false] {
        let (standard, inst) = if me {
            (Fmi2ModelExchange, fmu.instantiate_me("matrix"))
        } else {
            (Fmi2CoSimulation, fmu.instantiate("matrix"))
        };
        walk(standard, &inst, &vars2, o, f);
    }
    for me in [true, false] {
        let (standard, inst) = if me {
            (Fmi3ModelExchange, fmu3.model_exchange())
        } else {
            (Fmi3CoSimulation, fmu3.co_simulation(false, false))
        };
        walk(standard, &inst, &vars3, o, f);
    }
    assert!(
        failures.is_empty(),
        "{} cells disagree:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The matrix as run is docs/state-tables.md's last section, word for word.
    let table = render(&outcomes);
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/state-tables.md"
    ))
    .expect("docs/state-tables.md");
    assert!(
        doc.contains(&table),
        "docs/state-tables.md's section \"{SECTION}\" is not the matrix as run; it is:\n{table}"
    );
    // Every class is met: the matrix tests something in each.
    let classes: std::collections::BTreeSet<Class> = outcomes.keys().map(|k| k.2).collect();
    assert_eq!(
        classes.len(),
        Independent as usize + 1,
        "{MODEL} has only the classes {classes:?}: the matrix would test nothing in the others"
    );
}

const SECTION: &str = "## 6. As tested, cell by cell";

/// The cells as run, a table per standard: a line per mode and class, the get's and the set's
/// verdicts with what decides each, and how many variables agreed.
fn render(outcomes: &Outcomes) -> String {
    let mut out = format!(
        "{SECTION}\n\nGenerated by `tests/tests/state_matrix.rs` (FastDrivetrain, every variable of each class; \
         `agreed/of` counts the variables that behaved as the cell says).\n"
    );
    let mut last = None;
    for (standard, mode, class, call) in outcomes.keys() {
        if *call == Set {
            continue;
        }
        if last != Some(*standard) {
            out +=
                &format!("\n### {standard:?}\n\n| Mode | Class | Get | Set |\n|---|---|---|---|\n");
            last = Some(*standard);
        }
        let verdict = |call| {
            let (allowed, cites) = cell(*standard, *mode, *class, call);
            let (a, o) = outcomes[&(*standard, *mode, *class, call)];
            format!("{} {cites} ({a}/{o})", if allowed { "✓" } else { "✗" })
        };
        out += &format!(
            "| {mode:?} | {class:?} | {} | {} |\n",
            verdict(Get),
            verdict(Set)
        );
    }
    out
}
