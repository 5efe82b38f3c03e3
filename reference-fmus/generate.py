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
    """The lossy gear's equations for one constant loss row, solved independently of the FMU:
    the flange torque by bisection of the monotone Newton residual."""

    def __init__(self, ratio, j_a, j_b, eta1, eta2, bf1, bf2):
        self.r, self.j_a, self.j_b = ratio, j_a, j_b
        self.eta1, self.eta2, self.bf1, self.bf2 = eta1, eta2, bf1, bf2
        self.bf_a = (bf1 - bf2) / (eta1 - 1.0 / eta2)

    def loss(self, t, direction):
        """MSL quadrants, driving side from tau_eta = t -+ bf_a."""
        a_side = t - direction * self.bf_a >= 0.0
        if direction > 0:
            return (1 - self.eta1) * t + self.bf1 if a_side else (1 - 1 / self.eta2) * t + self.bf2
        return (1 - 1 / self.eta2) * t - self.bf2 if a_side else (1 - self.eta1) * t - self.bf1

    def rolling(self, tau_a, tau_b, direction):
        """(flange torque, loss, a_b) while rolling."""
        r, ja, jb = self.r, self.j_a, self.j_b
        def residual(t):
            return jb * (tau_a - t) - r * ja * tau_b - r * r * ja * (t - self.loss(t, direction))
        lo, hi = -1e4, 1e4
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if residual(mid) > 0:
                lo = mid
            else:
                hi = mid
        t = 0.5 * (lo + hi)
        loss = self.loss(t, direction)
        return t, loss, (tau_b + r * (tau_a - loss)) / (jb + r * r * ja)

    def breakaway(self, tau_a, tau_b):
        """+1 / -1 when a gear at rest breaks away forward / backward, else 0."""
        sa = tau_a + tau_b / self.r
        if sa > self.loss(tau_a, 1.0):
            return 1
        if sa < self.loss(tau_a, -1.0):
            return -1
        return 0


def lossy_gear_breakaway():
    """LossyGear scenario (b)+(c) with the default parameters: after the seed's stop at 0.02 s,
    tau_b = 4 sin(3 pi t) breaks the gear away forward, it stops, breaks away backward, stops,
    breaks away forward again. energy_loss is the integral of power_loss.

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


if __name__ == "__main__":
    gear()
    lossy_gear()
    print("LossyGear breakaway switches:", lossy_gear_breakaway())
    print("reference-fmus: written")
