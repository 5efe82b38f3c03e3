#!/usr/bin/env python3
"""A scooter-like drivetrain from four FMUs' worth of parts, co-simulated with FMPy at 1 ms:

    engine torque -> LossyGear -> VariableRatioCoupling -> CVT -> road load

The master (this file) is a plain fixed-step loop, as a user would write it with FMPy's
FMU2Slave. At every communication point t_k it reads the inertial FMUs' speeds, hands them to the
coupling, reads the coupling's torques (they depend directly on those speeds), and sets every
input before stepping all three FMUs from t_k to t_k + h. Inputs are held over the step.

Energy. Each FMU is energy-consistent on its own (the test suite checks that per FMU). Across
the system, the work of the external sources (engine torque, road load, sheave actuators) must
equal the stored energy (kinetic, coupling spring) plus what the FMUs dissipate (gear losses,
coupling losses, sheave impacts). Held inputs make every source's work exact: the work of a held
torque over a step is the torque times the angle the FMU moved. What remains is the coupling
error of the co-simulation itself: at an interface one side sees a held torque, the other a held
speed, and the two powers differ by O(h) per unit time. This script reports that residual and
shows that it shrinks as the step shrinks.

    python drivetrain.py <dir with the .fmu files> [--check] [--fmi3]

writes drivetrain.png, results.json and the table in README.md next to this file; with --check it also asserts the
numbers (the test command runs it that way).

With --fmi3 the same master runs the FMI 3.0 FMUs (<dir>/fmi3/) with FMPy's FMU3Slave, in Event
Mode with early return: a step of an FMU that ends at an event inside it (the LossyGear breaking
away, say) is followed by that FMU's Event Mode and event iteration, and the step goes on from
the event to the communication point. It writes results_fmi3.json, asserts the same numbers with
--check, and that the results and the energy balance are those of the FMI 2.0 run (the events
are located to the integration tolerance either way, so they agree to far below the coupling
error).
"""
import json
import os
import shutil
import sys

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

HERE = os.path.dirname(os.path.abspath(__file__))


def output_dir(argv, here, name):
    """Where an example whose figures depend on the processor writes its results: with --check
    alone (the test command) under target/examples/<name>, so a test run leaves the tree as it
    was; with --readme, or without --check, next to the example (`here`)."""
    out = here
    if "--check" in argv and "--readme" not in argv:
        out = os.path.join(HERE, "../../target/examples", name)
    os.makedirs(out, exist_ok=True)
    return out


STOP = 3.0
STEPS = [4e-3, 2e-3, 1e-3, 5e-4, 2.5e-4]
MAIN_STEP = 1e-3

# Parameters of the example (everything else keeps the FMUs' defaults).
GEAR = {"ratio": 5.0, "J_a": 0.01, "J_b": 0.002, "w_b_start": 0.0, "nLossRows": 1,
        # One row: at every speed, mesh efficiency 0.95 both ways and 0.05 N.m bearing friction.
        "lossTable[1,1]": 0.0, "lossTable[1,2]": 0.95, "lossTable[1,3]": 0.95,
        "lossTable[1,4]": 0.05, "lossTable[1,5]": 0.05}
COUPLING = {"k_p": 200.0, "k_v": 1.9, "losses": 1, "eta": 0.97, "w_th": 1.0}
CVT = {}  # defaults: 250 mm centre distance, 80/120 mm diameters, J1 = 0.01, J2 = 0.02
ENGINE_TORQUE = 1.0          # N.m, reached by a 0.2 s ramp
ROAD = (1.0, 0.035)          # tau_road = -(c0 tanh(w2 / 0.5) + c2 w2 |w2|), N.m
CLAMP = 500.0                # N on the primary sheave
SHIFT = (1.0, 2.0, -0.003)   # s2 reference ramps from 0 to -3 mm between 1 s and 2 s (upshift)
GAINS = (1e5, 525.0, 1e6)    # PID of the secondary sheave force: N/m, N.s/m, N/(m.s)


def engine_torque(t):
    return ENGINE_TORQUE * min(1.0, t / 0.2)


def road_torque(w2):
    c0, c2 = ROAD
    return -(c0 * np.tanh(w2 / 0.5) + c2 * w2 * abs(w2))


def ratio_command(t):
    """The coupling's controllable ratio: 1, then 1.1 from 2.5 s on (a ramp over 0.2 s)."""
    return 1.0 + 0.1 * min(1.0, max(0.0, (t - 2.5) / 0.2))


def s2_reference(t):
    t0, t1, s = SHIFT
    return s * min(1.0, max(0.0, (t - t0) / (t1 - t0)))


class Slave:
    """One FMU instance driven by name."""

    def __init__(self, fmu_dir, model, parameters, stop):
        path = os.path.join(fmu_dir, f"{model}.fmu")
        self.md = read_model_description(path)
        self.dir = extract(path)
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.types = {v.name: v.type for v in self.md.modelVariables}
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier,
                             instanceName=model)
        self.fmu.instantiate()
        self.fmu.setupExperiment(startTime=0.0, stopTime=stop)
        for name, value in parameters.items():
            self.set(name, value)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()

    def set(self, name, value):
        if self.types[name] == "Integer":
            self.fmu.setInteger([self.vr[name]], [int(value)])
        else:
            self.fmu.setReal([self.vr[name]], [float(value)])

    def get(self, *names):
        return self.fmu.getReal([self.vr[n] for n in names])

    def integer(self, name):
        return self.fmu.getInteger([self.vr[name]])[0]

    def step(self, t, h):
        self.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)

    def close(self):
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


class Slave3(Slave):
    """One FMI 3.0 instance in Event Mode with early return, driven by name."""

    def __init__(self, fmu_dir, model, parameters, stop):
        path = os.path.join(fmu_dir, "fmi3", f"{model}.fmu")
        self.md = read_model_description(path)
        self.dir = extract(path)
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.types = {v.name: v.type for v in self.md.modelVariables}
        self.fmu = FMU3Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier,
                             instanceName=model)
        self.fmu.instantiate(eventModeUsed=True, earlyReturnAllowed=True)
        for name, value in parameters.items():
            self.set(name, value)
        self.fmu.enterInitializationMode(startTime=0.0, stopTime=stop)
        self.fmu.exitInitializationMode()
        # With Event Mode the instance starts in it: the event iteration, then Step Mode.
        self.event_iteration()
        self.events = 0

    def event_iteration(self):
        while self.fmu.updateDiscreteStates()[0]:
            pass
        self.fmu.enterStepMode()

    def set(self, name, value):
        if self.types[name] == "Int32":
            self.fmu.setInt32([self.vr[name]], [int(value)])
        else:
            self.fmu.setFloat64([self.vr[name]], [float(value)])

    def get(self, *names):
        return self.fmu.getFloat64([self.vr[n] for n in names])

    def integer(self, name):
        return self.fmu.getInt32([self.vr[name]])[0]

    def step(self, t, h):
        end = t + h
        while True:
            event, _, early, last = self.fmu.doStep(currentCommunicationPoint=t,
                                                    communicationStepSize=end - t)
            t = last
            if event:
                self.events += 1
                self.fmu.enterEventMode()
                self.event_iteration()
            if not early:
                return


def simulate(fmu_dir, h, stop=STOP, slave=Slave, events=None):
    """The run at step h; `events` (a list), if given, gets how many steps ended early at an
    event (FMI 3.0 in Event Mode)."""
    gear = slave(fmu_dir, "LossyGear", GEAR, stop)
    coupling = slave(fmu_dir, "VariableRatioCoupling", COUPLING, stop)
    cvt = slave(fmu_dir, "CVT", CVT, stop)
    j_a, j_b = GEAR["J_a"], GEAR["J_b"]
    j1, j2, m1, m2 = cvt.get("J1", "J2", "m1", "m2")
    k_p = COUPLING["k_p"]

    def stored():
        w_a, w_b = gear.get("w_a", "w_b")
        (phi,) = coupling.get("phi")
        w1, w2, v1, v2 = cvt.get("w1", "w2", "v1", "v2")
        return (0.5 * (j_a * w_a**2 + j_b * w_b**2) + 0.5 * k_p * phi**2
                + 0.5 * (j1 * w1**2 + j2 * w2**2 + m1 * v1**2 + m2 * v2**2))

    def dissipated():
        return (gear.get("energy_loss")[0] + coupling.get("energy_loss")[0]
                + cvt.get("energy_impact")[0])

    n = int(round(stop / h))
    rec = {k: np.zeros(n + 1) for k in
           ["time", "w_a", "w_b", "w1", "w2", "tau_engine", "tau_B", "tau_F", "tau_road",
            "ratio", "s2", "s2_ref", "mode", "work", "work_engine", "work_road", "work_actuators",
            "stored", "dissipated", "residual"]}
    e0, integral = stored(), 0.0
    w_engine = w_road = w_act = 0.0
    kp_s, kd_s, ki_s = GAINS
    for k in range(n + 1):
        t = k * h
        w_a, w_b, phi_a, phi_b = gear.get("w_a", "w_b", "phi_a", "phi_b")
        w1, w2, phi1, phi2, s1, s2, v2, ds1_ds2, ratio = cvt.get(
            "w1", "w2", "phi1", "phi2", "s1", "s2", "v2", "ds1_ds2", "ratio")
        coupling.set("w_B", w_b)
        coupling.set("w_F", w1)
        coupling.set("r", ratio_command(t))
        tau_b, tau_f = coupling.get("tau_B", "tau_F")
        tau_e, tau_road = engine_torque(t), road_torque(w2)
        # The sheave controller: the static balance of the clamp force, plus PID on s2.
        err = s2 - s2_reference(t)
        f_2 = -CLAMP * ds1_ds2 - kp_s * err - kd_s * v2 - ki_s * integral
        e = stored()
        rec_values = dict(time=t, w_a=w_a, w_b=w_b, w1=w1, w2=w2, tau_engine=tau_e, tau_B=tau_b,
                          tau_F=tau_f, tau_road=tau_road, ratio=ratio, s2=s2,
                          s2_ref=s2_reference(t), mode=gear.integer("mode"),
                          work=w_engine + w_road + w_act, work_engine=w_engine,
                          work_road=w_road, work_actuators=w_act, stored=e - e0,
                          dissipated=dissipated())
        rec_values["residual"] = rec_values["work"] - (e - e0) - rec_values["dissipated"]
        for key, value in rec_values.items():
            rec[key][k] = value
        if k == n:
            break
        # Torques on the shafts are minus the torques the shafts apply to the coupling.
        gear.set("tau_a", tau_e)
        gear.set("tau_b", -tau_b)
        cvt.set("tau_1", -tau_f)
        cvt.set("tau_2", tau_road)
        cvt.set("F_1", CLAMP)
        cvt.set("F_2", f_2)
        for fmu in (gear, coupling, cvt):
            fmu.step(t, h)
        integral += err * h
        # The exact work of the held source inputs over the step.
        phi_a1, = gear.get("phi_a")
        phi2_1, s1_1, s2_1 = cvt.get("phi2", "s1", "s2")
        w_engine += tau_e * (phi_a1 - phi_a)
        w_road += tau_road * (phi2_1 - phi2)
        w_act += CLAMP * (s1_1 - s1) + f_2 * (s2_1 - s2)
    if events is not None:
        events.append(sum(getattr(fmu, "events", 0) for fmu in (gear, coupling, cvt)))
    for fmu in (gear, coupling, cvt):
        fmu.close()
    return rec


def plot(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    main = runs[MAIN_STEP]
    t = main["time"]
    fig, ax = plt.subplots(4, 1, figsize=(8, 11), sharex=True)
    ax[0].plot(t, main["w_a"] / GEAR["ratio"], label="engine w_a / gear ratio")
    ax[0].plot(t, main["w_b"], "--", label="gear output w_b")
    ax[0].plot(t, main["w1"], label="CVT primary w1")
    ax[0].plot(t, main["w2"], label="CVT secondary w2")
    ax[0].set_ylabel("rad/s")
    ax[0].legend(fontsize=8)
    ax[1].plot(t, main["tau_engine"] * GEAR["ratio"], label="engine torque x gear ratio")
    ax[1].plot(t, -main["tau_B"], label="coupling torque on gear output")
    ax[1].plot(t, main["tau_road"], label="road load on CVT secondary")
    ax[1].set_ylabel("N.m")
    ax[1].legend(fontsize=8)
    ax[2].plot(t, 1e3 * main["s2"], label="s2")
    ax[2].plot(t, 1e3 * main["s2_ref"], "--", label="s2 reference")
    ax2 = ax[2].twinx()
    ax2.plot(t, main["ratio"], "k:", label="CVT ratio D2/D1")
    ax2.set_ylabel("ratio")
    ax[2].set_ylabel("mm")
    ax[2].legend(loc="upper left", fontsize=8)
    ax2.legend(loc="upper right", fontsize=8)
    for h, rec in sorted(runs.items(), reverse=True):
        ax[3].plot(rec["time"], rec["residual"], label=f"h = {h * 1e3:g} ms")
    ax[3].set_ylabel("energy residual / J")
    ax[3].set_xlabel("time / s")
    ax[3].legend(fontsize=8)
    fig.suptitle("Engine -> LossyGear -> VariableRatioCoupling -> CVT -> road load (FMPy)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def summary(runs):
    out = {}
    for h, rec in sorted(runs.items()):
        work = rec["work"][-1]
        out[f"{h:g}"] = {
            "sources_work_J": work,
            "stored_J": rec["stored"][-1],
            "dissipated_J": rec["dissipated"][-1],
            "residual_J": rec["residual"][-1],
            "max_abs_residual_J": float(np.max(np.abs(rec["residual"]))),
            "engine_work_J": rec["work_engine"][-1],
            "road_work_J": rec["work_road"][-1],
            "actuator_work_J": rec["work_actuators"][-1],
            "final_w2": rec["w2"][-1],
        }
    return out


def check(runs, results):
    """The numbers the test command asserts: each claim of the README, as it is made there."""
    main = runs[MAIN_STEP]
    residual = [results[f"{h:g}"]["max_abs_residual_J"] for h in STEPS]
    engine = main["work_engine"][-1]
    # 1. The coupling error at 1 ms is the 1.4e-5 of the engine's work that the README states...
    relative = residual[STEPS.index(MAIN_STEP)] / engine
    assert 1.35e-5 <= relative < 1.45e-5, (relative, residual, engine)
    # ...and first order in h: halving the step halves it (within 30 %).
    for coarse, fine in zip(residual, residual[1:]):
        assert 1.5 < coarse / fine < 2.6, residual
    # 2. The coupling is near steady state at the end: w_B = r w_F to 1 %.
    end = main["time"] >= 2.9
    assert np.allclose(main["w_b"][end], 1.1 * main["w1"][end], rtol=1e-2)
    # 3. The LossyGear starts stuck and rolls forward once the torque overcomes friction.
    assert main["mode"][0] == 0 and main["mode"][-1] == 1
    # 4. Over the last 0.5 s, the energy delivered to the road is the engine's (and the sheave
    #    actuators') minus the losses and minus what the shafts and the spring still store,
    #    to 1e-3 of the engine's work in that window; and the road does get most of it.
    i0 = int(np.searchsorted(main["time"], main["time"][-1] - 0.5))
    delta = {k: main[k][-1] - main[k][i0] for k in
             ("work_engine", "work_road", "work_actuators", "stored", "dissipated")}
    to_road = -delta["work_road"]
    expected = delta["work_engine"] + delta["work_actuators"] - delta["stored"] - delta["dissipated"]
    assert abs(to_road - expected) < 1e-3 * delta["work_engine"], (to_road, expected, delta)
    assert to_road > 0.5 * delta["work_engine"], delta
    # 5. The 1 ms run and the 0.25 ms run agree on the final secondary speed to 1e-3.
    fine = runs[STEPS[-1]]
    assert abs(main["w2"][-1] - fine["w2"][-1]) < 1e-3 * abs(fine["w2"][-1])
    # 6. The sheave followed its reference (within 0.2 mm) and never hit a stop.
    assert np.max(np.abs(main["s2"] - main["s2_ref"])) < 2e-4
    print("drivetrain: all checks passed")


def write_table(results, path):
    """The energy table of README.md, between its markers, so the README stays current."""
    rows = ["| h / ms | engine / J | road / J | actuators / J | Δ stored / J | dissipated / J "
            "| max \\|residual\\| / J | residual / engine work |",
            "|---|---|---|---|---|---|---|---|"]
    for h in sorted(results, key=float, reverse=True):
        r = results[h]
        main = float(h) == MAIN_STEP
        step = f"{float(h) * 1e3:g}"
        residual = f"{r['max_abs_residual_J']:.2e}"
        relative = f"{r['max_abs_residual_J'] / r['engine_work_J']:.1e}"
        if main:
            step, residual, relative = (f"**{x}**" for x in (step, residual, relative))
        rows.append(
            f"| {step} | {r['engine_work_J']:.4f} | {r['road_work_J']:.4f} "
            f"| {r['actuator_work_J']:.4f} | {r['stored_J']:.4f} | {r['dissipated_J']:.4f} "
            f"| {residual} | {relative} |")
    write_between(path, "<!-- results: written by drivetrain.py -->\n",
                  "\n<!-- end of results -->", rows)


def write_between(path, begin, end, rows):
    """Replaces the lines of `path` between the markers `begin` and `end` with `rows`."""
    with open(path) as f:
        text = f.read()
    a, b = text.index(begin) + len(begin), text.index(end)
    with open(path, "w") as f:
        f.write(text[:a] + "\n".join(rows) + text[b:])


def check_fmi3(runs3, results3, fmi2):
    """The FMI 3.0 run in Event Mode against the FMI 2.0 run (`fmi2`: results.json): the same
    energies and final speed to 1e-6 of the engine's work (resp. of the speed), at every step
    size. (Here every mode change follows an input set at a communication point, the LossyGear's
    break-away included: the FMU settles it at the start of the step, as the FMI 2.0 FMU does,
    so no step ends early at an event; `events_in_event_mode` counts those that do.)"""
    for h in STEPS:
        a, b = results3[f"{h:g}"], fmi2[f"{h:g}"]
        scale = abs(b["engine_work_J"])
        for key in ("engine_work_J", "road_work_J", "actuator_work_J", "stored_J",
                    "dissipated_J", "residual_J", "max_abs_residual_J"):
            assert abs(a[key] - b[key]) < 1e-6 * scale, (h, key, a[key], b[key])
        assert abs(a["final_w2"] - b["final_w2"]) < 1e-6 * abs(b["final_w2"]), (h, a, b)
    print("drivetrain (FMI 3.0, Event Mode): all checks passed, results as with FMI 2.0")


def main_fmi3(fmu_dir, argv):
    events = {h: [] for h in STEPS}
    runs = {h: simulate(fmu_dir, h, slave=Slave3, events=events[h]) for h in STEPS}
    results = summary(runs)
    for h in STEPS:
        results[f"{h:g}"]["events_in_event_mode"] = events[h][0]
    with open(os.path.join(HERE, "results_fmi3.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(HERE, "results.json")) as f:
        fmi2 = json.load(f)
    for h in STEPS:
        a, b = results[f"{h:g}"], fmi2[f"{h:g}"]
        print(f"h = {h * 1e3:6.3g} ms: {a['events_in_event_mode']} events in Event Mode, "
              f"max |residual| {a['max_abs_residual_J']:.3e} J (FMI 2.0: "
              f"{b['max_abs_residual_J']:.3e} J), final w2 {a['final_w2']:.9f} "
              f"(FMI 2.0: {b['final_w2']:.9f})")
    if "--check" in argv:
        check(runs, results)
        check_fmi3(runs, results, fmi2)
    return 0


def main(argv):
    fmu_dir = argv[1] if len(argv) > 1 else os.path.join(HERE, "../../target/fmu")
    if "--fmi3" in argv:
        return main_fmi3(fmu_dir, argv)
    runs = {h: simulate(fmu_dir, h) for h in STEPS}
    results = summary(runs)
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
        f.write("\n")
    plot(runs, os.path.join(HERE, "drivetrain.png"))
    write_table(results, os.path.join(HERE, "README.md"))
    for h in STEPS:
        r = results[f"{h:g}"]
        print(f"h = {h * 1e3:6.3g} ms: sources {r['sources_work_J']:.6f} J, "
              f"stored {r['stored_J']:.6f} J, dissipated {r['dissipated_J']:.6f} J, "
              f"max |residual| {r['max_abs_residual_J']:.3e} J")
    if "--check" in argv:
        check(runs, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
