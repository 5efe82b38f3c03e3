"""What both reference generators use: the Cross-Check files and the classic Runge-Kutta step."""


def write_csv(path, names, rows):
    """A Cross-Check CSV: quoted names, then every value as Python's shortest exact repr (an
    int, the value of an Integer variable, without a fraction)."""
    with open(path, "w") as f:
        f.write(",".join(f'"{n}"' for n in names) + "\n")
        for row in rows:
            f.write(",".join(repr(x if type(x) is int else float(x)) for x in row) + "\n")


def write_opt(path, start, stop, step, rtol):
    """<Model>_ref.opt: start and stop time, communication step, relative tolerance."""
    with open(path, "w") as f:
        f.write(f"StartTime,{start!r}\nStopTime,{stop!r}\nStepSize,{step!r}\nRelTol,{rtol!r}\n")


def rk4(f, x, t, dt):
    """One classic fourth-order Runge-Kutta step of dx/dt = f(t, x)."""
    k1 = f(t, x)
    k2 = f(t + dt / 2, [a + dt / 2 * b for a, b in zip(x, k1)])
    k3 = f(t + dt / 2, [a + dt / 2 * b for a, b in zip(x, k2)])
    k4 = f(t + dt, [a + dt * b for a, b in zip(x, k3)])
    return [a + dt / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]
