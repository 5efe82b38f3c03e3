"""The Gear's and the LossyGear's references (generate.py): closed forms, the LossyGear's stops
and breakaways located inside the step."""
import math
import os

from stepping import (HERE, deviation, input_rows, inputs_at, march, report, rk4_steps,
                      write_scenario)


# The Gear's default parameters: ratio, J_a, J_b (kg m2).
GEAR = (2.0, 0.1, 0.2)
GEAR_OUTPUTS = ["time", "phi_a", "w_a", "a_a", "phi_b", "w_b", "a_b", "tau_mesh", "power_loss"]


def gear_row(t, phi_b, w_b, tau_a, tau_b):
    """A Gear output row: the rigid gear phi_a = ratio phi_b, the acceleration
    (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a of the torques acting at t, no loss."""
    ratio, J_a, J_b = GEAR
    a_b = (tau_b + ratio * tau_a) / (J_b + ratio**2 * J_a)
    a_a = ratio * a_b
    return (t, ratio * phi_b, ratio * w_b, a_a, phi_b, w_b, a_b, J_a * a_a - tau_a, 0.0)


def gear():
    """Ideal gear, default parameters: (J_b + ratio^2 J_a) a_b = tau_b + ratio tau_a."""
    ratio, J_a, J_b = GEAR
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

    rows = []
    for k in range(201):  # every 10 ms
        t = round(k * 0.01, 10)
        rows.append(gear_row(t, *state(t), *torques(t)))
    write_scenario(os.path.join(HERE, "Gear"), "Gear", ["time", "tau_a", "tau_b"], inputs,
                   GEAR_OUTPUTS, rows, stop, step, 1e-8)


def gear_ramp():
    """Gear/ramp: the Gear with default parameters from rest under continuous torques,
    tau_a = 0.4 sin(pi t) (one slow period in 2 s) and tau_b = -0.25 t (a ramp from zero): it
    speeds up, slows down and reverses near 1.48 s.

    Closed form: a_b is linear in the torques. Held over a step it is constant, so w_b is linear
    and phi_b quadratic in time; interpolated it is linear in time, so w_b is quadratic and phi_b
    cubic. Checked against RK4, which integrates these polynomials exactly."""
    ratio, J_a, J_b = GEAR
    J = J_b + ratio**2 * J_a
    h, n = 1e-3, 2000
    # 0.0 - ...: the ramp starts at 0.0 in Gear_in.csv, not at -0.0.
    table = [(0.4 * math.sin(math.pi * k * h), 0.0 - 0.25 * (k * h)) for k in range(n + 1)]

    def acceleration(u):
        return (u[1] + ratio * u[0]) / J

    def step(x, u0, u1, _t0, _t1):
        phi, w = x
        a = acceleration(u0)
        da = acceleration(u1) - a
        return phi + w * h + 0.5 * a * h * h + da * h * h / 6, w + a * h + 0.5 * da * h

    def exact(x, u0, u1, t0, _t1):
        return rk4_steps(lambda _t, y, u: [y[1], acceleration(u)], x, u0, u1, t0, h, 1)

    def row(t, x, u):
        return gear_row(t, *x, *u)

    held, interpolated = (march(step, (0.0, 0.0), table, h, 10, row, i) for i in (False, True))
    assert min(r[5] for r in held) < 0.0 < max(r[5] for r in held), "the gear must reverse"
    report("Gear/ramp", deviation(interpolated, march(exact, [0.0, 0.0], table, h, 10, row, True)),
           "closed form vs RK4, exact for these polynomials")
    write_scenario(os.path.join(HERE, "Gear", "ramp"), "Gear", ["time", "tau_a", "tau_b"],
                   input_rows(table, h), GEAR_OUTPUTS, held, n * h, h, 1e-8, interpolated)


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
    names = ["time", "phi_a", "w_a", "a_a", "phi_b", "w_b", "a_b", "tau_mesh", "tau_loss",
             "power_loss", "energy_loss", "mode"]
    write_scenario(os.path.join(HERE, "LossyGear"), "LossyGear", ["time", "tau_a", "tau_b"],
                   inputs, names, rows, stop, 1e-3, 1e-8)


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

    def idle_mesh_torque(self, tau_a, direction):
        """tau_b at which the rolling mesh passes no torque (m = 0): there its driving side
        changes, and with it the slope of a and of the dissipation in the torques. With m = 0
        the equations of `rolling` no longer involve k: J_a a = tau_a - dir bf_a and
        J_b/r^2 a = tau_b/r - dir bf_b."""
        r, ja, jb = self.r, self.j_a, self.j_b / self.r**2
        return r * (jb * (tau_a - direction * self.bf_a) / ja + direction * self.bf_b)

    def breakaway(self, tau_a, tau_b):
        """+1 / -1 when a gear at rest breaks away forward / backward, else 0."""
        if self.rolling(tau_a, tau_b, 1.0)[2] * self.r > 0.0:
            return 1
        if self.rolling(tau_a, tau_b, -1.0)[2] * self.r < 0.0:
            return -1
        return 0


def first_instant(event, lo, hi):
    """The earliest time in (lo, hi] at which `event` holds, given that it holds from some
    instant in (lo, hi] on and not before: bisection down to adjacent floating-point numbers."""
    while True:
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            return hi
        if event(mid):
            hi = mid
        else:
            lo = mid


def lossy_gear_breaks_away(eq, tau, t, t_end):
    """(direction, instant) at which a gear at rest from t breaks away, (0, t) if it stays
    stuck up to t_end. Rolling either way accelerates more with more tau_b, so the stuck band is
    an interval of tau_b; tau_b is linear over the step, so the gear leaves the band at most once
    in it, found by bisection (held inputs: only at the step's start)."""
    direction = eq.breakaway(*tau(t))
    if direction or not eq.breakaway(*tau(t_end)):
        return direction, t
    t_b = first_instant(lambda s: eq.breakaway(*tau(s)) != 0, t, t_end)
    assert t_b - t > 1e-9 and t_end - t_b > 1e-9, "a breakaway too close to a step end"
    return eq.breakaway(*tau(t_b)), t_b


def lossy_gear_mesh_switch(eq, tau, t, t_end, direction):
    """The instant in (t, t_end) at which the rolling mesh changes its driving side, t_end if it
    does not: tau_b and the idle-mesh torque are both linear in time, so where they cross is
    the root of their linear difference."""
    def gap(s):
        tau_a, tau_b = tau(s)
        return tau_b - eq.idle_mesh_torque(tau_a, direction)

    g0, g1 = gap(t), gap(t_end)
    crossing = t + (t_end - t) * g0 / (g0 - g1) if g0 * g1 < 0.0 else t_end
    # Just after a switch, rounding may put tau_b back on the other side of the idle torque.
    return crossing if crossing - t > 1e-15 else t_end


def lossy_gear_roll(eq, tau, t0, t1, w0, direction):
    """Rolling in `direction` from t0 at speed w0 up to t1 or an earlier stop, the mesh keeping
    its driving side: (end, phi increment, speed at the end, dissipated energy, stopped).

    a and the dissipation per unit speed l are linear in the torques, hence in time, so their
    values at the ends give them throughout: w is quadratic, phi cubic, the dissipated power l w
    cubic, each integrated exactly. The stop is the first root of w: -w0/a0 when a is constant
    (held inputs), otherwise found by bisection."""
    _, l0, a0 = eq.rolling(*tau(t0), direction)
    _, l1, a1 = eq.rolling(*tau(t1), direction)
    T = t1 - t0

    def speed(s):
        return w0 + a0 * s + 0.5 * (a1 - a0) * s * s / T

    # The stop lies before the vertex of w if w dips to zero and back inside the stretch, else
    # before the end if w ends at or past zero.
    vertex = -a0 * T / (a1 - a0) if a1 != a0 else None
    if vertex is not None and 0.0 < vertex < T and speed(vertex) * direction <= 0.0:
        end = vertex
    elif speed(T) * direction <= 0.0:
        end = T
    else:
        end = None
    if end is not None:
        T = -w0 / a0 if a1 == a0 else first_instant(lambda s: speed(s) * direction <= 0.0, 0.0, end)
        t1 = t0 + T
        _, l1, a1 = eq.rolling(*tau(t1), direction)
    da, dl = a1 - a0, l1 - l0
    dphi = w0 * T + 0.5 * a0 * T * T + da * T * T / 6
    w = 0.0 if end is not None else w0 + a0 * T + 0.5 * da * T
    energy = (l0 * (w0 + 0.5 * a0 * T) * T + l0 * da * T * T / 6
              + dl * T * (w0 / 2 + a0 * T / 3 + da * T / 8))
    return t1, dphi, w, energy, end is not None


def lossy_gear_step(eq, x, u0, u1, t0, t1, switches):
    """The gear's (mode, phi, w, energy) after the communication step [t0, t1], inputs
    (tau_a, tau_b) from u0 to u1 (`step_inputs`), located stops and breakaways appended to
    `switches`. A stop passes through Stuck, and the gear may break away at once (a reversal)."""
    mode, phi, w, energy = x

    def tau(s):
        return inputs_at(u0, u1, (s - t0) / (t1 - t0))

    t = t0
    while t1 - t > 1e-15:
        if mode == 0:
            mode, t = lossy_gear_breaks_away(eq, tau, t, t1)
            if mode == 0:
                break
            switches.append(t)
        t_mesh = lossy_gear_mesh_switch(eq, tau, t, t1, mode)
        t, dphi, w, de, stopped = lossy_gear_roll(eq, tau, t, t_mesh, w, mode)
        phi += dphi
        energy += de
        if stopped:
            assert t - t0 > 1e-9 and t1 - t > 1e-9, "a stop too close to a step end"
            switches.append(t)
            mode = 0
    return mode, phi, w, energy


def lossy_gear_motion(eq, table, h, every, interpolated):
    """(rows, switches) of the LossyGear rolling forward at 10 rad/s at t = 0, inputs
    (tau_a, tau_b) from `table` per step of h (`step_inputs`), rows every `every` steps."""
    switches = []

    def step(x, u0, u1, t0, t1):
        return lossy_gear_step(eq, x, u0, u1, t0, t1, switches)

    def row(t, x, tau):
        mode, phi, w, energy = x
        if mode == 0:
            return (t, phi, w, 0.0, -0.0, tau[1], 0.0, energy, mode)
        torque, loss, a = eq.rolling(*tau, mode)
        return (t, phi, w, a, -torque, loss, loss * w, energy, mode)

    rows = march(step, (1, 0.0, 10.0, 0.0), table, h, every, row, interpolated)
    return rows, switches


def lossy_gear_breakaway():
    """LossyGear scenario (b)+(c) with the default parameters: rolling forward at the seed's
    10 rad/s with tau_b = 4 sin(3 pi t) already pushing, the gear stops near 0.024 s; tau_b then
    breaks it away forward, it stops, breaks away backward, stops, breaks away forward again.
    energy_loss integrates the elements' dissipation (bearings and mesh), and tau_loss is that
    dissipation per unit speed of flange a.

    The solution is exact, stretch by stretch between events (`lossy_gear_step`). Held over a
    1 ms step, the input keeps the acceleration constant inside the step: the speed is linear, a
    stop is at t_k - w/a exactly, and a gear at rest can only break away at a communication
    point. Interpolated, tau_b is linear in time, so the acceleration is piecewise linear: its
    slope changes where the mesh's driving side does (`lossy_gear_mesh_switch`, a linear root),
    the speed piecewise quadratic, a stop its first root and a breakaway the instant tau_b
    leaves the stuck band, both anywhere inside a step and located by bisection to the last
    bit.

    Check of the interpolated reference: the held solution on steps of h/m, each holding the
    interpolated input at its midpoint, must tend to it at second order (at a breakaway a rises
    from zero, so starting up to h/2m late costs O(h^2/m^2) of speed); compared on the states.
    """
    eq = LossyGearEquations(1.0, 0.001, 0.001, 0.25, 0.25, 0.625, 2.5)
    h, n, stride = 1e-3, 1000, 10
    table = [(0.0, 4.0 * math.sin(3.0 * math.pi * k * h)) for k in range(n + 1)]
    rows, switches = lossy_gear_motion(eq, table, h, stride, False)
    interpolated, interpolated_switches = lossy_gear_motion(eq, table, h, stride, True)
    assert len(switches) >= 5 and len(interpolated_switches) >= 5, (switches, interpolated_switches)
    states = (1, 2, 7, 8)  # phi_b, w_b, energy_loss, mode
    figures = []
    for m in (16, 32, 64):
        fine = [inputs_at(table[k], table[k + 1], (j + 0.5) / m)
                for k in range(n) for j in range(m)] + [table[n]]
        fine_rows, _ = lossy_gear_motion(eq, fine, h / m, stride * m, False)
        figures.append(deviation(interpolated, fine_rows, states))
    print("LossyGear/breakaway: interpolated reference exact (closed form, events to the last "
          "bit); held on h/16, h/32, h/64 with midpoint inputs differs from it by "
          + ", ".join(f"{f:.1e}" for f in figures) + " of the range")
    assert all(coarse > 3.0 * fine for coarse, fine in zip(figures, figures[1:])), figures
    names = ["time", "phi_b", "w_b", "a_b", "tau_mesh", "tau_loss", "power_loss", "energy_loss",
             "mode"]
    write_scenario(os.path.join(HERE, "LossyGear", "breakaway"), "LossyGear",
                   ["time", "tau_a", "tau_b"], input_rows(table, h), names, rows, n * h, h, 1e-8,
                   interpolated)
    return switches, interpolated_switches
