#!/usr/bin/env python3
"""Writes the reference results in reference-fmus/ from independent closed-form solutions.

Nothing here calls an FMU: each model's equations are solved analytically, in plain Python,
from the derivation in its documentation. Files follow the FMI Cross-Check layout:
<Model>_in.csv (inputs), <Model>_ref.csv (reference outputs), <Model>_ref.opt (settings).

Input signals are piecewise constant with their jumps on communication points, which is what
a master without input derivatives applies (sample and hold), so the closed form is the exact
solution of the co-simulation, not an approximation of it.
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def write_csv(path, names, rows):
    with open(path, "w") as f:
        f.write(",".join(f'"{n}"' for n in names) + "\n")
        for row in rows:
            f.write(",".join(repr(float(x)) for x in row) + "\n")


def write_opt(path, start, stop, step, rtol):
    with open(path, "w") as f:
        f.write(f"StartTime,{start!r}\nStopTime,{stop!r}\nStepSize,{step!r}\nRelTol,{rtol!r}\n")


def gear():
    """Ideal gear, default parameters: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a."""
    ratio, J_a, J_b = 2.0, 0.1, 0.2
    J = J_b + ratio**2 * J_a
    # (time the value starts, tau_a, tau_b): tau_b reverses at 0.4 s, tau_a at 0.8 s, so the gear
    # accelerates from rest, decelerates, passes zero speed near 1.13 s, and reverses.
    pieces = [(0.0, 0.5, 0.2), (0.4, 0.5, -0.3), (0.8, -1.0, -0.3), (1.6, 0.25, -0.3)]
    start, stop, step = 0.0, 2.0, 1e-3

    inputs = []
    for i, (t0, ta, tb) in enumerate(pieces):
        t1 = pieces[i + 1][0] if i + 1 < len(pieces) else stop
        inputs += [(t0, ta, tb), (t1, ta, tb)]

    def state(t):
        """phi_b, w_b at t, integrating the constant accelerations piece by piece."""
        phi, w = 0.0, 0.0
        for i, (t0, ta, tb) in enumerate(pieces):
            t1 = pieces[i + 1][0] if i + 1 < len(pieces) else stop
            a = (tb + ratio * ta) / J
            dt = min(t, t1) - t0
            if dt <= 0:
                break
            phi += w * dt + 0.5 * a * dt * dt
            w += a * dt
        return phi, w

    def torques(t):
        """Inputs acting at a recorded point: the master sets new inputs only before the next
        step, so a point at a jump still shows the inputs of the step that ended there."""
        current = pieces[0]
        for p in pieces:
            if p[0] < t - 1e-12:
                current = p
        return current[1], current[2]

    names = ["time", "phi_a", "w_a", "a_a", "phi_b", "w_b", "a_b", "tau_mesh", "power_loss"]
    rows = []
    for k in range(201):  # every 10 ms
        t = round(k * 0.01, 10)
        phi_b, w_b = state(t)
        ta, tb = torques(t)
        a_b = (tb + ratio * ta) / J
        a_a = ratio * a_b
        rows.append((t, ratio * phi_b, ratio * w_b, a_a, phi_b, w_b, a_b, J_a * a_a - ta, 0.0))

    d = os.path.join(HERE, "Gear")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "Gear_in.csv"), ["time", "tau_a", "tau_b"], inputs)
    write_csv(os.path.join(d, "Gear_ref.csv"), names, rows)
    write_opt(os.path.join(d, "Gear_ref.opt"), start, stop, step, 1e-8)


def lossy_gear():
    """LossyGear, default parameters = the seed's LossyGearDemo3 case.

    ratio 1, J_a = J_b = 0.001, loss table [0, 0.25, 0.25, 0.625, 2.5], both sides at
    10 rad/s, tau_a = 0, tau_b steps 0 -> 1 N.m at 0.5 s.

    By hand (documentation.html): bf_a = (0.625 - 2.5)/(0.25 - 1/0.25) = 0.5. Rolling forward
    with no external torque, Newton on both sides gives -T = g(T) with g the quadrant line;
    both quadrants give T = 0.5 (tau_eta = 0), so tauLoss = T - g(T) = 1 and
    a = (tau_b + ratio (tau_a - tauLoss)) / (J_b + ratio^2 J_a) = -1/0.002 = -500 rad/s^2.
    The gear stops at t = 10/500 = 0.02 s, phi = 10*0.02 - 250*0.02^2 = 0.1 rad, having
    dissipated all its kinetic energy, 0.1 J. At 0.5 s the torque tau_b = 1 asks the friction
    for sa = tau_a + tau_b/ratio = 1 N.m inside the band [-2.5, 2.5]: it stays stuck.
    """
    w0, a, t_stop = 10.0, -500.0, 0.02
    stop = 1.0
    inputs = [(0.0, 0.0, 0.0), (0.5, 0.0, 0.0), (0.5, 0.0, 1.0), (stop, 0.0, 1.0)]
    names = ["time", "phi_a", "w_a", "a_a", "phi_b", "w_b", "a_b", "tau_mesh", "tau_loss",
             "power_loss", "energy_loss", "mode"]
    rows = []
    # A 3 ms grid keeps the reference points off the two instants (0.02 s, 0.5 s) at which the
    # value a master records depends on which side of the step the switch falls.
    times = [round(k * 0.003, 10) for k in range(334)] + [stop]
    for t in times:
        if t < t_stop:
            w = w0 + a * t
            phi = w0 * t + 0.5 * a * t * t
            rows.append((t, phi, w, a, phi, w, a, -0.5, 1.0, w, 0.001 * (w0**2 - w**2), 1))
        else:
            tau_b = 1.0 if t > 0.5 else 0.0
            rows.append((t, 0.1, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, tau_b, 0.0, 0.1, 0))
    d = os.path.join(HERE, "LossyGear")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "LossyGear_in.csv"), ["time", "tau_a", "tau_b"], inputs)
    write_csv(os.path.join(d, "LossyGear_ref.csv"), names, rows)
    write_opt(os.path.join(d, "LossyGear_ref.opt"), 0.0, stop, 1e-3, 1e-8)


class LossyGearEquations:
    """The lossy gear for one constant loss row, built from physical elements rather than the
    FMU's quadrant rule: a Coulomb bearing bf_a on shaft a, a mesh passing power with efficiency
    eta1 when shaft a drives it and eta2 when shaft b does, and a Coulomb bearing bf_b on shaft b
    (torques referred to flange a). Matching the MSL quadrant lines gives
    bf1 = eta1 bf_a + bf_b and bf2 = bf_a / eta2 + bf_b (derivation: tests/tests/lossy_gear.rs,
    `Reference`). The mesh's driving side is found by solving both and keeping the one whose
    mesh power has the assumed sign; at rest, a direction is taken when rolling that way
    accelerates that way. Dissipation is summed element by element."""

    def __init__(self, ratio, j_a, j_b, eta1, eta2, bf1, bf2):
        self.r, self.j_a, self.j_b = ratio, j_a, j_b
        self.eta1, self.eta2 = eta1, eta2
        det = eta1 - 1.0 / eta2
        self.bf_a = (bf1 - bf2) / det
        self.bf_b = (bf2 * eta1 - bf1 / eta2) / det

    def rolling(self, tau_a, tau_b, direction):
        """(flange torque, dissipated power per unit speed of flange a, a_b) while rolling.

        Referred to flange a, m the torque shaft a hands to the mesh, k the mesh's torque ratio:
        J_a a = tau_a - dir bf_a - m and J_b/r^2 a = tau_b/r + k m - dir bf_b."""
        r, ja, jb = self.r, self.j_a, self.j_b / self.r**2

        def solve(k):
            a = (tau_b / r + k * (tau_a - direction * self.bf_a) - direction * self.bf_b) / (jb + k * ja)
            return a, tau_a - direction * self.bf_a - ja * a

        k = self.eta1
        a, m = solve(k)
        if m * direction < 0.0:
            k = 1.0 / self.eta2
            a, m = solve(k)
            assert m * direction <= 1e-12, "no consistent mesh mode"
        dissipation = direction * (self.bf_a + self.bf_b) + (1.0 - k) * m
        return tau_a - ja * a, dissipation, a / r

    def breakaway(self, tau_a, tau_b):
        """+1 / -1 when a gear at rest breaks away forward / backward, else 0."""
        if self.rolling(tau_a, tau_b, 1.0)[2] * self.r > 0.0:
            return 1
        if self.rolling(tau_a, tau_b, -1.0)[2] * self.r < 0.0:
            return -1
        return 0


def lossy_gear_breakaway():
    """LossyGear scenario (b)+(c) with the default parameters: after the seed's stop at 0.02 s,
    tau_b = 4 sin(3 pi t) breaks the gear away forward, it stops, breaks away backward, stops,
    breaks away forward again. energy_loss integrates the elements' dissipation (bearings and
    mesh), and tau_loss is that dissipation per unit speed of flange a.

    The master holds each input over a 1 ms step, so inside a step the acceleration is constant:
    the speed is linear, a stop is at t_k - w/a exactly, and a gear at rest can only break away
    at a communication point. That makes this solution exact, step by step.
    """
    eq = LossyGearEquations(1.0, 0.001, 0.001, 0.25, 0.25, 0.625, 2.5)
    h, n, stride = 1e-3, 1000, 10

    def u(k):
        return 4.0 * math.sin(3.0 * math.pi * k * h)

    mode, w, phi, energy = 1, 10.0, 0.0, 0.0
    names = ["time", "phi_b", "w_b", "a_b", "tau_mesh", "tau_loss", "power_loss", "energy_loss",
             "mode"]

    def outputs(tau_b):
        if mode == 0:
            return (0.0, -0.0, tau_b, 0.0)
        t, loss, a = eq.rolling(0.0, tau_b, mode)
        return (a, -t, loss, loss * w)

    rows = [(0.0, phi, w) + outputs(u(0)) + (energy, mode)]
    switches = []
    for k in range(n):
        tau_b = u(k)
        if mode == 0 and eq.breakaway(0.0, tau_b):
            mode = eq.breakaway(0.0, tau_b)
            switches.append(k * h)
        t, t_end = k * h, (k + 1) * h
        while t_end - t > 1e-15:
            if mode == 0:
                break
            _, loss, a = eq.rolling(0.0, tau_b, mode)
            dt = t_end - t
            if (w + a * dt) * mode <= 0.0:  # stops inside the step
                dt = -w / a
                assert dt > 1e-9 and t_end - t - dt > 1e-9, "a stop too close to a step end"
            phi += w * dt + 0.5 * a * dt * dt
            energy += loss * (w + 0.5 * a * dt) * dt
            w += a * dt
            t += dt
            if t_end - t > 1e-15:
                switches.append(t)
                w = 0.0
                # A reversal passes through Stuck; it may break away at once.
                mode = eq.breakaway(0.0, tau_b)
                if mode:
                    switches.append(t)
        if (k + 1) % stride == 0:
            rows.append((round(t_end, 10), phi, w) + outputs(tau_b) + (energy, mode))
    assert len(switches) >= 5, switches
    d = os.path.join(HERE, "LossyGear", "breakaway")
    os.makedirs(d, exist_ok=True)
    inputs = [(round(k * h, 10), 0.0, u(k)) for k in range(n + 1)]
    write_csv(os.path.join(d, "LossyGear_in.csv"), ["time", "tau_a", "tau_b"], inputs)
    write_csv(os.path.join(d, "LossyGear_ref.csv"), names, rows)
    write_opt(os.path.join(d, "LossyGear_ref.opt"), 0.0, n * h, h, 1e-8)
    return switches


def rk4(f, x, t, dt):
    k1 = f(t, x)
    k2 = f(t + dt / 2, [a + dt / 2 * b for a, b in zip(x, k1)])
    k3 = f(t + dt / 2, [a + dt / 2 * b for a, b in zip(x, k2)])
    k4 = f(t + dt, [a + dt * b for a, b in zip(x, k3)])
    return [a + dt / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]


# The CrankSlider's default parameters: crank radius a, rod length l (m), J (kg m2), m (kg).
CRANK = (0.05, 0.16, 0.02, 0.5)


def crank_position(phi):
    a, l, _, _ = CRANK
    return a * math.cos(phi) + math.sqrt(l * l - (a * math.sin(phi)) ** 2)


def crank_ratio(phi, e=1e-4):
    """ds/dphi, 4th-order central differences of the position (not the FMU's closed form)."""
    s = crank_position
    return (-s(phi + 2 * e) + 8 * s(phi + e) - 8 * s(phi - e) + s(phi - 2 * e)) / (12 * e)


def crank_slider_motion(inputs, n, every, sub=50, h=1e-3):
    """The CrankSlider from rest at top dead centre, `inputs(t)` = (tau, f) held over each step
    of `h`: classic RK4 with `sub` substeps per step on
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

    x = [0.0, 0.0]
    rows = [(0.0, 0.0, 0.0, s(0.0), 0.0)]
    ins = []
    for k in range(n):
        u = inputs(k * h)
        ins.append((round(k * h, 10),) + u)
        for j in range(sub):
            x = rk4(lambda t, y: f(t, y, u), x, k * h + j * h / sub, h / sub)
        if (k + 1) % every == 0:
            phi, w = x
            rows.append((round((k + 1) * h, 10), phi, w, s(phi), crank_ratio(phi) * w))
    ins.append((round(n * h, 10),) + inputs(n * h))
    return ins, rows


def write_crank_slider(d, ins, rows, h, rtol):
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "CrankSlider_in.csv"), ["time", "tau", "f"], ins)
    write_csv(os.path.join(d, "CrankSlider_ref.csv"), ["time", "phi", "w", "s", "v"], rows)
    write_opt(os.path.join(d, "CrankSlider_ref.opt"), 0.0, rows[-1][0], h, rtol)


def crank_slider():
    """CrankSlider, default parameters, from rest at top dead centre, driven by a torque and a
    piston force held over each 1 ms step; the solution of `crank_slider_motion`."""
    ins, rows = crank_slider_motion(
        lambda t: (2.0 + 1.5 * math.sin(5 * t), -40.0 * math.cos(3 * t)), 1000, 10)
    write_crank_slider(os.path.join(HERE, "CrankSlider"), ins, rows, 1e-3, 1e-10)


def crank_slider_spin_up(d, n=2000):
    """Issue 11's run (`cargo xtask bench`, not a reference scenario): from rest, the torque
    2 + sin(5 t_k) held over each 1 ms step and no piston force, every step for `n` steps."""
    ins, rows = crank_slider_motion(lambda t: (2.0 + math.sin(5 * t), 0.0), n, 1)
    write_crank_slider(d, ins, rows, 1e-3, 1e-6)


def cvt():
    """CVT, default parameters, sheaves moving freely inside their travel: clamping forces
    near the balance F_2 = -F_1 ds1/ds2 with a 0.3 N oscillation, a slow torque on the primary.

    Independent solution: RK4 with 50 substeps per step on the Lagrange equations of
    documentation.html. s1 comes from bisection on the exact belt length, and ds1/ds2,
    d2s1/ds2^2 and d rho/ds2 come from finite differences of that bisection, not from the
    FMU's implicit-differentiation formulas.
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

    x = [0.0, 0.0, 0.0, 0.0, 0.0]
    names = ["time", "phi1", "w1", "phi2", "w2", "s1", "s2", "v2", "ratio"]

    def row(t, x):
        s1, _, _, rho, _ = derivs(x[3])
        return (t, x[0], x[1], x[2], rho * x[1], s1, x[3], x[4], 1 / rho)

    rows = [row(0.0, x)]
    ins = []
    for k in range(n):
        u = inputs(k * h)
        ins.append((round(k * h, 10),) + u)
        for j in range(sub):
            x = rk4(lambda t, y: f(t, y, u), x, k * h + j * h / sub, h / sub)
        if (k + 1) % 10 == 0:
            rows.append(row(round((k + 1) * h, 10), x))
    ins.append((round(n * h, 10),) + inputs(n * h))
    assert all(-0.005 < r[6] < 0.005 for r in rows), "the sheaves must stay off their stops"
    d = os.path.join(HERE, "CVT")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "CVT_in.csv"), ["time", "tau_1", "tau_2", "F_1", "F_2"], ins)
    write_csv(os.path.join(d, "CVT_ref.csv"), names, rows)
    write_opt(os.path.join(d, "CVT_ref.opt"), 0.0, n * h, h, 1e-10)


def variable_ratio_transmission():
    """VariableRatioTransmission, default parameters (k_p = 30000, k_v = 0.05, J_B = 0.01,
    J_F = 0.02, no losses): from rest, tau_B_ext = 0.2, tau_F_ext = -0.1 while the ratio ramps
    from 0.5 to 1.25 in 0.5 s, held by the master over each 1 ms step.

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

    x = [0.0] * 5
    names = ["time", "w_B", "w_F", "phi", "phi_B", "phi_F", "tau_B", "tau_F"]

    def row(t, x, u):
        w_b, w_f, phi, phi_b, phi_f = x
        tb = -kp * phi - kv * (u[2] * w_f - w_b)
        return (t, w_b, w_f, phi, phi_b, phi_f, tb, -u[2] * tb)

    rows, ins = [row(0.0, x, inputs(0.0))], []
    for k in range(n):
        u = inputs(k * h)
        ins.append((round(k * h, 10),) + u)
        for j in range(sub):
            x = rk4(lambda t, y: f(t, y, u), x, k * h + j * h / sub, h / sub)
        if (k + 1) % 5 == 0:
            rows.append(row(round((k + 1) * h, 10), x, u))
    ins.append((round(n * h, 10),) + inputs(n * h))
    d = os.path.join(HERE, "VariableRatioTransmission")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "VariableRatioTransmission_in.csv"), ["time", "tau_B_ext", "tau_F_ext", "r"], ins)
    write_csv(os.path.join(d, "VariableRatioTransmission_ref.csv"), names, rows)
    # A lightly damped 338 Hz oscillation over 170 periods: the FMU needs a tight tolerance to
    # keep its phase within 1e-6 of the torque range (tau_B amplifies phi by k_p).
    write_opt(os.path.join(d, "VariableRatioTransmission_ref.opt"), 0.0, n * h, h, 1e-12)


def variable_ratio_coupling():
    """VariableRatioCoupling, default parameters, speeds and ratio held over each 1 ms step.

    Closed form: with the inputs constant over a step, dphi/dt = r w_F - w_B is constant, so phi
    is exactly piecewise linear; tau_B = -k_p phi - k_v dphi/dt and tau_F = -r tau_B (no losses).
    """
    kp, kv = 30000.0, 0.05
    h, n = 1e-3, 1000

    def inputs(t):
        return 10.0 * math.sin(2 * math.pi * t), 6.0 * math.sin(2 * math.pi * t + 0.001), 1.6 + 0.2 * t

    phi = 0.0
    names = ["time", "phi", "tau_B", "tau_F", "power_loss"]

    def row(t, u):
        w_b, w_f, r = u
        phi_dot = r * w_f - w_b
        tb = -kp * phi - kv * phi_dot
        return (t, phi, tb, -r * tb, kv * phi_dot * phi_dot)

    rows, ins = [row(0.0, inputs(0.0))], []
    for k in range(n):
        u = inputs(k * h)
        ins.append((round(k * h, 10),) + u)
        phi += (u[2] * u[1] - u[0]) * h
        if (k + 1) % 10 == 0:
            rows.append(row(round((k + 1) * h, 10), u))
    ins.append((round(n * h, 10),) + inputs(n * h))
    d = os.path.join(HERE, "VariableRatioCoupling")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "VariableRatioCoupling_in.csv"), ["time", "w_B", "w_F", "r"], ins)
    write_csv(os.path.join(d, "VariableRatioCoupling_ref.csv"), names, rows)
    write_opt(os.path.join(d, "VariableRatioCoupling_ref.opt"), 0.0, n * h, h, 1e-10)


def fast_drivetrain():
    """FastDrivetrain, default parameters (the four-shaft twin in first gear), from rest: a
    pulsing engine torque against a growing chain load while the casing rolls, pitches and
    yaws, every input held over each 1 ms step.

    Independent solution: the complete four-shaft model, shaft by shaft, not the two discs.
    With the inputs held over a step, d/dt sum_k rho_k Jyy_k Omega_k,y = Q is constant, so the
    sprocket speed is exactly linear and its angle quadratic within a step; when the casing's
    omega_y jumps at a communication point, sum_k rho_k Jyy_k Omega_k,y (the spin's momentum,
    on which no impulsive torque acts) is continuous. The casing moment is Newton-Euler per
    shaft, M = tau_ext e_y - sum_k (J_k dOmega_k/dt + omega x J_k Omega_k), less the rigid part
    omega x J_eff omega the host carries (J_eff = diag(alpha, beta - gamma^2/delta, alpha)).
    """
    primary, g1 = 1.925, 2.846
    # (m, Jxx, Jyy, rho in first gear): crank, balancer, main shaft, counter shaft
    shafts = [(8.0, 0.06, 0.009, primary * g1), (1.8, 0.012, 0.0012, -primary * g1),
              (3.5, 0.02, 0.0045, -g1), (2.8, 0.016, 0.0012, 1.0)]
    rho_crank = shafts[0][3]
    gamma = sum(r * jy for _, _, jy, r in shafts)
    delta = sum(r * r * jy for _, _, jy, r in shafts)
    alpha = sum(jx for _, jx, _, _ in shafts)
    beta = sum(jy for _, _, jy, _ in shafts)
    j_eff = (alpha, beta - gamma * gamma / delta, alpha)
    h, n = 1e-3, 2000

    def inputs(t):
        return (40.0 + 20.0 * math.sin(2 * math.pi * 3 * t), -120.0 - 40.0 * t,
                0.8 * math.sin(math.pi * t), 0.1 * math.sin(2 * math.pi * t), 0.3 * math.sin(0.5 * math.pi * t))

    def cross(a, b):
        return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

    def row(t, theta, w, u):
        tau_eng, tau_ext, *omega = u
        w_dot = (rho_crank * tau_eng + tau_ext) / delta
        moment = [0.0, tau_ext, 0.0]
        energy = momentum = 0.0
        for _, jx, jy, r in shafts:
            big = (omega[0], omega[1] + r * w, omega[2])
            jw = (jx * big[0], jy * big[1], jx * big[2])
            gyro = cross(omega, jw)
            moment = [moment[0] - gyro[0], moment[1] - jy * r * w_dot - gyro[1], moment[2] - gyro[2]]
            energy += 0.5 * (jx * big[0] ** 2 + jy * big[1] ** 2 + jx * big[2] ** 2)
            momentum += r * jy * big[1]
        rigid = cross(omega, [j * o for j, o in zip(j_eff, omega)])
        moment = [m + g for m, g in zip(moment, rigid)]
        return (t, theta, w, rho_crank * w, math.sqrt(delta / beta) * w, *moment, energy, momentum)

    theta = w = 0.0
    omega_y = 0.0
    names = ["time", "theta_ds", "w_ds", "w_eng", "w_a", "M_x", "M_y", "M_z", "E_kin", "p"]
    rows, ins = [row(0.0, theta, w, inputs(0.0))], []
    for k in range(n):
        u = inputs(k * h)
        ins.append((round(k * h, 10),) + u)
        # omega_y jumps: sum rho Jyy (omega_y + rho w) is kept.
        w -= gamma / delta * (u[3] - omega_y)
        omega_y = u[3]
        a = (rho_crank * u[0] + u[1]) / delta
        theta += w * h + 0.5 * a * h * h
        w += a * h
        if (k + 1) % 10 == 0:
            rows.append(row(round((k + 1) * h, 10), theta, w, u))
    ins.append((round(n * h, 10),) + inputs(n * h))
    d = os.path.join(HERE, "FastDrivetrain")
    os.makedirs(d, exist_ok=True)
    write_csv(os.path.join(d, "FastDrivetrain_in.csv"),
              ["time", "tau_eng", "tau_ext", "omega_x", "omega_y", "omega_z"], ins)
    write_csv(os.path.join(d, "FastDrivetrain_ref.csv"), names, rows)
    write_opt(os.path.join(d, "FastDrivetrain_ref.opt"), 0.0, n * h, h, 1e-8)


def chain_drive():
    """ChainDrive, one scenario per chain model (parameter chain_model, set through
    ChainDrive_par.csv): the full elastic chain in ChainDrive/, the quasi-steady-state one in
    ChainDrive/qss/, the inextensible one in ChainDrive/inextensible/, all on the same inputs
    (traction from rest, engine braking across the slack onto the lower run, traction again,
    the brake). The independent solutions (tangent-point geometry, RK6 with located tension
    kinks, the exact QSS step, modes and plastic impacts) and their self-checks are in
    chain_drive.py, imported here rather than at the top because it takes write_csv and
    write_opt from this file."""
    import chain_drive as cd
    return cd.write_references(os.path.join(HERE, "ChainDrive"))


if __name__ == "__main__":
    import sys
    sys.path.insert(0, HERE)
    if sys.argv[1:] == ["ChainDrive"]:
        chain_drive()
        sys.exit(0)
    chain_drive()
    fast_drivetrain()
    variable_ratio_transmission()
    variable_ratio_coupling()
    crank_slider()
    cvt()
    gear()
    lossy_gear()
    print("LossyGear breakaway switches:", lossy_gear_breakaway())
    print("reference-fmus: written")
