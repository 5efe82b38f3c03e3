#!/usr/bin/env python3
"""Validates every packaged FMU with real tools (called by `cargo xtask validate`).

For each target/fmu/<Model>.fmu:
  1. `fmpy validate` (FMPy's schema and semantic checks) must report no problem;
  2. `fmutool -input <fmu> -check` (fmu-manipulation-toolbox) must pass;
  3. every variable is in the README's variable table;
  4. FMPy simulates it with reference-fmus/<Model>/<Model>_in.csv and the settings of
     <Model>_ref.opt (the communication step is FMPy's output_interval), and every output of
     <Model>_ref.csv must match: |sim - ref| <= 1e-6 max|ref| + 1e-9 (max over the run).

The 1e-6 relative bound is far tighter than the FMI Cross-Check's 10 % band: the references
are closed-form solutions of the same equations, so only integration error may remain.
"""
import os
import subprocess
import sys

import numpy as np
from fmpy import read_model_description, simulate_fmu
from fmpy.util import read_csv
from fmpy.validation import validate_fmu

REL, ABS = 1e-6, 1e-9


def read_opt(path):
    opt = {}
    with open(path) as f:
        for line in f:
            if "," in line:
                key, value = line.split(",", 1)
                opt[key.strip()] = float(value)
    return opt


def compare(fmu, ref_dir, model):
    opt = read_opt(os.path.join(ref_dir, f"{model}_ref.opt"))
    ref = read_csv(os.path.join(ref_dir, f"{model}_ref.csv"))
    in_path = os.path.join(ref_dir, f"{model}_in.csv")
    inputs = read_csv(in_path) if os.path.exists(in_path) else None
    outputs = [n for n in ref.dtype.names if n != "time"]
    result = simulate_fmu(
        fmu,
        start_time=opt["StartTime"],
        stop_time=opt["StopTime"],
        output_interval=opt["StepSize"],
        relative_tolerance=opt["RelTol"],
        input=inputs,
        output=outputs,
    )
    if abs(result["time"][-1] - opt["StopTime"]) > 1e-9:
        return [f"simulation ended at {result['time'][-1]}, not {opt['StopTime']}"], 0.0
    problems, worst = [], 0.0
    for name in outputs:
        sim = np.interp(ref["time"], result["time"], result[name])
        err = np.abs(sim - ref[name])
        # Relative to the signal's size over the run, so a signal through zero is not judged
        # by its value at the crossing.
        scale = float(np.max(np.abs(ref[name])))
        bound = REL * scale + ABS
        worst = max(worst, float(np.max(err)) / (scale + ABS / REL))
        bad = np.flatnonzero(err > bound)
        if bad.size:
            i = bad[0]
            problems.append(
                f"{name}: {bad.size} points off, first at t = {ref['time'][i]}: "
                f"sim {sim[i]!r}, ref {ref[name][i]!r}"
            )
    return problems, worst


ABUSE_CASES = [
    "illegal call orders in Instantiated, InitializationMode, StepComplete and Terminated",
    "NULL instance, NULL arrays with and without a length, NULL FMU states and outputs",
    "unknown value references and wrong variable types",
    "doStep with zero, negative, NaN and too long steps, and a wrong communication point",
    "NaN, +Inf and -Inf in every Real input and parameter",
    "every truncation and every single-byte corruption of a serialized state, another model's state",
    "20 seeded random call sequences of 200 calls with random values",
    "3000 instances created, stepped, snapshotted and freed (memory stays flat)",
    "8 threads with their own instances (bit-identical to one thread)",
    "all of the above under valgrind memcheck (no invalid access, no definite or indirect leak)",
]


def write_report(path, rows):
    """docs/validation.md: what ran each FMU and how close it came; no timestamps, so the file
    only changes when the results do."""
    lines = [
        "# Validation report",
        "",
        "Written by `cargo xtask validate` (part of `cargo xtask test`); do not edit by hand.",
        "",
        "| FMU | Importers and checkers | Reference scenarios | Max deviation (of signal range) |",
        "|---|---|---|---|",
    ]
    for model, scenarios, worst, ok in rows:
        dev = "n/a" if worst is None else f"{worst:.1e}"
        status = "" if ok else " **FAILED**"
        lines.append(f"| {model} | fmpy validate, fmutool -check, FMPy simulate_fmu{status} | "
                     f"{scenarios} | {dev} |")
    lines += ["", "Every FMU also goes through the C-ABI abuse suite (`tests/tests/abuse.rs`):", ""]
    lines += [f"- {c}" for c in ABUSE_CASES]
    lines += ["", "Not yet run: fmi-sim, OSP libcosim (libcosimpy), an fmucontainer wrapper.", ""]
    with open(path, "w") as f:
        f.write("\n".join(lines))


def main(fmu_dir, ref_root):
    fmus = sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu"))
    report = []
    if not fmus:
        print(f"no FMUs in {fmu_dir}: run `cargo xtask package`")
        return 1
    failed = 0
    for name in fmus:
        fmu = os.path.join(fmu_dir, name)
        model = read_model_description(fmu).coSimulation.modelIdentifier
        problems = [f"fmpy validate: {p}" for p in validate_fmu(fmu)]
        check = subprocess.run(
            ["fmutool", "-input", fmu, "-check"], capture_output=True, text=True
        )
        if check.returncode != 0 or "ERROR" in check.stdout:
            problems.append(f"fmutool -check failed:\n{check.stdout}{check.stderr}")
        ref_dir = os.path.join(ref_root, model)
        # The Cross-Check set in reference-fmus/<Model>/, and further scenarios (default
        # parameters, other inputs) in its subdirectories, laid out the same way.
        scenarios = [ref_dir] + sorted(
            os.path.join(ref_dir, d) for d in (os.listdir(ref_dir) if os.path.isdir(ref_dir) else [])
            if os.path.isfile(os.path.join(ref_dir, d, f"{model}_ref.csv")))
        worst = None
        if os.path.isfile(os.path.join(ref_dir, f"{model}_ref.csv")):
            for scenario in scenarios:
                sim_problems, dev = compare(fmu, scenario, model)
                worst = max(worst or 0.0, dev)
                name = os.path.relpath(scenario, ref_root)
                problems += [f"reference {name}: {p}" for p in sim_problems]
        else:
            problems.append(f"no reference result in {ref_dir}")
        readme = open(os.path.join(os.path.dirname(ref_root), "README.md")).read()
        md = read_model_description(fmu)
        # Array elements such as lossTable[1,2] are documented once, as `lossTable[i,j]`.
        missing = sorted({v.name.split("[")[0] for v in md.modelVariables
                          if f"`{v.name.split('[')[0]}" not in readme})
        if missing:
            problems.append(f"README's variable table lacks {', '.join(missing)}")
        status = "FAIL" if problems else "ok"
        dev = "" if worst is None else f", max relative deviation from reference {worst:.2e}"
        print(f"{model}: fmpy validate, fmutool -check, FMPy vs {len(scenarios)} reference(s): "
              f"{status}{dev}")
        for p in problems:
            print(f"  {p}")
        failed += bool(problems)
        report.append((model, len(scenarios), worst, not problems))
    write_report(os.path.join(os.path.dirname(ref_root), "docs", "validation.md"), report)
    print(f"validate: {len(fmus) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
