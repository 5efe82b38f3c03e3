"""The Model Exchange master of model_exchange.py: each FMU as a Model Exchange component, the
connected system as one ODE, and its integration with located events and restarts at the
inputs' kinks. Split from model_exchange.py (the project's 600-line rule); the method is in
its docstring."""
import ctypes
import os
import shutil
import time

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Model, fmi2Discard
from scipy.integrate import RK45

import drivetrain as cs  # the system, its sources (model_exchange.py puts it on sys.path)


STOP = cs.STOP
ATOL_PER_RTOL = 1e-3                      # absolute tolerance, as the FMUs' own integrator has
GRID = cs.MAIN_STEP                       # the ME solution is recorded on the CS grid
# Kinks of the master's inputs: the end of the engine ramp (drivetrain.engine_torque), the start
# and the end of the sheave shift (SHIFT) and of the coupling's ratio ramp (ratio_command).
KINKS = [0.2, cs.SHIFT[0], cs.SHIFT[1], 2.5, 2.7]
BISECTION = 1e-13                         # s: width of the bracket of a located crossing
MAX_EVENT_ROUNDS = 20
MASTER_STATES = ["integral", "work_engine", "work_road", "work_actuators"]


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
