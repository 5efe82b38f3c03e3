"""ChainDrive reference, the integration engine: Butcher's 6th-order RK, the inputs over a
step (held or interpolated) and the stepper that locates mode switches inside a substep."""
import math


# ------------------------------------------------------------------------------------------------
# Integration engine: Butcher's 6th-order RK with located mode switches
# ------------------------------------------------------------------------------------------------

def rk6(f, x, dt, t=0.0):
    """One step of Butcher's 7-stage 6th-order Runge-Kutta for x' = f(t, x) from time t (nodes
    0, 1/3, 2/3, 1/3, 1/2, 1/2, 1). Unrolled for speed; order checked in check_rk6_order()."""
    k1 = f(t, x)
    k2 = f(t + dt / 3, [a + dt / 3 * b for a, b in zip(x, k1)])
    k3 = f(t + dt * 2 / 3, [a + dt * 2 / 3 * c for a, c in zip(x, k2)])
    k4 = f(t + dt / 3, [a + dt * (b / 12 + c / 3 - d / 12) for a, b, c, d in zip(x, k1, k2, k3)])
    k5 = f(t + dt / 2, [a + dt * (-b / 16 + 9 * c / 8 - 3 * d / 16 - 3 * e / 8)
                        for a, b, c, d, e in zip(x, k1, k2, k3, k4)])
    k6 = f(t + dt / 2, [a + dt * (9 * c / 8 - 3 * d / 8 - 3 * e / 4 + g / 2)
                        for a, c, d, e, g in zip(x, k2, k3, k4, k5)])
    k7 = f(t + dt, [a + dt * (9 * b / 44 - 9 * c / 11 + 63 * d / 44 + 18 * e / 11 - 16 * g2 / 11)
                    for a, b, c, d, e, g2 in zip(x, k1, k2, k3, k4, k6)])
    return [a + dt * (11 * (b + h) / 120 + 27 * (d + e) / 40 - 4 * (g + g2) / 15)
            for a, b, d, e, g, g2, h in zip(x, k1, k3, k4, k5, k6, k7)]


def check_rk6_order(verbose=True):
    """Error ratios on a nonlinear oscillator (Duffing with damping) when halving the step, free
    and with a time-dependent forcing (which tests the stage times too)."""
    def orders(force):
        f = lambda t, y: [y[1], -y[0] - 0.5 * y[0] ** 3 - 0.1 * y[1] + 0.2 * y[0] * y[1] + force(t)]

        def run(n):
            y = [1.0, 0.3]
            for i in range(n):
                y = rk6(f, y, 2.0 / n, i * 2.0 / n)
            return y
        ref = run(4096)
        errs = [abs(run(n)[0] - ref[0]) for n in (16, 32, 64)]
        return [math.log2(errs[i] / errs[i + 1]) for i in range(2)]
    free = orders(lambda t: 0.0)
    forced = orders(lambda t: 0.8 * math.cos(3.0 * t) + 0.5 * t)
    if verbose:
        print(f"   RK6 observed order: {free[0]:.2f}, {free[1]:.2f}; with a forcing of t: "
              f"{forced[0]:.2f}, {forced[1]:.2f}")
    return free, forced


def step_inputs(inputs, i, h, interpolate):
    """(u(s), u at the step's end) over communication step i, s the time since its start.

    Held: the step's start value throughout, as a co-simulation master applies the table (the
    step's end keeps it: the row at a communication point is the left limit). Interpolated:
    linear between the table's rows i and i + 1, which hold inputs() at the row times exactly
    (ChainDrive_in.csv is written with repr), as FMPy reads the table."""
    u0 = inputs(i * h)
    if not interpolate:
        return (lambda s: u0), u0
    u1 = inputs((i + 1) * h)
    (a0, a1, a2), (d0, d1, d2) = u0, [(b - a) / h for a, b in zip(u0, u1)]
    return (lambda s: (a0 + d0 * s, a1 + d1 * s, a2 + d2 * s)), u1


class Switching:
    """Integrates one communication step: RK6 substeps of rhs(y, mode, u) with the inputs u(s)
    evaluated at every stage time (s from the step's start); when status(y, mode, u) differs from
    mode at a substep's end (or a probe finds a sign change inside it), the first instant of
    change is bisected to 1e-16 s, the step restarts there after transition(y, old, new, t, u).
    The inputs enter the status at the instant tested, so a switch driven by a ramping input is
    located as one driven by the state."""

    def __init__(self, rhs, status, transition=None, probe=None, after_step=None):
        self.rhs, self.status, self.transition, self.probe = rhs, status, transition, probe
        self.after_step = after_step or (lambda y, mode: y)
        self.events = []

    def step(self, x, mode, t0, dt, nsub, u):
        t, hs, count = 0.0, dt / nsub, 0
        while dt - t > 1e-13 * dt:
            s = min(hs, dt - t)
            f = lambda tau, y: self.rhs(y, mode, u(tau))
            adv = lambda z: self.after_step(rk6(f, x, z, t), mode)
            y = adv(s)
            hit = self.status(y, mode, u(t + s)) != mode
            if not hit and self.probe is not None:
                for frac in self.probe(x, y, mode, s):
                    if self.status(adv(frac * s), mode, u(t + frac * s)) != mode:
                        s, y, hit = frac * s, adv(frac * s), True
                        break
            if not hit:
                x, t = y, t + s
                continue
            lo, hi = 0.0, s
            while hi - lo > 1e-16:
                mid = 0.5 * (lo + hi)
                if mid in (lo, hi):
                    break
                ym = adv(mid)
                if self.status(ym, mode, u(t + mid)) != mode:
                    hi, y = mid, ym
                else:
                    lo = mid
            new = self.status(y, mode, u(t + hi))
            if self.transition is not None:
                y, new = self.transition(y, mode, new, t0 + t + hi, u(t + hi))
            self.events.append((t0 + t + hi, mode, new))
            x, t, mode = y, t + hi, new
            count += 1
            if count > 1000:
                raise RuntimeError(f"more than 1000 switches in the step at t = {t0}")
        return x, mode


def _hermite_probe(values):
    """Fractions of the step at which a cubic Hermite fit of an indicator (value and rate at both
    ends, unchanged sign) changes sign: a double crossing inside one substep."""
    def probe(x, y, mode, s):
        out = []
        for g0, d0, g1, d1 in values(x, y, mode):
            if (g0 > 0) != (g1 > 0):
                continue
            m0, m1 = d0 * s, d1 * s
            for i in range(1, 16):
                tau = i / 16
                h00, h10 = 2 * tau**3 - 3 * tau**2 + 1, tau**3 - 2 * tau**2 + tau
                h01, h11 = -2 * tau**3 + 3 * tau**2, tau**3 - tau**2
                if ((h00 * g0 + h10 * m0 + h01 * g1 + h11 * m1) > 0) != (g0 > 0):
                    out.append(tau)
                    break
        return sorted(out)
    return probe
