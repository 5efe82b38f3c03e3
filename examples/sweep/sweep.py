#!/usr/bin/env python3
"""A parameter sweep of the LossyGear on Dask distributed: when does a hoist hold, slip, lift?

A motor drives a drum through the LossyGear (ratio 10, motor on flange a, drum on flange b). A
load hangs on the drum: a constant torque -L on flange b. The motor torque ramps from zero,
tau_a = k t, so at first only the gear's friction can hold the load. Swept: the load L and the
mesh efficiency eta (eta_mf1 = eta_mf2), bearing friction tau_bf1 = tau_bf2 = 0.2 N.m. Each run
reports how the gear first moves (held, or backdriven: the load drops), when the rising motor
torque catches a dropping load (backward -> stuck), when it lifts it (stuck -> forward), how far
the drum turned back before it was held, and the speed at the end.

Closed form (the LossyGear's equations with one loss-table row, referred to flange a):
- At rest it is backdriven at once iff L/r > tau_bf (self-locking below that).
- Lowering, flange b drives: a_b = (r tau_a/eta - L + r tau_bf) / (J_b + r^2 J_a/eta), linear in
  time, so the load is caught at t_stop = 2 eta (L/r - tau_bf) / k (the inertias cancel) after the
  drum turned back by beta k t_stop^3 / 12, beta = r / (eta (J_b + r^2 J_a/eta)).
- Stuck, it lifts once the motor torque reaches the static friction: eta tau_a = tau_bf + L/r.
- It lifts at t_break = max(t_stop, (tau_bf + L/r) / (eta k)): when the load is caught above that
  torque (2 eta^2 (L/r - tau_bf) >= L/r + tau_bf, possible only for eta > 1/sqrt 2) it goes from
  lowering to lifting without holding.

The sweep runs on Dask distributed: a LocalCluster of worker processes by default, or any cluster
with --scheduler tcp://host:port. Each worker process keeps one FMU instance (FMPy's FMU2Slave)
and resets it (fmi2Reset) between runs; tasks are chunks of parameter points.

    python sweep.py <dir with the .fmu files> [--check] [--scheduler tcp://host:port]
                    [--workers N] [--chunk N] [--no-serial]

Without --check: the full sweep (3000 runs) serially in this process and on the cluster, checks
that both give bit-identical results and the closed form above, prints the timings, writes
sweep.png and results.json next to this file. With --check: a small sweep (120 runs), on a
LocalCluster of 2 worker processes (or --scheduler) and serially; it asserts bit-identical
results, that more than one process did the work, one FMU instance per process, and the closed
form; it writes nothing here.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import threading
import time
import zipfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = "LossyGear"

# The hoist. Everything not listed keeps the FMU's defaults.
RATIO = 10.0          # motor (flange a) turns 10 times per drum turn
J_A = 1e-3            # kg.m2, motor rotor
J_B = 0.05            # kg.m2, drum and load referred to the drum
BF = 0.2              # N.m, bearing friction tau_bf1 = tau_bf2, referred to flange a
K = 2.0               # N.m/s, motor torque ramp tau_a = K t
STOP = 3.0            # s
H = 1e-3              # s, communication step
TOLERANCE = 1e-8      # the FMU's default relative tolerance, passed explicitly

# The sweep: load torque on the drum (N.m) x mesh efficiency.
FULL_LOADS = np.linspace(0.25, 15.0, 60)
FULL_ETAS = np.linspace(0.30, 0.98, 50)
CHECK_LOADS = np.linspace(0.5, 14.5, 12)
CHECK_ETAS = np.linspace(0.35, 0.95, 10)


def grid(loads, etas):
    """Parameter points (index, L, eta), eta the slow index so a chunk is a slice of loads."""
    return [(i, float(load), float(eta))
            for i, (eta, load) in enumerate((e, l) for e in etas for l in loads)]


# ----------------------------------------------------------------------------- worker side

class _Local:
    """Holds the FMU cache when runs happen outside a Dask worker (the serial runs)."""


_LOCAL = _Local()


class _Instance:
    """One FMU2Slave, instantiated once per process and reset between runs."""

    def __init__(self, fmu_bytes, workdir):
        from fmpy import extract, read_model_description
        from fmpy.fmi2 import FMU2Slave

        path = os.path.join(workdir, f"{MODEL}.fmu")
        with open(path, "wb") as f:
            f.write(fmu_bytes)
        self.md = read_model_description(path)
        self.dir = extract(path, unzipdir=os.path.join(workdir, "unzipped"))
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier,
                             instanceName=f"{MODEL}-{os.getpid()}")
        self.fmu.instantiate()
        self.runs = 0
        self.lock = threading.Lock()  # a worker with several threads shares the instance
        self.pid = os.getpid()
        self.id = f"{os.getpid()}-{id(self):x}"
        self.base = workdir

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.base, ignore_errors=True)

    def simulate(self, load, eta):
        """One run; returns the traces at the communication points."""
        fmu, vr = self.fmu, self.vr
        if self.runs:
            fmu.reset()
        self.runs += 1
        fmu.setupExperiment(tolerance=TOLERANCE, startTime=0.0, stopTime=STOP)
        params = {"ratio": RATIO, "J_a": J_A, "J_b": J_B, "w_b_start": 0.0,
                  "lossTable[1,2]": eta, "lossTable[1,3]": eta,
                  "lossTable[1,4]": BF, "lossTable[1,5]": BF,
                  "tau_a": 0.0, "tau_b": -load}
        fmu.setInteger([vr["nLossRows"]], [1])
        fmu.setReal([vr[n] for n in params], list(params.values()))
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        n = int(round(STOP / H))
        out_vr = [vr["w_b"], vr["phi_b"], vr["energy_loss"]]
        mode_vr, tau_vr = [vr["mode"]], [vr["tau_a"]]
        real = np.empty((n + 1, 3))
        mode = np.empty(n + 1, dtype=np.int32)
        for i in range(n + 1):
            t = i * H
            real[i] = fmu.getReal(out_vr)
            mode[i] = fmu.getInteger(mode_vr)[0]
            if i == n:
                break
            # The ramp is exact over each step: the value at t plus its derivative.
            fmu.setReal(tau_vr, [K * t])
            fmu.setRealInputDerivatives(tau_vr, [1], [K])
            # FMPy raises an exception on a status other than fmi2OK.
            fmu.doStep(currentCommunicationPoint=t, communicationStepSize=H)
        return real, mode


def _instance(fmu_bytes, key):
    """The process's FMU instance, created on first use (on a Dask worker: kept on the worker)."""
    try:
        from distributed import get_worker
        holder = get_worker()
        workdir = holder.local_directory
    except (ImportError, ValueError):
        holder, workdir = _LOCAL, None
    # dict.setdefault is atomic, so threads of one worker agree on one cache and one lock.
    cache = vars(holder).setdefault("_sweep_fmu_instances", {})
    lock = vars(holder).setdefault("_sweep_fmu_lock", threading.Lock())
    with lock:
        if key not in cache:
            base = tempfile.mkdtemp(prefix="sweep-fmu-", dir=workdir)
            cache[key] = _Instance(fmu_bytes, base)
    return cache[key]


def _fit_root(t, w, lo, hi):
    """The instant in (lo, hi] where the quadratic through three (t, w) points is zero: the speed
    is a quadratic in time between events (linear torque ramp, one loss-table row).

    A gear that lifts off from rest starts with zero acceleration (the static friction is the
    torque where the rolling acceleration is zero), so its speed has a double root there; where
    the parabola's vertex sits in (lo, hi] at zero speed, the vertex is that instant."""
    s = t - t[0]
    a, b, c = np.polyfit(s, w, 2)
    vertex = -b / (2 * a)
    scale = np.max(np.abs(w))
    if lo - 1e-12 < vertex + t[0] <= hi + 1e-12 and abs(c - b * b / (4 * a)) <= 1e-9 * scale:
        return float(vertex + t[0])
    roots = np.roots([a, b, c])
    roots = roots[np.isreal(roots)].real + t[0]
    inside = roots[(roots > lo - 1e-12) & (roots <= hi + 1e-12)]
    return float(inside[0]) if len(inside) == 1 else float("nan")


def _phase_bounds(mode, value):
    """First and last grid index of the first run of `mode == value`."""
    idx = np.flatnonzero(mode == value)
    if len(idx) == 0:
        return None
    first = idx[0]
    last = first
    while last + 1 < len(mode) and mode[last + 1] == value:
        last += 1
    return first, last


def reduce_run(real, mode):
    """What the study keeps of one run, measured from the traces alone."""
    times = np.arange(len(mode)) * H
    w, phi, energy = real[:, 0], real[:, 1], real[:, 2]
    result = {"mode0": int(mode[0]),
              "transitions": [(int(i), int(mode[i])) for i in range(1, len(mode))
                              if mode[i] != mode[i - 1]],
              "w_end": float(w[-1]), "phi_min": float(phi.min()),
              "energy_loss_end": float(energy[-1]),
              "digest": hashlib.sha256(real.tobytes() + mode.tobytes()).hexdigest()}
    # Caught: where the lowering phase ends (w = 0 again), fitted through points of the phase.
    back = _phase_bounds(mode, -1)
    result["t_stop"] = float("nan")
    if back is not None and back[0] == 0 and back[1] + 1 < len(mode) and back[1] >= 2:
        a, b = back
        pts = np.array([a + 1, (a + 1 + b) // 2, b]) if b - a >= 3 else np.arange(b - 2, b + 1)
        result["t_stop"] = _fit_root(times[pts], w[pts], times[b], times[b + 1])
    # Lifted: where the lifting phase starts, fitted through its first points.
    fwd = _phase_bounds(mode, 1)
    result["t_break"] = float("nan")
    if fwd is not None and fwd[1] - fwd[0] >= 2:
        a, b = fwd
        pts = np.array([a, a + min(20, (b - a) // 2), a + min(40, b - a)])
        result["t_break"] = _fit_root(times[pts], w[pts], times[a - 1], times[a])
    return result


def run_chunk(points, fmu_bytes, fmu_key):
    """A task: the runs of a chunk of parameter points on this process's FMU instance."""
    inst = _instance(fmu_bytes, fmu_key)
    out = []
    with inst.lock:
        for index, load, eta in points:
            real, mode = inst.simulate(load, eta)
            r = reduce_run(real, mode)
            r.update(index=index, load=load, eta=eta, pid=os.getpid(), instance=inst.id,
                     run_on_instance=inst.runs)
            out.append(r)
    return out


# ----------------------------------------------------------------------------- client side

def chunks(points, size):
    return [points[i:i + size] for i in range(0, len(points), size)]


def progress_bar(total, desc):
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, unit="run", mininterval=0.5, file=sys.stderr,
                disable=None if sys.stderr.isatty() else False)


def run_serial(points, fmu_bytes, key, chunk):
    results = []
    with progress_bar(len(points), "serial") as bar:
        for c in chunks(points, chunk):
            results += run_chunk(c, fmu_bytes, key)
            bar.update(len(c))
    return sorted(results, key=lambda r: r["index"])


def run_dask(client, points, fmu_bytes, key, chunk):
    from distributed import as_completed
    # The FMU travels to every worker once; tasks refer to it.
    fmu_future = client.scatter(fmu_bytes, broadcast=True, hash=False)
    futures = client.map(run_chunk, chunks(points, chunk), fmu_bytes=fmu_future, fmu_key=key,
                         pure=False)
    results = []
    with progress_bar(len(points), "dask") as bar:
        for fut in as_completed(futures):
            part = fut.result()
            results += part
            bar.update(len(part))
    return sorted(results, key=lambda r: r["index"])


def start_cluster(args):
    from distributed import Client, LocalCluster
    if args.scheduler:
        client = Client(args.scheduler)
        return client, None
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


# ----------------------------------------------------------------------------- closed form

def closed_form(load, eta):
    """The analytic answer for one parameter point (see the module docstring)."""
    s = load / RATIO                        # the load referred to flange a
    backdriven = s > BF
    beta_back = RATIO / (eta * (J_B + RATIO**2 * J_A / eta))
    t_stop = 2.0 * eta * (s - BF) / K if backdriven else 0.0
    t_static = (BF + s) / (eta * K)
    t_break = max(t_stop, t_static)
    drop = beta_back * K * t_stop**3 / 12.0 if backdriven else 0.0
    d_f = J_B + RATIO**2 * J_A * eta
    alpha_f, beta_f = (-load - RATIO * BF) / d_f, RATIO * eta / d_f
    w_end = (alpha_f * (STOP - t_break) + beta_f * K * (STOP**2 - t_break**2) / 2.0
             if t_break < STOP else 0.0)
    return {"backdriven": backdriven, "t_stop": t_stop if backdriven else float("nan"),
            "t_static": t_static, "t_break": t_break, "drop": drop, "w_end": w_end,
            "holds": t_break > t_stop if backdriven else True}


def expected_modes(c, n):
    """The mode at each communication point, or None where a switch lies within 1e-9 s."""
    modes = []
    for i in range(n + 1):
        t = i * H
        switches = [c["t_break"]] + ([c["t_stop"]] if c["backdriven"] else [])
        if any(abs(t - s) < 1e-9 for s in switches):
            modes.append(None)
        elif c["backdriven"] and t < c["t_stop"]:
            modes.append(-1)
        elif t < c["t_break"]:
            modes.append(0)
        else:
            modes.append(1)
    return modes


def mode_trace(r, n):
    trace = np.full(n + 1, r["mode0"], dtype=int)
    for i, m in r["transitions"]:
        trace[i:] = m
    return trace


def physics_errors(results):
    """Compare every run with the closed form; returns (list of failures, largest deviations)."""
    n = int(round(STOP / H))
    failures, worst = [], {"t_stop": 0.0, "t_break": 0.0, "drop": 0.0, "w_end": 0.0}
    counts = {"self-locking": 0, "caught and held": 0, "lowering straight to lifting": 0}
    for r in results:
        c = closed_form(r["load"], r["eta"])
        tag = f"L = {r['load']:.4g} N.m, eta = {r['eta']:.4g}"
        if abs(r["load"] / RATIO - BF) < 1e-9 or (
                c["backdriven"] and abs(c["t_stop"] - c["t_static"]) < 1e-9):
            continue  # on a boundary: either answer is right
        counts["self-locking" if not c["backdriven"] else
               "caught and held" if c["holds"] else "lowering straight to lifting"] += 1
        # 1. The mode at every communication point.
        got = mode_trace(r, n)
        bad = [i for i, m in enumerate(expected_modes(c, n)) if m is not None and got[i] != m]
        if bad:
            failures.append(f"{tag}: mode {got[bad[0]]} at t = {bad[0] * H:g} s, expected "
                            f"{expected_modes(c, n)[bad[0]]}")
            continue
        # 2. The instants, measured from the speed trace, to 1e-10 s (the step is 1e-3 s).
        if c["backdriven"]:
            err = abs(r["t_stop"] - c["t_stop"])
            worst["t_stop"] = max(worst["t_stop"], err)
            if not err < 1e-10:
                failures.append(f"{tag}: caught at {r['t_stop']!r} s, closed form {c['t_stop']!r}")
        else:
            if r["phi_min"] != 0.0 or r["transitions"][0][1] != 1:
                failures.append(f"{tag}: self-locking, but the drum turned back")
        if c["t_break"] < STOP - 3 * H:
            err = abs(r["t_break"] - c["t_break"])
            worst["t_break"] = max(worst["t_break"], err)
            if not err < 1e-10:
                failures.append(f"{tag}: lifted at {r['t_break']!r} s, closed form {c['t_break']!r}")
            # The motor torque at that instant is the static friction, where the gear held.
            if c["holds"] and not abs(K * r["t_break"] * r["eta"] - (BF + r["load"] / RATIO)) < 1e-7:
                failures.append(f"{tag}: lifted at motor torque {K * r['t_break']}, static "
                                f"friction says {(BF + r['load'] / RATIO) / r['eta']}")
            err = abs(r["w_end"] - c["w_end"]) / max(1.0, abs(c["w_end"]))
            worst["w_end"] = max(worst["w_end"], err)
            if not err < 1e-10:
                failures.append(f"{tag}: final speed {r['w_end']!r}, closed form {c['w_end']!r}")
        # 3. How far the drum turned back before it was held.
        if c["backdriven"] and c["holds"]:
            # (relative, but a drop near the self-locking boundary is judged against 1e-3 rad)
            err = abs(-r["phi_min"] - c["drop"]) / max(c["drop"], 1e-3)
            worst["drop"] = max(worst["drop"], err)
            if not err < 1e-9:
                failures.append(f"{tag}: drum turned back {-r['phi_min']!r} rad, closed form "
                                f"{c['drop']!r}")
        # 4. Losses dissipate.
        if r["energy_loss_end"] < 0:
            failures.append(f"{tag}: negative energy loss {r['energy_loss_end']}")
    return failures, worst, counts


def compare(serial, parallel):
    """Bit-identical results, run by run; returns the list of differences."""
    keys = ["mode0", "transitions", "w_end", "phi_min", "energy_loss_end", "digest",
            "t_stop", "t_break"]
    diffs = []
    if len(serial) != len(parallel):
        return [f"{len(serial)} serial results, {len(parallel)} from the cluster"]
    for a, b in zip(serial, parallel):
        for k in keys:
            x, y = a[k], b[k]
            same = (x == y) or (isinstance(x, float) and np.isnan(x) and np.isnan(y))
            if not same:
                diffs.append(f"point {a['index']} ({k}): serial {x!r}, cluster {y!r}")
    return diffs


# ----------------------------------------------------------------------------- output

def plot(results, loads, etas, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import LogNorm

    shape = (len(etas), len(loads))
    by = lambda k: np.array([r[k] for r in results]).reshape(shape)
    t_break, t_stop = by("t_break"), by("t_stop")
    torque = K * t_break
    drop_deg = np.degrees(-by("phi_min"))
    held = np.where(np.isnan(t_stop), t_break, t_break - t_stop)
    held[np.abs(held) < 1e-9] = 0.0
    ll, ee = np.meshgrid(loads, etas)
    static = (BF + ll / RATIO) / ee
    eta_line = np.linspace(1 / np.sqrt(2) + 1e-3, etas[-1], 200)
    through = RATIO * BF * (2 * eta_line**2 + 1) / (2 * eta_line**2 - 1)

    fig, ax = plt.subplots(1, 3, figsize=(16, 5.2), sharey=True)
    drop = np.ma.masked_less_equal(drop_deg, 0.0)          # self-locking: never turned back
    held = np.ma.masked_where(~np.isnan(t_stop) & (held == 0.0), held)  # lowered into lifting
    panels = [
        (torque, "motor torque at lift-off / N.m", "viridis", None),
        (drop, "drum turned back before held / deg", "magma",
         LogNorm(vmin=max(drop.min(), 1e-3), vmax=drop.max())),
        (held, "time held (stuck) before lift-off / s", "cividis", None),
    ]
    for a, (z, label, cmap, norm) in zip(ax, panels):
        a.set_facecolor("0.85")                               # masked points
        m = a.pcolormesh(loads, etas, z, shading="nearest", cmap=cmap, norm=norm)
        fig.colorbar(m, ax=a, label=label)
        a.axvline(RATIO * BF, color="w", ls="--", lw=1)
        a.plot(through[through <= loads[-1]], eta_line[through <= loads[-1]], "r-", lw=1.5)
        a.set_xlabel("load torque on the drum L / N.m")
        a.set_xlim(loads[0], loads[-1])
    ax[1].text(0.5, 0.62, "self-locking:\nholds at zero\nmotor torque", fontsize=8,
               rotation=90)
    ax[2].text(11.0, 0.93, "never held", fontsize=8, color="k")
    cs = ax[0].contour(loads, etas, static, levels=[0.5, 1, 2, 3, 4, 5], colors="w",
                       linewidths=0.8, linestyles=":")
    ax[0].clabel(cs, fmt="%g", fontsize=8)
    ax[0].set_ylabel("mesh efficiency eta")
    ax[0].set_title("lift-off torque; dotted: static friction (tau_bf + L/r)/eta", fontsize=9)
    ax[1].set_title("white dashed: L = r tau_bf, self-locking to its left", fontsize=9)
    ax[2].set_title("red: caught above the lift-off torque (lowers straight into lifting)",
                    fontsize=9)
    fig.suptitle(f"LossyGear hoist: ratio {RATIO:g}, tau_bf = {BF:g} N.m, motor torque ramp "
                 f"{K:g} N.m/s, {len(results)} runs (FMPy on Dask distributed)")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def load_fmu(fmu_dir):
    path = os.path.join(fmu_dir, f"{MODEL}.fmu")
    with open(path, "rb") as f:
        data = f.read()
    zipfile.ZipFile(path).testzip()
    return data, hashlib.sha256(data).hexdigest()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("fmu_dir", nargs="?", default=os.path.join(HERE, "../../target/fmu"))
    p.add_argument("--check", action="store_true", help="small sweep, assert, write nothing")
    p.add_argument("--scheduler", help="address of a running Dask scheduler, tcp://host:port")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes")
    p.add_argument("--chunk", type=int, default=0, help="runs per task (default: 50, fewer "
                   "if that leaves less than 4 tasks per worker)")
    p.add_argument("--no-serial", action="store_true", help="skip the serial run (full sweep)")
    args = p.parse_args(argv[1:])
    if args.check and args.no_serial:
        p.error("--check compares with the serial run")
    if not args.scheduler and args.workers < 2 and args.check:
        p.error("--check needs at least 2 worker processes")

    start = time.perf_counter()
    cpu0 = time.process_time()
    fmu_bytes, key = load_fmu(args.fmu_dir)
    loads, etas = (CHECK_LOADS, CHECK_ETAS) if args.check else (FULL_LOADS, FULL_ETAS)
    points = grid(loads, etas)

    t0 = time.perf_counter()
    client, cluster = start_cluster(args)
    t_cluster_start = time.perf_counter() - t0
    try:
        n_workers = len(client.scheduler_info()["workers"])
        # About a second of work per task, and at least 4 tasks per worker to balance the load.
        chunk = args.chunk or max(1, min(50, -(-len(points) // (4 * max(1, n_workers)))))
        print(f"sweep: {len(points)} runs of {MODEL} ({int(round(STOP / H))} steps of "
              f"{H * 1e3:g} ms each), {len(points) // chunk + (len(points) % chunk > 0)} tasks "
              f"of {chunk}, on {n_workers} workers "
              f"({args.scheduler or 'LocalCluster, processes'}; started in "
              f"{t_cluster_start:.2f} s)")
        t0 = time.perf_counter()
        parallel = run_dask(client, points, fmu_bytes, key, chunk)
        t_dask = time.perf_counter() - t0
        worker_pids = set(client.run(os.getpid).values())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    serial, t_serial = None, None
    if not args.no_serial:
        t0 = time.perf_counter()
        serial = run_serial(points, fmu_bytes, key, chunk)
        t_serial = time.perf_counter() - t0
        for inst in vars(_LOCAL).pop("_sweep_fmu_instances", {}).values():
            inst.close()

    # What ran where.
    pids = {r["pid"] for r in parallel}
    instances = {r["instance"] for r in parallel}
    per_pid = {pid: sum(r["pid"] == pid for r in parallel) for pid in sorted(pids)}
    print(f"sweep: dask {t_dask:.2f} s ({len(points) / t_dask:.0f} runs/s) on {len(pids)} "
          f"processes {per_pid}, {len(instances)} FMU instances"
          + (f"; serial {t_serial:.2f} s ({len(points) / t_serial:.0f} runs/s), speed-up "
             f"{t_serial / t_dask:.2f}" if t_serial else ""))

    failures = []
    if os.getpid() in pids:
        failures.append("the cluster ran tasks in this process")
    if len(pids) < 2:
        failures.append(f"all runs went to {len(pids)} process(es): {sorted(pids)}")
    if len(instances) != len(pids):
        failures.append(f"{len(instances)} FMU instances in {len(pids)} processes")
    if not pids <= worker_pids:
        failures.append(f"results from pids {sorted(pids - worker_pids)} that are no workers")
    if serial is not None:
        diffs = compare(serial, parallel)
        if diffs:
            failures.append(f"{len(diffs)} differences between serial and cluster runs, "
                            f"first: {diffs[:3]}")
        else:
            print(f"sweep: serial and cluster results bit-identical ({len(points)} runs)")
    phys, worst, counts = physics_errors(parallel)
    failures += phys
    print(f"sweep: closed form, largest deviations: caught at {worst['t_stop']:.1e} s, lifted at "
          f"{worst['t_break']:.1e} s, drum turned back {worst['drop']:.1e} (relative), final "
          f"speed {worst['w_end']:.1e} (relative); {counts}")
    if args.check and min(counts.values()) == 0:
        failures.append(f"the small sweep misses a regime: {counts}")

    if args.check:
        # Exercise the plot, but leave the committed figure alone.
        tmp = tempfile.mkdtemp(prefix="sweep-check-")
        try:
            plot(parallel, loads, etas, os.path.join(tmp, "sweep.png"))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    else:
        plot(parallel, loads, etas, os.path.join(HERE, "sweep.png"))
        summary = {"runs": len(points), "steps_per_run": int(round(STOP / H)),
                   "workers": len(pids), "tasks": -(-len(points) // chunk),
                   "cluster": args.scheduler or f"LocalCluster({args.workers} processes)",
                   "cluster_start_s": round(t_cluster_start, 2),
                   "dask_s": round(t_dask, 2),
                   "serial_s": round(t_serial, 2) if t_serial else None,
                   "speedup": round(t_serial / t_dask, 2) if t_serial else None,
                   "bit_identical": serial is not None and not compare(serial, parallel),
                   "largest_deviation_from_closed_form": worst, "regimes": counts}
        with open(os.path.join(HERE, "results.json"), "w") as f:
            json.dump(summary, f, indent=2)
            f.write("\n")

    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    print(f"sweep: {wall:.1f} s wall, {cpu:.1f} s CPU in this process")
    if failures:
        for f in failures[:20]:
            print("FAILED:", f, file=sys.stderr)
        if len(failures) > 20:
            print(f"... and {len(failures) - 20} more", file=sys.stderr)
        return 1
    if args.check:
        print("sweep: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
