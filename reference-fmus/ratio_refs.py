"""The references of the variable-ratio models (generate.py): CrankSlider, CVT,
VariableRatioTransmission and VariableRatioCoupling."""
import math
import os

from stepping import (HERE, converged, deviation, input_rows, march, report, rk4_march, rk4_steps,
                      write_scenario)


# The CrankSlider's default parameters: crank radius a, rod length l (m), J (kg m2), m (kg).
CRANK = (0.05, 0.16, 0.02, 0.5)


def crank_position(phi):
    a, l, _, _ = CRANK
    return a * math.cos(phi) + math.sqrt(l * l - (a * math.sin(phi)) ** 2)


def crank_ratio(phi, e=1e-4):
    """ds/dphi, 4th-order central differences of the position (not the FMU's closed form)."""
    s = crank_position
    return (-s(phi + 2 * e) + 8 * s(phi + e) - 8 * s(phi - e) + s(phi - 2 * e)) / (12 * e)


def crank_slider_motion(inputs, n, every, sub=50, h=1e-3, interpolated=False):
    """The CrankSlider from rest at top dead centre, driven by `inputs(t)` = (tau, f) sampled at
    the communication points k h and held or interpolated over each step (`step_inputs`):
    classic RK4 with `sub` substeps per step on
    (J + m s'^2) alpha = tau + f s' - m s' s'' w^2, s' and s'' by central differences.
    Returns the input rows (one per step and the end) and the rows (time, phi, w, s, v) every
    `every` steps."""
    _, _, J, m = CRANK
    s = crank_position

    def spp(phi, e=1e-3):
        return (-s(phi + 2 * e) + 16 * s(phi + e) - 30 * s(phi) + 16 * s(phi - e) - s(phi - 2 * e)) / (12 * e * e)

    def f(_t, x, tau_f):
        phi, w = x
        tau, force = tau_f
        p1, p2 = crank_ratio(phi), spp(phi)
        return [w, (tau + force * p1 - m * p1 * p2 * w * w) / (J + m * p1 * p1)]

    def row(t, x, _u):
        phi, w = x
        return (t, phi, w, s(phi), crank_ratio(phi) * w)

    table = [inputs(k * h) for k in range(n + 1)]
    rows = rk4_march(f, [0.0, 0.0], table, h, every, row, interpolated, sub,
                     first=(0.0, 0.0, 0.0, s(0.0), 0.0))
    return input_rows(table, h), rows


def write_crank_slider(d, ins, rows, h, rtol, interpolated=None):
    write_scenario(d, "CrankSlider", ["time", "tau", "f"], ins, ["time", "phi", "w", "s", "v"],
                   rows, rows[-1][0], h, rtol, interpolated)


def crank_slider():
    """CrankSlider, default parameters, from rest at top dead centre, driven by a torque and a
    piston force sampled every 1 ms, held over each step or interpolated between the samples;
    the solutions of `crank_slider_motion`."""
    def inputs(t):
        return 2.0 + 1.5 * math.sin(5 * t), -40.0 * math.cos(3 * t)

    ins, rows = crank_slider_motion(inputs, 1000, 10)
    def solve(sub):
        return crank_slider_motion(inputs, 1000, 10, sub, interpolated=True)[1]

    interpolated = converged("CrankSlider", solve, 50)
    write_crank_slider(os.path.join(HERE, "CrankSlider"), ins, rows, 1e-3, 1e-10, interpolated)


def crank_slider_spin_up(d, n=2000):
    """The bench's spin-up run (`cargo xtask bench`, not a reference scenario): from rest, the torque
    2 + sin(5 t_k) held over each 1 ms step and no piston force, every step for `n` steps."""
    ins, rows = crank_slider_motion(lambda t: (2.0 + math.sin(5 * t), 0.0), n, 1)
    write_crank_slider(d, ins, rows, 1e-3, 1e-6)


def cvt():
    """CVT, default parameters, sheaves moving freely inside their travel: clamping forces
    near the balance F_2 = -F_1 ds1/ds2 with a 0.3 N oscillation, a slow torque on the primary.

    Independent solution: RK4 with 50 substeps per step on the Lagrange equations of
    documentation.html, the inputs held or interpolated (`rk4_steps`). s1 comes from bisection on
    the exact belt length, and ds1/ds2, d2s1/ds2^2 and d rho/ds2 come from finite differences of
    that bisection, not from the FMU's implicit-differentiation formulas.
    """
    C, D1b, D2b, c1, c2 = 0.25, 0.08, 0.12, 4.0, 4.0
    J1, J2, m1, m2 = 0.01, 0.02, 0.5, 0.8
    h, n, sub = 1e-3, 1000, 50

    def length(d1, d2):
        beta = math.asin((d2 - d1) / (2 * C))
        return 2 * C * math.cos(beta) + math.pi / 2 * (d1 + d2) + beta * (d2 - d1)

    L0 = length(D1b, D2b)

    def s1_of(s2):
        d2 = D2b + c2 * s2
        lo, hi = -0.019, 0.019  # L rises with s1: bisection to the last bit
        for _ in range(64):
            mid = 0.5 * (lo + hi)
            if length(D1b + c1 * mid, d2) > L0:
                hi = mid
            else:
                lo = mid
        return 0.5 * (lo + hi)

    def derivs(s2, e=1e-5):
        f = [s1_of(s2 + k * e) for k in (-2, -1, 0, 1, 2)]
        s1p = (f[0] - 8 * f[1] + 8 * f[3] - f[4]) / (12 * e)
        s1pp = (-f[0] + 16 * f[1] - 30 * f[2] + 16 * f[3] - f[4]) / (12 * e * e)
        rho = [(D1b + c1 * f[i]) / (D2b + c2 * (s2 + (i - 2) * e)) for i in range(5)]
        rho_p = (rho[0] - 8 * rho[1] + 8 * rho[3] - rho[4]) / (12 * e)
        return f[2], s1p, s1pp, rho[2], rho_p

    balance = -50.0 * derivs(0.0)[1]

    def inputs(t):
        return 0.02, -0.005, 50.0, balance + 0.3 * math.sin(8 * math.pi * t)

    def f(_t, x, u):
        phi1, w1, phi2, s2, v2 = x
        tau1, tau2, F1, F2 = u
        _, s1p, s1pp, rho, rho_p = derivs(s2)
        a1 = (tau1 + rho * tau2 - 2 * J2 * rho * rho_p * v2 * w1) / (J1 + J2 * rho * rho)
        a2 = (F2 + F1 * s1p - m1 * s1p * s1pp * v2 * v2 + J2 * rho * rho_p * w1 * w1) / (m2 + m1 * s1p * s1p)
        return [w1, a1, rho * w1, v2, a2]

    def row(t, x, _u):
        s1, _, _, rho, _ = derivs(x[3])
        return (t, x[0], x[1], x[2], rho * x[1], s1, x[3], x[4], 1 / rho)

    table = [inputs(k * h) for k in range(n + 1)]

    def motion(interpolated, substeps):
        rows = rk4_march(f, [0.0] * 5, table, h, 10, row, interpolated, substeps)
        assert all(-0.005 < r[6] < 0.005 for r in rows), "the sheaves must stay off their stops"
        return rows

    interpolated = converged("CVT", lambda s: motion(True, s), sub)
    names = ["time", "phi1", "w1", "phi2", "w2", "s1", "s2", "v2", "ratio"]
    write_scenario(os.path.join(HERE, "CVT"), "CVT", ["time", "tau_1", "tau_2", "F_1", "F_2"],
                   input_rows(table, h), names, motion(False, sub), n * h, h, 1e-10, interpolated)


def variable_ratio_transmission():
    """VariableRatioTransmission, default parameters (k_p = 30000, k_v = 0.05, J_B = 0.01,
    J_F = 0.02, no losses): from rest, tau_B_ext = 0.2, tau_F_ext = -0.1 while the ratio ramps
    from 0.5 to 1.25 in 0.5 s, sampled every 1 ms and held over each step or interpolated.

    Independent solution: RK4 with 1000 substeps per step (2121 rad/s * 1e-6 s = 0.002 rad per
    substep) of the equations in the documentation.
    """
    kp, kv, jb, jf = 30000.0, 0.05, 0.01, 0.02
    h, n, sub = 1e-3, 500, 1000

    def f(_t, x, u):
        w_b, w_f, phi, phi_b, phi_f = x
        tb_ext, tf_ext, r = u
        phi_dot = r * w_f - w_b
        tb = -kp * phi - kv * phi_dot
        return [(tb_ext - tb) / jb, (tf_ext + r * tb) / jf, phi_dot, w_b, w_f]

    def inputs(t):
        return 0.2, -0.1, 0.5 + 1.5 * t

    def row(t, x, u):
        w_b, w_f, phi, phi_b, phi_f = x
        tb = -kp * phi - kv * (u[2] * w_f - w_b)
        return (t, w_b, w_f, phi, phi_b, phi_f, tb, -u[2] * tb)

    table = [inputs(k * h) for k in range(n + 1)]

    def motion(interpolated, substeps):
        return rk4_march(f, [0.0] * 5, table, h, 5, row, interpolated, substeps)

    interpolated = converged("VariableRatioTransmission", lambda s: motion(True, s), sub)
    names = ["time", "w_B", "w_F", "phi", "phi_B", "phi_F", "tau_B", "tau_F"]
    # A lightly damped 338 Hz oscillation over 170 periods: the FMU needs a tight tolerance to
    # keep its phase within 1e-6 of the torque range (tau_B amplifies phi by k_p).
    write_scenario(os.path.join(HERE, "VariableRatioTransmission"), "VariableRatioTransmission",
                   ["time", "tau_B_ext", "tau_F_ext", "r"], input_rows(table, h), names,
                   motion(False, sub), n * h, h, 1e-12, interpolated)


def variable_ratio_coupling():
    """VariableRatioCoupling, default parameters, speeds and ratio sampled every 1 ms, held over
    each step or interpolated.

    Closed form: phi is the integral of dphi/dt = r w_F - w_B, constant over a step when the
    inputs are held (phi piecewise linear) and quadratic in time when they are interpolated (phi
    piecewise cubic): phi grows by h times the step's mean of dphi/dt, exact in both cases.
    tau_B = -k_p phi - k_v dphi/dt and tau_F = -r tau_B (no losses). Checked against RK4, which
    integrates a quadratic exactly.
    """
    kp, kv = 30000.0, 0.05
    h, n = 1e-3, 1000

    def inputs(t):
        return 10.0 * math.sin(2 * math.pi * t), 6.0 * math.sin(2 * math.pi * t + 0.001), 1.6 + 0.2 * t

    def rate(u):
        return u[2] * u[1] - u[0]

    def step(x, u0, u1, _t0, _t1):
        (w_b, w_f, r), (dw_b, dw_f, dr) = u0, [b - a for a, b in zip(u0, u1)]
        # The mean of (r + dr s)(w_F + dw_F s) - (w_B + dw_B s) over s in [0, 1].
        return [x[0] + (rate(u0) + ((r * dw_f + w_f * dr) / 2 + dr * dw_f / 3 - dw_b / 2)) * h]

    def exact(x, u0, u1, t0, _t1):
        return rk4_steps(lambda _t, _y, u: [rate(u)], x, u0, u1, t0, h, 1)

    def row(t, x, u):
        phi, phi_dot = x[0], rate(u)
        tb = -kp * phi - kv * phi_dot
        return (t, phi, tb, -u[2] * tb, kv * phi_dot * phi_dot)

    table = [inputs(k * h) for k in range(n + 1)]
    held, interpolated = (march(step, [0.0], table, h, 10, row, i) for i in (False, True))
    report("VariableRatioCoupling",
           deviation(interpolated, march(exact, [0.0], table, h, 10, row, True)),
           "closed form vs RK4, exact for a quadratic")
    write_scenario(os.path.join(HERE, "VariableRatioCoupling"), "VariableRatioCoupling",
                   ["time", "w_B", "w_F", "r"], input_rows(table, h),
                   ["time", "phi", "tau_B", "tau_F", "power_loss"], held, n * h, h, 1e-10,
                   interpolated)
