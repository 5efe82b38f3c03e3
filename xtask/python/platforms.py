"""The platforms every FMU carries: linux64 (glibc >= 2.17) and win64 (run under Wine); for FMI
3.0 x86_64-linux, x86_64-windows and aarch64-linux (glibc >= 2.17, run under qemu-user).

`tests/c/fmu_run.c`, compiled by `cargo xtask` for Linux (dlopen) and with mingw-w64 for Windows
(LoadLibrary), drives a binary through the C ABI from a plan written here: the scenario's GUID,
tolerance, start, step, parameters and the input values of every step, every Real as its IEEE-754
bits in hex so nothing is lost in text. `validate.py` uses it three ways:
  - as two more importers (`C linux64`, `win64 (Wine)`), judged against the references;
  - `compare_platforms`: the Windows run against the Linux run, and serialized states carried
    from one platform to the other, the run continuing as it would have. Both must be
    bit-identical: the binaries take their maths from the `libm` crate, not from glibc or
    msvcrt (fmu_runtime::math), so nothing differs but the C runtime's I/O;
  - `abuse`: a careless importer's calls, on both platforms: a status back, never a crash.
`inspect_binaries` checks what each binary links against: the glibc floor and the DLL imports,
and the macOS binaries' Mach-O headers, links and symbols (`darwin.py`: built, never run here).
The FMI 3.0 FMUs run through the harness's `run3`/`abuse3` (Event Mode, early return and the
intermediate update callback) on their three platforms the same way (`compare_platforms3`).
"""
import atexit
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zipfile

import numpy as np
from fmpy import read_model_description

import darwin

GLIBC_FLOOR = (2, 17)
# What a DLL may import: Windows system DLLs only, nothing a user would have to find.
SYSTEM_DLLS = {"kernel32.dll", "ntdll.dll", "userenv.dll", "ws2_32.dll", "msvcrt.dll",
               "bcryptprimitives.dll", "advapi32.dll", "bcrypt.dll"}
WINE = os.environ.get("WINE", "/usr/lib/wine/wine64")
# qemu-user runs the aarch64 harness with Debian's aarch64 glibc (libc6-arm64-cross).
QEMU = ["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]
# The platforms of the FMI 3.0 FMUs, in the order the report lists them.
PLATFORMS3 = ("x86_64-linux", "x86_64-windows", "aarch64-linux")


def windows(platform):
    return platform in ("win64", "x86_64-windows")


def harness(platform):
    """The compiled harness (xtask puts all three in $FMU_RUN_DIR)."""
    name = ("fmu_run.exe" if windows(platform)
            else "fmu_run_aarch64" if platform == "aarch64-linux" else "fmu_run")
    return os.path.join(os.environ["FMU_RUN_DIR"], name)


def hex_bits(x):
    return "%016x" % struct.unpack("<Q", struct.pack("<d", float(x)))[0]


def from_hex(token):
    return struct.unpack("<d", struct.pack("<Q", int(token, 16)))[0]


def kind(v):
    """The plan's letter for a variable's type: R (Real, Float64) or I (Integer, Int32)."""
    return "I" if v.type in ("Integer", "Int32") else "R"


def write_plan(md, sc, path):
    """Every parameter, at the scenario's value (<Model>_par.csv) or else at its start value
    (set explicitly, as a tool's parameter dialog does), the scenario's inputs at every
    communication point, and its outputs. The harness sets the parameters in initialization
    mode and reads each back after it: a value the FMU did not take stops the run."""
    by_name = {v.name: v for v in md.modelVariables}
    chosen = sc.parameter_values(md)
    params = [(v, chosen.get(v.name, v.start)) for v in md.modelVariables
              if v.causality == "parameter" and v.type in ("Real", "Integer", "Float64", "Int32")
              and (v.start is not None or v.name in chosen)]
    steps = sc.steps()
    lines = [f"guid {md.guid}", f"tolerance {hex_bits(sc.tol)}", f"start {hex_bits(sc.start)}",
             f"step {hex_bits(sc.step)}", f"steps {steps}", f"params {len(params)}"]
    lines += [f"{kind(v)} {v.valueReference} {hex_bits(float(value))}" for v, value in params]
    inputs = sc.input_names()
    lines.append(f"inputs {len(inputs)} " + " ".join(f"{kind(by_name[n])} {by_name[n].valueReference}"
                                                    for n in inputs))
    lines.append(f"outputs {len(sc.outputs)}")
    lines += [f"{kind(by_name[n])} {by_name[n].valueReference}" for n in sc.outputs]
    # For the Model Exchange pass of the allocation count: each state and its derivative.
    derivatives = [d.variable for d in md.derivatives]
    lines.append(f"states {len(derivatives)} " + " ".join(
        f"{d.derivative.valueReference} {d.valueReference}" for d in derivatives))
    lines.append(f"indicators {md.numberOfEventIndicators or 0}")
    lines.append("values")
    for k in range(steps if inputs else 0):
        lines.append(" ".join(hex_bits(u) for u in sc.input_at(sc.start + k * sc.step)))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def unpack(fmu, work):
    directory = os.path.join(work, "fmu")
    if not os.path.isdir(directory):
        with zipfile.ZipFile(fmu) as z:
            z.extractall(directory)
    return directory


def win_path(path):
    """Wine's Z: drive is the Unix root."""
    return "Z:" + os.path.abspath(path).replace("/", "\\")


def invoke(platform, command, plan, fmu_dir, model, *files):
    """Runs the harness on one platform; file arguments are translated for Wine."""
    binary = os.path.join(fmu_dir, "binaries", platform,
                          f"{model}.dll" if windows(platform) else f"{model}.so")
    if not os.path.isfile(binary):
        raise RuntimeError(f"the FMU has no {platform} binary")
    resources = os.path.join(fmu_dir, "resources")
    if windows(platform):
        path = win_path
        uri = "file:///" + win_path(resources).replace("\\", "/")
        prefix = [WINE, harness(platform)]
        env = dict(os.environ, WINEDEBUG="-all", WINEDLLOVERRIDES="mscoree,mshtml=",
                   WINEPREFIX=os.environ.get("WINEPREFIX", os.path.join(os.environ["FMU_RUN_DIR"], "wine")))
    else:
        emulator = QEMU if platform == "aarch64-linux" else []
        path, uri, prefix, env = os.path.abspath, "file://" + os.path.abspath(resources), \
            emulator + [harness(platform)], None
    args = [a if a.startswith("--") else path(a) for a in files]
    cmd = prefix + [command, path(plan), path(binary), uri] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def read_rows(path, names):
    with open(path) as f:
        rows = np.array([[from_hex(t) for t in line.split()] for line in f if line.strip()])
    rows = rows.reshape(-1, len(names) + 1)
    return rows[:, 0], {n: rows[:, i + 1] for i, n in enumerate(names)}


def simulate(platform, fmu, sc, work, *state_args):
    """One run (with its internal rollback and reset repeats) on one platform; an FMI 3.0 FMU
    through the harness's `run3`."""
    fmu_dir = unpack(fmu, work)
    md = read_model_description(fmu)
    plan = os.path.join(work, "plan.txt")
    write_plan(md, sc, plan)
    out = os.path.join(work, f"{platform}.out")
    command = "run3" if md.fmiVersion == "3.0" else "run"
    run = invoke(platform, command, plan, fmu_dir, md.coSimulation.modelIdentifier, out,
                 *state_args)
    if run.returncode != 0:
        raise RuntimeError(f"fmu_run on {platform} failed ({run.returncode}):\n{run.stdout}{run.stderr}")
    # The count is of the repeat after the reset, which a run from a loaded state has not.
    if platform in ("linux64", "x86_64-linux") and "--load-state" not in state_args:
        problem = allocation_problem(run.stdout)
        if problem:
            raise RuntimeError(problem)
    return read_rows(out, sc.outputs)


def allocation_problem(stdout):
    """What the Linux harness's allocation count says is wrong (tests/c/fmu_count.c): a step of
    one of its passes after initialization that allocated (the inputs set, the step or a Model
    Exchange round, the outputs and their derivatives got, events included, logging off), or a
    pass not counted at all. None when every step of every pass allocated nothing."""
    passes = ["as the scenario runs", "every Real input moved", "Model Exchange"]
    counts = {m.group(1): tuple(int(g) for g in m.groups()[1:]) for m in re.finditer(
        r"allocations: ([^:]+): (\d+) steps with logging off, (\d+) of them allocated, "
        r"first at step (\d+)", stdout)}
    for what in passes:
        if what not in counts:
            return f"the harness reported no allocation count for the pass {what!r}"
        counted, allocating, first = counts[what]
        if counted == 0:
            return f"no step counted in the pass {what!r}: the allocation check saw nothing"
        if allocating:
            return (f"{allocating} of {counted} steps of the pass {what!r} (logging off) allocated "
                    f"heap memory, the first at step {first}")
    return None


# Each platform's run of a scenario, with the state it saved halfway, made once per process: the
# importer columns and the cross-platform checks (`compare_platforms`) read the same run.
_RUNS = {}


def _stamp(path):
    return (os.path.abspath(path), os.path.getmtime(path), os.path.getsize(path)) \
        if os.path.exists(path) else (path,)


def run_key(fmu, sc):
    """What a run of `sc` on the FMU file `fmu` depends on: the file, the scenario's files and
    its settings (a cached run is reused only for the same)."""
    return (_stamp(fmu), sc.directory, _stamp(sc.in_path), _stamp(sc.par_path),
            _stamp(os.path.join(sc.directory, f"{sc.model}_ref.opt")),
            (sc.start, sc.stop, sc.step, sc.tol))


def saved_run(platform, fmu, sc):
    """(time, values, state file) of `platform`'s run of `sc`, its state saved halfway
    (`--save-state`); run once per process for one FMU file and one scenario."""
    key = (platform, *run_key(fmu, sc))
    if key not in _RUNS:
        work = tempfile.mkdtemp(prefix=f"run-{platform}-")
        atexit.register(shutil.rmtree, work, ignore_errors=True)
        state = os.path.join(work, f"{platform}.state")
        _RUNS[key] = (*simulate(platform, fmu, sc, work, "--save-state", state), state)
    return _RUNS[key]


def linux64(fmu, sc, _work):
    return saved_run("linux64", fmu, sc)[:2]


def win64(fmu, sc, _work):
    return saved_run("win64", fmu, sc)[:2]


def largest_difference(a, b, names):
    """Largest |a - b| relative to the signal's range, and whether a and b are bit-identical."""
    worst, identical = 0.0, True
    for n in names:
        scale = float(np.max(np.abs(b[n])))
        diff = float(np.max(np.abs(a[n] - b[n]))) if len(b[n]) else 0.0
        if not np.all(np.isfinite(a[n])) or not np.all(np.isfinite(b[n])):
            return float("inf"), False
        worst = max(worst, diff / scale if scale > 0 else diff)
        identical &= a[n].tobytes() == b[n].tobytes()
    return worst, identical


def fmi3_x86_64_linux(fmu, sc, _work):
    return saved_run("x86_64-linux", fmu, sc)[:2]


def fmi3_x86_64_windows(fmu, sc, _work):
    return saved_run("x86_64-windows", fmu, sc)[:2]


def fmi3_aarch64_linux(fmu, sc, _work):
    return saved_run("aarch64-linux", fmu, sc)[:2]


def compare_platforms(fmu, sc, work, platforms=("linux64", "win64")):
    """The other platforms against the first, and states carried from each to the next and
    back: returns (problems, worst, identical)."""
    saved = {p: saved_run(p, fmu, sc) for p in platforms}
    states = {p: saved[p][2] for p in platforms}
    runs = {p: saved[p][:2] for p in platforms}
    problems = []
    worst, identical = 0.0, True
    first = platforms[0]
    for other in platforms[1:]:
        dev, same = largest_difference(runs[other][1], runs[first][1], sc.outputs)
        worst, identical = max(worst, dev), identical and same
        if not same:
            problems.append(f"{other} differs from {first} by {dev:.2e} of the signal range")
    # Each platform's state continues on the next, the last's on the first.
    pairs = list(zip(platforms, platforms[1:] + platforms[:1]))
    for writer, reader in pairs:
        _, carried = simulate(reader, fmu, sc, work, "--load-state", states[writer])
        mid = sc.steps() // 2
        tail = {n: v[mid:] for n, v in runs[writer][1].items()}
        dev, same = largest_difference(carried, tail, sc.outputs)
        worst, identical = max(worst, dev), identical and same
        if not same:
            problems.append(f"a state written on {writer} and continued on {reader} is off "
                            f"by {dev:.2e} of the signal range")
    return problems, worst, identical


def abuse(fmu, sc, work, platform):
    """Problems found by the harness's abuse mode on one platform."""
    fmu_dir = unpack(fmu, work)
    md = read_model_description(fmu)
    plan = os.path.join(work, "plan.txt")
    write_plan(md, sc, plan)
    command = "abuse3" if md.fmiVersion == "3.0" else "abuse"
    run = invoke(platform, command, plan, fmu_dir, md.coSimulation.modelIdentifier)
    if run.returncode != 0:
        failed = [line for line in run.stdout.splitlines() if not line.startswith("ok")]
        return [f"abuse on {platform} (exit {run.returncode}): " + "; ".join(failed) + run.stderr]
    return []


def glibc_floor(so):
    """The newest GLIBC_x.y symbol version the shared object needs."""
    out = subprocess.run(["objdump", "-T", so], capture_output=True, text=True, check=True).stdout
    versions = {tuple(int(x) for x in m) for m in re.findall(r"GLIBC_(\d+)\.(\d+)", out)}
    return max(versions) if versions else (0, 0)


def dll_imports(dll):
    out = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", dll], capture_output=True,
                         text=True, check=True).stdout
    return sorted({m.lower() for m in re.findall(r"DLL Name: (\S+)", out)})


def inspect_binaries(fmu, work):
    """Every binary present, each .so within the glibc floor, the DLL importing system DLLs only,
    the macOS binaries as `darwin.inspect` checks them. Returns (problems, glibc floor, DLL imports)."""
    fmu_dir = unpack(fmu, work)
    md = read_model_description(fmu)
    model = md.coSimulation.modelIdentifier
    if md.fmiVersion == "3.0":
        sos = [os.path.join(fmu_dir, "binaries", p, f"{model}.so")
               for p in ("x86_64-linux", "aarch64-linux")]
        dll = os.path.join(fmu_dir, "binaries", "x86_64-windows", f"{model}.dll")
    else:
        sos = [os.path.join(fmu_dir, "binaries", "linux64", f"{model}.so")]
        dll = os.path.join(fmu_dir, "binaries", "win64", f"{model}.dll")
    problems, floor, imports = [], None, []
    for path in sos + [dll]:
        if not os.path.isfile(path):
            problems.append(f"no {os.path.relpath(path, fmu_dir)}")
    for so in filter(os.path.isfile, sos):
        needs = glibc_floor(so)
        floor = max(floor or needs, needs)
        if needs > GLIBC_FLOOR:
            problems.append(f"{os.path.relpath(so, fmu_dir)} needs GLIBC_{needs[0]}.{needs[1]}, "
                            f"newer than {GLIBC_FLOOR[0]}.{GLIBC_FLOOR[1]}")
    if os.path.isfile(dll):
        imports = dll_imports(dll)
        foreign = [d for d in imports if d not in SYSTEM_DLLS and not d.startswith("api-ms-win-")]
        if foreign:
            problems.append(f"{model}.dll imports non-system DLLs: {', '.join(foreign)}")
    problems += darwin.inspect(fmu_dir, model, md.fmiVersion == "3.0")
    return problems, floor, imports
