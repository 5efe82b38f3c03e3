//! modelDescription.xml, the GUID and documentation/index.html, all from the variable table.

use crate::logger::CATEGORIES;
use crate::model::Model;
use crate::variables::{Access, Causality, Initial, Var};
use model_description as md;

/// A unit: name, SI exponents (kg, m, s, rad), display unit and its factor.
type UnitEntry = (&'static str, [i32; 4], Option<(&'static str, f64)>);

/// Every unit a model may use.
const UNITS: &[UnitEntry] = &[
    ("rad", [0, 0, 0, 1], Some(("deg", 57.29577951308232))),
    ("rad/s", [0, 0, -1, 1], Some(("rpm", 9.549296585513721))),
    ("rad/s2", [0, 0, -2, 1], None),
    ("N.m", [1, 2, -2, 0], None),
    ("N.m/rad", [1, 2, -2, -1], None),
    ("N.m.s/rad", [1, 2, -1, -1], None),
    ("N.m.s", [1, 2, -1, 0], None),
    ("kg.m2", [1, 2, 0, 0], None),
    ("N", [1, 1, -2, 0], None),
    ("m", [0, 1, 0, 0], None),
    ("m/rad", [0, 1, 0, -1], None),
    ("m/rad2", [0, 1, 0, -2], None),
    ("N.s/m", [1, 0, -1, 0], None),
    ("N/m", [1, 0, -2, 0], None),
    ("m/s", [0, 1, -1, 0], None),
    ("m/s2", [0, 1, -2, 0], None),
    ("kg", [1, 0, 0, 0], None),
    ("W", [1, 2, -3, 0], None),
    ("J", [1, 2, -2, 0], None),
    ("s", [0, 0, 1, 0], None),
];

fn unit_entry(name: &str) -> &'static UnitEntry {
    UNITS
        .iter()
        .find(|u| u.0 == name)
        .unwrap_or_else(|| panic!("unit '{name}' is not in the runtime's unit table"))
}

/// FNV-1a, 128 bit: a GUID that changes whenever the model's interface does.
fn fnv1a_128(bytes: &[u8]) -> u128 {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    for &b in bytes {
        h ^= u128::from(b);
        h = h.wrapping_mul(0x0000000001000000000000000000013B);
    }
    h
}

pub fn guid<M: Model>() -> String {
    let mut key = format!("{}|{}|", M::NAME, env!("CARGO_PKG_VERSION"));
    let defaults = M::default();
    for v in M::variables() {
        key += &format!(
            "{}:{:?}:{:?}:{}:{:?}:{}|",
            v.name,
            v.causality,
            v.variability,
            v.is_real(),
            v.unit,
            v.value(&defaults).to_bits()
        );
    }
    let h = fnv1a_128(key.as_bytes());
    format!(
        "{{{:08x}-{:04x}-{:04x}-{:04x}-{:012x}}}",
        (h >> 96) as u32,
        (h >> 80) as u16,
        (h >> 64) as u16,
        (h >> 48) as u16,
        h & 0xffff_ffff_ffff
    )
}

/// The start value is written where the standard requires it (initial exact/approx, inputs).
fn has_start<M>(v: &Var<M>) -> bool {
    v.causality == Causality::Input || matches!(v.initial, Some(Initial::Exact | Initial::Approx))
}

fn index_of<M>(vars: &[Var<M>], name: &str) -> usize {
    vars.iter()
        .position(|v| v.name == name)
        .unwrap_or_else(|| panic!("variable table names unknown variable '{name}'"))
        + 1
}

fn indices<M>(vars: &[Var<M>], names: Option<&[&str]>) -> Option<Vec<usize>> {
    names.map(|ns| {
        let mut ix: Vec<usize> = ns.iter().map(|n| index_of(vars, n)).collect();
        ix.sort_unstable();
        ix
    })
}

pub fn model_description<M: Model>(generation_date_and_time: &str) -> md::ModelDescription {
    let vars = M::variables();
    let defaults = M::default();
    let e = M::DEFAULT_EXPERIMENT;
    md::ModelDescription {
        model_name: M::NAME.into(),
        guid: guid::<M>(),
        description: M::DESCRIPTION.into(),
        author: "drivetrain-fmus".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        generation_tool: format!("drivetrain-fmus fmu-runtime {}", env!("CARGO_PKG_VERSION")),
        generation_date_and_time: generation_date_and_time.into(),
        number_of_event_indicators: M::EVENT_INDICATORS,
        model_exchange: Some(md::ModelExchange {
            model_identifier: M::NAME.into(),
            completed_integrator_step_not_needed: true,
            can_get_and_set_fmu_state: true,
            can_serialize_fmu_state: true,
            provides_directional_derivative: M::PROVIDES_DERIVATIVES,
            can_not_use_memory_management_functions: true,
        }),
        co_simulation: md::CoSimulation {
            model_identifier: M::NAME.into(),
            can_handle_variable_communication_step_size: true,
            can_interpolate_inputs: true,
            max_output_derivative_order: u32::from(M::PROVIDES_DERIVATIVES),
            can_get_and_set_fmu_state: true,
            can_serialize_fmu_state: true,
            provides_directional_derivative: M::PROVIDES_DERIVATIVES,
            can_not_use_memory_management_functions: true,
        },
        unit_definitions: unit_definitions(),
        log_categories: CATEGORIES
            .iter()
            .map(|(n, d)| md::LogCategory {
                name: n.to_string(),
                description: d.to_string(),
            })
            .collect(),
        default_experiment: Some(md::DefaultExperiment {
            start_time: e.start,
            stop_time: e.stop,
            tolerance: e.tolerance,
            step_size: e.step,
        }),
        model_variables: (0..vars.len())
            .map(|vr| scalar_variable(&vars, vr, &defaults))
            .collect(),
        model_structure: model_structure(&vars),
    }
}

/// Variable `vr` of the table, its start value read from the default instance.
fn scalar_variable<M>(vars: &[Var<M>], vr: usize, defaults: &M) -> md::ScalarVariable {
    let v = &vars[vr];
    let start = has_start(v);
    let kind = match &v.access {
        Access::Real { get, .. } => md::VariableType::Real {
            start: start.then(|| get(defaults)),
            unit: v.unit.map(String::from),
            display_unit: v
                .unit
                .and_then(|u| unit_entry(u).2)
                .map(|d| d.0.to_string()),
            min: v.min,
            max: v.max,
            derivative: v.derivative_of.map(|s| index_of(vars, s)),
        },
        Access::Integer { get, .. } => md::VariableType::Integer {
            start: start.then(|| get(defaults)),
            min: v.min.map(|x| x as i32),
            max: v.max.map(|x| x as i32),
        },
    };
    md::ScalarVariable {
        name: v.name.into(),
        value_reference: vr as u32,
        description: v.description.into(),
        causality: v.causality,
        variability: v.variability,
        initial: v.initial,
        kind,
    }
}

/// Outputs, state derivatives and initial unknowns, with the dependencies declared.
fn model_structure<M>(vars: &[Var<M>]) -> md::ModelStructure {
    let unknown = |i: usize, deps: Option<&[&str]>| md::Unknown {
        index: i + 1,
        dependencies: indices(vars, deps),
    };
    let mut structure = md::ModelStructure::default();
    for (i, v) in vars.iter().enumerate() {
        if v.causality == Causality::Output {
            structure.outputs.push(unknown(i, v.depends_on));
        }
        if v.derivative_of.is_some() {
            structure.derivatives.push(unknown(i, v.depends_on));
        }
    }
    for (i, v) in vars.iter().enumerate() {
        if v.is_initial_unknown(vars) {
            structure
                .initial_unknowns
                .push(unknown(i, v.initial_depends_on));
        }
    }
    structure
}

/// The whole unit table, so that every FMU of the project offers the same units to a tool.
fn unit_definitions() -> Vec<md::Unit> {
    UNITS
        .iter()
        .map(|&(name, [kg, m, s, rad], display)| md::Unit {
            name: name.into(),
            base_unit: md::BaseUnit {
                kg,
                m,
                s,
                rad,
                factor: 1.0,
            },
            display_units: display
                .map(|(n, f)| md::DisplayUnit {
                    name: n.into(),
                    factor: f,
                    offset: 0.0,
                })
                .into_iter()
                .collect(),
        })
        .collect()
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// What the event indicators are, for any model: the model's own section says which they are.
fn indicators_text<M: Model>() -> String {
    if M::EVENT_INDICATORS == 0 {
        return "<p>No event indicators: nothing switches inside a step.</p>".into();
    }
    format!(
        "<p>{n} event indicator{s} (<code>numberOfEventIndicators</code>). Each is a switching \
         function <code>g</code> moved by a small hysteresis <code>h</code> to the side of it \
         that the current mode belongs to (<code>g + h</code> or <code>g - h</code>): after \
         every event iteration, the one after initialization included, every indicator is \
         strictly nonzero on its mode's side, so a root finder that only reports sign changes \
         between nonzero values (CVode, IDA, DASSL, SciPy) sees every switch, also one that \
         starts where the model rests on a switching surface. An event is found where \
         <code>g</code> has gone <code>h</code> past its surface, which moves event times by \
         <code>h/|dg/dt|</code>, far below the integration tolerance.</p>",
        n = M::EVENT_INDICATORS,
        s = if M::EVENT_INDICATORS == 1 { "" } else { "s" },
    )
}

/// documentation/index.html: the model's own text followed by the generated variable table.
pub fn documentation<M: Model>() -> String {
    let vars = M::variables();
    let defaults = M::default();
    let mut rows = String::new();
    for (vr, v) in vars.iter().enumerate() {
        let start = if has_start(v) {
            format!("{}", v.value(&defaults))
        } else {
            String::new()
        };
        let range = match (v.min, v.max) {
            (None, None) => String::new(),
            (min, max) => format!(
                "[{}, {}]",
                min.map_or("-inf".into(), |x| x.to_string()),
                max.map_or("inf".into(), |x| x.to_string())
            ),
        };
        rows += &format!(
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
            html_escape(v.name),
            vr,
            v.causality.as_str(),
            v.unit.unwrap_or(""),
            start,
            range,
            html_escape(v.description)
        );
    }
    let e = M::DEFAULT_EXPERIMENT;
    format!(
        r#"<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{name}</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:auto}} table{{border-collapse:collapse}}
td,th{{border:1px solid #999;padding:2px 6px}} pre{{background:#f4f4f4;padding:6px}}</style></head>
<body>
<h1>{name}</h1>
<p>{description}</p>
{body}
<h2>Variables</h2>
<table>
<tr><th>Name</th><th>Value reference</th><th>Causality</th><th>Unit</th><th>Start</th><th>Valid range</th><th>Description</th></tr>
{rows}</table>
<h2>Simulation</h2>
<p>FMI 2.0 Co-Simulation. Internal integration with {solver}, with error control at the
relative tolerance given to <code>fmi2SetupExperiment</code>
(default {tol:e}); state events are located inside the communication step.
Variable communication steps, first-order input derivatives
(<code>fmi2SetRealInputDerivatives</code>), and get/set/serialize FMU state are supported.
Default experiment: {start} s to {stop} s with a {step} s communication step.</p>
<p>FMI 2.0 Model Exchange from the same binary: the importer's solver integrates the
continuous states (in the order of <code>ModelStructure/Derivatives</code>), watches the
event indicators, and at each of their zero crossings calls <code>fmi2NewDiscreteStates</code>,
which runs the same event update as the Co-Simulation interface (mode switches, velocity
resets, reported through <code>valuesOfContinuousStatesChanged</code>) until nothing changes.
No <code>fmi2CompletedIntegratorStep</code> is needed.</p>
<p>FMI 3.0 from the same binary (the FMU of the same name in <code>target/fmu/fmi3/</code>,
with x86_64-linux, x86_64-windows and aarch64-linux binaries): the same variables and value
references, as <code>Float64</code> and <code>Int32</code>, plus the independent variable
<code>time</code> (value reference {n_vars}) and one variable per event indicator after it.
Co-Simulation without Event Mode steps exactly as the FMI 2.0 interface does, bit for bit.
With Event Mode and early return, <code>fmi3DoStep</code> ends at each state or time event
inside the step, before its update, with <code>eventHandlingNeeded</code>; the importer's
<code>fmi3UpdateDiscreteStates</code> runs the same event update. The intermediate update
callback is called at every internal step, and an early return asked for there ends the step
at that step's end or at the requested time. The continuous inputs and outputs are
intermediate variables: those named in <code>requiredIntermediateVariables</code> can be read
in the callback, and the inputs set there, which hold from that time to the end of the step.
Model Exchange as in FMI 2.0.</p>
{indicators}
</body>
</html>
"#,
        name = M::NAME,
        n_vars = vars.len(),
        indicators = indicators_text::<M>(),
        solver = crate::ode::pairs::describe::<M>(),
        description = html_escape(M::DESCRIPTION),
        body = M::DOCUMENTATION,
        tol = e.tolerance,
        start = e.start,
        stop = e.stop,
        step = e.step,
    )
}
