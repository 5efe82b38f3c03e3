#!/usr/bin/env python3
"""Writes the reference results in reference-fmus/ from independent solutions.

Nothing here calls an FMU: each model's equations are solved in plain Python, from the derivation
in its documentation, in closed form wherever one exists. Files follow the FMI Cross-Check layout:
<Model>_in.csv (inputs), <Model>_ref.csv (reference outputs), <Model>_ref.opt (settings), and
sub-scenarios in subdirectories laid out the same way.

<Model>_ref.csv holds each input over each communication step at the value of the table's row at
the step's start (sample and hold), which is what a co-simulation master without input
derivatives applies. The Gear's and LossyGear's main scenarios step their inputs on communication
points (two rows at one time), so there the table itself says the same and nothing else.

A scenario whose inputs are continuous (one row per 1 ms communication point, no two rows at one
time) also has <Model>_ref_interpolated.csv: the same rows and columns, for the inputs
interpolated linearly between the rows of <Model>_in.csv, as FMPy reads an input table and as a
Model Exchange importer applies it at every evaluation of the derivatives. Each model has one
integrator for both, driven by each step's inputs at its start and its end (`step_inputs`: equal
when held); outputs that depend on the inputs are recorded with the inputs at the step's end as
applied, i.e. the held value of the step that ended there, or the next row.

Closed forms stay exact with interpolated inputs (integrals of polynomials in time) and are
checked against RK4, which integrates those polynomials exactly; the other models integrate with
RK4, the inputs evaluated at every stage's time, and are checked against half their substeps.
Each prints the figure for its interpolated reference (`report`).
"""
import math
import os

import chain_drive as chain_drive_model
from common import rk4, write_csv, write_opt

HERE = os.path.dirname(os.path.abspath(__file__))


def write_scenario(d, model, input_names, ins, names, rows, stop, step, rtol, interpolated=None):
    """<Model>_in.csv, <Model>_ref.csv and <Model>_ref.opt in d, and <Model>_ref_interpolated.csv
    when `interpolated` rows are given."""
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, model)
    write_csv(path + "_in.csv", input_names, ins)
    write_csv(path + "_ref.csv", names, rows)
    write_opt(path + "_ref.opt", 0.0, stop, step, rtol)
    if interpolated is not None:
        write_csv(path + "_ref_interpolated.csv", names, interpolated)


def input_rows(table, h):
    """The rows of <Model>_in.csv: the inputs `table[k]` at the communication points k h."""
    return [(round(k * h, 10),) + tuple(u) for k, u in enumerate(table)]


def step_inputs(table, k, interpolated):
    """Step k's inputs at its start and at its end as the importer applies them: the row at the
    step's start throughout (held), or rows k and k + 1 (interpolated)."""
    return table[k], table[k + 1] if interpolated else table[k]


def inputs_at(u0, u1, s):
    """The inputs a fraction s into a step, linear from u0 to u1. Held inputs (u1 = u0) come
    out as u0 exactly, so both variants take the same path."""
    return tuple(a + (b - a) * s for a, b in zip(u0, u1))


def march(step, x, table, h, every, row, interpolated, first=None):
    """Rows every `every` communication steps of h: x advanced by step(x, u0, u1, t0, t1) with
    `step_inputs`, recorded as row(t, x, u1) (the inputs the step ended with) after the start
    row, `first` or row(0, x, table[0])."""
    rows = [first or row(0.0, x, table[0])]
    for k in range(len(table) - 1):
        u0, u1 = step_inputs(table, k, interpolated)
        x = step(x, u0, u1, k * h, (k + 1) * h)
        if (k + 1) % every == 0:
            rows.append(row(round((k + 1) * h, 10), x, u1))
    return rows


def rk4_steps(f, x, u0, u1, t0, h, sub):
    """x after the communication step [t0, t0 + h]: `sub` RK4 substeps of dx/dt = f(t, x, u),
    u taken at every stage's time between u0 and u1 (`inputs_at`)."""
    for j in range(sub):
        x = rk4(lambda t, y: f(t, y, inputs_at(u0, u1, (t - t0) / h)), x, t0 + j * h / sub, h / sub)
    return x


def rk4_march(f, x, table, h, every, row, interpolated, sub, first=None):
    """`march` with `sub` RK4 substeps per step (`rk4_steps`) of dx/dt = f(t, x, u)."""
    def step(x, u0, u1, t0, _t1):
        return rk4_steps(f, x, u0, u1, t0, h, sub)

    return march(step, x, table, h, every, row, interpolated, first)


def deviation(rows, other, columns=None):
    """The largest difference between two results on the same time rows (all columns after the
    time, or `columns`), relative to each signal's range (its largest |value| in `rows`), as the
    validation judges an FMU."""
    assert [r[0] for r in rows] == [o[0] for o in other]
    worst = 0.0
    for c in columns or range(1, len(rows[0])):
        scale = max(abs(r[c]) for r in rows)
        diff = max(abs(r[c] - o[c]) for r, o in zip(rows, other))
        worst = max(worst, diff / scale if scale else diff)
    return worst


def report(scenario, figure, how):
    """One line per interpolated reference: its largest difference from the second solution
    `how` names, relative to each signal's range (`deviation`). The validation judges FMUs at
    1e-6 of the range, so a reference must agree to 1e-9."""
    print(f"{scenario}: interpolated reference within {figure:.1e} of the range ({how})")
    assert figure < 1e-9, f"{scenario}: the interpolated reference is only good to {figure:.1e}"


def converged(scenario, solve, sub):
    """solve(sub), the interpolated reference of an RK4 model with `sub` substeps per step,
    reported against solve(sub // 2): RK4's error falls 16-fold from there, so the figure bounds
    the reference's error with a wide margin."""
    rows = solve(sub)
    report(scenario, deviation(rows, solve(sub // 2)),
           f"RK4, {sub} vs {sub // 2} substeps per step")
    return rows


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


def fast_drivetrain():
    """FastDrivetrain, default parameters (the four-shaft twin in first gear), from rest: a
    pulsing engine torque against a growing chain load while the casing rolls, pitches and
    yaws, every input sampled every 1 ms and held over each step or interpolated.

    Independent solution: the complete four-shaft model, shaft by shaft, not the two discs.
    p = sum_k rho_k Jyy_k Omega_k,y = delta w + gamma omega_y obeys dp/dt = Q (the generalized
    force, linear in the torques), and no impulsive torque acts on it when omega_y jumps (held
    inputs, at the communication points): w jumps by -gamma/delta times omega_y's jump. Within a
    step Q is constant (held) or linear in time (interpolated), and so is omega_y, so
    w = (p - gamma omega_y)/delta is linear or quadratic in time and theta quadratic or cubic:
    exact, and checked against RK4 on dw/dt = (Q - gamma domega_y/dt)/delta, which integrates
    these polynomials exactly. The casing moment is Newton-Euler per shaft,
    M = tau_ext e_y - sum_k (J_k dOmega_k/dt + omega x J_k Omega_k), less the rigid part
    J_eff domega/dt + omega x J_eff omega the host carries (J_eff = diag(alpha,
    beta - gamma^2/delta, alpha)); what is left uses dw/dt at constant omega, Q/delta.
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

    def row(t, x, u):
        theta, w = x[0], x[1]
        tau_eng, tau_ext, *omega = u
        # dw/dt with omega constant: J_eff domega/dt, the rest of the shafts' reaction to the
        # casing's acceleration, is the host's.
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

    def step(x, u0, u1, _t0, _t1):
        theta, w, omega_y = x
        # omega_y jumps: sum rho Jyy (omega_y + rho w) is kept.
        w -= gamma / delta * (u0[3] - omega_y)
        a = (rho_crank * u0[0] + u0[1]) / delta
        da = (rho_crank * u1[0] + u1[1]) / delta - a
        # Within the step p = delta w + gamma omega_y grows by the integral of Q, and omega_y's
        # ramp (interpolated inputs) takes gamma/delta of its change off w.
        dw_casing = gamma / delta * (u1[3] - u0[3])
        theta += w * h + 0.5 * a * h * h + (da * h * h / 6 - dw_casing * h / 2)
        w += a * h + (0.5 * da * h - dw_casing)
        return theta, w, u1[3]

    def exact(x, u0, u1, t0, _t1):
        omega_y_dot = (u1[3] - u0[3]) / h

        def f(_t, y, u):
            return [y[1], (rho_crank * u[0] + u[1] - gamma * omega_y_dot) / delta]

        return rk4_steps(f, x, u0, u1, t0, h, 1)

    table = [inputs(k * h) for k in range(n + 1)]
    held, interpolated = (march(step, (0.0, 0.0, 0.0), table, h, 10, row, i) for i in (False, True))
    report("FastDrivetrain",
           deviation(interpolated, march(exact, [0.0, 0.0], table, h, 10, row, True)),
           "closed form vs RK4 on the speed, exact for these polynomials")
    write_scenario(os.path.join(HERE, "FastDrivetrain"), "FastDrivetrain",
                   ["time", "tau_eng", "tau_ext", "omega_x", "omega_y", "omega_z"],
                   input_rows(table, h),
                   ["time", "theta_ds", "w_ds", "w_eng", "w_a", "M_x", "M_y", "M_z", "E_kin", "p"],
                   held, n * h, h, 1e-8, interpolated)


def fast_drivetrain_shift():
    """FastDrivetrain shifting 1 -> 2 -> 3 -> 2 while the casing turns (FastDrivetrain/shift/):
    the main scenario's torques and casing rates, the Integer input `gear` stepping at 0.5, 1.0
    and 1.5 s (two rows at one time).

    Independent solution, shaft by shaft in every gear g: rho_k(g) = (P G_g, -P G_g, -G_g, 1)
    (primary P, gearbox ratio G_g; crank, balancer, main and counter shaft), each shaft's
    absolute spin Omega_k = omega_y + rho_k w. Between communication points the gear is fixed
    and w follows the main scenario's closed form. A shift acts at the communication point
    where the held gear changes, after the casing rate's jump: the dog engages plastically,
    every shaft's spin changes by an internal impulse along the old and new gear trains only, so
    the momentum conjugate to the new ratios is what the shafts had,
    p' = sum rho'_k Jyy_k Omega_k, and w' = (p' - gamma' omega_y) / delta'. The loss is the
    energy balance of the shafts' spin in the casing's frame: the kinetic energy they lose, less
    the work omega_y dL of the casing's angular impulse dL = sum Jyy_k (Omega'_k - Omega_k) on
    them (the casing's rate is prescribed); the impulse output is what the casing receives,
    -dL. Disc A's angle integrates its speed rho_e(g) w over each step (rho_e = sqrt(delta/beta),
    two counter-rotating discs of Jyy beta/2), so it stays continuous through a shift.
    """
    primary, gearbox = 1.925, (2.846, 2.125, 1.632)
    jx = (0.06, 0.012, 0.02, 0.016)
    jy = (0.009, 0.0012, 0.0045, 0.0012)

    def train(g):
        ratio = gearbox[g - 1]
        rho = (primary * ratio, -primary * ratio, -ratio, 1.0)
        gamma = sum(r * j for r, j in zip(rho, jy))
        delta = sum(r * r * j for r, j in zip(rho, jy))
        return rho, gamma, delta

    alpha, beta = sum(jx), sum(jy)
    h, n = 1e-3, 2000
    shifts = {500: 2, 1000: 3, 1500: 2}

    def torques_and_rates(t):
        return (40.0 + 20.0 * math.sin(2 * math.pi * 3 * t), -120.0 - 40.0 * t,
                0.8 * math.sin(math.pi * t), 0.1 * math.sin(2 * math.pi * t),
                0.3 * math.sin(0.5 * math.pi * t))

    gears, g = [], 1
    for k in range(n + 1):
        g = shifts.get(k, g)
        gears.append(g)
    table = [(*torques_and_rates(k * h), gears[k]) for k in range(n + 1)]
    ins = []
    for k, u in enumerate(table):
        if k in shifts:  # the step: the old gear up to this time, the new one from it
            ins.append((round(k * h, 10), *u[:5], gears[k - 1]))
        ins.append((round(k * h, 10), *u))

    def spins(omega_y, w, rho):
        return [omega_y + r * w for r in rho]

    def cross(a, b):
        return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])

    def row(t, x, u):
        theta, w, _, g, theta_a, count, loss, impulse, total = x
        rho, gamma, delta = train(g)
        tau_eng, tau_ext, *omega = u[:5]
        w_dot = (rho[0] * tau_eng + tau_ext) / delta
        moment = [0.0, tau_ext, 0.0]
        energy = momentum = 0.0
        for r, jxx, jyy in zip(rho, jx, jy):
            big = (omega[0], omega[1] + r * w, omega[2])
            gyro = cross(omega, (jxx * big[0], jyy * big[1], jxx * big[2]))
            moment = [moment[0] - gyro[0], moment[1] - jyy * r * w_dot - gyro[1],
                      moment[2] - gyro[2]]
            energy += 0.5 * (jxx * big[0] ** 2 + jyy * big[1] ** 2 + jxx * big[2] ** 2)
            momentum += r * jyy * big[1]
        j_eff = (alpha, beta - gamma * gamma / delta, alpha)
        rigid = cross(omega, [j * o for j, o in zip(j_eff, omega)])
        moment = [m + r for m, r in zip(moment, rigid)]
        rho_e = math.sqrt(delta / beta)
        return (t, theta, w, rho[0] * w, rho_e * w, theta_a, *moment, energy, momentum, g,
                count, loss, impulse, total)

    def step(x, u0, _u1, _t0, _t1):
        theta, w, omega_y, g, theta_a, count, loss, impulse, total = x
        rho, gamma, delta = train(g)
        # The casing's rate jumps: p = gamma omega_y + delta w is kept (no impulse on theta_ds).
        w -= gamma / delta * (u0[3] - omega_y)
        omega_y = u0[3]
        if u0[5] != g:
            before = spins(omega_y, w, rho)
            g = u0[5]
            rho, gamma, delta = train(g)
            w = sum(r * j * s for r, j, s in zip(rho, jy, before)) / delta - gamma / delta * omega_y
            after = spins(omega_y, w, rho)
            d_l = sum(j * (b - a) for j, a, b in zip(jy, before, after))
            loss = (0.5 * sum(j * (a * a - b * b) for j, a, b in zip(jy, before, after))
                    + omega_y * d_l)
            impulse, total, count = -d_l, total + loss, count + 1
        a = (rho[0] * u0[0] + u0[1]) / delta
        rho_e = math.sqrt(delta / beta)
        d_theta = w * h + 0.5 * a * h * h
        return (theta + d_theta, w + a * h, omega_y, g, theta_a + rho_e * d_theta, count, loss,
                impulse, total)

    start = (0.0, 0.0, 0.0, 1, 0.0, 0, 0.0, 0.0, 0.0)
    held = march(step, start, table, h, 10, row, False)
    # Three shifts, each dissipating (a plastic engagement cannot gain energy).
    assert held[-1][12] == 3 and min(r[13] for r in held) >= 0.0 and held[-1][15] > 0.0
    write_scenario(os.path.join(HERE, "FastDrivetrain", "shift"), "FastDrivetrain",
                   ["time", "tau_eng", "tau_ext", "omega_x", "omega_y", "omega_z", "gear"], ins,
                   ["time", "theta_ds", "w_ds", "w_eng", "w_a", "theta_a", "M_x", "M_y", "M_z",
                    "E_kin", "p", "gear_engaged", "shift_count", "shift_loss", "shift_impulse",
                    "energy_shift"],
                   held, n * h, h, 1e-8)


def chain_drive():
    """ChainDrive, one scenario per chain model (parameter chain_model, set through
    ChainDrive_par.csv): the full elastic chain in ChainDrive/, the quasi-steady-state one in
    ChainDrive/qss/, the inextensible one in ChainDrive/inextensible/, all on the same inputs
    (traction from rest, engine braking across the slack onto the lower run, traction again,
    the brake). The independent solutions (tangent-point geometry, RK6 with located tension
    kinks, the exact QSS step, modes and plastic impacts) and their self-checks are in
    chain_drive.py."""
    return chain_drive_model.write_references(os.path.join(HERE, "ChainDrive"))


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["FastDrivetrain"]:
        fast_drivetrain()
        fast_drivetrain_shift()
        sys.exit(0)
    if sys.argv[1:] == ["ChainDrive"]:
        chain_drive()
        sys.exit(0)
    chain_drive()
    fast_drivetrain()
    fast_drivetrain_shift()
    variable_ratio_transmission()
    variable_ratio_coupling()
    crank_slider()
    cvt()
    gear()
    gear_ramp()
    lossy_gear()
    held, interpolated = lossy_gear_breakaway()
    print("LossyGear breakaway switches, held:", held)
    print("LossyGear breakaway switches, interpolated:", interpolated)
    print("reference-fmus: written")
