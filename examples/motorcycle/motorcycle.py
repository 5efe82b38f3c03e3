#!/usr/bin/env python3
"""A motorcycle accelerating through the gears and rolling into a corner: the FastDrivetrain FMU
co-simulated with FMPy at 1 ms against a vehicle written here.

    engine torque -> FastDrivetrain -> chain (torsional spring at the sprocket) -> rear wheel
                     ^ casing angular velocity (roll into a corner, yaw, pitch from the lean)

The master (this file) holds the engine torque and the chain torque over each step and gives
the casing's angular velocity as a ramp (fmi2SetRealInputDerivatives). It shifts up at 9000 rpm.
The rider rolls into a 35 degree corner between 4 and 5 s and holds it.

Signs. FastDrivetrain's casing frame has x forward, y along the shafts and z down, so y points to
the bike's right. A wheel rolling forward turns negatively about y (its angular velocity points
to the bike's left), and so do the rear sprocket, the drive sprocket and the counter shaft
(the chain turns both sprockets one way): forward is w_ds < 0. The engine torque that drives
the bike forward is negative about y, the rider leans right (roll positive about x) into a
right-hand corner (yaw positive about z, down).

Checks (--check): the drivetrain's energy balance, step by step, from its outputs alone
(engine work + chain work + casing work = change of kinetic energy + shift losses); the
shift count and losses; the gyroscopic moments against the shafts' spin angular momentum
summed here shaft by shaft from the FMU's parameters, and their sense against a real bike's:
the spin points to the left like the wheels', so in a right-hand corner the roll moment on
the casing rolls it out of the corner (left), and rolling into the right lean yaws it right.

    python motorcycle.py <dir with the .fmu files> [--check]

writes motorcycle.png and results.json next to this file.
"""
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "drivetrain"))
from drivetrain import Slave  # noqa: E402  (the same FMPy wrapper)

STOP, H = 6.0, 1e-3
ENGINE_TORQUE = 50.0         # N.m at the crank, full throttle (forward: -50 N.m about y)
SHIFT_RPM, TOP_GEAR = 9000.0, 4
FINAL_DRIVE = 42.0 / 16.0    # sprocket speed over the rear wheel's
WHEEL_RADIUS, MASS = 0.31, 200.0
J_VEHICLE = MASS * WHEEL_RADIUS**2 + 1.5   # vehicle and wheels at the rear wheel, kg.m2
CHAIN = (2000.0, 12.0)       # torsional stiffness and damping at the sprocket: N.m/rad, N.m.s/rad
LEAN, LEAN_START, LEAN_TIME = math.radians(35.0), 4.0, 1.0
RPM = 60.0 / (2.0 * math.pi)


def lean(t):
    """Roll angle and rate: a smooth (cosine) roll-in."""
    s = min(1.0, max(0.0, (t - LEAN_START) / LEAN_TIME))
    phi = LEAN * 0.5 * (1.0 - math.cos(math.pi * s))
    rate = 0.0 if s in (0.0, 1.0) else LEAN * 0.5 * math.pi / LEAN_TIME * math.sin(math.pi * s)
    return phi, rate


def casing_omega(t, speed):
    """Casing angular velocity in the casing frame (x forward, y along the shafts, z down): the
    roll rate, and the yaw rate of a steady turn, g tan(phi)/v about the vertical, which the
    lean splits between the casing's y (pitch) and z axes."""
    phi, rate = lean(t)
    yaw = 9.81 * math.tan(phi) / max(speed, 1.0)
    return np.array([rate, yaw * math.sin(phi), yaw * math.cos(phi)])


def road_torque(w_wheel):
    v = w_wheel * WHEEL_RADIUS
    return (0.5 * 1.2 * 0.45 * v * abs(v) + 0.015 * MASS * 9.81 * math.tanh(v)) * WHEEL_RADIUS


def simulate(fmu_dir):
    fd = Slave(fmu_dir, "FastDrivetrain", {"gear": 1}, STOP)
    shafts = spin_table(fd)
    k_c, c_c = CHAIN
    omega_vrs = [fd.vr[n] for n in ("omega_x", "omega_y", "omega_z")]
    n = int(round(STOP / H))
    keys = ["time", "gear", "rpm", "speed", "M_x", "M_y", "M_z", "omega_x", "omega_y", "omega_z",
            "E_kin", "residual", "tau_chain", "spin_y", "spin_rel", "w_ds"]
    rec = {k: np.zeros(n + 1) for k in keys}
    theta_w = w_w = 0.0
    gear, shifts = 1, []
    work = 0.0
    omega0 = casing_omega(0.0, 0.0)
    for k in range(n + 1):
        t = k * H
        theta, w_ds, e_kin = fd.get("theta_ds", "w_ds", "E_kin")
        # The chain in the forward sense: the sprocket's forward angle is -theta_ds; the torque
        # it applies to the sprocket shaft about y is -tau_chain.
        tau_chain = -k_c * (-theta - FINAL_DRIVE * theta_w) - c_c * (-w_ds - FINAL_DRIVE * w_w)
        tau_ext, tau_eng = -tau_chain, -ENGINE_TORQUE
        rpm = abs(fd.get("w_eng")[0]) * RPM
        m = fd.get("M_x", "M_y", "M_z")
        # The shafts' spin momentum about y, from the complete model's view: p = gamma omega_y +
        # delta w_ds, of which (gamma/delta) p is what the casing feels gyroscopically.
        gamma, delta, p = fd.get("gamma", "delta", "p")
        rec_values = dict(time=t, gear=gear, rpm=rpm, speed=w_w * WHEEL_RADIUS * 3.6,
                          M_x=m[0], M_y=m[1], M_z=m[2], omega_x=omega0[0], omega_y=omega0[1],
                          omega_z=omega0[2], E_kin=e_kin, tau_chain=tau_chain,
                          spin_y=gamma / delta * p, w_ds=w_ds,
                          spin_rel=sum(j * r[gear - 1] for j, r in shafts) * w_ds)
        for key, value in rec_values.items():
            rec[key][k] = value
        if k == n:
            break
        if rpm >= SHIFT_RPM and gear < TOP_GEAR:
            gear += 1
            fd.set("gear", gear)
        # The ramp ends where the next one starts: omega stays continuous.
        omega1 = casing_omega(t + H, w_w * WHEEL_RADIUS)
        slope = (omega1 - omega0) / H
        fd.set("tau_eng", tau_eng)
        fd.set("tau_ext", tau_ext)
        for name, value in zip(("omega_x", "omega_y", "omega_z"), omega0):
            fd.set(name, value)
        fd.fmu.setRealInputDerivatives(omega_vrs, [1, 1, 1], list(slope))
        count0 = fd.fmu.getInteger([fd.vr["shift_count"]])[0]
        fd.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=H)
        # The energy balance of the step, exact with the torques held and omega linear (see
        # the FMU's documentation): d_spin = 0, so M_y is constant over the step.
        theta1, e1, m_y, rho_eng, alpha, j_pitch = fd.get(
            "theta_ds", "E_kin", "M_y", "rho_eng", "alpha", "J_pitch")
        d_theta, mean_wy = theta1 - theta, 0.5 * (omega0[1] + omega1[1])

        def rigid(w):
            return 0.5 * (alpha * (w[0] ** 2 + w[2] ** 2) + j_pitch * w[1] ** 2)
        step_work = (tau_eng * rho_eng * d_theta + tau_ext * (mean_wy * H + d_theta)
                     - m_y * mean_wy * H + rigid(omega1) - rigid(omega0))
        change = e1 - e_kin
        if fd.fmu.getInteger([fd.vr["shift_count"]])[0] > count0:
            loss, impulse = fd.get("shift_loss", "shift_impulse")
            shifts.append(dict(time=t, gear=gear, loss_J=loss, impulse_Nms=impulse,
                               rpm_before=rpm, rpm_after=abs(fd.get("w_eng")[0]) * RPM))
            change += loss + omega0[1] * impulse
        work += step_work
        rec["residual"][k + 1] = rec["residual"][k] + (step_work - change)
        # The rear wheel and the vehicle (semi-implicit Euler at the master step).
        w_w += H * (-FINAL_DRIVE * tau_chain - road_torque(w_w)) / J_VEHICLE
        theta_w += H * w_w
        omega0 = omega1
    energy_shift = fd.get("energy_shift")[0]
    fd.close()
    return rec, shifts, work, energy_shift


def spin_table(fd):
    """[(Jyy_k, [rho[g,k] for each gear])] of the shafts in use, from the FMU's parameters."""
    n_shafts, n_gears = (int(fd.fmu.getInteger([fd.vr[v]])[0]) for v in ("nShafts", "nGears"))
    return [(fd.get(f"Jyy[{k}]")[0], [fd.get(f"rho[{g},{k}]")[0] for g in range(1, n_gears + 1)])
            for k in range(1, n_shafts + 1)]


def plot(rec, shifts, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(4, 1, figsize=(9, 10), sharex=True)
    t = rec["time"]
    ax[0].plot(t, rec["rpm"], label="engine speed (rpm)")
    ax[0].set_ylabel("rpm")
    twin = ax[0].twinx()
    twin.plot(t, rec["speed"], "C1", label="road speed (km/h)")
    twin.set_ylabel("km/h")
    ax[0].set_title("FastDrivetrain: through the gears and into a 35 degree corner")
    ax[1].plot(t, np.degrees(rec["omega_x"]), label="roll rate")
    ax[1].plot(t, np.degrees(rec["omega_y"]), label="pitch rate (casing y)")
    ax[1].plot(t, np.degrees(rec["omega_z"]), label="yaw rate (casing z)")
    ax[1].set_ylabel("deg/s")
    ax[1].legend(loc="upper left")
    ax[2].plot(t, rec["M_x"], label="M_x, gyroscopic roll moment")
    ax[2].plot(t, rec["M_z"], label="M_z, gyroscopic yaw moment")
    ax[2].set_ylabel("N.m on the casing")
    ax[2].legend(loc="upper left")
    ax[3].stem([s["time"] for s in shifts], [s["loss_J"] for s in shifts])
    for s in shifts:
        ax[3].annotate(f"{s['gear'] - 1}->{s['gear']}", (s["time"], s["loss_J"]))
    ax[3].set_ylabel("J dissipated by the shift")
    ax[3].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


def check(rec, shifts, work, energy_shift):
    """What the README claims, asserted."""
    residual = float(np.max(np.abs(rec["residual"])))
    assert residual < 1e-9 * work, (residual, work)
    assert [s["gear"] for s in shifts] == [2, 3, 4], shifts
    assert all(s["loss_J"] > 0.0 for s in shifts), shifts
    assert abs(sum(s["loss_J"] for s in shifts) - energy_shift) < 1e-12 * energy_shift
    # An upshift engages a taller ratio: the engine, with most of the spin inertia, slows less
    # than the ratio step while the sprocket shaft speeds up.
    for s in shifts:
        assert s["rpm_after"] < s["rpm_before"], s
    # Forward is w_ds < 0: the bike rolls forward from the first steps on.
    moving = rec["time"] > 0.1
    assert np.all(rec["w_ds"][moving] < 0.0) and rec["speed"][-1] > 100.0, "forward is w_ds < 0"
    # The gyroscopic moments from first principles. The shafts spin relative to the casing with
    # angular momentum h = sum_k Jyy_k rho_k w_ds about y (summed above from the parameters);
    # the casing turning at omega turns h, which takes the moment omega x h from the casing:
    # on the casing, h x omega = (h omega_z, 0, -h omega_x). Beyond h, the FMU's (gamma/delta) p
    # holds (gamma^2/delta) omega_y, the shafts' share of the pitch rate: bounded here by
    # beta |omega_y|, under 1 % of h in the corner.
    corner = rec["time"] > LEAN_START + LEAN_TIME
    roll_in = (rec["time"] > LEAN_START + 0.2) & (rec["time"] < LEAN_START + LEAN_TIME - 0.2)
    assert np.all(rec["spin_rel"][moving] < 0.0), "the shafts' net spin points left, as the wheels'"
    for key, sign, omega in (("M_x", 1.0, "omega_z"), ("M_z", -1.0, "omega_x")):
        expected = sign * rec["spin_rel"] * rec[omega]
        scale = np.max(np.abs(expected))
        assert np.max(np.abs(rec[key] - expected)) < 0.01 * scale, key
        # And exactly as the FMU states it, with its own p.
        exact = sign * rec["spin_y"] * rec[omega]
        assert np.max(np.abs(rec[key] - exact)) < 1e-9 * np.max(np.abs(rec[key])) + 1e-12, key
    # The sense a rider feels: leaning right into a right-hand corner, the spin rolls the bike
    # out of the corner (M_x < 0, to the left) and, while rolling in, yaws it right (M_z > 0).
    assert np.all(rec["M_x"][corner] < -0.3), "the roll moment in the corner points out of it"
    assert np.all(rec["M_z"][roll_in] > 0.0), "rolling in to the right yaws right"
    print("motorcycle: all checks passed")


def main(argv):
    fmu_dir = argv[1] if len(argv) > 1 else os.path.join(HERE, "../../target/fmu")
    rec, shifts, work, energy_shift = simulate(fmu_dir)
    results = dict(
        shifts=shifts,
        energy_shift_J=energy_shift,
        drivetrain_work_J=work,
        max_abs_energy_residual_J=float(np.max(np.abs(rec["residual"]))),
        final_speed_kmh=float(rec["speed"][-1]),
        max_roll_moment_Nm=float(np.max(np.abs(rec["M_x"]))),
        max_yaw_moment_Nm=float(np.max(np.abs(rec["M_z"]))),
    )
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump(results, f, indent=2, sort_keys=True)
        f.write("\n")
    plot(rec, shifts, os.path.join(HERE, "motorcycle.png"))
    print(json.dumps(results, indent=1))
    if "--check" in argv:
        check(rec, shifts, work, energy_shift)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
