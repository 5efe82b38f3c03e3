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
import json
import os
import sys
import time

import numpy as np
from scipy.integrate import DOP853, RK45

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import drivetrain as cs  # noqa: E402  (the system, its sources, and the co-simulation master)
# The Model Exchange master in its own module (600-line rule); this file runs and judges it.
from me_master import STOP, simulate  # noqa: E402

SOLVERS = {"RK45": RK45, "DOP853": DOP853}
TOLERANCES = [1e-4, 1e-6, 1e-8, 1e-10]   # relative tolerances of the Model Exchange solver
CS_STEP = cs.MAIN_STEP                    # the co-simulation compared with (1 ms), and its
CS_HALF = cs.MAIN_STEP / 2                # half step, for the estimate of its error
# Signals compared with the co-simulation.
COMPARED = ["w_a", "w_b", "w1", "w2", "s2", "work_engine", "work_road", "stored", "dissipated"]
RESULTS = "model_exchange_results.json"


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
