#!/usr/bin/env python3
"""Validates every packaged FMU with real tools (called by `cargo xtask validate`).

For each target/fmu/<Model>.fmu:
  1. `fmpy validate` (FMPy's schema and semantic checks) must report no problem;
  2. `fmutool -input <fmu> -check` (fmu-manipulation-toolbox) must pass;
  3. every variable is named in docs/variables.md (the variable tables the README links to);
  4. the model description declares both interfaces, Model Exchange and Co-Simulation, with one
     model identifier; both binaries are there: binaries/linux64 needs no glibc newer than
     2.17, binaries/win64 imports Windows system DLLs only (platforms.py);
  5. every importer in importers.py (FMPy, FMPy as Model Exchange, fmi-sim, OSP libcosim, an
     fmucontainer wrapper run by FMPy, the C harness tests/c/fmu_run.c on linux64 and on win64
     under Wine) simulates it with reference-fmus/<Model>/<Model>_in.csv, the settings of
     <Model>_ref.opt and the parameter values of <Model>_par.csv (if there is one; set before
     initialization), and every output of <Model>_ref.csv must match:
     |sim - ref| <= 1e-6 max|ref| + 1e-9 (max over the run). The importers of
     importers.NOT_JUDGED (fmi-sim as Model Exchange) run too; their deviations are reported and
     never judged. On scenarios with <Model>_ref_interpolated.csv (continuous inputs), the
     importers of importers.INTERPOLATED run Model Exchange with the inputs interpolated and no
     input events, judged against that file (INTERPOLATED_NOT_JUDGED: reported only);
  6. the win64 run is bit-identical to the linux64 run, a state serialized on either platform
     continues on the other bit for bit, and the C harness's abuse
     calls return a status on both platforms;
  7. its FMI 3.0 FMU (target/fmu/fmi3/<Model>.fmu) passes `fmpy validate`, carries
     x86_64-linux, x86_64-windows and aarch64-linux binaries (glibc floor 2.17 for both .so),
     gives FMPy's FMI 2.0 Co-Simulation results bit for bit without Event Mode, and every
     importer of importers.IMPORTERS3 (FMPy and fmi-sim with and without Event Mode, FMPy as
     Model Exchange, the C harness's FMI 3.0 importer on the three platforms) meets the same
     bound; the platforms are bit-identical, states carry across them, and the abuse calls
     return a status on each (`validate3`).

The 1e-6 relative bound is far tighter than the FMI Cross-Check's 10 % band: the references
are closed-form solutions of the same equations, so only integration error may remain.
"""
import concurrent.futures
import contextlib
import io
import json
import os
import subprocess
import sys

import shutil
import tempfile

import numpy as np
from fmpy import read_model_description
from fmpy.validation import validate_fmu

import platforms
from importers import (IMPORTERS, IMPORTERS3, INTERPOLATED, INTERPOLATED3,
                       INTERPOLATED_NOT_JUDGED, ME_SMALLEST_TOLERANCE, ME_TOLERANCE_FACTOR,
                       NOT_JUDGED, NOT_JUDGED3, Scenario, judged, reference_of, simulate)

REL, ABS = 1e-6, 1e-9
ME_FACTOR_TEXT = f"{ME_TOLERANCE_FACTOR:.0e} (not below {ME_SMALLEST_TOLERANCE:.0e})"


# Every importer, in the report's column order.
ALL_IMPORTERS = {**IMPORTERS, **INTERPOLATED, **NOT_JUDGED, **INTERPOLATED_NOT_JUDGED}
ALL_IMPORTERS3 = {**IMPORTERS3, **INTERPOLATED3, **NOT_JUDGED3}


def compare(sc, time, values, ref=None):
    """Problems and the largest deviation from `ref` (default: the scenario's reference with
    held inputs) relative to each signal's range."""
    if abs(time[-1] - sc.stop) > 1e-9:
        return [f"simulation ended at {time[-1]}, not {sc.stop}"], 0.0
    ref = sc.ref if ref is None else ref
    # Importers that report nothing at the start time are judged from their first point on.
    judged = ref["time"] >= time[0] - 1e-12
    problems, worst = [], 0.0
    for name in sc.outputs:
        # NaN compares False with everything: a run returning NaN with status OK would pass.
        broken = np.flatnonzero(~np.isfinite(np.asarray(values[name], dtype=float)))
        if broken.size:
            i = broken[0]
            problems.append(f"{name}: {broken.size} non-finite values, first at t = {time[i]}: "
                            f"{values[name][i]!r}")
            worst = float("inf")
            continue
        sim = np.interp(ref["time"][judged], time, values[name])
        err = np.abs(sim - ref[name][judged])
        # Relative to the signal's size over the run, so a signal through zero is not judged
        # by its value at the crossing.
        scale = float(np.max(np.abs(ref[name])))
        bound = REL * scale + ABS
        worst = max(worst, float(np.max(err)) / (scale + ABS / REL))
        bad = np.flatnonzero(err > bound)
        if bad.size:
            i = bad[0]
            problems.append(
                f"{name}: {bad.size} points off, first at t = {ref['time'][judged][i]}: "
                f"sim {sim[i]!r}, ref {ref[name][judged][i]!r}"
            )
    return problems, worst


def newest_source():
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    newest = max(os.path.getmtime(os.path.join(root, f)) for f in ("Cargo.toml", "Cargo.lock"))
    for top in ("fmu", "modelDescription"):
        for directory, _, files in os.walk(os.path.join(root, top)):
            newest = max([newest] + [os.path.getmtime(os.path.join(directory, f)) for f in files])
    return newest


def abuse_lines(fmu_dir):
    """What the C-ABI abuse suite did, from the records its tests leave when they pass
    (target/abuse-results/<test>.<native|memcheck>.txt), counting only records newer than every
    source of the FMUs (the rule the test harness applies to the packages): never a list of what
    should have run."""
    results = os.path.join(os.path.dirname(os.path.abspath(fmu_dir)), "abuse-results")
    packaged = newest_source()
    ran = {}
    if os.path.isdir(results):
        for name in sorted(os.listdir(results)):
            path = os.path.join(results, name)
            if os.path.getmtime(path) < packaged:
                continue
            test, mode, _ = name.rsplit(".", 2)
            what, models = open(path).read().splitlines()[:2]
            entry = ran.setdefault(test, {"what": what, "modes": [], "models": models})
            entry["modes"].append("under valgrind memcheck" if mode == "memcheck" else "natively")
            if mode == "native":
                entry["what"] = what
    if not ran:
        return ["The C-ABI abuse suite (`tests/tests/abuse.rs`) has not run on these FMUs."]
    lines = ["The C-ABI abuse suite (`tests/tests/abuse.rs`) passed on these FMUs, on every one of "
             f"them ({next(iter(ran.values()))['models']}):", ""]
    for entry in ran.values():
        lines.append(f"- {entry['what']} ({' and '.join(entry['modes'])})")
    memchecked = all("under valgrind memcheck" in e["modes"] for e in ran.values())
    if memchecked:
        lines += ["", "Under valgrind memcheck: no invalid access, no definite or indirect leak."]
    return lines




def platform_lines(platform_rows):
    lines = [
        "## Platforms",
        "",
        "Every `.fmu` carries `binaries/linux64` and `binaries/win64`. The C harness",
        "`tests/c/fmu_run.c`, compiled with gcc (dlopen) and with mingw-w64 (LoadLibrary, run under",
        "Wine), runs every scenario on both (columns `C linux64` and `C win64 (Wine)` above, with a",
        "rollback to the middle of the run and an `fmi2Reset` that must both repeat it bit for bit).",
        "On Linux the harness counts the FMU's heap allocations after initialization, step by",
        "step with logging off (`tests/c/fmu_count.c`), in three passes: the repeat after the",
        "reset (the inputs set, the step, events included, the outputs got, their directional and",
        "time derivatives), the same with every Real input moved at every step, and a Model",
        "Exchange importer's calls (time, states, derivatives, a directional derivative per state,",
        "event indicators, completed integrator steps, Event Mode at each crossing and Integer",
        "input change), in FMI 2.0 and in FMI 3.0: none, in every scenario.",
        "Below: the newest glibc symbol version the `.so` needs, what the `.dll` imports, the",
        "largest difference between the Windows and the Linux run relative to the signal's range",
        "(serialized states carried from each platform to the other included), and the harness's",
        "abuse calls (wrong GUID, NULL instance and arrays, calls out of order, NaN input, truncated,",
        "corrupted and garbage states) on both platforms.",
        "",
        "Every `.fmu` also carries `binaries/darwin64` (FMI 3.0: `x86_64-darwin`, `aarch64-darwin`):",
        "built and checked, **not run** (no macOS here). Every FMU below passed the Mach-O checks",
        "(`xtask/python/darwin.py`, a failure is a problem of the FMU): universal with x86_64 and",
        "arm64, minimum macOS 11.0, libSystem alone linked, an `@rpath` install name, the linux64",
        "`.so`'s exports exactly, no maths imported, a code signature on arm64.",
        "",
        "| FMU | glibc floor | DLL imports | win64 vs linux64 | states across platforms | abuse (linux64, win64) |",
        "|---|---|---|---|---|---|",
    ]
    for model, floor, imports, worst, identical, states_ok, abuse_ok in platform_rows:
        floor_text = "n/a" if floor is None else f"GLIBC_{floor[0]}.{floor[1]}"
        diff = "bit-identical" if identical else f"{worst:.1e}"
        lines.append(f"| {model} | {floor_text} | {', '.join(imports) or 'n/a'} | {diff} | "
                     f"{'ok' if states_ok else '**FAILED**'} | {'ok' if abuse_ok else '**FAILED**'} |")
    return lines + [""]


def mutation_lines(path):
    """The mutation score, from docs/mutation.md (written by `cargo xtask mutants`, a run of
    hours, so not by each validation)."""
    if not os.path.exists(path):
        return ["## Mutation score", "", "Not measured yet: run `cargo xtask mutants`.", ""]
    with open(path) as f:
        return f.read().splitlines() + [""]


def write_report(path, rows, platform_rows, fmu_dir, notes=(), rows3=(), platform_rows3=()):
    """docs/validation.md: what ran each FMU and how close it came; no timestamps, so the file
    only changes when the results do."""
    names = list(ALL_IMPORTERS)
    headers = [name if judged(name) else f"{name} (not judged)" for name in names]
    lines = [
        "# Validation report",
        "",
        "Written by `cargo xtask validate` (part of `cargo xtask test`); do not edit by hand.",
        "",
        "Every FMU declares both interfaces, Model Exchange and Co-Simulation, and passes",
        "`fmpy validate` and `fmutool -check` (fmu-manipulation-toolbox). Each importer then",
        "simulates every reference scenario in `reference-fmus/<Model>/` (inputs, start, stop, step",
        "and tolerance from the Cross-Check files). The columns give the largest deviation from the",
        "independent reference over all scenarios and outputs, relative to the signal's range; the",
        "pass bound is 1e-6. Every column but the two ME columns runs the FMU as Co-Simulation.",
        "`FMPy ME` runs it as Model Exchange under FMPy's CVode, with the inputs held over each",
        "step as in the co-simulation runs and a relative tolerance of the scenario's times",
        f"{ME_FACTOR_TEXT}. `fmi-sim ME` (forward Euler, one step per output interval) is",
        "reported, not judged. The `interpolated` columns run Model Exchange as users do, on the",
        "scenarios whose inputs are continuous: the input table interpolated linearly, no input",
        "events, so the host's solver integrates across the communication points and only the",
        "event indicators stop it; they are compared with `<Model>_ref_interpolated.csv`, the",
        "independent solution for those inputs. `FMPy ME interpolated` is judged (FMPy with the",
        "inputs also set in its right-hand side); FMPy as shipped (at the scenario's own",
        "tolerance) sets them only in its root function and at output points, and fmi-sim reads",
        "them at each step's start: both are reported, not judged. See the importer notes in",
        "[importers.md](importers.md#importer-notes) for each importer's quirks.",
        "",
        "| FMU | Scenarios | " + " | ".join(headers) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    lines += deviation_rows(rows, names)
    if notes:
        lines += ["", "Runs that did not finish:", ""] + [f"- {note}" for note in notes]
    lines += [""] + platform_lines(platform_rows)
    if rows3:
        lines += fmi3_lines(rows3, platform_rows3)
    lines += abuse_lines(fmu_dir) + [""]
    lines += mutation_lines(os.path.join(os.path.dirname(path), "mutation.md"))
    with open(path, "w") as f:
        f.write("\n".join(lines))


def run_importers(fmu, sc, where, table, is_judged, worst, notes, label=""):
    """Every importer of `table` on one scenario: the problems of the judged ones; the largest
    deviation of each goes into `worst`, not-judged runs that did not finish into `notes`."""
    problems = []
    for imp in table:
        ref = reference_of(imp, sc)
        if ref is None:
            continue
        try:
            sim_problems, dev = compare(sc, *simulate(imp, fmu, sc, table), ref)
        except Exception as e:  # an importer that fails is a finding, not a crash
            sim_problems, dev = [f"did not run: {e}"], float("nan")
        worst[imp] = max(worst.get(imp, 0.0), dev) if dev == dev else dev
        if is_judged(imp):
            problems += [f"{imp} on {where}: {p}" for p in sim_problems]
        else:
            outcome = (sim_problems[0].removeprefix("did not run: ") if dev != dev
                       else f"{dev:.2e}")
            print(f"  ({label}{imp} on {where}, not judged: {outcome})")
            if dev != dev:
                notes.append(f"{label}{imp} on {where} (not judged): {outcome}")
    return problems


def cross_platforms(fmu, sc, names):
    """`platforms.compare_platforms`, a failure to run reported as a problem."""
    try:
        with tempfile.TemporaryDirectory() as scratch:
            return platforms.compare_platforms(fmu, sc, scratch, names)
    except Exception as e:
        return [f"did not run: {e}"], float("inf"), False


def validate3(model, fmu2, fmu3, scenarios, ref_root, notes):
    """The FMI 3.0 FMU of a model: `fmpy validate`, its three binaries, every importer of
    IMPORTERS3 on every scenario (NOT_JUDGED3 reported only), FMPy's Co-Simulation results
    bit-identical to those of the FMI 2.0 FMU, the platforms against each other with states
    carried across, and the harness's abuse calls on each. Returns (problems, worst deviation
    per importer, the report's platform row)."""
    problems = [f"fmpy validate: {p}" for p in validate_fmu(fmu3)]
    work = tempfile.mkdtemp(prefix="validate3-")
    binary_problems, floor, _ = platforms.inspect_binaries(fmu3, work)
    problems += binary_problems
    worst, same_as_fmi2 = {}, True
    across, identical, states_ok = 0.0, True, True
    for directory in scenarios:
        sc = Scenario(directory, model)
        where = os.path.relpath(directory, ref_root)
        # Without Event Mode the FMI 3.0 step is the FMI 2.0 step: the same numbers, bit for bit.
        try:
            t2, v2 = simulate("FMPy", fmu2, sc)
            t3, v3 = simulate("FMPy", fmu3, sc, IMPORTERS3)
            same = np.array_equal(t2, t3) and all(
                np.asarray(v2[n]).tobytes() == np.asarray(v3[n]).tobytes() for n in sc.outputs)
        except Exception as e:
            problems.append(f"FMPy against FMI 2.0 on {where} did not run: {e}")
            same = False
        if not same:
            problems.append(f"FMPy on {where}: the FMI 3.0 results differ from FMI 2.0's")
        same_as_fmi2 &= same
        problems += run_importers(fmu3, sc, where, ALL_IMPORTERS3,
                                  lambda imp: imp not in NOT_JUDGED3, worst, notes, "FMI 3.0 ")
        cross, dev, same = cross_platforms(fmu3, sc, platforms.PLATFORMS3)
        problems += [f"platforms on {where}: {p}" for p in cross]
        across, identical, states_ok = max(across, dev), identical and same, states_ok and not cross
    abuse_problems = []
    for platform in platforms.PLATFORMS3:
        with tempfile.TemporaryDirectory() as scratch:
            try:
                abuse_problems += platforms.abuse(fmu3, Scenario(scenarios[0], model), scratch,
                                                  platform)
            except Exception as e:
                abuse_problems.append(f"abuse on {platform} did not run: {e}")
    problems += abuse_problems
    shutil.rmtree(work, ignore_errors=True)
    return problems, worst, (model, floor, same_as_fmi2, across, identical, states_ok,
                             not abuse_problems)


def deviation_rows(rows, names):
    """The report's table rows: per FMU, its scenarios and each importer's largest deviation."""
    lines = []
    for model, scenarios, worst, ok in rows:
        cells = []
        for imp in names:
            dev = worst.get(imp)
            cells.append("n/a" if dev is None else "did not finish" if dev != dev else f"{dev:.1e}")
        status = "" if ok else " **FAILED**"
        lines.append(f"| {model}{status} | {scenarios} | " + " | ".join(cells) + " |")
    return lines


def fmi3_lines(rows3, platform_rows3):
    names = list(ALL_IMPORTERS3)
    headers = [f"{n} (not judged)" if n in NOT_JUDGED3 else n for n in names]
    lines = [
        "## FMI 3.0",
        "",
        "Every component also ships as an FMI 3.0 FMU (`target/fmu/fmi3/<Model>.fmu`: both",
        "interfaces, Co-Simulation with Event Mode, early return and intermediate update), from the",
        "same binary. It passes `fmpy validate`, and each importer runs every reference scenario as",
        "above, judged by the same bound. `FMPy` and `fmi-sim` run Co-Simulation without Event",
        "Mode; their `event mode` columns with Event Mode and early return (FMPy's",
        "`use_event_mode` and `early_return_allowed`, fmi-sim's `--event-mode-used",
        "--early-return-allowed`): every step ends at each event inside it and the importer",
        "handles the event in Event Mode. The C columns are the harness's FMI 3.0 importer",
        "(`tests/c/fmu_run3.c`, `run3`: Event Mode, early return, and an intermediate update callback that asks for an",
        "early return at every third internal step) on each platform of the FMU.",
        "",
        "| FMU | Scenarios | " + " | ".join(headers) + " |",
        "|---|---|" + "---|" * len(names),
    ]
    lines += deviation_rows(rows3, names)
    lines += [
        "",
        "Without Event Mode, the FMI 3.0 step is the FMI 2.0 step: FMPy's results are compared",
        "with those of the FMI 2.0 FMU bit for bit. The platforms: the newest glibc symbol version",
        "the two `.so` need, the largest difference of x86_64-windows (Wine) and aarch64-linux",
        "(qemu-user) from x86_64-linux, serialized states carried from each platform to the next",
        "(x86_64-linux to x86_64-windows to aarch64-linux to x86_64-linux), and the abuse calls",
        "(`abuse3`) on the three.",
        "",
        "| FMU | glibc floor | FMPy vs FMI 2.0 | platforms vs x86_64-linux | states across platforms | abuse (3 platforms) |",
        "|---|---|---|---|---|---|",
    ]
    for model, floor, same2, worst, identical, states_ok, abuse_ok in platform_rows3:
        floor_text = "n/a" if floor is None else f"GLIBC_{floor[0]}.{floor[1]}"
        lines.append(f"| {model} | {floor_text} | "
                     f"{'bit-identical' if same2 else '**differs**'} | "
                     f"{'bit-identical' if identical else f'{worst:.1e}'} | "
                     f"{'ok' if states_ok else '**FAILED**'} | {'ok' if abuse_ok else '**FAILED**'} |")
    return lines + [""]


def scenarios_of(ref_root, model):
    """The Cross-Check set in reference-fmus/<Model>/, and further scenarios (other inputs,
    other parameter values in <Model>_par.csv) in its subdirectories, laid out the same way."""
    ref_dir = os.path.join(ref_root, model)
    if not os.path.isfile(os.path.join(ref_dir, f"{model}_ref.csv")):
        return []
    subdirs = sorted(os.path.join(ref_dir, d) for d in os.listdir(ref_dir)
                     if os.path.isfile(os.path.join(ref_dir, d, f"{model}_ref.csv")))
    return [ref_dir] + subdirs


def check_fmu(fmu_dir, ref_root, variables, name):
    """Everything the validation does to one FMU, in a worker process: returns what it printed,
    whether it failed, its report rows and the not-judged runs that did not finish."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        result = _check_fmu(fmu_dir, ref_root, variables, name)
    return dict(result, printed=printed.getvalue())


def _check_fmu(fmu_dir, ref_root, variables, name):
    notes = []  # not-judged runs that did not finish, for the report
    row3 = platform_row3 = None
    fmu = os.path.join(fmu_dir, name)
    md = read_model_description(fmu)
    model = md.coSimulation.modelIdentifier
    problems = [f"fmpy validate: {p}" for p in validate_fmu(fmu)]
    if md.modelExchange is None:
        problems.append("modelDescription.xml declares no <ModelExchange>")
    elif md.modelExchange.modelIdentifier != model:
        problems.append(f"<ModelExchange> names {md.modelExchange.modelIdentifier}, "
                        f"<CoSimulation> {model}")
    check = subprocess.run(
        ["fmutool", "-input", fmu, "-check"], capture_output=True, text=True
    )
    if check.returncode != 0 or "ERROR" in check.stdout:
        problems.append(f"fmutool -check failed:\n{check.stdout}{check.stderr}")
    scenarios = scenarios_of(ref_root, model)
    if not scenarios:
        problems.append(f"no reference result in {os.path.join(ref_root, model)}")
    work = tempfile.mkdtemp(prefix="validate-")
    binary_problems, floor, imports = platforms.inspect_binaries(fmu, work)
    problems += binary_problems
    across, identical, states_ok = 0.0, True, True
    worst = {}
    for directory in scenarios:
        sc = Scenario(directory, model)
        where = os.path.relpath(directory, ref_root)
        problems += sc.input_problems(read_model_description(fmu))
        problems += run_importers(fmu, sc, where, ALL_IMPORTERS, judged, worst, notes)
        cross, dev, same = cross_platforms(fmu, sc, ("linux64", "win64"))
        problems += [f"platforms on {where}: {p}" for p in cross]
        across, identical, states_ok = max(across, dev), identical and same, states_ok and not cross
    abuse_problems = []
    if scenarios:
        for platform in ("linux64", "win64"):
            with tempfile.TemporaryDirectory() as scratch:
                try:
                    abuse_problems += platforms.abuse(fmu, Scenario(scenarios[0], model), scratch, platform)
                except Exception as e:
                    abuse_problems.append(f"abuse on {platform} did not run: {e}")
    problems += abuse_problems
    shutil.rmtree(work, ignore_errors=True)
    # Array elements such as lossTable[1,2] are documented once, as `lossTable[i,j]`.
    missing = sorted({v.name.split("[")[0] for v in md.modelVariables
                      if f"`{v.name.split('[')[0]}" not in variables})
    if missing:
        problems.append(f"docs/variables.md lacks {', '.join(missing)}")
    fmu3 = os.path.join(fmu_dir, "fmi3", name)
    if not os.path.isfile(fmu3):
        problems.append(f"no FMI 3.0 FMU {fmu3}")
    elif scenarios:
        problems3, worst3, platform_row3 = validate3(model, fmu, fmu3, scenarios, ref_root, notes)
        problems += [f"FMI 3.0: {p}" for p in problems3]
        row3 = (model, len(scenarios), worst3, not problems3)
        devs3 = ", ".join(f"{imp} {dev:.2e}" for imp, dev in worst3.items())
        print(f"{model} FMI 3.0: {'FAIL' if problems3 else 'ok'} (max deviation: {devs3})")
    status = "FAIL" if problems else "ok"
    devs = ", ".join(f"{imp} {dev:.2e}" for imp, dev in worst.items())
    print(f"{model}: fmpy validate, fmutool -check, {len(scenarios)} reference(s): {status}"
          f" (max deviation: {devs})")
    for p in problems:
        print(f"  {p}")
    return dict(failed=bool(problems), notes=notes, row=(model, len(scenarios), worst, not problems),
                platform_row=(model, floor, imports, across, identical, states_ok,
                              not abuse_problems),
                row3=row3, platform_row3=platform_row3)


def rows_path(ref_root):
    """Where a whole validation leaves its rows for the report (`--report`)."""
    return os.path.join(os.path.dirname(ref_root), "target", "validation-rows.json")


def main(fmu_dir, ref_root):
    only = os.environ.get("FMU_ONLY")  # cargo xtask validate --only <Model>
    fmus = sorted(f for f in os.listdir(fmu_dir)
                  if f.endswith(".fmu") and (only is None or f == f"{only}.fmu"))
    if not fmus:
        print(f"no FMUs in {fmu_dir}: run `cargo xtask package`")
        return 1
    # The variable tables (docs/variables.md): every variable must be named there.
    variables = open(os.path.join(os.path.dirname(ref_root), "docs", "variables.md")).read()
    # One FMU a process: the importers, Wine and qemu run one thread each.
    workers = int(os.environ.get("VALIDATE_WORKERS", "2"))
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(check_fmu,
                                *zip(*[(fmu_dir, ref_root, variables, n) for n in fmus])))
    for r in results:
        print(r["printed"], end="", flush=True)
    failed = sum(r["failed"] for r in results)
    rows = dict(
        rows=[r["row"] for r in results],
        platform_rows=[r["platform_row"] for r in results],
        notes=[n for r in results for n in r["notes"]],
        rows3=[r["row3"] for r in results if r["row3"] is not None],
        platform_rows3=[r["platform_row3"] for r in results if r["platform_row3"] is not None],
    )
    if only is None:
        with open(rows_path(ref_root), "w") as f:
            json.dump(rows, f)
        if os.environ.get("VALIDATE_REPORT_LATER") is None:
            report(fmu_dir, ref_root)
    print(f"validate: {len(fmus) - failed} passed, {failed} failed")
    return 1 if failed else 0


def report(fmu_dir, ref_root):
    """docs/validation.md from the rows the last whole validation left and the records of the
    abuse suite and the fuzzer under target/."""
    with open(rows_path(ref_root)) as f:
        rows = json.load(f)
    write_report(os.path.join(os.path.dirname(ref_root), "docs", "validation.md"), rows["rows"],
                 rows["platform_rows"], fmu_dir, rows["notes"], rows["rows3"],
                 rows["platform_rows3"])
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "--report":
        sys.exit(report(sys.argv[2], sys.argv[3]))
    sys.exit(main(sys.argv[1], sys.argv[2]))
