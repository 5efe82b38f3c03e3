#!/usr/bin/env python3
"""The drivetrain of drivetrain.py integrated as FMI 2.0 Model Exchange, in one solver:

    engine torque -> LossyGear -> VariableRatioCoupling -> CVT -> road load

Same FMUs, same parameters, same sources and sheave controller (imported from drivetrain.py),
but no communication step. The continuous states of the three FMUs (LossyGear: phi_b, w_b,
energy_loss; VariableRatioCoupling: phi, energy_loss; CVT: phi1, w1, phi2, s2, v2) and the
master's own (the sheave controller's integral, and the work of the engine, the road load and
the sheave actuators as integrals of their power) are one ODE, integrated by SciPy's RK45
(Dormand-Prince 5(4), the family of the FMUs' own Tsit45) with error control over all of them.

Connections. They are evaluated at every right-hand-side call, in the order the FMUs'
ModelStructure allows. The speeds that the LossyGear and the CVT output depend on their states
only (w_a, w_b on w_b; w1, w2, v1, s2, v2, ds1_ds2 on w1, s2, v2), so they are read first and
given to the coupling; the coupling's torques depend directly on those speeds (and its state
phi); they go to the LossyGear and the CVT, and then every FMU gives its derivatives. The
coupling is the only FMU with direct feedthrough on a connection, so no algebraic loop remains:
the same restructuring drivetrain.py's master relies on (a coupling without inertia between two
inertial FMUs).

Events. After every accepted step the event indicators of all FMUs are compared with their
signs at the step's start. A crossing is located by bisection on the step's dense output, to
1e-13 s, and handled at the end of the bracket, where the indicator has crossed: fmi2EnterEventMode
on every FMU, then rounds of fmi2NewDiscreteStates on every FMU, the connections evaluated again
before each round (one FMU's update can change another's inputs), until none needs another
round; the states of each FMU that reports valuesOfContinuousStatesChanged are read back;
fmi2EnterContinuousTimeMode; the solver restarts there. An indicator at exactly zero has no
side: when it leaves zero (the gear's speed right after it breaks away, the coupling's power
flow while nothing turns) the FMUs' event iteration runs at that step's end, and the solver goes
on unless something changed. The master's inputs have kinks (end of the engine ramp, start and
end of the sheave shift and of the ratio ramp): the integration restarts there as well.

Energy. The balance of drivetrain.py: the sources' work = the stored energy + what the FMUs
dissipate. With every source's work integrated with the states, what remains is the solver's
error, which falls with its tolerance, instead of the co-simulation's coupling error.

    python model_exchange.py <dir with the .fmu files> [--check] [--readme] [--solver RK45|DOP853]

writes model_exchange.png, model_exchange_results.json and the Model Exchange table in
README.md next to this file; --check also asserts the numbers. With --check alone (the test
command, through cargo xtask example) the plot and the results go to target/examples/drivetrain/
instead and README.md is left alone: SciPy's solver runs on NumPy, whose vectorized arithmetic
differs in the last bits from one processor to another, so the figures near the rounding level
(the rtol 1e-10 run, the deviations from it) are this machine's, and a test run leaves the tree
as it was. --check --readme asserts and rewrites the files next to this one.
"""
import ctypes
import json
import os
import shutil
import sys
import time

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Model, fmi2Discard
from scipy.integrate import DOP853, RK45

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import drivetrain as cs  # noqa: E402  (the system, its sources, and the co-simulation master)

STOP = cs.STOP
SOLVERS = {"RK45": RK45, "DOP853": DOP853}
TOLERANCES = [1e-4, 1e-6, 1e-8, 1e-10]   # relative tolerances of the Model Exchange solver
ATOL_PER_RTOL = 1e-3                      # absolute tolerance, as the FMUs' own integrator has
CS_STEP = cs.MAIN_STEP                    # the co-simulation compared with (1 ms), and its
CS_HALF = cs.MAIN_STEP / 2                # half step, for the estimate of its error
GRID = cs.MAIN_STEP                       # the ME solution is recorded on the CS grid
# Kinks of the master's inputs: the end of the engine ramp (drivetrain.engine_torque), the start
# and the end of the sheave shift (SHIFT) and of the coupling's ratio ramp (ratio_command).
KINKS = [0.2, cs.SHIFT[0], cs.SHIFT[1], 2.5, 2.7]
BISECTION = 1e-13                         # s: width of the bracket of a located crossing
MAX_EVENT_ROUNDS = 20
MASTER_STATES = ["integral", "work_engine", "work_road", "work_actuators"]
# Signals compared with the co-simulation.
COMPARED = ["w_a", "w_b", "w1", "w2", "s2", "work_engine", "work_road", "stored", "dissipated"]
RESULTS = "model_exchange_results.json"


class Component:
    """One Model Exchange instance, driven by name, owning a slice of the joined state vector."""

    def __init__(self, fmu_dir, model, parameters, rtol):
        path = os.path.join(fmu_dir, f"{model}.fmu")
        self.name = model
        self.md = read_model_description(path)
        self.dir = extract(path)
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.types = {v.name: v.type for v in self.md.modelVariables}
        self.fmu = FMU2Model(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.modelExchange.modelIdentifier,
                             instanceName=model)
        self.nx = self.md.numberOfContinuousStates
        self.nz = self.md.numberOfEventIndicators
        # The states in the FMU's order: the variables the ModelStructure's Derivatives derive.
        self.state_names = [d.variable.derivative.name for d in self.md.derivatives]
        self.x, self.dx, self.z = np.zeros(self.nx), np.zeros(self.nx), np.zeros(max(self.nz, 1))
        self.px, self.pdx, self.pz = (a.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
                                      for a in (self.x, self.dx, self.z))
        self.start = self.stop = 0
        self.fmu.instantiate()
        self.fmu.setupExperiment(tolerance=rtol, startTime=0.0, stopTime=STOP)
        for name, value in parameters.items():
            if self.types[name] == "Integer":
                self.fmu.setInteger([self.vr[name]], [int(value)])
            else:
                self.fmu.setReal([self.vr[name]], [float(value)])
        self.fmu.enterInitializationMode()

    def _arrays(self, names):
        vrs = (ctypes.c_uint * len(names))(*(self.vr[n] for n in names))
        return vrs, (ctypes.c_double * len(names))()

    def setter(self, *names):
        """fmi2SetReal of these variables, with its arrays built once."""
        vrs, values = self._arrays(names)
        call, c, n = self.fmu.fmi2SetReal, self.fmu.component, len(names)

        def set_values(*xs):
            values[:] = xs
            call(c, vrs, n, values)
        return set_values

    def getter(self, *names):
        """fmi2GetReal of these variables, with its arrays built once."""
        vrs, values = self._arrays(names)
        call, c, n = self.fmu.fmi2GetReal, self.fmu.component, len(names)

        def get_values():
            call(c, vrs, n, values)
            return values[:]
        return get_values

    def get(self, *names):
        return self.fmu.getReal([self.vr[n] for n in names])

    def get_integer(self, name):
        return self.fmu.getInteger([self.vr[name]])[0]

    def load(self, t, y):
        self.fmu.setTime(t)
        self.x[:] = y[self.start:self.stop]
        self.fmu.setContinuousStates(self.px, self.nx)

    def states(self):
        self.fmu.getContinuousStates(self.px, self.nx)
        return self.x.copy()

    def derivatives(self):
        self.fmu.getDerivatives(self.pdx, self.nx)
        return self.dx

    def indicators(self):
        if self.nz:
            self.fmu.getEventIndicators(self.pz, self.nz)
        return self.z[:self.nz].copy()

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


class System:
    """The three FMUs, their connections, and the master's sources and states."""

    def __init__(self, fmu_dir, rtol):
        self.gear = Component(fmu_dir, "LossyGear", cs.GEAR, rtol)
        self.coupling = Component(fmu_dir, "VariableRatioCoupling", cs.COUPLING, rtol)
        self.cvt = Component(fmu_dir, "CVT", cs.CVT, rtol)
        self.fmus = [self.gear, self.coupling, self.cvt]
        n = 0
        for f in self.fmus:
            f.start, f.stop = n, n + f.nx
            n += f.nx
        self.master = n                          # index of the master's first state
        self.n = n + len(MASTER_STATES)
        self.j1, self.j2, self.m1, self.m2 = self.cvt.get("J1", "J2", "m1", "m2")
        self.gear_speeds = self.gear.getter("w_a", "w_b")
        self.cvt_outputs = self.cvt.getter("w1", "w2", "v1", "s2", "v2", "ds1_ds2")
        self.coupling_inputs = self.coupling.setter("w_B", "w_F", "r")
        self.coupling_torques = self.coupling.getter("tau_B", "tau_F")
        self.gear_inputs = self.gear.setter("tau_a", "tau_b")
        self.cvt_inputs = self.cvt.setter("tau_1", "tau_2", "F_1", "F_2")
        self.gear_energy = self.gear.getter("energy_loss")
        self.coupling_energy = self.coupling.getter("phi", "energy_loss")
        self.cvt_energy = self.cvt.getter("ratio", "energy_impact")
        self.rhs_calls = 0
        self.refused = []   # derivative evaluations an FMU refused (see rhs)

    def connect(self, t, integral):
        """Outputs to inputs at time t, in the order of drivetrain.py's master; returns the
        master's signals."""
        w_a, w_b = self.gear_speeds()
        w1, w2, v1, s2, v2, ds1_ds2 = self.cvt_outputs()
        self.coupling_inputs(w_b, w1, cs.ratio_command(t))
        tau_b, tau_f = self.coupling_torques()
        tau_e, tau_road = cs.engine_torque(t), cs.road_torque(w2)
        kp_s, kd_s, ki_s = cs.GAINS
        err = s2 - cs.s2_reference(t)
        f_2 = -cs.CLAMP * ds1_ds2 - kp_s * err - kd_s * v2 - ki_s * integral
        # Torques on the shafts are minus the torques the shafts apply to the coupling.
        self.gear_inputs(tau_e, -tau_b)
        self.cvt_inputs(-tau_f, tau_road, cs.CLAMP, f_2)
        return dict(w_a=w_a, w_b=w_b, w1=w1, w2=w2, v1=v1, s2=s2, v2=v2, err=err, f_2=f_2,
                    tau_e=tau_e, tau_road=tau_road, tau_b=tau_b, tau_f=tau_f)

    def load(self, t, y):
        """States y at time t into every FMU (Continuous-Time Mode), then the connections."""
        for f in self.fmus:
            f.load(t, y)
        return self.connect(t, y[self.master])

    def rhs(self, t, y):
        self.rhs_calls += 1
        dy = np.full(self.n, np.nan)
        if not np.isfinite(y).all():
            return dy   # a stage after a refused one: the solver rejects this step anyway
        s = self.load(t, y)
        for f in self.fmus:
            try:
                dy[f.start:f.stop] = f.derivatives()
            except FMICallException as e:
                # A trial state the FMU cannot evaluate. FMI 2.0 (2.1.3) has fmi2Discard for
                # this in Model Exchange ("perform a smaller step size"): NaN derivatives make
                # the solver reject the step and shrink it. Each one is recorded and printed;
                # --check fails on any (an fmi2Error means the FMU may not be used further).
                self.refused.append(dict(
                    fmu=f.name, time=float(t), status="discard" if e.status == fmi2Discard
                    else "error", states=dict(zip(f.state_names, y[f.start:f.stop].tolist()))))
                return np.full(self.n, np.nan)
        dy[self.master:] = (s["err"], s["tau_e"] * s["w_a"], s["tau_road"] * s["w2"],
                            cs.CLAMP * s["v1"] + s["f_2"] * s["v2"])
        return dy

    def indicators(self, t, y):
        self.load(t, y)
        return np.concatenate([f.indicators() for f in self.fmus])

    def indicator_name(self, i):
        for f in self.fmus:
            if i < f.nz:
                return f"{f.name}[{i}]"
            i -= f.nz
        raise IndexError(i)

    def modes(self):
        return dict(LossyGear_mode=self.gear.get_integer("mode"),
                    VariableRatioCoupling_power_flow=self.coupling.get_integer("power_flow"),
                    CVT_sheave_mode=self.cvt.get_integer("sheave_mode"))

    def energies(self, s):
        """Stored and dissipated energy and the CVT's ratio, at the states loaded."""
        (loss_gear,) = self.gear_energy()
        phi, loss_coupling = self.coupling_energy()
        ratio, impact = self.cvt_energy()
        j_a, j_b, k_p = cs.GEAR["J_a"], cs.GEAR["J_b"], cs.COUPLING["k_p"]
        stored = (0.5 * (j_a * s["w_a"]**2 + j_b * s["w_b"]**2) + 0.5 * k_p * phi**2
                  + 0.5 * (self.j1 * s["w1"]**2 + self.j2 * s["w2"]**2
                           + self.m1 * s["v1"]**2 + self.m2 * s["v2"]**2))
        return stored, loss_gear + loss_coupling + impact, ratio

    def event_iteration(self, t, y, enter=True):
        """The FMI 2.0 event iteration of all FMUs at t from the states y (already loaded).
        Returns the states after it and what happened."""
        if enter:
            for f in self.fmus:
                f.fmu.enterEventMode()
        reset = {f.name: False for f in self.fmus}
        updates = {f.name: 0 for f in self.fmus}
        next_time = None
        for _ in range(MAX_EVENT_ROUNDS):
            # The inputs from the outputs as they are now: an update may have changed them.
            self.connect(t, y[self.master])
            needed = False
            for f in self.fmus:
                (new_needed, terminate, _nominals, values_changed, time_defined,
                 time_next) = f.fmu.newDiscreteStates()
                if terminate:
                    raise RuntimeError(f"{f.name} asked to terminate at t = {t}")
                needed |= new_needed
                updates[f.name] += int(new_needed)
                reset[f.name] |= values_changed
                if time_defined:
                    next_time = time_next if next_time is None else min(next_time, time_next)
            if not needed:
                break
        else:
            raise RuntimeError(f"t = {t}: the event iteration did not settle in "
                               f"{MAX_EVENT_ROUNDS} rounds")
        for f in self.fmus:
            f.fmu.enterContinuousTimeMode()
        after, unflagged = y.copy(), []
        for f in self.fmus:
            x = f.states()
            if reset[f.name]:
                after[f.start:f.stop] = x
            elif not np.array_equal(x, y[f.start:f.stop]):
                # States changed without valuesOfContinuousStatesChanged: the solver would go
                # on from states the FMU no longer has. Recorded; --check fails on it.
                unflagged.append(dict(fmu=f.name, time=float(t), before=y[f.start:f.stop].tolist(),
                                      after=x.tolist()))
        return after, dict(updates=updates, states_reset=reset, unflagged=unflagged,
                           next_time_event=next_time)

    def close(self):
        for f in self.fmus:
            f.close()


def crossed(z_ref, z):
    """Indicators that crossed zero since z_ref; one at exactly zero in z_ref has no side yet."""
    return (z_ref != 0.0) & ((z == 0.0) | (np.sign(z) != np.sign(z_ref)))


def left_zero(z_ref, z):
    return (z_ref == 0.0) & (z != 0.0)


def simulate(fmu_dir, rtol, solver_class=RK45):
    """The system at relative tolerance rtol: the solution on the 1 ms grid, its events and
    the solver's statistics."""
    cpu = time.process_time()
    system = System(fmu_dir, rtol)
    grid = np.linspace(0.0, STOP, int(round(STOP / GRID)) + 1)
    keys = ["time", "w_a", "w_b", "w1", "w2", "tau_engine", "tau_B", "tau_F", "tau_road",
            "ratio", "s2", "s2_ref", "mode", "power_flow", "sheave_mode", "work",
            "work_engine", "work_road", "work_actuators", "stored", "dissipated", "residual"]
    rec = {k: np.zeros(len(grid)) for k in keys}
    state = dict(e0=None, k=0)

    def record_until(t_end, y_of):
        """Records the grid points up to t_end, with the states y_of(t)."""
        while state["k"] < len(grid) and grid[state["k"]] <= t_end:
            t = grid[state["k"]]
            yk = y_of(t)
            s = system.load(t, yk)
            stored, dissipated, ratio = system.energies(s)
            if state["e0"] is None:
                state["e0"] = stored
            modes = system.modes()
            w_engine, w_road, w_act = yk[system.master + 1:]
            values = dict(time=t, w_a=s["w_a"], w_b=s["w_b"], w1=s["w1"], w2=s["w2"],
                          tau_engine=s["tau_e"], tau_B=s["tau_b"], tau_F=s["tau_f"],
                          tau_road=s["tau_road"], ratio=ratio, s2=s["s2"],
                          s2_ref=cs.s2_reference(t), mode=modes["LossyGear_mode"],
                          power_flow=modes["VariableRatioCoupling_power_flow"],
                          sheave_mode=modes["CVT_sheave_mode"], work=w_engine + w_road + w_act,
                          work_engine=w_engine, work_road=w_road, work_actuators=w_act,
                          stored=stored - state["e0"], dissipated=dissipated)
            values["residual"] = values["work"] - values["stored"] - values["dissipated"]
            for key, value in values.items():
                rec[key][state["k"]] = value
            state["k"] += 1

    # Initialization Mode with consistent inputs (the outputs follow from the parameters
    # there), then the event iteration at the start, which fmi2ExitInitializationMode begins.
    y = np.zeros(system.n)
    system.connect(0.0, 0.0)
    for f in system.fmus:
        f.fmu.exitInitializationMode()
    for f in system.fmus:
        y[f.start:f.stop] = f.states()
    y, _ = system.event_iteration(0.0, y, enter=False)
    record_until(0.0, lambda t: y)

    events, touches, unflagged = [], [], []
    steps, t, next_time_event = 0, 0.0, None
    stops = sorted(set(KINKS + [STOP]))
    while t < STOP:
        t_bound = min(s for s in stops if s > t)
        if next_time_event is not None and t < next_time_event < t_bound:
            t_bound = next_time_event
        solver = solver_class(system.rhs, t, y, t_bound, rtol=rtol, atol=ATOL_PER_RTOL * rtol)
        z_ref = system.indicators(t, y)
        while True:
            t_old = solver.t
            message = solver.step()
            if solver.status == "failed":
                raise RuntimeError(f"rtol {rtol:g}: the solver failed at t = {solver.t}: "
                                   f"{message}")
            steps += 1
            t_new, y_new = solver.t, solver.y.copy()
            z_new = system.indicators(t_new, y_new)
            if crossed(z_ref, z_new).any():
                # The first crossing, located on the step's dense output: the smallest time at
                # which an indicator has crossed, bracketed to BISECTION.
                sol = solver.dense_output()
                lo, hi = t_old, t_new
                while hi - lo > BISECTION * max(1.0, abs(hi)):
                    mid = 0.5 * (lo + hi)
                    if crossed(z_ref, system.indicators(mid, sol(mid))).any():
                        hi = mid
                    else:
                        lo = mid
                y_e = sol(hi)
                record_until(hi, sol)
                z_e = system.indicators(hi, y_e)      # loads y_e at hi
                before = system.modes()
                stored_before = system.energies(system.load(hi, y_e))[0]
                y, info = system.event_iteration(hi, y_e)
                stored_after = system.energies(system.load(hi, y))[0]
                events.append(dict(
                    time=float(hi), bracket_s=float(hi - lo),
                    indicators=[system.indicator_name(i) for i in
                                np.flatnonzero(crossed(z_ref, z_e))],
                    before=before, after=system.modes(), updates=info["updates"],
                    states_reset=info["states_reset"],
                    stored_energy_jump_J=float(stored_after - stored_before),
                    indicators_before=z_ref.tolist(), indicators_at=z_e.tolist(),
                    indicators_after=system.indicators(hi, y).tolist()))
                unflagged += info["unflagged"]
                next_time_event = info["next_time_event"]
                t = hi
                break
            for f in system.fmus:
                enter, terminate = f.fmu.completedIntegratorStep()
                if enter or terminate:
                    raise RuntimeError(f"{f.name}: fmi2CompletedIntegratorStep asks for "
                                       f"{'an event' if enter else 'termination'} at {t_new}")
            if state["k"] < len(grid) and grid[state["k"]] <= t_new:
                sol = solver.dense_output()
                record_until(t_new, lambda tk: y_new if tk == t_new else sol(tk))
            if left_zero(z_ref, z_new).any():
                # An indicator that sat at exactly zero has taken a side: the FMUs judge, in
                # their event iteration at this step's end, whether anything changes.
                which = [system.indicator_name(i) for i in np.flatnonzero(left_zero(z_ref, z_new))]
                system.load(t_new, y_new)
                before = system.modes()
                y_t, info = system.event_iteration(t_new, y_new)
                changed = any(info["updates"].values()) or any(info["states_reset"].values())
                touches.append(dict(time=float(t_new), indicators=which,
                                    changed_something=changed, before=before,
                                    after=system.modes()))
                unflagged += info["unflagged"]
                if changed:
                    y, t = y_t, t_new
                    break
                z_new = system.indicators(t_new, y_new)
            z_ref = z_new
            if solver.status == "finished":
                t, y = t_new, y_new
                break
    system.close()
    return dict(rec=rec, events=events, touches=touches, unflagged=unflagged,
                refused=system.refused, steps=steps, rhs_calls=system.rhs_calls,
                cpu_s=time.process_time() - cpu)


def balance_terms(rec):
    """The magnitudes of the terms of the energy balance at the end (for its rounding floor)."""
    return sum(abs(rec[k][-1]) for k in
               ("work_engine", "work_road", "work_actuators", "stored", "dissipated"))


def rounding_floor(run):
    """What rounding alone leaves in the balance: the quadratures add one rounding of their
    size per step, as a random walk (sqrt(steps)), over every term of the balance."""
    return np.sqrt(run["steps"]) * np.finfo(float).eps * balance_terms(run["rec"])


def compare(me, cs1, cs2):
    """ME against the co-simulation at h, and the estimate of the co-simulation's own error
    from h and h/2 (first order: CS(h) - exact = 2 (CS(h) - CS(h/2)) + O(h^2))."""
    half = {k: v[::2] for k, v in cs2.items()}   # the h/2 run on the h grid
    out = {}
    for k in COMPARED:
        deviation = np.abs(me[k] - cs1[k])
        estimate = np.abs(2.0 * (cs1[k] - half[k]))
        extrapolated = np.abs(me[k] - (2.0 * half[k] - cs1[k]))
        out[k] = dict(range=float(np.max(np.abs(me[k]))),
                      max_me_minus_cs=float(deviation.max()),
                      at_time=float(me["time"][deviation.argmax()]),
                      cs_error_estimate=float(estimate.max()),
                      max_me_minus_extrapolated_cs=float(extrapolated.max()))
    return out


def summary(runs, cs_runs, comparison, solver):
    main = runs[TOLERANCES[-1]]["rec"]
    out = {"solver": solver, "me": {}, "cs": {}, "me_vs_cs_1ms": comparison}
    for rtol, run in runs.items():
        rec = run["rec"]
        out["me"][f"{rtol:g}"] = {
            "steps": run["steps"], "rhs_calls": run["rhs_calls"],
            "engine_work_J": rec["work_engine"][-1], "road_work_J": rec["work_road"][-1],
            "actuator_work_J": rec["work_actuators"][-1], "stored_J": rec["stored"][-1],
            "dissipated_J": rec["dissipated"][-1], "residual_J": rec["residual"][-1],
            "max_abs_residual_J": float(np.max(np.abs(rec["residual"]))),
            "rounding_floor_J": float(rounding_floor(run)), "final_w2": rec["w2"][-1],
            "events": run["events"], "touches": run["touches"],
            "refused_evaluations": run["refused"], "unflagged_state_changes": run["unflagged"]}
    for h, rec in cs_runs.items():
        out["cs"][f"{h:g}"] = {
            "engine_work_J": rec["work_engine"][-1], "road_work_J": rec["work_road"][-1],
            "actuator_work_J": rec["work_actuators"][-1], "stored_J": rec["stored"][-1],
            "dissipated_J": rec["dissipated"][-1],
            "max_abs_residual_J": float(np.max(np.abs(rec["residual"]))),
            "final_w2": rec["w2"][-1],
            "first_forward_time": float(rec["time"][np.argmax(rec["mode"] == 1)])}
    out["breakaway_time_expected"] = breakaway_time()
    out["final_w2_me"] = main["w2"][-1]
    return out


def breakaway_time():
    """When the LossyGear must break away: at rest, nothing else turns, so the coupling carries
    no torque and flange a gets the engine's ramp alone; the gear rolls forward once the mesh
    passes the bearing friction, eta tau_a = tau_bf (the MSL LossyGear's rule with flange a
    driving): tau_a = tau_bf / eta, reached by the 0.2 s ramp at 0.2 tau_bf / (eta tau_max)."""
    eta, friction = cs.GEAR["lossTable[1,2]"], cs.GEAR["lossTable[1,4]"]
    return 0.2 * friction / (eta * cs.ENGINE_TORQUE)


def check(runs, cs_runs, results):
    """What the README claims, asserted with bounds derived from the run, not from its numbers."""
    me = results["me"]
    cs1 = results["cs"][f"{CS_STEP:g}"]
    # 0. No FMU refused an evaluation, and every state change was flagged.
    for rtol, r in me.items():
        assert not r["refused_evaluations"], (rtol, r["refused_evaluations"][:3])
        assert not r["unflagged_state_changes"], (rtol, r["unflagged_state_changes"][:3])
    # 1. The ME residual is within the solver's tolerance of the balance's terms, falls with
    #    the tolerance (by at least 10 for each factor 100, down to rounding), ends at the
    #    rounding floor, and far below the co-simulation's coupling error.
    residuals = [me[f"{rtol:g}"]["max_abs_residual_J"] for rtol in TOLERANCES]
    floors = [me[f"{rtol:g}"]["rounding_floor_J"] for rtol in TOLERANCES]
    for rtol, res, floor in zip(TOLERANCES, residuals, floors):
        terms = balance_terms(runs[rtol]["rec"])
        assert res <= rtol * terms + floor, (rtol, res, terms)
    for (tol_a, res_a), (tol_b, res_b, floor_b) in zip(
            zip(TOLERANCES, residuals), zip(TOLERANCES[1:], residuals[1:], floors[1:])):
        assert res_b <= max(res_a * np.sqrt(tol_b / tol_a), floor_b), (residuals, floors)
    assert residuals[-1] <= floors[-1], (residuals, floors)
    assert residuals[0] < 1e-2 * cs1["max_abs_residual_J"], (residuals, cs1)
    # 2. The solution itself converges with the tolerance: each run's final secondary speed and
    #    engine work agree with the tightest run's to within 10 rtol.
    tight = me[f"{TOLERANCES[-1]:g}"]
    for rtol in TOLERANCES[:-1]:
        r = me[f"{rtol:g}"]
        for key in ("final_w2", "engine_work_J"):
            assert abs(r[key] - tight[key]) <= 10 * rtol * abs(tight[key]), (rtol, key)
    # 3. Events: at every tolerance, exactly one, the LossyGear's breakaway (indicator 0, mode
    #    Stuck -> Forward in one update, no state reset, no energy jump), located at the time
    #    the parameters give (to far below the CS step: the FMU's 1e-12 N.m margin on its band
    #    is 2e-13 s of the ramp); the coupling keeps forward power flow and the CVT's sheaves
    #    stay free throughout (no flips, no stops in this scenario, as in the CS run); the
    #    touches (indicators leaving exactly zero) change nothing.
    t_b = results["breakaway_time_expected"]
    for rtol in TOLERANCES:
        r, rec = me[f"{rtol:g}"], runs[rtol]["rec"]
        assert len(r["events"]) == 1, (rtol, r["events"])
        e = r["events"][0]
        assert e["indicators"] == ["LossyGear[0]"], e
        assert abs(e["time"] - t_b) < 1e-9, (e["time"], t_b)
        assert e["before"]["LossyGear_mode"] == 0 and e["after"]["LossyGear_mode"] == 1, e
        assert e["updates"] == {"LossyGear": 1, "VariableRatioCoupling": 0, "CVT": 0}, e
        assert not any(e["states_reset"].values()) and e["stored_energy_jump_J"] == 0.0, e
        assert all(not x["changed_something"] for x in r["touches"]), r["touches"]
        forward = rec["time"] > e["time"]
        assert np.all(rec["mode"][forward] == 1) and np.all(rec["mode"][~forward] == 0)
        assert np.all(rec["power_flow"] == 1) and np.all(rec["sheave_mode"] == 0)
    # The co-simulation sees the breakaway on its grid, one or two steps late.
    assert t_b < cs1["first_forward_time"] <= t_b + 2 * CS_STEP, (cs1, t_b)
    # 4. ME and CS agree to within the co-simulation's coupling error: the deviation from the
    #    1 ms run is its first-order error estimate (ratio 1 within 25 %, the O(h^2) part), and
    #    the Richardson-extrapolated co-simulation lies ten times closer to the ME solution.
    for key, c in results["me_vs_cs_1ms"].items():
        ratio = c["max_me_minus_cs"] / c["cs_error_estimate"]
        assert 0.8 < ratio < 1.25, (key, c)
        assert c["max_me_minus_extrapolated_cs"] < 0.1 * c["max_me_minus_cs"], (key, c)
    print("model_exchange: all checks passed")


def plot(runs, cs_runs, events, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    me = runs[TOLERANCES[-1]]["rec"]
    cs1, cs2 = cs_runs[CS_STEP], cs_runs[CS_HALF]
    half = {k: v[::2] for k, v in cs2.items()}
    t = me["time"]
    fig, ax = plt.subplots(4, 1, figsize=(8, 12))
    for key, label in [("w_b", "gear output w_b"), ("w1", "CVT primary w1"),
                       ("w2", "CVT secondary w2")]:
        line, = ax[0].plot(t, me[key], label=f"{label}, ME")
        ax[0].plot(t, cs1[key], "--", color=line.get_color(), lw=0.8, label=f"{label}, CS 1 ms")
    ax[0].set_ylabel("rad/s")
    ax[0].set_xlabel("time / s")
    ax[0].legend(fontsize=7, ncol=2)
    ax[0].set_title("ME (rtol 1e-10) and CS (1 ms): the same system", fontsize=9)
    for key, label in [("w_b", "w_b"), ("w2", "w2")]:
        line, = ax[1].plot(t, me[key] - cs1[key], label=f"{label}: ME - CS(1 ms)")
        ax[1].plot(t, 2 * (half[key] - cs1[key]), ":", color="k", lw=1.0,
                   label=f"{label}: 2 (CS(0.5 ms) - CS(1 ms))")
    ax[1].set_ylabel("rad/s")
    ax[1].set_xlabel("time / s")
    ax[1].legend(fontsize=7)
    ax[1].set_title("the CS error: ME minus CS, and its first-order estimate from CS alone",
                    fontsize=9)
    floor = np.finfo(float).eps
    for h, rec in sorted(cs_runs.items(), reverse=True):
        ax[2].semilogy(rec["time"], np.abs(rec["residual"]) + floor,
                       label=f"CS h = {h * 1e3:g} ms")
    for rtol in TOLERANCES:
        rec = runs[rtol]["rec"]
        ax[2].semilogy(rec["time"], np.abs(rec["residual"]) + floor, label=f"ME rtol {rtol:g}")
    ax[2].set_ylabel("|energy residual| / J")
    ax[2].set_xlabel("time / s")
    ax[2].legend(fontsize=7, ncol=3)
    ax[2].set_title("engine + road + actuator work - stored - dissipated", fontsize=9)
    zoom = t <= 0.03
    ax[3].plot(1e3 * t[zoom], me["w_a"][zoom], ".-", ms=3, label="w_a, ME (grid points)")
    ax[3].plot(1e3 * cs1["time"][zoom], cs1["w_a"][zoom], "s--", ms=3, label="w_a, CS 1 ms")
    for e in events:
        ax[3].axvline(1e3 * e["time"], color="k", lw=0.8)
        ax[3].annotate(f"LossyGear Stuck -> Forward\nt = {e['time']:.12f} s",
                       (1e3 * e["time"], 0.6 * np.max(me["w_a"][zoom])), fontsize=7,
                       xytext=(4, 0), textcoords="offset points")
    ax[3].set_xlabel("time / ms")
    ax[3].set_ylabel("rad/s")
    ax[3].legend(fontsize=7, loc="upper left")
    ax[3].set_title("the breakaway: located by ME, seen on the grid by CS", fontsize=9)
    fig.suptitle("The drivetrain as Model Exchange in one solver (FMPy, SciPy RK45)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def write_table(results, path):
    """The Model Exchange table of README.md, between its markers."""
    rows = ["| run | steps | right-hand sides | engine / J | Δ stored / J | dissipated / J "
            "| max \\|residual\\| / J | residual / engine work |",
            "|---|---|---|---|---|---|---|---|"]
    cs1 = results["cs"][f"{CS_STEP:g}"]
    rows.append(
        f"| CS, h = {CS_STEP * 1e3:g} ms (drivetrain.py) | {int(round(STOP / CS_STEP))} | | "
        f"{cs1['engine_work_J']:.4f} | {cs1['stored_J']:.4f} | {cs1['dissipated_J']:.4f} "
        f"| {cs1['max_abs_residual_J']:.2e} | {cs1['max_abs_residual_J'] / cs1['engine_work_J']:.1e} |")
    for rtol in TOLERANCES:
        r = results["me"][f"{rtol:g}"]
        rows.append(
            f"| ME, {results['solver']} rtol {rtol:g} | {r['steps']} | {r['rhs_calls']} "
            f"| {r['engine_work_J']:.4f} | {r['stored_J']:.4f} | {r['dissipated_J']:.4f} "
            f"| {r['max_abs_residual_J']:.2e} | {r['max_abs_residual_J'] / r['engine_work_J']:.1e} |")
    rows += ["", "| signal | max \\|ME − CS(1 ms)\\| | CS error estimate 2 max \\|CS(1 ms) − CS(0.5 ms)\\| "
             "| max \\|ME − (2 CS(0.5 ms) − CS(1 ms))\\| |", "|---|---|---|---|"]
    for key, c in results["me_vs_cs_1ms"].items():
        rows.append(f"| {key} | {c['max_me_minus_cs']:.3e} | {c['cs_error_estimate']:.3e} "
                    f"| {c['max_me_minus_extrapolated_cs']:.1e} |")
    cs.write_between(path, "<!-- model exchange results: written by model_exchange.py -->\n",
                     "\n<!-- end of model exchange results -->", rows)


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    solver = "RK45"
    if "--solver" in argv:
        solver = argv[argv.index("--solver") + 1]
        args.remove(solver)
    fmu_dir = args[0] if args else os.path.join(HERE, "../../target/fmu")
    start = time.process_time()
    runs = {}
    for rtol in TOLERANCES:
        runs[rtol] = run = simulate(fmu_dir, rtol, SOLVERS[solver])
        res = np.max(np.abs(run["rec"]["residual"]))
        print(f"ME {solver} rtol {rtol:g}: {run['steps']} steps, {run['rhs_calls']} right-hand "
              f"sides, {run['cpu_s']:.2f} s CPU, max |residual| {res:.3e} J "
              f"({res / run['rec']['work_engine'][-1]:.1e} of the engine's work), "
              f"{len(run['events'])} event(s), {len(run['touches'])} touch(es)")
        for e in run["events"]:
            print(f"    event at t = {e['time']:.15f} s: {', '.join(e['indicators'])}: "
                  f"{e['before']} -> {e['after']}, updates {e['updates']}, "
                  f"states reset {e['states_reset']}")
        for x in run["refused"]:
            print(f"    REFUSED: {x['fmu']} fmi2GetDerivatives ({x['status']}) at "
                  f"t = {x['time']!r} with states {x['states']}")
        for x in run["unflagged"]:
            print(f"    UNFLAGGED STATE CHANGE: {x}")
    cs_runs = {h: cs.simulate(fmu_dir, h) for h in (CS_STEP, CS_HALF)}
    for h, rec in cs_runs.items():
        print(f"CS h = {h * 1e3:g} ms: max |residual| {np.max(np.abs(rec['residual'])):.3e} J")
    comparison = compare(runs[TOLERANCES[-1]]["rec"], cs_runs[CS_STEP], cs_runs[CS_HALF])
    results = summary(runs, cs_runs, comparison, solver)
    print(f"{time.process_time() - start:.1f} s CPU in all")
    if solver == "RK45":   # the documented runs; another solver only prints
        out = cs.output_dir(argv, HERE, "drivetrain")
        with open(os.path.join(out, RESULTS), "w") as f:
            json.dump(results, f, indent=2, sort_keys=True, default=float)
            f.write("\n")
        plot(runs, cs_runs, runs[TOLERANCES[-1]]["events"],
             os.path.join(out, "model_exchange.png"))
        if out == HERE:
            write_table(results, os.path.join(HERE, "README.md"))
    if "--check" in argv:
        check(runs, cs_runs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
