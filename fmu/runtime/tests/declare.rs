//! `#[derive(Variables)]` on a small model with an embedded part, array elements and states of
//! each kind: the table, the state vector, the angles, the start values and the start states.

use fmu_runtime::{Access, Causality, Var, Variables};

const MOVES: &[&str] = &["u"];

#[derive(Debug, Clone, Variables)]
struct Part {
    #[parameter(
        name = "k",
        start = 2.0,
        unit = "N/m",
        min = 0.0,
        describe = "Stiffness"
    )]
    k: f64,
    #[parameter(start = 0.5, unit = "rad")]
    x_start: f64,
    #[output(unit = "rad", state, angle, from = x_start, derivative = "v")]
    x: f64,
    #[output(unit = "rad/s", state, derivative = "a")]
    v: f64,
    #[output(unit = "rad/s2", depends_on = ["x"])]
    a: f64,
}

#[derive(Debug, Clone, Variables)]
struct Whole {
    #[input(describe = "Input")]
    u: f64,
    #[variables(depends_on(a) = MOVES, initial_depends_on(a) = ["k"])]
    #[start(Part { k: 3.0, ..Part::default() })]
    part: Part,
    #[output(name = "q1", index = 0, state, derivative = "r1")]
    #[output(name = "q2", index = 1, state, angle, derivative = "r2")]
    #[start([1.0, 2.0])]
    q: [f64; 2],
    #[output(name = "r1", index = 0)]
    #[output(name = "r2", index = 1)]
    r: [f64; 2],
    #[local(start = 7, describe = "A mode")]
    mode: i32,
    #[output(name = "e", unit = "J", state, derivative = "p")]
    energy: f64,
    #[output(name = "p", unit = "W")]
    power: f64,
    #[support_torque(depends_on = [])]
    tau_support: f64,
}

fn names(vars: &[Var<Whole>]) -> Vec<&str> {
    vars.iter().map(|v| v.name).collect()
}

#[test]
fn the_table_follows_the_declarations() {
    let vars = Whole::variables();
    assert_eq!(
        names(&vars),
        [
            "u",
            "k",
            "x_start",
            "x",
            "v",
            "a",
            "q1",
            "q2",
            "r1",
            "r2",
            "mode",
            "e",
            "p",
            "tau_support"
        ]
    );
    let by = |n: &str| vars.iter().find(|v| v.name == n).unwrap();
    assert_eq!(by("u").causality, Causality::Input);
    assert_eq!(by("k").unit, Some("N/m"));
    assert_eq!(by("k").min, Some(0.0));
    assert_eq!(by("mode").causality, Causality::Local);
    assert!(matches!(by("mode").access, Access::Integer { .. }));
    // The host replaces the part's dependencies where it says so, and only there.
    assert_eq!(by("a").depends_on, Some(MOVES));
    assert_eq!(by("a").initial_depends_on, Some(&["k"][..]));
    assert_eq!(by("tau_support").depends_on, Some(&[][..]));
    // Each derivative points back at its state.
    for (state, derivative) in [
        ("x", "v"),
        ("v", "a"),
        ("q1", "r1"),
        ("q2", "r2"),
        ("e", "p"),
    ] {
        assert_eq!(by(derivative).derivative_of, Some(state), "{derivative}");
    }
    assert_eq!(by("u").derivative_of, None);
}

#[test]
fn start_values_and_states() {
    let mut m = Whole::default();
    // The host's start for the part wins over the part's own.
    assert_eq!((m.part.k, m.part.x_start), (3.0, 0.5));
    assert_eq!((m.q, m.mode), ([1.0, 2.0], 7));
    assert_eq!(Whole::STATES, 5);
    // States in declaration order: x, v, q1, q2, e; the angles are x and q2.
    assert_eq!(Whole::ANGLES, 0b01001);
    assert!(Whole::is_angle(0) && !Whole::is_angle(1) && Whole::is_angle(3));
    m.start_states();
    assert_eq!(m.part.x, 0.5);
    let mut x = [0.0; 5];
    m.energy = 4.0;
    m.get_states(&mut x);
    assert_eq!(x, [0.5, 0.0, 1.0, 2.0, 4.0]);
    m.set_states(&[10.0, 11.0, 12.0, 13.0, 14.0]);
    assert_eq!(
        (m.part.x, m.part.v, m.q, m.energy),
        (10.0, 11.0, [12.0, 13.0], 14.0)
    );
    // Get and set through the table reach the same fields.
    let vars = Whole::variables();
    let q2 = vars.iter().find(|v| v.name == "q2").unwrap();
    let Access::Real { get, set } = q2.access else {
        panic!("q2 is a Real")
    };
    set(&mut m, -1.0);
    assert_eq!((get(&m), m.q[1]), (-1.0, -1.0));
    let k = vars.iter().find(|v| v.name == "k").unwrap();
    assert_eq!(k.value(&m), 3.0);
}

#[test]
fn each_state_is_at_its_named_index() {
    // Named by field (an embedded part's under its field) or, for an element, by variable.
    let s = Whole::STATE;
    assert_eq!([s.part.x, s.part.v, s.q1, s.q2, s.energy], [0, 1, 2, 3, 4]);
    assert_eq!(Part::STATE.v, 1);
    let mut m = Whole::default();
    m.set_states(&[10.0, 11.0, 12.0, 13.0, 14.0]);
    let mut x = [0.0; Whole::STATES];
    m.get_states(&mut x);
    assert_eq!(
        [x[s.part.x], x[s.part.v], x[s.q1], x[s.q2], x[s.energy]],
        [m.part.x, m.part.v, m.q[0], m.q[1], m.energy]
    );
}

#[test]
fn concat_names_joins_lists_in_order() {
    use fmu_runtime::declare::concat_names;
    const A: [&str; 2] = ["a", "b"];
    const JOINED: [&str; 4] = concat_names(&[&A, &[], &["c", "d"]]);
    assert_eq!(JOINED, ["a", "b", "c", "d"]);
}

#[derive(Debug, Clone, Variables)]
struct Misspelt {
    #[input]
    u: f64,
    #[output(depends_on = ["uu"])]
    y: f64,
}

/// `export_fmu!` evaluates the check at compile time; at run time it panics with the same
/// message, which names the list and the name.
#[test]
fn a_dependency_on_an_undeclared_name_is_refused_by_name() {
    fmu_runtime::declare::check_dependencies::<Whole>();
    let refused = std::panic::catch_unwind(fmu_runtime::declare::check_dependencies::<Misspelt>)
        .expect_err("uu is not declared");
    assert_eq!(
        refused.downcast_ref::<String>().map(String::as_str),
        Some("the dependencies of `y` name `uu`, which the model does not declare")
    );
    assert!(Whole::NAMES.windows(2).all(|w| w[0] < w[1]), "sorted");
    assert!(Whole::NAMES.contains(&"k") && Whole::NAMES.contains(&"tau_support"));
}
