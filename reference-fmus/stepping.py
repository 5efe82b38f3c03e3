"""What every generator in generate.py shares: writing a scenario's Cross-Check files, stepping
a model through its input table (held or interpolated) and judging a second solution.
Split from generate.py (the project's 600-line rule); the conventions are in its docstring."""
import os

from common import rk4, write_csv, write_opt


HERE = os.path.dirname(os.path.abspath(__file__))


def write_scenario(d, model, input_names, ins, names, rows, stop, step, rtol, interpolated=None):
    """<Model>_in.csv, <Model>_ref.csv and <Model>_ref.opt in d, and <Model>_ref_interpolated.csv
    when `interpolated` rows are given."""
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, model)
    write_csv(path + "_in.csv", input_names, ins)
    write_csv(path + "_ref.csv", names, rows)
    write_opt(path + "_ref.opt", 0.0, stop, step, rtol)
    if interpolated is not None:
        write_csv(path + "_ref_interpolated.csv", names, interpolated)


def input_rows(table, h):
    """The rows of <Model>_in.csv: the inputs `table[k]` at the communication points k h."""
    return [(round(k * h, 10),) + tuple(u) for k, u in enumerate(table)]


def step_inputs(table, k, interpolated):
    """Step k's inputs at its start and at its end as the importer applies them: the row at the
    step's start throughout (held), or rows k and k + 1 (interpolated)."""
    return table[k], table[k + 1] if interpolated else table[k]


def inputs_at(u0, u1, s):
    """The inputs a fraction s into a step, linear from u0 to u1. Held inputs (u1 = u0) come
    out as u0 exactly, so both variants take the same path."""
    return tuple(a + (b - a) * s for a, b in zip(u0, u1))


def march(step, x, table, h, every, row, interpolated, first=None):
    """Rows every `every` communication steps of h: x advanced by step(x, u0, u1, t0, t1) with
    `step_inputs`, recorded as row(t, x, u1) (the inputs the step ended with) after the start
    row, `first` or row(0, x, table[0])."""
    rows = [first or row(0.0, x, table[0])]
    for k in range(len(table) - 1):
        u0, u1 = step_inputs(table, k, interpolated)
        x = step(x, u0, u1, k * h, (k + 1) * h)
        if (k + 1) % every == 0:
            rows.append(row(round((k + 1) * h, 10), x, u1))
    return rows


def rk4_steps(f, x, u0, u1, t0, h, sub):
    """x after the communication step [t0, t0 + h]: `sub` RK4 substeps of dx/dt = f(t, x, u),
    u taken at every stage's time between u0 and u1 (`inputs_at`)."""
    for j in range(sub):
        x = rk4(lambda t, y: f(t, y, inputs_at(u0, u1, (t - t0) / h)), x, t0 + j * h / sub, h / sub)
    return x


def rk4_march(f, x, table, h, every, row, interpolated, sub, first=None):
    """`march` with `sub` RK4 substeps per step (`rk4_steps`) of dx/dt = f(t, x, u)."""
    def step(x, u0, u1, t0, _t1):
        return rk4_steps(f, x, u0, u1, t0, h, sub)

    return march(step, x, table, h, every, row, interpolated, first)


def deviation(rows, other, columns=None):
    """The largest difference between two results on the same time rows (all columns after the
    time, or `columns`), relative to each signal's range (its largest |value| in `rows`), as the
    validation judges an FMU."""
    assert [r[0] for r in rows] == [o[0] for o in other]
    worst = 0.0
    for c in columns or range(1, len(rows[0])):
        scale = max(abs(r[c]) for r in rows)
        diff = max(abs(r[c] - o[c]) for r, o in zip(rows, other))
        worst = max(worst, diff / scale if scale else diff)
    return worst


def report(scenario, figure, how):
    """One line per interpolated reference: its largest difference from the second solution
    `how` names, relative to each signal's range (`deviation`). The validation judges FMUs at
    1e-6 of the range, so a reference must agree to 1e-9."""
    print(f"{scenario}: interpolated reference within {figure:.1e} of the range ({how})")
    assert figure < 1e-9, f"{scenario}: the interpolated reference is only good to {figure:.1e}"


def converged(scenario, solve, sub):
    """solve(sub), the interpolated reference of an RK4 model with `sub` substeps per step,
    reported against solve(sub // 2): RK4's error falls 16-fold from there, so the figure bounds
    the reference's error with a wide margin."""
    rows = solve(sub)
    report(scenario, deviation(rows, solve(sub // 2)),
           f"RK4, {sub} vs {sub // 2} substeps per step")
    return rows
