"""Runs one reference scenario of one FMU in each importer a user might have.

Every runner returns (time, {output: values}) with the outputs at the communication points it
produced, so `validate.py` judges all importers with one comparison. The quirks each runner works
around are the ones docs/importers.md lists under "Importer notes".
"""
import csv
import json
import math
import os
import shutil
import subprocess
import tempfile

import fmpy.simulation as fmpy_simulation
import fmpy.sundials as fmpy_sundials
import numpy as np
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi3 import FMU3Slave
from fmpy.util import read_csv

import platforms


class Scenario:
    """A Cross-Check set: <Model>_in.csv (optional), <Model>_ref.csv, <Model>_ref.opt, and
    <Model>_par.csv (optional): parameter values every importer sets before initialization.

    <Model>_ref.csv is the solution with each input held over a communication step, as a
    co-simulation master applies the table. A scenario whose inputs are continuous (no two rows
    at one time) also has <Model>_ref_interpolated.csv: the solution with the inputs interpolated
    linearly between the rows, as FMPy and the Cross-Check rules read the table and as a Model
    Exchange importer applies it at every evaluation (`interpolated`).

    <Model>_par.csv has the header `"name","value"` and one row per parameter, e.g.
    `"chain_model",2`; each value is read as a Real or an Integer by the variable's type in the
    FMU's modelDescription.xml (`parameter_values`). Parameters it does not name keep their start
    values."""

    def __init__(self, directory, model):
        self.directory, self.model = directory, model
        self.opt = {}
        with open(os.path.join(directory, f"{model}_ref.opt")) as f:
            for line in f:
                if "," in line:
                    key, value = line.split(",", 1)
                    self.opt[key.strip()] = float(value)
        self.ref = read_csv(os.path.join(directory, f"{model}_ref.csv"))
        self.in_path = os.path.join(directory, f"{model}_in.csv")
        self.inputs = read_inputs(self.in_path) if os.path.exists(self.in_path) else None
        self.outputs = [n for n in self.ref.dtype.names if n != "time"]
        self.start, self.stop = self.opt["StartTime"], self.opt["StopTime"]
        self.step, self.tol = self.opt["StepSize"], self.opt["RelTol"]
        interpolated = os.path.join(directory, f"{model}_ref_interpolated.csv")
        self.ref_interpolated = read_csv(interpolated) if os.path.exists(interpolated) else None
        self.par_path = os.path.join(directory, f"{model}_par.csv")
        self.parameters = read_parameters(self.par_path) if os.path.exists(self.par_path) else {}

    def parameter_values(self, md):
        """{name: value} with each value an int for an Integer (Int32) parameter and a float for
        a Real (Float64) one (md: the FMU's model description, as FMPy reads it). A name that is not a parameter
        of the FMU, or an Integer value with a fraction, is an error: a scenario must not
        silently run with a parameter it did not get."""
        variables = {v.name: v for v in md.modelVariables}
        values = {}
        for name, text in self.parameters.items():
            v = variables.get(name)
            if v is None or v.causality != "parameter":
                raise ValueError(f"{self.par_path}: {name!r} is not a parameter of {self.model}")
            if v.type in ("Integer", "Int32"):
                x = float(text)
                if x != int(x):
                    raise ValueError(f"{self.par_path}: {name} is an Integer, not {text}")
                values[name] = int(x)
            elif v.type in ("Real", "Float64"):
                values[name] = float(text)
            else:
                raise ValueError(f"{self.par_path}: {name} is a {v.type}; only Real and Integer "
                                 "(FMI 3.0: Float64 and Int32) parameters can be set")
        return values

    def input_problems(self, md):
        """What is wrong with the input table for the FMU (md, as FMPy reads it): a column that is
        not an input, or an Integer input whose column has a fraction (it would be truncated)."""
        variables = {v.name: v for v in md.modelVariables}
        problems = []
        for name in self.input_names():
            v = variables.get(name)
            if v is None or v.causality != "input":
                problems.append(f"{self.in_path}: {name!r} is not an input of {self.model}")
            elif v.type in ("Integer", "Int32") and self.inputs.dtype[name].kind != "i":
                problems.append(f"{self.in_path}: {name} is an Integer input, but its column "
                                "has values with a fraction")
        return problems

    def steps(self):
        return int(round((self.stop - self.start) / self.step))

    def input_names(self):
        return [] if self.inputs is None else [n for n in self.inputs.dtype.names if n != "time"]

    def integer_inputs(self):
        """The inputs whose column holds Integers (`read_inputs`)."""
        return [n for n in self.input_names() if self.inputs.dtype[n].kind == "i"]

    def input_at(self, t):
        """Input values at t, as FMPy and the Cross-Check rules give them: a Real linear between
        rows, an Integer the value of the last row at or before t (after a step at t: its new
        value)."""
        time = self.inputs["time"]
        last = int(np.searchsorted(time, t + 1e-9 * self.step, side="right")) - 1
        return [int(self.inputs[n][max(last, 0)]) if self.inputs.dtype[n].kind == "i"
                else float(np.interp(t, time, self.inputs[n])) for n in self.input_names()]

    def grid(self):
        """The communication points start + k step, k = 0..steps(), computed as FMPy computes its
        output points."""
        return [self.start + k * self.step for k in range(self.steps() + 1)]

    def held_inputs(self):
        """The inputs as a co-simulation master applies them: each step's starting value
        (`input_at`, the value after a jump) held until the next communication point, written
        as an FMPy input table. Where the held value changes, the table has two rows at that
        communication point (before and after), which FMPy's Model Exchange loop treats as an
        input event: it stops its solver there, sets the new value in Event Mode and restarts
        the solver. None for a scenario without inputs."""
        if self.inputs is None:
            return None
        grid = self.grid()
        held = [self.input_at(t) for t in grid]
        rows = [(grid[0], *held[0])]
        for k in range(1, len(grid)):
            rows.append((grid[k], *held[k - 1]))
            if k < len(grid) - 1 and held[k] != held[k - 1]:
                rows.append((grid[k], *held[k]))
        return np.array(rows, dtype=self.inputs.dtype)


def read_inputs(path):
    """<Model>_in.csv as a structured array; a column whose every value is written without a
    fraction or exponent (an Integer input: `gear`) is an int column, so that every importer
    sets it as an Integer and holds it between rows rather than interpolating it."""
    table = read_csv(path)
    with open(path, newline="") as f:
        rows = list(csv.reader(f))[1:]
    names = table.dtype.names
    integer = [all(r[i].strip().lstrip("-").isdigit() for r in rows) for i in range(len(names))]
    dtype = [(n, int if integer[i] and n != "time" else float) for i, n in enumerate(names)]
    return np.array([tuple(r) for r in table.tolist()], dtype=dtype)


def read_parameters(path):
    """<Model>_par.csv: {name: value as written}, in the file's order."""
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    if not rows or [c.strip() for c in rows[0]] != ["name", "value"]:
        raise ValueError(f"{path}: the first row must be the header name,value")
    values = {}
    for r in rows[1:]:
        if len(r) != 2 or r[0].strip() in values:
            raise ValueError(f"{path}: bad or repeated row {r}")
        values[r[0].strip()] = r[1].strip()
    return values


def fmpy(fmu, sc, _work, start_values=None):
    # FMPy's output_interval is its communication step in co-simulation. start_values: FMPy sets
    # them before initialization and raises if one could not be set.
    if start_values is None:
        start_values = sc.parameter_values(read_model_description(fmu))
    r = simulate_fmu(fmu, start_time=sc.start, stop_time=sc.stop, output_interval=sc.step,
                     relative_tolerance=sc.tol, input=sc.inputs, output=sc.outputs,
                     start_values=start_values)
    return r["time"], {n: r[n] for n in sc.outputs}


# FMPy's CVode bounds the error of each of its internal steps (BDF, orders 1-5) by
# relative_tolerance (absolute tolerance: relative_tolerance times the states' nominal values, 1
# here). A held input changes at every communication point of most scenarios, and CVode restarts
# at order 1 with a tiny step at each: at the scenario's tolerance the deviations of those
# scenarios reach 1e4 to 4e6 times the tolerance, and fall in proportion to it (measured:
# "Importer notes" in docs/importers.md). The Model Exchange run therefore asks for the
# scenario's tolerance times ME_TOLERANCE_FACTOR (not below ME_SMALLEST_TOLERANCE), which keeps
# CVode's own error below 3e-7 of each signal's range on every scenario, so that the 1e-6
# comparison judges the FMU (its derivatives, event indicators and event updates) and not the
# host's solver.
ME_TOLERANCE_FACTOR = 1e-4
ME_SMALLEST_TOLERANCE = 1e-15


def me_tolerance(sc):
    return max(sc.tol * ME_TOLERANCE_FACTOR, ME_SMALLEST_TOLERANCE)


class _HeldInput(fmpy_simulation.Input):
    """FMPy 0.3.32's input, except that after an input event at t it keeps the value after the
    event at t.

    FMPy's Model Exchange loop sets an input event's new values in Event Mode and restarts CVode
    at t; CVode's root function (FMPy's CVodeSolver.g) then sets the inputs at t again without
    `after_event`, which gives the value *before* the jump, and the derivatives of CVode's first
    internal step after every input event are evaluated with the old inputs until the next root
    function call. Here a call at the time of the last event keeps the value after it; every
    other call (in particular the one that sets the inputs for the outputs recorded at a
    communication point, before that point's event) is FMPy's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.event_time = None

    def apply(self, time, continuous=True, discrete=True, after_event=False):
        if after_event:
            self.event_time = time
        elif self.event_time is not None and time == self.event_time:
            after_event = True
        return super().apply(time, continuous=continuous, discrete=discrete,
                             after_event=after_event)


def fmpy_me(fmu, sc, _work, start_values=None):
    """FMPy as a Model Exchange importer: simulate_fmu(fmi_type="ModelExchange") with its CVode
    (BDF with root finding on the event indicators) and its event handling.

    The inputs are held over each step as in the co-simulation runs (`Scenario.held_inputs`,
    with `_HeldInput` in place of FMPy's Input for the run). FMPy samples the outputs at each
    output point and, with record_events, once more before and after every event; the values
    judged at a communication point are the first sample there: the states CVode reached, with
    the inputs of the step that ended there (as a co-simulation step reports them), before that
    point's input event."""
    if start_values is None:
        start_values = sc.parameter_values(read_model_description(fmu))
    original = fmpy_simulation.Input
    fmpy_simulation.Input = _HeldInput
    try:
        r = simulate_fmu(fmu, fmi_type="ModelExchange", solver="CVode", start_time=sc.start,
                         stop_time=sc.stop, output_interval=sc.step,
                         relative_tolerance=me_tolerance(sc), input=sc.held_inputs(),
                         output=sc.outputs, start_values=start_values, record_events=True)
    finally:
        fmpy_simulation.Input = original
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


class _InputsInRhs(fmpy_sundials.CVodeSolver):
    """FMPy 0.3.32's CVode solver, except that its right-hand side also sets the inputs at the
    time CVode asks for. FMPy sets them only in the root function (after each internal step and
    while a root is located) and at each stop, so the derivatives of an internal step see the
    inputs of its start, and an FMU without event indicators (no root function) sees them only
    at the output points: a lag of the order of CVode's internal step."""

    def f(self, t, y, ydot, user_data):
        self.input.apply(t)
        return super().f(t, y, ydot, user_data)


def fmpy_me_interpolated(fmu, sc, _work, inputs_in_rhs=True, tolerance=None):
    """FMPy as a Model Exchange importer, with the input table as a user gives it: interpolated
    linearly between its rows, no input events (the table has no two rows at one time), so
    CVode integrates across the communication points and only the event indicators stop it.
    Judged against <Model>_ref_interpolated.csv, with the inputs set at every evaluation
    (`_InputsInRhs`) at `me_tolerance` unless `tolerance` is given; `inputs_in_rhs=False` is
    FMPy as shipped. The values at a communication point are the first sample there
    (`at_communication_points`)."""
    start_values = sc.parameter_values(read_model_description(fmu))
    original = fmpy_sundials.CVodeSolver
    if inputs_in_rhs:
        fmpy_sundials.CVodeSolver = _InputsInRhs
    try:
        r = simulate_fmu(fmu, fmi_type="ModelExchange", solver="CVode", start_time=sc.start,
                         stop_time=sc.stop, output_interval=sc.step,
                         relative_tolerance=tolerance or me_tolerance(sc), input=sc.inputs,
                         output=sc.outputs, start_values=start_values, record_events=True)
    finally:
        fmpy_sundials.CVodeSolver = original
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


def fmpy_me_interpolated_as_shipped(fmu, sc, work):
    """`fmpy_me_interpolated` with FMPy's own input handling, at the scenario's tolerance as a
    user would ask (not judged: its input lag). Its right-hand side changes where the root
    function sets new inputs, so at 1e-4 of the scenario's tolerance CVode gives up (500 steps
    without reaching the next output point) on every FMU with event indicators."""
    return fmpy_me_interpolated(fmu, sc, work, inputs_in_rhs=False, tolerance=sc.tol)


def at_communication_points(sc, time, values):
    """(grid, {output: values}): at each communication point the first row an importer wrote
    at that time (the left limit where it wrote a row before and after an event)."""
    rows, j = [], 0
    for t in sc.grid():
        while j < len(time) and time[j] < t and not math.isclose(time[j], t):
            j += 1
        if j == len(time) or not math.isclose(time[j], t):
            raise RuntimeError(f"no result at the communication point t = {t}")
        rows.append(j)
    return np.array(sc.grid()), {n: np.asarray(v)[rows] for n, v in values.items()}


def fmi_sim(fmu, sc, work, options=(), held=False):
    """`fmi-sim` (crate fmi-sim) from the command line, with the scenario's input CSV (`held`:
    held over each communication step, `Scenario.held_inputs`); `options`: more options of its
    co-simulation command."""
    exe = os.environ.get("FMI_SIM", "fmi-sim")
    out = os.path.join(work, "fmi-sim.csv")
    cmd = [exe, "--model", fmu, "-o", out]
    if sc.inputs is not None:
        table = sc.held_inputs() if held else None
        fmi3 = read_model_description(fmu).fmiVersion == "3.0"
        integers = ("before" if "--event-mode-used" in options else "at") if fmi3 else "left"
        cmd += ["-i", left_limit_steps(sc, os.path.join(work, "in.csv"), table, integers)]
    cmd += ["co-simulation", "-s", repr(sc.start), "-f", repr(sc.stop),
            "--output-interval", repr(sc.step), "--tolerance", repr(sc.tol), *options]
    # Parameters: `--init-values name=value`, once per variable (fmi-sim casts the text to the
    # variable's type and sets it after instantiation, before fmi2SetupExperiment).
    for name, value in sc.parameter_values(read_model_description(fmu)).items():
        cmd += ["--init-values", f"{name}={value!r}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{run.stdout}{run.stderr}")
    with open(out) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    col = {name.strip('"'): i for i, name in enumerate(header)}
    time = data[:, col["time"]]
    # fmi-sim records the outputs at t before it sets the inputs of t, so at the start time it
    # shows the outputs computed with the inputs' start values: the first row is not judged. An
    # early return or an input event between communication points adds rows, not judged either.
    rows, j = [], 0
    for t in sc.grid()[1:]:
        while j < len(time) and time[j] < t and not math.isclose(time[j], t):
            j += 1
        if j == len(time) or not math.isclose(time[j], t):
            raise RuntimeError(f"no result at the communication point t = {t}")
        rows.append(j)
    return time[rows], {n: data[rows, col[n]] for n in sc.outputs}


def fmi_sim_me(fmu, sc, work):
    """`fmi-sim model-exchange`: not judged (importer notes in docs/importers.md). fmi-sim 0.7.0
    integrates Model Exchange with forward Euler, one step per output interval (its `--step`,
    `--solver` and `--tolerance` do not change that), and detects state events by the sign of
    the indicators at the step ends without locating them. With the output interval the
    scenario's step, the inputs of the CSV (its rows on the communication points) are used at
    each step's start, so the scenario's inputs are held as in the co-simulation runs; at an
    input jump (two rows at one time) it writes the outputs before and after the event, and the
    first row is kept (`at_communication_points`)."""
    exe = os.environ.get("FMI_SIM", "fmi-sim")
    out = os.path.join(work, "fmi-sim-me.csv")
    cmd = [exe, "--model", fmu, "-o", out]
    if sc.inputs is not None:
        cmd += ["-i", sc.in_path]
    cmd += ["model-exchange", "-s", repr(sc.start), "-f", repr(sc.stop),
            "--output-interval", repr(sc.step), "--tolerance", repr(sc.tol)]
    for name, value in sc.parameter_values(read_model_description(fmu)).items():
        cmd += ["--init-values", f"{name}={value!r}"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        # It prints a line per recorded time, then its error: report the last time and the
        # error, not thousands of lines.
        lines = (run.stdout + run.stderr).splitlines()
        recorded = [l.split()[-1] for l in lines if l.startswith("Recorded outputs at time")]
        errors = [l for l in lines if l.startswith("Error")] or lines[-1:] or ["no message"]
        last = f"its outputs at t = {recorded[-1]}" if recorded else "no output"
        raise RuntimeError(f"fmi-sim model-exchange stopped after {last}: {errors[-1]}")
    with open(out) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    col = {name.strip('"'): i for i, name in enumerate(header)}
    return at_communication_points(sc, data[:, col["time"]],
                                   {n: data[:, col[n]] for n in sc.outputs})


def left_limit_steps(sc, path, table=None, integers="left"):
    """The input CSV (or `table`) with every step (two rows at one time t) moved to t - 1 ns.

    fmi-sim 0.7 looks Reals up with the left limit in co-simulation, so the step that starts at
    t would still get the value before the jump; the Cross-Check rule (and FMPy) give the value
    after it. A Real is interpolated between t - 1 ns and t, so it has its new value at t. An
    Integer is never interpolated, and fmi-sim reads it three ways (`integers`):
      - "left": FMI 2.0 holds the last row strictly before t, so the new value goes at t - 1 ns;
      - "at": FMI 3.0 takes the row at t (an input event there), so it stays at t;
      - "before": FMI 3.0 with Event Mode applies a discrete input only at an event strictly
        before the next communication point, never at one, so the new values come in a row of
        their own at t - 1e-12 (an early return there, its row not judged; the new gear runs
        1e-12 s early)."""
    table = np.array(sc.inputs if table is None else table)
    time = np.array(table["time"], dtype=float)
    names = sc.input_names()
    ints = [n for n in names if table.dtype[n].kind == "i"]
    rows = []
    for k in range(len(time)):
        row = [float(time[k])] + [int(table[n][k]) if n in ints else float(table[n][k])
                                  for n in names]
        step = k + 1 < len(time) and time[k + 1] == time[k]
        if step:
            row[0] -= 1e-9
            changed = any(table[n][k] != table[n][k + 1] for n in ints)
            if integers == "left":
                row = row[:1] + [int(table[n][k + 1]) if n in ints else row[i + 1]
                                 for i, n in enumerate(names)]
            elif integers == "before" and changed:
                rows.append(row)
                row = [float(time[k]) - 1e-12] + [int(table[n][k + 1]) if n in ints
                                                  else float(table[n][k + 1]) for n in names]
        rows.append(row)
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(["time"] + names)
        w.writerows(rows)
    return path


def libcosim(fmu, sc, _work):
    """OSP libcosim (libcosimpy): a fixed-step execution; inputs go in through an override
    manipulator before each step and outputs come from a last-value observer after it."""
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from libcosimpy.CosimSlave import CosimLocalSlave

    log_output_level(CosimLogLevel.ERROR)
    # libcosim counts time in integer nanoseconds from 0; its steps are exact.
    if sc.start != 0.0:
        raise RuntimeError("libcosim runs start at 0")
    execution = CosimExecution.from_step_size(round(sc.step * 1e9))
    slave = execution.add_local_slave(CosimLocalSlave(fmu_path=os.path.abspath(fmu),
                                                      instance_name=sc.model))
    variables = {v.name.decode(): v for v in execution.slave_variables(slave)}
    override = CosimManipulator.create_override()
    execution.add_manipulator(override)
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer)
    for name, value in sc.parameter_values(read_model_description(fmu)).items():
        v = variables[name]
        if CosimVariableType(v.type) == CosimVariableType.INTEGER:
            ok = execution.integer_initial_value(slave, v.reference, value)
        else:
            ok = execution.real_initial_value(slave, v.reference, value)
        if not ok:
            raise RuntimeError(f"libcosim refused the initial value {name} = {value}")
    names = sc.input_names()
    integer = set(sc.integer_inputs())

    def set_inputs(t, real, integer_values):
        """The inputs of t, Real and Integer by the FMU's variable types."""
        if not names:
            return
        for name, u in zip(names, sc.input_at(t)):
            v = variables[name]
            if (CosimVariableType(v.type) == CosimVariableType.INTEGER) != (name in integer):
                raise RuntimeError(f"{name}: the table's column and the FMU's type differ")
            ok = (integer_values if name in integer else real)(v.reference, u)
            if ok is False:
                raise RuntimeError(f"libcosim refused {name} = {u} at t = {t}")

    set_inputs(sc.start, lambda vr, u: execution.real_initial_value(slave, vr, u),
               lambda vr, u: execution.integer_initial_value(slave, vr, u))

    def value(name):
        v = variables[name]
        if CosimVariableType(v.type) == CosimVariableType.INTEGER:
            return observer.last_integer_values(slave, [v.reference])[0]
        return observer.last_real_values(slave, [v.reference])[0]

    times, rows = [], []
    for k in range(sc.steps()):
        t = sc.start + k * sc.step
        set_inputs(t, lambda vr, u: override.slave_real_values(slave, [vr], [u]),
                   lambda vr, u: override.slave_integer_values(slave, [vr], [u]))
        if not execution.step():
            raise RuntimeError(f"libcosim step at t = {t} failed")
        times.append(t + sc.step)
        rows.append([value(n) for n in sc.outputs])
    rows = np.array(rows)
    # The first values observed are those after the first step.
    return np.array(times), {n: rows[:, i] for i, n in enumerate(sc.outputs)}


def container(fmu, sc, work):
    """The FMU wrapped by fmu-manipulation-toolbox's `fmucontainer` (all inputs and outputs
    exposed, the scenario's step as the container's step), the container run by FMPy.

    A scenario with parameters builds the container with `"auto_parameter": true`, which exposes
    every parameter of the inner FMU as a container parameter named `<id>.<name>` (`<id>` the
    inner FMU's file name in lower case, e.g. `chaindrive.chain_model`); FMPy sets those, and the
    container hands them to the inner FMU before its initialization."""
    inner = os.path.basename(fmu)
    shutil.copy(fmu, os.path.join(work, inner))
    name = f"{sc.model}Container.fmu"
    values = sc.parameter_values(read_model_description(fmu))
    spec = {"name": name, "step_size": sc.step, "fmu": [inner]}
    if values:
        spec["auto_parameter"] = True
    with open(os.path.join(work, "container.json"), "w") as f:
        json.dump(spec, f)
    run = subprocess.run(["fmucontainer", "-container", "container.json", "-fmu-directory", "."],
                         cwd=work, capture_output=True, text=True)
    path = os.path.join(work, name)
    if run.returncode != 0 or not os.path.exists(path):
        raise RuntimeError(f"fmucontainer failed:\n{run.stdout}{run.stderr}")
    exposed = [v.name for v in read_model_description(path).modelVariables
               if v.causality == "parameter"]
    start_values = {}
    for param, value in values.items():
        matches = [e for e in exposed if e.endswith("." + param)]
        if len(matches) != 1:
            raise RuntimeError(f"the container exposes {len(matches)} parameters for {param}: "
                               f"{matches}")
        start_values[matches[0]] = value
    return fmpy(path, sc, work, start_values)


def fmpy_event_mode(fmu, sc, _work):
    """FMPy as an FMI 3.0 Co-Simulation importer with Event Mode and early return
    (`use_event_mode`, `early_return_allowed`): a step that ends at an event is followed by
    Event Mode, the event iteration and Step Mode, and the next step goes on from the event to
    the communication point. FMPy also samples the outputs at each early return: the values
    judged are those at the communication points.

    At an early return FMPy sets the inputs of the event's time from its input table, so a
    table interpolated between the communication points would give the rest of the step other
    inputs than the reference holds: the inputs are given held over each step
    (`Scenario.held_inputs`), as the reference has them."""
    start_values = sc.parameter_values(read_model_description(fmu))
    r = simulate_fmu(fmu, start_time=sc.start, stop_time=sc.stop, output_interval=sc.step,
                     relative_tolerance=sc.tol, input=sc.held_inputs(), output=sc.outputs,
                     start_values=start_values, use_event_mode=True, early_return_allowed=True)
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


def fmpy_intermediate(fmu, sc, work, step, required=True):
    """FMPy 0.3.32's FMI 3.0 Co-Simulation API (`FMU3Slave`) in a master loop of its own, with
    communication steps of `step`: the inputs, as the table interpolates them (`input_at`), are
    set at each communication point and, with the Real inputs required as intermediate
    variables (`required`), again at every intermediate update that asks for them
    (`intermediateVariableSetRequested`: the end of each of the FMU's internal steps), so that
    the FMU integrates the input signal rather than its value at the step's start. Without
    `required` the inputs are held over each step. Returns (time, {output: values}) at the
    communication points after the start. FMPy's `simulate_fmu` passes no intermediate update
    callback."""
    md = read_model_description(fmu)
    variables = {v.name: v for v in md.modelVariables}
    names = sc.input_names()
    integers = sc.integer_inputs()
    reals = [n for n in names if n not in integers]
    real_vrs = [variables[n].valueReference for n in reals]
    unzipped = extract(fmu, unzipdir=tempfile.mkdtemp(dir=work))
    slave = FMU3Slave(guid=md.guid, unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="intermediate")
    problems = []

    def inputs_at(t):
        return dict(zip(names, sc.input_at(t)))

    def update(_env, time, set_requested, _get_allowed, _finished, _can_return_early,
               early_return_requested, _early_return_time):
        early_return_requested[0] = False
        if not set_requested:
            return
        try:
            values = inputs_at(time)
            slave.setFloat64(real_vrs, [values[n] for n in reals])
        except Exception as e:  # an exception cannot cross the C callback
            problems.append(f"t = {time}: {e}")

    slave.instantiate(intermediateUpdate=update,
                      requiredIntermediateVariables=real_vrs if required else None)
    for name, value in sc.parameter_values(md).items():
        vr = [variables[name].valueReference]
        (slave.setInt32 if isinstance(value, int) else slave.setFloat64)(vr, [value])
    slave.enterInitializationMode(tolerance=sc.tol, startTime=sc.start, stopTime=sc.stop)

    def set_inputs(t):
        values = inputs_at(t)
        if reals:
            slave.setFloat64(real_vrs, [values[n] for n in reals])
        for n in integers:
            slave.setInt32([variables[n].valueReference], [int(values[n])])

    set_inputs(sc.start)
    slave.exitInitializationMode()
    steps = int(round((sc.stop - sc.start) / step))
    reals_out = [n for n in sc.outputs if variables[n].type == "Float64"]
    integers_out = [n for n in sc.outputs if n not in reals_out]
    time, rows = [], []
    for k in range(steps):
        t = sc.start + k * step
        set_inputs(t)
        slave.doStep(t, step)
        time.append(sc.start + (k + 1) * step)
        rows.append(slave.getFloat64([variables[n].valueReference for n in reals_out]) +
                    slave.getInt32([variables[n].valueReference for n in integers_out]))
    slave.terminate()
    slave.freeInstance()
    if problems:
        raise RuntimeError("intermediate update: " + "; ".join(problems[:3]))
    rows = np.array(rows, dtype=float)
    return np.array(time), {n: rows[:, i] for i, n in enumerate(reals_out + integers_out)}


def fmi_sim_event_mode(fmu, sc, work):
    """`fmi-sim co-simulation --event-mode-used --early-return-allowed` on an FMI 3.0 FMU, with
    the inputs held over each step (fmi-sim, too, reads its table at an early return); the
    values judged are those at the communication points after the first."""
    return fmi_sim(fmu, sc, work, ["--event-mode-used", "--early-return-allowed"], held=True)


# Judged: each must come within 1e-6 of every reference. All but "FMPy ME" use the Co-Simulation
# interface.
IMPORTERS = {
    "FMPy": fmpy,
    "FMPy ME": fmpy_me,
    "fmi-sim": fmi_sim,
    "libcosim": libcosim,
    "fmucontainer+FMPy": container,
    "C linux64": platforms.linux64,
    "C win64 (Wine)": platforms.win64,
}

# Run and reported, never judged: the importer's own method cannot reach the bound.
NOT_JUDGED = {
    "fmi-sim ME": fmi_sim_me,
}

# Model Exchange with the inputs interpolated between the table's rows (no input events), on the
# scenarios that have <Model>_ref_interpolated.csv and judged against it. fmi-sim's forward Euler
# reads the table at each step's start whatever the interpolation, and is reported, not judged.
INTERPOLATED = {
    "FMPy ME interpolated": fmpy_me_interpolated,
}
INTERPOLATED_NOT_JUDGED = {
    "FMPy ME interpolated, as shipped": fmpy_me_interpolated_as_shipped,
    "fmi-sim ME interpolated": fmi_sim_me,
}


# The FMI 3.0 FMUs (target/fmu/fmi3/), judged as the FMI 2.0 ones: FMPy and fmi-sim without
# and with Event Mode (and early return), FMPy as Model Exchange, and the C harness's FMI 3.0
# importer (Event Mode, early return, intermediate updates) on the three platforms.
IMPORTERS3 = {
    "FMPy": fmpy,
    "FMPy event mode": fmpy_event_mode,
    "FMPy ME": fmpy_me,
    "fmi-sim": fmi_sim,
    "fmi-sim event mode": fmi_sim_event_mode,
    "C x86_64-linux": platforms.fmi3_x86_64_linux,
    "C x86_64-windows (Wine)": platforms.fmi3_x86_64_windows,
    "C aarch64-linux (qemu)": platforms.fmi3_aarch64_linux,
}
NOT_JUDGED3 = {
    "fmi-sim ME": fmi_sim_me,
}
INTERPOLATED3 = {
    "FMPy ME interpolated": fmpy_me_interpolated,
}


def reference_of(importer, sc):
    """The reference an importer is compared with (None: the scenario has none for it)."""
    if importer in INTERPOLATED or importer in INTERPOLATED_NOT_JUDGED:
        return sc.ref_interpolated
    return sc.ref


def judged(importer):
    return importer in IMPORTERS or importer in INTERPOLATED


# Every run this process made, by importer, FMU file and scenario: the validation asks for some
# twice (FMPy on the FMI 2.0 FMU, once in its own column and once against FMI 3.0).
_RUNS = {}


def simulate(importer, fmu, sc, table=None):
    run = (table or {**IMPORTERS, **NOT_JUDGED, **INTERPOLATED, **INTERPOLATED_NOT_JUDGED})[importer]
    key = (run, *platforms.run_key(fmu, sc))
    if key not in _RUNS:
        with tempfile.TemporaryDirectory() as work:
            _RUNS[key] = run(fmu, sc, work)
    return _RUNS[key]
