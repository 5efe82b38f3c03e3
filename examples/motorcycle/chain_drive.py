#!/usr/bin/env python3
"""The thesis's chain-drive experiments (section 2.4) with the ChainDrive FMU, and the ChainDrive
coupled to the FastDrivetrain FMU, co-simulated with FMPy by a plain fixed-step master loop.

1. Protocol 1 (thesis 2.4.1): an engine-torque ramp to 10 N.m over 5 s, the torque cut at 5 s,
   free evolution to 10 s, a brake step (c_brake = 0.5 N.m.s/rad) at 10 s, to 15 s; the three
   chain models (1 full elastic, 2 quasi-steady-state, 3 inextensible) at k = 1e5 N/m.
2. Protocol 2 (thesis 2.4.2): a 50 N.m triangle of engine torque over 0-10 s, then a -50 N.m
   triangle of load torque over 10-20 s; k = 1e4, 1e5, 1e6 N/m, the three models.
3. The cost per simulated second of each model (wall-clock ns inside fmi2DoStep, less the cost
   of the call itself) and the deviation of the slow signals from the full model.
4. FastDrivetrain -> torsional coupling (spring-damper in this master) -> ChainDrive's drive
   sprocket, with the energy balance across both FMUs and the coupling, for h = 2 ... 0.25 ms.

Checks (--check): every model's energy balance step by step (the QSS model's own balance, and
its defect in the full books against its derivation); impacts only lose energy; extension
times k against the rigid-chain tension; the reduced models' slow signals converging to the
full model's as k grows (and what does not converge, and why); the coupled energy balance
against the co-simulation's first-order interface error. Every expectation is derived from
the FMUs' parameters or from an independent computation, not from a stored result.

    python chain_drive.py <dir with the .fmu files> [--check] [--readme]

writes chain_drive_protocol1.png, chain_drive_protocol2.png, chain_drive_coupled.png and
chain_drive_results.json next to this file; --readme also rewrites the tables of README.md. With
--check alone (the test command) they go to target/examples/motorcycle/ instead: they hold this
machine's timings, which change from run to run, and a test run leaves the tree as it was.
"""
import json
import math
import os
import sys
import time

import numpy as np
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "drivetrain"))
from drivetrain import Slave, output_dir  # noqa: E402  (the same FMPy wrapper)
# The experiments' constants, the analysis and the plots in their own modules (600-line rule).
from chain_setup import (H, TIMING_REPEATS, REF_TOLERANCE, MODELS, K_DEFAULT, K_VALUES, P1_STOP,
                         P2_STOP, S, C_STEPS, C_MAIN, C_STOP, C_CRANK, C_RAMP, C_CUT, C_BRAKE_TIME,
                         C_BRAKE, C_SHIFT_RPM, C_D_SPIN, K_COUPLING, ZETA_COUPLING, RPM, OUT,
                         ENERGY, SLOW, p1_inputs, p2_inputs)  # noqa: E402
from chain_analysis import deviations, taut_window, analyse, check  # noqa: E402
from chain_plots import plot_protocol1, plot_protocol2, plot_coupled  # noqa: E402


class ChainSlave(Slave):
    """Slave with an explicit relative tolerance for fmi2SetupExperiment (None: the FMU's
    default, 1e-8)."""

    def __init__(self, fmu_dir, model, parameters, stop, tolerance=None):
        path = os.path.join(fmu_dir, f"{model}.fmu")
        self.md = read_model_description(path)
        self.dir = extract(path)
        self.vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.types = {v.name: v.type for v in self.md.modelVariables}
        self.fmu = FMU2Slave(guid=self.md.guid, unzipDirectory=self.dir,
                             modelIdentifier=self.md.coSimulation.modelIdentifier,
                             instanceName=model)
        self.fmu.instantiate()
        self.fmu.setupExperiment(tolerance=tolerance, startTime=0.0, stopTime=stop)
        for name, value in parameters.items():
            self.set(name, value)
        self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()


def call_overhead(slave, repeat=20000):
    """The cost of the call itself: the same ctypes function, fmi2DoStep, called with a NULL
    instance, which the FMU refuses at once (fmi2Error) - argument conversion, the timer, the
    FMU's entry check. Median of `repeat` calls, ns."""
    do_step = slave.fmu._functions["fmi2DoStep"]
    clock = time.perf_counter_ns
    samples = np.empty(repeat)
    for i in range(repeat):
        a = clock()
        do_step(None, 0.0, H, 1)
        samples[i] = clock() - a
    return float(np.median(samples))


def run_chain(fmu_dir, model, k, inputs, stop, tolerance=None):
    """One ChainDrive run at h = H. Records the outputs at every communication point before the
    inputs are set (`pre`) and after (`post`: the QSS model's algebraic outputs depend on the
    inputs directly), the chain mode, the impact count, and the wall-clock time of each
    fmi2DoStep call."""
    s = ChainSlave(fmu_dir, "ChainDrive", {"chain_model": model, "k_chain": k}, stop, tolerance)
    vr_out = [s.vr[n] for n in OUT]
    vr_in = [s.vr[n] for n in ("tau_eng", "tau_load", "c_brake")]
    vr_int = [s.vr["chain_mode"], s.vr["impact_count"]]
    par = dict(zip(("J_ds", "J_rw", "I_sa", "r_ds", "r_ws", "gamma_ds", "gamma_rw", "k_susp",
                    "c_susp", "slack"),
                   s.get("J_ds", "J_rw", "I_sa", "r_ds", "r_ws", "gamma_ds", "gamma_rw",
                         "k_susp", "c_susp", "slack")))
    n = int(round(stop / H))
    rec = dict(pre=np.zeros((n + 1, len(OUT))), post=np.zeros((n, len(OUT))),
               mode_pre=np.zeros(n + 1, int), mode_post=np.zeros(n, int),
               impacts=np.zeros(n + 1, int), u=np.zeros((n, 3)), ns=np.zeros(n),
               time=np.arange(n + 1) * H, model=model, k=k, par=par, ns_repeats=[])
    do_step, comp = s.fmu._functions["fmi2DoStep"], s.fmu.component
    clock = time.perf_counter_ns
    for i in range(n + 1):
        rec["pre"][i] = s.fmu.getReal(vr_out)
        rec["mode_pre"][i], rec["impacts"][i] = s.fmu.getInteger(vr_int)
        if i == n:
            break
        t = i * H
        rec["u"][i] = inputs(t)
        s.fmu.setReal(vr_in, list(rec["u"][i]))
        rec["post"][i] = s.fmu.getReal(vr_out)
        rec["mode_post"][i] = s.fmu.getInteger(vr_int[:1])[0]
        a = clock()
        status = do_step(comp, t, H, 1)
        rec["ns"][i] = clock() - a
        if status != 0:
            raise RuntimeError(
                f"ChainDrive ({MODELS[model]}, k = {k:g}): fmi2DoStep returned status {status} "
                f"at t = {t:.3f} s, inputs tau_eng, tau_load, c_brake = {list(rec['u'][i])}")
    s.close()
    return rec


# ------------------------------------------------------------------------------------------
# The coupled system


def run_coupled(fmu_dir, h, model=1):
    """FastDrivetrain (engine, gearbox) -> coupling spring-damper (here) -> ChainDrive."""
    cd = Slave(fmu_dir, "ChainDrive", {"chain_model": model}, C_STOP)
    fd = Slave(fmu_dir, "FastDrivetrain", {"gear": 1, "d_spin": C_D_SPIN}, C_STOP)
    j_ds = cd.get("J_ds")[0]
    delta = fd.get("delta")[0]
    m_red = 1.0 / (1.0 / j_ds + 1.0 / delta)
    k_c = K_COUPLING
    c_c = 2.0 * ZETA_COUPLING * math.sqrt(k_c * m_red)
    cd_names = ["theta_ds", "w_ds", "theta_wheel", "w_wheel", "T_upper", "T_lower"] + ENERGY
    fd_names = ["theta_ds", "w_ds", "E_kin", "energy_damping", "energy_shift", "rho_eng", "w_eng"]
    vr_cd = [cd.vr[x] for x in cd_names]
    vr_fd = [fd.vr[x] for x in fd_names]
    n = int(round(C_STOP / h))
    keys = ["time", "rpm", "gear", "w_wheel", "tau_c", "tau_chain", "twist", "W_eng", "E_cd",
            "E_fd", "E_spring", "E_damper", "residual", "estimate", "book_cd", "book_fd"]
    rec = {x: np.zeros(n + 1) for x in keys}
    gear = 1
    r_ds = cd.get("r_ds")[0]

    def read():
        c, f = cd.fmu.getReal(vr_cd), fd.fmu.getReal(vr_fd)
        return c, f, S * f[0] - c[0], S * f[1] - c[1]

    c, f, x, v = read()
    e0 = sum(c[6:]) + f[2] + f[3] + f[4] + 0.5 * k_c * x * x
    w_eng = e_damp = book_cd = book_fd = estimate = 0.0
    shifts = []
    for i in range(n + 1):
        t = i * h
        tau_c = k_c * x + c_c * v          # the coupling's torque on ChainDrive's sprocket
        e_cd, e_fd = sum(c[6:]), f[2] + f[3] + f[4]
        values = dict(time=t, rpm=S * f[6] * RPM, gear=gear, w_wheel=c[3], tau_c=tau_c,
                      tau_chain=r_ds * (c[4] - c[5]), twist=x, W_eng=w_eng,
                      E_cd=e_cd, E_fd=e_fd, E_spring=0.5 * k_c * x * x, E_damper=e_damp,
                      book_cd=book_cd, book_fd=book_fd, estimate=estimate)
        values["residual"] = w_eng - (e_cd + e_fd + 0.5 * k_c * x * x - e0) - e_damp
        for key, value in values.items():
            rec[key][i] = value
        if i == n:
            break
        if abs(f[6]) * RPM >= C_SHIFT_RPM and gear == 1:
            gear = 2
            fd.set("gear", gear)
            shifts.append(t)
        crank = C_CRANK * min(1.0, t / C_RAMP) if t < C_CUT else 0.0
        cd.set("tau_eng", tau_c)
        cd.set("c_brake", C_BRAKE if t >= C_BRAKE_TIME else 0.0)
        fd.set("tau_eng", S * crank)
        fd.set("tau_ext", -S * tau_c)
        for slave in (cd, fd):
            status = slave.fmu._functions["fmi2DoStep"](slave.fmu.component, t, h, 1)
            if status != 0:
                raise RuntimeError(f"coupled run, h = {h:g}: {slave.fmu.instanceName} "
                                   f"fmi2DoStep returned {status} at t = {t:.4f} s")
        c1, f1, x1, v1 = read()
        # Held inputs: each source's work over the step is its torque times the angle moved.
        step_eng = S * crank * f1[5] * (f1[0] - f[0])
        w_eng += step_eng
        # Each FMU's own books with the inputs it was given.
        book_cd += tau_c * (c1[0] - c[0]) - (sum(c1[6:]) - sum(c[6:]))
        book_fd += (step_eng - S * tau_c * (f1[0] - f[0])
                    - (f1[2] + f1[3] + f1[4] - f[2] - f[3] - f[4]))
        # The damper's dissipation, c_c w^2 integrated by the trapezoidal rule.
        e_damp += 0.5 * h * c_c * (v * v + v1 * v1)
        # The co-simulation's interface error to first order: the held torque misses its change
        # over the step, int (tau(t) - tau_k) dx ~ (tau_k+1 - tau_k) dx / 2, counted as work
        # the FMUs did not receive.
        estimate -= 0.5 * (k_c * x1 + c_c * v1 - tau_c) * (x1 - x)
        c, f, x, v = c1, f1, x1, v1
    info = dict(h=h, k_c=k_c, c_c=c_c, delta_gear1=delta, J_ds=j_ds, shifts=shifts,
                energy_shift=fd.get("energy_shift")[0], energy_damping=fd.get("energy_damping")[0],
                energy_dissipated_cd=cd.get("energy_dissipated")[0],
                coupling_frequency=math.sqrt(k_c / m_red))
    cd.close()
    fd.close()
    return rec, info


# ------------------------------------------------------------------------------------------
# Report


def tables(res):
    """Markdown tables for the README and the console."""
    rows = ["| model | k / (N/m) | ns per doStep: mean (median) | ms per simulated s "
            "| w_wheel, 0-20 s | theta_sa, 0-20 s | w_ds, 0-20 s | w_wheel, taut | theta_sa, taut "
            "| w_ds, taut | largest tension difference / N |",
            "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in res["table"]:
        cells = [r["model"], f"{r['k']:.0e}", f"{r['ns_per_step']:.0f} ({r['ns_per_step_median']:.0f})",
                 f"{r['ms_per_simulated_s']:.2f}"]
        if r["model"] == "full":
            cells += ["(reference)"] + [""] * 6
        else:
            cells += [f"{r[n]['all']:.1e}" for n in SLOW] + [f"{r[n]['taut']:.1e}" for n in SLOW]
            cells += [f"{r['tension_vibration_N']:.0f} at {r['tension_vibration_time_s']:.2f} s"]
        rows.append("| " + " | ".join(cells) + " |")
    energy = ["| protocol | model | k / (N/m) | energy through / J | max \\|residual\\| / J "
              "| relative | impacts | energy_impact / J |", "|---|---|---|---|---|---|---|---|"]
    for proto, block in (("1", res["protocol1"]["energy"]), ("2", res["protocol2"]["energy"])):
        for name, e in block.items():
            model, _, k = name.partition(", k=")
            k = k or f"{K_DEFAULT:g}"
            if model == "QSS":
                text = (f"{e['max_abs_reduced_residual_J']:.1e} (own); full books {e['defect_total_J']:+.3f}")
                rel = f"{e['max_abs_reduced_residual_J'] / e['reduced_work_throughput_J']:.0e}"
            else:
                text = f"{e['max_abs_residual_J']:.1e}"
                rel = f"{e['max_abs_residual_J'] / e['work_throughput_J']:.0e}"
            energy.append(f"| {proto} | {model} | {float(k):.0e} | {e['work_throughput_J']:.4g} | {text} "
                          f"| {rel} | {e['impacts']} | {e['energy_impact_J']:.4f} |")
    coupled = ["| h / ms | engine work / J | Δ stored / J | ChainDrive dissipated / J "
               "| FastDrivetrain damping / J | shift / J | coupling damper / J "
               "| max \\|residual\\| / J | relative | first-order estimate / J | remainder / J |",
               "|---|---|---|---|---|---|---|---|---|---|---|"]
    for h in C_STEPS:
        r = res["coupled"][f"{h:g}"]
        step = f"{h * 1e3:g}"
        residual = f"{r['max_abs_residual_J']:.3g}"
        if h == C_MAIN:
            step, residual = f"**{step}**", f"**{residual}**"
        coupled.append(
            f"| {step} | {r['engine_work_J']:.3f} | {r['delta_stored_J']:.3f} "
            f"| {r['energy_dissipated_chain_drive_J']:.3f} | {r['energy_damping_J']:.3f} "
            f"| {r['energy_shift_J']:.4f} | {r['damper_J']:.3f} | {residual} "
            f"| {r['max_abs_residual_J'] / r['engine_work_J']:.1e} | {r['max_abs_estimate_J']:.3g} "
            f"| {r['max_abs_residual_minus_estimate_J']:.2g} |")
    return "\n".join(rows), "\n".join(energy), "\n".join(coupled)


def write_readme(res, path):
    cost, energy, coupled = tables(res)
    with open(path) as f:
        text = f.read()
    for tag, body in (("cost", cost), ("energy", energy), ("coupled", coupled)):
        begin = f"<!-- chain_drive {tag}: written by chain_drive.py --readme -->\n"
        end = f"\n<!-- end of chain_drive {tag} -->"
        a, b = text.index(begin) + len(begin), text.index(end)
        text = text[:a] + body + text[b:]
    with open(path, "w") as f:
        f.write(text)


def to_json(x):
    if isinstance(x, dict):
        return {str(k): to_json(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [to_json(v) for v in x]
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    return x


def main(argv):
    fmu_dir = argv[1] if len(argv) > 1 and not argv[1].startswith("--") else os.path.join(HERE, "../../target/fmu")
    started = time.process_time()
    md = read_model_description(os.path.join(fmu_dir, "ChainDrive.fmu"))
    rtol = float(md.defaultExperiment.tolerance)
    probe = Slave(fmu_dir, "ChainDrive", {}, 1.0)
    overhead = call_overhead(probe)
    probe.close()
    p1 = {m: run_chain(fmu_dir, m, K_DEFAULT, p1_inputs, P1_STOP) for m in MODELS}
    p2 = {(m, k): run_chain(fmu_dir, m, k, p2_inputs, P2_STOP) for k in K_VALUES for m in MODELS}
    # Timing: the protocol 2 runs again; each run's cost is the least of its repeats (the one
    # least disturbed by other processes). The repeats must reproduce the outputs bit for bit.
    for _ in range(TIMING_REPEATS - 1):
        for key, rec in p2.items():
            again = run_chain(fmu_dir, key[0], key[1], p2_inputs, P2_STOP)
            if not (np.array_equal(again["pre"], rec["pre"]) and np.array_equal(again["post"], rec["post"])):
                raise RuntimeError(f"ChainDrive {key}: a repeated run gave other outputs")
            rec["ns_repeats"].append(again["ns"])
    # The reference's own accuracy: the full model at the stiffest k, 1e-4 of the default tolerance.
    fine = run_chain(fmu_dir, 1, K_VALUES[-1], p2_inputs, P2_STOP, tolerance=REF_TOLERANCE)
    coupled = {h: run_coupled(fmu_dir, h) for h in C_STEPS}
    res, books = analyse(p1, p2, coupled, overhead, rtol)
    window = taut_window(p2[(1, K_VALUES[-1])])
    res["protocol2"]["full_model_error_k1e6"] = deviations(fine, p2[(1, K_VALUES[-1])], window)
    res["cpu_time_s"] = time.process_time() - started
    out = output_dir(argv, HERE, "motorcycle")
    with open(os.path.join(out, "chain_drive_results.json"), "w") as f:
        json.dump(to_json(res), f, indent=1, sort_keys=True)
        f.write("\n")
    plot_protocol1(p1, os.path.join(out, "chain_drive_protocol1.png"))
    plot_protocol2(p2, os.path.join(out, "chain_drive_protocol2.png"))
    plot_coupled(coupled, os.path.join(out, "chain_drive_coupled.png"))
    cost, energy, coupled_table = tables(res)
    print(f"call overhead (fmi2DoStep with a NULL instance): {overhead:.0f} ns")
    print(cost, energy, coupled_table, sep="\n\n")
    print(f"CPU time {res['cpu_time_s']:.1f} s")
    if "--readme" in argv:
        write_readme(res, os.path.join(HERE, "README.md"))
    if "--check" in argv:
        check(p1, p2, coupled, res, books)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
