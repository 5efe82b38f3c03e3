"""Does CVode run faster on the FMU's Jacobian than on its own difference quotients?

FMPy's Model Exchange importer (simulate_fmu(fmi_type="ModelExchange", solver="CVode")) never
calls CVodeSetJacFn, so CVode builds df/dx from difference quotients (one right-hand side per
state, each an fmi2SetContinuousStates + fmi2GetDerivatives from Python). CVode-based importers
that use the FMU's Jacobian instead call fmi2GetDirectionalDerivative once per state with a unit
seed. This script runs every reference scenario (validate.scenarios_of) of each FMU both ways,
exactly as the judged "FMPy ME" importer does (fmpy_runners.fmpy_me: held inputs with
_HeldInput, record_events, me_tolerance), the two runs differing only in the Jacobian source,
and prints a Markdown table: wall time (best of REPEATS, the two sources taking turns), the
Jacobian evaluations (CVode's counter, summed over FMPy's solver resets; for the FMU source also
the calls of our callback), the largest deviation between the two runs' outputs at the
communication points (relative to each output's largest magnitude), and, from the best run, the
right-hand-side calls (the difference quotients' among them) and the time spent in FMPy's
right-hand side (f) and in the Jacobian callback. Everything else is FMPy's loop (root function,
inputs, events, recording), the same in both runs.

Usage: FMU_DIR=target/fmu .venv/bin/python xtask/python/fmpy_jacobian.py [NAMES...]
  NAMES: FMU names (Gear or Gear.fmu); default every FMI 2.0 .fmu at FMU_DIR's top level.
  REPEATS (environment, default 3): runs per source and scenario, the best one reported.
"""
import ctypes
import os
import sys
import tempfile
import time

import fmpy.simulation as fmpy_simulation
import fmpy.sundials as fmpy_sundials
import numpy as np
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.sundials import NV_DATA_S, N_Vector, SUNMatrix, sunrealtype
from fmpy.sundials.libraries import sundials_cvode, sundials_sunmatrixdense

from fmpy_runners import _HeldInput, me_tolerance
from scenario import Scenario, at_communication_points
from validate import scenarios_of

HERE = os.path.dirname(os.path.abspath(__file__))
REF_ROOT = os.path.join(HERE, "..", "..", "reference-fmus")
REPEATS = int(os.environ.get("REPEATS", "3"))

# FMPy 0.3.32 has these SUNDIALS declarations only as comments (sundials/cvode_ls.py,
# sunmatrix_dense.py); the functions are exported by the libraries FMPy loads, so they are
# declared here on FMPy's own library handles, with the prototypes from those comments.
# typedef int (*CVLsJacFn)(sunrealtype t, N_Vector y, N_Vector fy, SUNMatrix Jac,
#                          void* user_data, N_Vector tmp1, N_Vector tmp2, N_Vector tmp3);
CVLsJacFn = ctypes.CFUNCTYPE(ctypes.c_int, sunrealtype, N_Vector, N_Vector, SUNMatrix,
                             ctypes.c_void_p, N_Vector, N_Vector, N_Vector)
CVodeSetJacFn = sundials_cvode.CVodeSetJacFn
CVodeSetJacFn.argtypes = [ctypes.c_void_p, CVLsJacFn]
CVodeSetJacFn.restype = ctypes.c_int
CVodeGetNumJacEvals = sundials_cvode.CVodeGetNumJacEvals
CVodeGetNumJacEvals.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_long)]
CVodeGetNumJacEvals.restype = ctypes.c_int
# sunrealtype* SUNDenseMatrix_Column(SUNMatrix A, sunindextype j): column j (column-major)
SUNDenseMatrix_Column = sundials_sunmatrixdense.SUNDenseMatrix_Column
SUNDenseMatrix_Column.argtypes = [SUNMatrix, ctypes.c_int64]
SUNDenseMatrix_Column.restype = ctypes.POINTER(sunrealtype)


class _JacobianSolver(fmpy_sundials.CVodeSolver):
    """FMPy 0.3.32's CVode solver, unchanged, plus (with `use_fmu`) CVodeSetJacFn with a
    callback that fills df/dx from fmi2GetDirectionalDerivative, and counters. The run sets the
    class attributes `use_fmu` and `derivative_vrs`/`state_vrs` before simulate_fmu; the last
    instance is kept in `last` so that its counters can be read after the run."""

    use_fmu = False
    derivative_vrs = state_vrs = None
    last = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)  # FMPy's own setup: CVodeInit, dense solver, ...
        _JacobianSolver.last = self
        self.rhs_calls = self.jac_calls = 0
        self.rhs_time = self.jac_time = 0.0  # seconds spent in f and in jac
        self.jac_evals_before_reset = 0  # CVode's counter restarts at every CVodeReInit
        self.problems = []
        # FMPy passes the FMU's bound methods (simulation.py, solver_args): set_x is
        # FMU2Model.setContinuousStates, so its __self__ is FMPy's FMU2Model instance.
        self.fmu = self.set_x.__self__
        n = self.nx
        self.unknowns = (ctypes.c_uint * n)(*self.derivative_vrs)  # der(x), in state order
        self.knowns = [(ctypes.c_uint * 1)(vr) for vr in self.state_vrs]
        self.seed = (ctypes.c_double * 1)(1.0)
        if self.use_fmu:
            self.jac_ = CVLsJacFn(self.jac)  # a member, so that it is not garbage collected
            fmpy_sundials._assert_cv_success(CVodeSetJacFn(self.cvode_mem, self.jac_))

    def f(self, t, y, ydot, user_data):
        self.rhs_calls += 1
        t0 = time.perf_counter()
        status = super().f(t, y, ydot, user_data)
        self.rhs_time += time.perf_counter() - t0
        return status

    def jac(self, t, y, fy, J, user_data, tmp1, tmp2, tmp3):
        """df/dx at (t, y) into the dense matrix J, column j = d der(x) / d x_j."""
        self.jac_calls += 1
        t0 = time.perf_counter()
        try:
            self.set_time(t)  # as FMPy's f does: time, then the states CVode passes in
            self.set_x(NV_DATA_S(y), self.nx)
            for j in range(self.nx):
                # writes the n partial derivatives straight into column j of J
                self.fmu.fmi2GetDirectionalDerivative(
                    self.fmu.component, self.unknowns, self.nx, self.knowns[j], 1, self.seed,
                    SUNDenseMatrix_Column(J, j))
            self.jac_time += time.perf_counter() - t0
            return 0
        except Exception as e:  # an exception cannot cross the C callback
            self.problems.append(f"t = {t}: {e}")
            return -1  # unrecoverable: CVode stops with an error

    def jac_evals(self):
        count = ctypes.c_long()
        fmpy_sundials._assert_cv_success(CVodeGetNumJacEvals(self.cvode_mem, ctypes.byref(count)))
        return self.jac_evals_before_reset + count.value

    def reset(self, time):
        self.jac_evals_before_reset = self.jac_evals()
        return super().reset(time)


def run(unzipped, md, sc, use_fmu):
    """One run of `sc` as fmpy_runners.fmpy_me runs it, with _JacobianSolver in place of FMPy's
    CVodeSolver. Returns (wall seconds, outputs at the communication points, counters)."""
    _JacobianSolver.use_fmu = use_fmu
    _JacobianSolver.derivative_vrs = [d.variable.valueReference for d in md.derivatives]
    _JacobianSolver.state_vrs = [d.variable.derivative.valueReference for d in md.derivatives]
    start_values = sc.parameter_values(md)
    originals = fmpy_simulation.Input, fmpy_sundials.CVodeSolver
    fmpy_simulation.Input, fmpy_sundials.CVodeSolver = _HeldInput, _JacobianSolver
    try:
        t0 = time.perf_counter()
        r = simulate_fmu(unzipped, fmi_type="ModelExchange", solver="CVode", start_time=sc.start,
                         stop_time=sc.stop, output_interval=sc.step,
                         relative_tolerance=me_tolerance(sc), input=sc.held_inputs(),
                         output=sc.outputs, start_values=start_values, record_events=True,
                         model_description=md)
        wall = time.perf_counter() - t0
    finally:
        fmpy_simulation.Input, fmpy_sundials.CVodeSolver = originals
    s = _JacobianSolver.last
    _JacobianSolver.last = None
    if s.problems:
        raise RuntimeError("Jacobian callback: " + "; ".join(s.problems[:3]))
    _, out = at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})
    counts = dict(jac_evals=s.jac_evals(), jac_calls=s.jac_calls, rhs=s.rhs_calls,
                  rhs_ms=s.rhs_time * 1e3, jac_ms=s.jac_time * 1e3)
    del s  # CVodeFree
    return wall, out, counts


def deviation(a, b):
    """The largest |a - b| of any output, relative to that output's largest magnitude."""
    worst, name = 0.0, ""
    for n in a:
        x, y = np.asarray(a[n], float), np.asarray(b[n], float)
        scale = max(np.abs(x).max(), np.abs(y).max())
        d = np.abs(x - y).max() / scale if scale > 0 else np.abs(x - y).max()
        if d >= worst:
            worst, name = d, n
    return worst, name


def compare(fmu_path, work):
    """Table rows for every reference scenario of one FMU."""
    md = read_model_description(fmu_path)
    model = md.modelExchange.modelIdentifier
    unzipped = extract(fmu_path, unzipdir=tempfile.mkdtemp(dir=work))  # once, not in the timing
    rows = []
    for directory in scenarios_of(REF_ROOT, model):
        sc = Scenario(directory, model)
        name = os.path.relpath(directory, os.path.join(REF_ROOT, model))
        name = "reference" if name == "." else name
        best = {True: float("inf"), False: float("inf")}
        result = {}
        try:
            for _ in range(REPEATS):
                for use_fmu in (True, False):  # the two sources take turns
                    wall, out, counts = run(unzipped, md, sc, use_fmu)
                    if wall < best[use_fmu]:  # the counters and times of the best run
                        best[use_fmu] = wall
                        result[use_fmu] = (out, counts)
        except Exception as e:
            rows.append(f"| {model} | {name} | {me_tolerance(sc):.0e} | failed | | | {e} | | | |")
            print(rows[-1], flush=True)
            continue
        fmu_counts, dq_counts = result[True][1], result[False][1]
        if fmu_counts["jac_calls"] == 0:
            raise RuntimeError(f"{model} {name}: the FMU's Jacobian was never called")
        if dq_counts["jac_calls"] != 0:
            raise RuntimeError(f"{model} {name}: the difference run called the callback")
        d, worst = deviation(result[True][0], result[False][0])
        for use_fmu, source in ((True, "FMU"), (False, "differences")):
            c = result[use_fmu][1]
            jacs = f"{c['jac_evals']}" + (f" ({c['jac_calls']} calls)" if use_fmu else "")
            between = ("identical" if d == 0 else f"{d:.1e} ({worst})") if use_fmu else ""
            jac_ms = f"{c['jac_ms']:.0f}" if use_fmu else "(in rhs)"
            rows.append(f"| {model} | {name} | {me_tolerance(sc):.0e} | {source} | "
                        f"{best[use_fmu] * 1e3:.0f} | {jacs} | {between} | {c['rhs']} | "
                        f"{c['rhs_ms']:.0f} | {jac_ms} |")
            print(rows[-1], flush=True)
    return rows


def main():
    fmu_dir = os.environ["FMU_DIR"]
    names = sys.argv[1:] or sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu"))
    names = [n if n.endswith(".fmu") else n + ".fmu" for n in names]
    header = ("| FMU | scenario | rtol | Jacobian (FMU / differences) | wall (ms) | Jacobians "
              "| between the two | rhs calls | in rhs (ms) | in jac (ms) |\n"
              "|---|---|---|---|---:|---:|---|---:|---:|---:|")
    print(f"best of {REPEATS}, rtol = fmpy_runners.me_tolerance\n\n{header}", flush=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for n in names:
            path = os.path.join(fmu_dir, n)
            if read_model_description(path).fmiVersion != "2.0":
                continue
            rows += compare(path, work)
    print("\n" + header + "\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
