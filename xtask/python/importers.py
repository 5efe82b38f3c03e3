"""Runs one reference scenario of one FMU in each importer a user might have.

Every runner returns (time, {output: values}) with the outputs at the communication points it
produced, so `validate.py` judges all importers with one comparison. The quirks each runner works
around are the ones the README lists under "Importer notes".
"""
import csv
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
from fmpy import simulate_fmu
from fmpy.util import read_csv

import platforms


class Scenario:
    """A Cross-Check set: <Model>_in.csv (optional), <Model>_ref.csv, <Model>_ref.opt."""

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
        self.inputs = read_csv(self.in_path) if os.path.exists(self.in_path) else None
        self.outputs = [n for n in self.ref.dtype.names if n != "time"]
        self.start, self.stop = self.opt["StartTime"], self.opt["StopTime"]
        self.step, self.tol = self.opt["StepSize"], self.opt["RelTol"]

    def steps(self):
        return int(round((self.stop - self.start) / self.step))

    def input_names(self):
        return [] if self.inputs is None else [n for n in self.inputs.dtype.names if n != "time"]

    def input_at(self, t):
        """Input values at t, as FMPy and the Cross-Check rules give them: linear between rows."""
        return [float(np.interp(t, self.inputs["time"], self.inputs[n])) for n in self.input_names()]


def fmpy(fmu, sc, _work):
    # FMPy's output_interval is its communication step in co-simulation.
    r = simulate_fmu(fmu, start_time=sc.start, stop_time=sc.stop, output_interval=sc.step,
                     relative_tolerance=sc.tol, input=sc.inputs, output=sc.outputs)
    return r["time"], {n: r[n] for n in sc.outputs}


def fmi_sim(fmu, sc, work):
    """`fmi-sim` (crate fmi-sim) from the command line, with the scenario's input CSV."""
    exe = os.environ.get("FMI_SIM", "fmi-sim")
    out = os.path.join(work, "fmi-sim.csv")
    cmd = [exe, "--model", fmu, "-o", out]
    if sc.inputs is not None:
        cmd += ["-i", left_limit_steps(sc, os.path.join(work, "in.csv"))]
    cmd += ["co-simulation", "-s", repr(sc.start), "-f", repr(sc.stop),
            "--output-interval", repr(sc.step), "--tolerance", repr(sc.tol)]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{run.stdout}{run.stderr}")
    with open(out) as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    col = {name.strip('"'): i for i, name in enumerate(header)}
    time = data[:, col["time"]]
    # fmi-sim records the outputs at t before it sets the inputs of t, so at the start time it
    # shows the outputs computed with the inputs' start values: the first row is not judged.
    return time[1:], {n: data[1:, col[n]] for n in sc.outputs}


def left_limit_steps(sc, path):
    """The input CSV with every step (two rows at one time t) moved to t - 1 ns.

    fmi-sim 0.7 looks inputs up with the left limit in co-simulation, so the step that starts at
    t would still get the value before the jump; the Cross-Check rule (and FMPy) give the value
    after it."""
    time = np.array(sc.inputs["time"], dtype=float)
    for i in range(len(time) - 1):
        if time[i + 1] == time[i]:
            time[i] -= 1e-9
    names = sc.input_names()
    with open(path, "w", newline="") as f:
        w = csv.writer(f, quoting=csv.QUOTE_NONNUMERIC)
        w.writerow(["time"] + names)
        for k in range(len(time)):
            w.writerow([float(time[k])] + [float(sc.inputs[n][k]) for n in names])
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
    inputs = [variables[n].reference for n in sc.input_names()]
    if inputs:
        for vr, u in zip(inputs, sc.input_at(sc.start)):
            execution.real_initial_value(slave, vr, u)

    def value(name):
        v = variables[name]
        if CosimVariableType(v.type) == CosimVariableType.INTEGER:
            return observer.last_integer_values(slave, [v.reference])[0]
        return observer.last_real_values(slave, [v.reference])[0]

    times, rows = [], []
    for k in range(sc.steps()):
        t = sc.start + k * sc.step
        if inputs:
            override.slave_real_values(slave, inputs, sc.input_at(t))
        if not execution.step():
            raise RuntimeError(f"libcosim step at t = {t} failed")
        times.append(t + sc.step)
        rows.append([value(n) for n in sc.outputs])
    rows = np.array(rows)
    # The first values observed are those after the first step.
    return np.array(times), {n: rows[:, i] for i, n in enumerate(sc.outputs)}


def container(fmu, sc, work):
    """The FMU wrapped by fmu-manipulation-toolbox's `fmucontainer` (all inputs and outputs
    exposed, the scenario's step as the container's step), the container run by FMPy."""
    inner = os.path.basename(fmu)
    shutil.copy(fmu, os.path.join(work, inner))
    name = f"{sc.model}Container.fmu"
    with open(os.path.join(work, "container.json"), "w") as f:
        json.dump({"name": name, "step_size": sc.step, "fmu": [inner]}, f)
    run = subprocess.run(["fmucontainer", "-container", "container.json", "-fmu-directory", "."],
                         cwd=work, capture_output=True, text=True)
    path = os.path.join(work, name)
    if run.returncode != 0 or not os.path.exists(path):
        raise RuntimeError(f"fmucontainer failed:\n{run.stdout}{run.stderr}")
    return fmpy(path, sc, work)


IMPORTERS = {
    "FMPy": fmpy,
    "fmi-sim": fmi_sim,
    "libcosim": libcosim,
    "fmucontainer+FMPy": container,
    "C linux64": platforms.linux64,
    "C win64 (Wine)": platforms.win64,
}


def simulate(importer, fmu, sc):
    with tempfile.TemporaryDirectory() as work:
        return IMPORTERS[importer](fmu, sc, work)
