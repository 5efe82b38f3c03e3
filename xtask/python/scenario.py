"""A reference scenario (its Cross-Check files) and an importer's results at its
communication points. Split from importers.py (the project's 600-line rule); every name
stays importable from there."""
import csv
import math
import os

import numpy as np
from fmpy.util import read_csv


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
