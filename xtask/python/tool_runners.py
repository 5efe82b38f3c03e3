"""The importers that run an FMU through another tool's command line or library
(importers.py): fmi-sim, OSP libcosim, and fmucontainer's container in FMPy."""
import csv
import json
import math
import os
import shutil
import subprocess

import numpy as np
from fmpy import read_model_description

from fmpy_runners import fmpy
from scenario import at_communication_points


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


def fmi_sim_event_mode(fmu, sc, work):
    """`fmi-sim co-simulation --event-mode-used --early-return-allowed` on an FMI 3.0 FMU, with
    the inputs held over each step (fmi-sim, too, reads its table at an early return); the
    values judged are those at the communication points after the first."""
    return fmi_sim(fmu, sc, work, ["--event-mode-used", "--early-return-allowed"], held=True)
