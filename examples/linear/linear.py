#!/usr/bin/env python3
"""The linear model of the VariableRatioTransmission, as `cargo xtask linearize` writes it, used
from Python: its modes, a Bode plot, and a check against the FMU itself in FMPy.

    cargo xtask package
    cargo xtask linearize VariableRatioTransmission --at 0
    python linear.py <dir with the .fmu files> [--check]

Reads target/linear/VariableRatioTransmission.json (A, B, C, D at t = 0 of the reference
scenario: r = 0.5, tau_B_ext = 0.2 N.m, tau_F_ext = -0.1 N.m). Checks:
- numpy's eigenvalues of A are the JSON's;
- the torsional mode's frequency is the closed form w_n^2 = k_p (1/J_B + r^2/J_F);
- the FMU, simulated in FMPy with those inputs held, rings at the mode's damped frequency
  (zero crossings of the compliance angle about its mean, within 1e-4).
Writes the Bode plot of tau_F / tau_B_ext to target/examples/linear_bode.png.
"""
import argparse
import json
import os
import sys

import numpy as np
from fmpy import read_model_description, simulate_fmu

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("fmu_dir")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    with open(os.path.join(ROOT, "target", "linear", "VariableRatioTransmission.json")) as f:
        lin = json.load(f)
    A, B, C, D = (np.array(lin[k], dtype=float) for k in "ABCD")
    u = dict(zip(lin["inputs"], lin["u"]))

    # The eigenvalues, from numpy (LAPACK), against the JSON's (nalgebra's), each matched to the
    # nearest. The rigid rotation's zero is double and defective (angle and speed), so either
    # solver puts it within sqrt(eps) |A| of 0: 1e-7 of the largest eigenvalue covers that.
    ours = list(np.linalg.eigvals(A))
    theirs = [complex(re, im) for re, im in lin["eigenvalues"]]
    scale = max(abs(z) for z in ours)
    for z in theirs:
        nearest = min(ours, key=lambda w: abs(w - z))
        assert abs(nearest - z) < 1e-7 * scale, (z, ours)
        ours.remove(nearest)

    # The mode against its closed form, with the FMU's parameters (their start values).
    (mode,) = lin["modes"]
    fmu = os.path.join(args.fmu_dir, "VariableRatioTransmission.fmu")
    start = {v.name: v.start for v in read_model_description(fmu).modelVariables}
    k_p, J_B, J_F = (float(start[n]) for n in ("k_p", "J_B", "J_F"))
    f_n = np.sqrt(k_p * (1 / J_B + u["r"] ** 2 / J_F)) / (2 * np.pi)
    assert abs(mode["frequency_hz"] - f_n) < 1e-9 * f_n, (mode, f_n)
    f_d = mode["frequency_hz"] * np.sqrt(1 - mode["damping_ratio"] ** 2)
    print(f"torsional mode at r = {u['r']}: {mode['frequency_hz']:.4f} Hz, "
          f"damping ratio {mode['damping_ratio']:.6f}, damped {f_d:.4f} Hz")

    # The FMU rings at that frequency: the inputs of the operating point held from rest.
    stop = 0.05
    inputs = np.array([(0.0, u["tau_B_ext"], u["tau_F_ext"], u["r"]),
                       (stop, u["tau_B_ext"], u["tau_F_ext"], u["r"])],
                      dtype=[("time", float), ("tau_B_ext", float), ("tau_F_ext", float),
                             ("r", float)])
    result = simulate_fmu(fmu, stop_time=stop, output_interval=1e-5, input=inputs,
                          output=["phi"], relative_tolerance=1e-10)
    t, phi = result["time"], result["phi"]
    later = t > 0.01
    swing = phi[later] - phi[later].mean()
    up = np.where((swing[:-1] < 0) & (swing[1:] >= 0))[0]
    # Each upward crossing located by linear interpolation between samples.
    tt = t[later]
    crossings = tt[up] - swing[up] * (tt[up + 1] - tt[up]) / (swing[up + 1] - swing[up])
    f_fmu = (len(crossings) - 1) / (crossings[-1] - crossings[0])
    print(f"the FMU in FMPy rings at {f_fmu:.4f} Hz ({len(crossings) - 1} periods)")
    # Measured: 3.4e-6 apart; 1e-4 leaves a margin of 30.
    assert abs(f_fmu - f_d) < 1e-4 * f_d, (f_fmu, f_d)

    # Bode plot of tau_F / tau_B_ext from the linear model.
    i, j = lin["outputs"].index("tau_F"), lin["inputs"].index("tau_B_ext")
    hz = np.logspace(0, 4, 600)
    response = [C[i] @ np.linalg.solve(2j * np.pi * f * np.eye(len(A)) - A, B[:, j]) + D[i, j]
                for f in hz]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    top.semilogx(hz, 20 * np.log10(np.abs(response)))
    top.axvline(mode["frequency_hz"], color="grey", linestyle="--")
    top.set_ylabel("|tau_F / tau_B_ext| [dB]")
    bottom.semilogx(hz, np.degrees(np.angle(response)))
    bottom.set_ylabel("phase [deg]")
    bottom.set_xlabel("frequency [Hz]")
    fig.suptitle(f"VariableRatioTransmission at r = {u['r']}, t = {lin['time']} s")
    out = os.path.join(ROOT, "target", "examples")
    os.makedirs(out, exist_ok=True)
    fig.savefig(os.path.join(out, "linear_bode.png"), dpi=100)
    print("checked" if args.check else "wrote target/examples/linear_bode.png")


if __name__ == "__main__":
    sys.exit(main())
