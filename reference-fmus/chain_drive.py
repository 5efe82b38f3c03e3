#!/usr/bin/env python3
"""Independent high-accuracy reference for the ChainDrive FMU (planar half-bike with a chain).

Pure Python + math. Conventions (ours): x forward, z up, seen from the bike's right side, every
angle positive clockwise (forward rolling). Swing-arm pivot O at the origin, drive sprocket
centre P = (ds_x, ds_z), wheel centre W = (-l_sa cos th_sa, l_sa sin th_sa), q = (th_ds, th_sa,
th_rw) with th_rw relative to the swing arm.

Two references per scenario, on the same input table ChainDrive_in.csv (one row per 1 ms
communication point): ChainDrive_ref.csv with each input held over each step (sample and hold,
as a co-simulation master applies the table), ChainDrive_ref_interpolated.csv with the inputs
linear in t between consecutive rows (as FMPy reads the table and a Model Exchange importer
applies it at every right-hand-side evaluation). The integrators take the inputs as a function
of the time within the step (step_inputs), evaluated at every RK stage and every located switch.

Contents (run this file for the report):
  tangent_construction / check_geometry   run lengths from first principles vs the closed forms
  thesis_printed_lengths_energy_drift     why the thesis's printed lengths are not conservative
  rk6 / Switching / step_inputs           RK6 with time-dependent inputs and located mode switches
  full_model                              elastic chain, RK6 with located tension kinks
  qss_model / check_qss                   quasi-steady-state chain and swing arm
  inextensible_model / check_inextensible modes U, L, F with located switches and plastic impacts
  check_interpolated                      interpolated inputs vs held ones on finer steps
  write_reference / write_references      Cross-Check files for the FMU, one scenario per chain
                                          model, held and interpolated, with their convergence
"""
import math
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from common import rk4, write_csv, write_opt  # noqa: E402

TWO_PI = 2.0 * math.pi


# ------------------------------------------------------------------------------------------------
# Parameters and the closed-form geometry
# ------------------------------------------------------------------------------------------------

DEFAULTS = dict(J_ds=0.005, J_sa=0.4, J_rw=0.7, m_sa=7.0, m_rw=15.0, l_sa=0.7, d_sa=0.35,
                r_ds=0.03, r_ws=0.08, ds_x=0.08, ds_z=-0.02, k=1e5, c_chain=0.0, slack=0.002,
                g=9.81, th_sa0=0.0, k_susp=1e4, c_susp=200.0, tau_preload=None, gamma_ds=1e-3,
                gamma_rw=1e-2, printed=False)


def make_params(**over):
    """Defaults plus overrides, and the derived constants every model uses (so each model reads
    one dict). tau_preload defaults to the weight moment at th_sa0 (static equilibrium there)."""
    bad = set(over) - set(DEFAULTS)
    if bad:
        raise KeyError(f"unknown parameters {sorted(bad)}")
    p = dict(DEFAULTS)
    p.update(over)
    p["G"] = p["g"] * (p["m_sa"] * p["d_sa"] + p["m_rw"] * p["l_sa"])
    if p["tau_preload"] is None:
        p["tau_preload"] = p["G"] * math.cos(p["th_sa0"])
    p["I_sa"] = p["J_sa"] + p["m_sa"] * p["d_sa"] ** 2 + p["m_rw"] * p["l_sa"] ** 2
    p["dr"] = p["r_ws"] - p["r_ds"]
    p["rho"] = p["r_ws"] / p["r_ds"]
    gm = geometry(p, p["th_sa0"])
    p["Lu_ref"], p["Ll_ref"], p["T_ref"] = gm["Lu"], gm["Ll"], gm["T"]
    return p


def geometry(p, th):
    """Closed forms of the brief (d, phi, alpha, T) and their first two th_sa derivatives.

    u = P - W, u' = -W' = (-l s, -l c), u'' = -W'' = W. Lu, Ll are the th_ds = th_rw = 0 parts
    of the run lengths: L_u = Lu + r_ds th_ds - r_ws th_rw, L_l = Ll - r_ds th_ds + r_ws th_rw.
    """
    l, dr, rw = p["l_sa"], p["dr"], p["r_ws"]
    c, s = math.cos(th), math.sin(th)
    ux, uz = p["ds_x"] + l * c, p["ds_z"] - l * s
    dux, duz = -l * s, -l * c
    ddux, dduz = -l * c, l * s
    d2 = ux * ux + uz * uz
    d = math.sqrt(d2)
    dd = (ux * dux + uz * duz) / d
    ddd = (dux * dux + duz * duz + ux * ddux + uz * dduz - dd * dd) / d
    phi = math.atan2(uz, ux)
    dphi = (ux * duz - uz * dux) / d2
    ddphi = (ux * dduz - uz * ddux) / d2 - 2.0 * dd * dphi / d
    T = math.sqrt(d2 - dr * dr)
    dT = d * dd / T
    ddT = (dd * dd + d * ddd - dT * dT) / T
    alpha = math.acos(dr / d)
    dalpha = dr * dd / (d * T)
    ddalpha = dr * (ddd * d * T - dd * (dd * T + d * dT)) / (d * T) ** 2
    return dict(
        d=d, phi=phi, alpha=alpha, T=T, dT=dT, ddT=ddT,
        Lu=T - dr * (phi + alpha) - rw * th, dLu=dT - dr * (dphi + dalpha) - rw,
        ddLu=ddT - dr * (ddphi + ddalpha),
        Ll=T + dr * (phi - alpha) + rw * th, dLl=dT + dr * (dphi - dalpha) + rw,
        ddLl=ddT + dr * (ddphi - ddalpha))


def lengths(p, q):
    """Closed-form run lengths L_u, L_l (between material marks, up to constants)."""
    gm = geometry(p, q[1])
    a = p["r_ds"] * q[0] - p["r_ws"] * q[2]
    return gm["Lu"] + a, gm["Ll"] - a


def extensions(p, q, gm=None):
    """(e_u, e_l, grad e_u, grad e_l): exact lengths, or the thesis's printed ones (only the
    extension changes; the force keeps the exact gradient, see thesis_printed_...)."""
    if gm is None:
        gm = geometry(p, q[1])
    rds, rws = p["r_ds"], p["r_ws"]
    a = rds * q[0] - rws * q[2]
    if p["printed"]:
        e_u = gm["T"] - p["T_ref"] + a
        e_l = gm["T"] - p["T_ref"] - a - p["slack"]
        return e_u, e_l, (rds, gm["dT"], -rws), (-rds, gm["dT"], rws)
    e_u = gm["Lu"] + a - p["Lu_ref"]
    e_l = gm["Ll"] - a - p["Ll_ref"] - p["slack"]
    return e_u, e_l, (rds, gm["dLu"], -rws), (-rds, gm["dLl"], rws)


def mass_solve(p, f):
    """M^-1 f for M = [[J_ds,0,0],[0,I_sa+J_rw,J_rw],[0,J_rw,J_rw]] (det of the 2x2 = J_rw I_sa)."""
    a_sa = (f[1] - f[2]) / p["I_sa"]
    return [f[0] / p["J_ds"], a_sa, f[2] / p["J_rw"] - a_sa]


def kinetic(p, w):
    return 0.5 * (p["J_ds"] * w[0] ** 2 + p["I_sa"] * w[1] ** 2 + p["J_rw"] * (w[1] + w[2]) ** 2)


def potentials(p, th_sa):
    """(gravity, suspension), both 0 at th_sa0."""
    x = th_sa - p["th_sa0"]
    return (p["G"] * (math.sin(th_sa) - math.sin(p["th_sa0"])),
            -p["tau_preload"] * x + 0.5 * p["k_susp"] * x * x)


def free_forces(p, q, w, u):
    """Generalized forces without the chain: engine, suspension, gravity, load, brake, bearings."""
    tau_eng, tau_load, c_brake = u
    return [tau_eng - p["gamma_ds"] * w[0],
            p["tau_preload"] - p["k_susp"] * (q[1] - p["th_sa0"]) - p["c_susp"] * w[1]
            - p["G"] * math.cos(q[1]) + tau_load,
            tau_load - (c_brake + p["gamma_rw"]) * w[2]]


def free_dissipation(p, w, c_brake):
    return p["gamma_ds"] * w[0] ** 2 + p["c_susp"] * w[1] ** 2 + (c_brake + p["gamma_rw"]) * w[2] ** 2


def input_power(w, u):
    return u[0] * w[0] + u[1] * (w[1] + w[2])


# ------------------------------------------------------------------------------------------------
# 1. Geometry from first principles
# ------------------------------------------------------------------------------------------------

def _cross(a, b):
    """Counter-clockwise (x, z) cross product; the clockwise moment of force b at arm a is -it."""
    return a[0] * b[1] - a[1] * b[0]


def _normal_angle(u, dr, lo, hi):
    """Angle a (counter-clockwise, math sense) of the unit normal n with n.u = dr, by bisection
    on [lo, hi] where n.u - dr changes sign once: the angle comes out in a known branch, so no
    atan2/acos wrap has to be reasoned about."""
    f = lambda a: math.cos(a) * u[0] + math.sin(a) * u[1] - dr
    flo = f(lo)
    assert flo * f(hi) < 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if (f(mid) > 0.0) == (flo > 0.0):
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def tangent_construction(p, q):
    """Tangent points and run lengths built without the closed forms.

    A common external tangent has a unit normal n with (P + r_ds n - W - r_ws n).n = 0, i.e.
    n.(P - W) = r_ws - r_ds; n points up for the upper run (a in (0, pi)) and down for the lower
    one (a in (-pi, 0)). Touch points: A = W + r_ws n_u, C = P + r_ds n_u (upper), B = W + r_ws
    n_l, D = P + r_ds n_l (lower). Marks: one on the wheel, at the rear (math angle pi) in q0,
    turning clockwise with the wheel's absolute angle th_sa + th_rw; one on the sprocket, at its
    front (math angle 0), turning with th_ds. Angles are kept unwrapped (no mod 2 pi), so a mark
    may have turned many times: the 'length' is the chain that has passed, which is what the
    tension needs. Upper run: wheel mark -> A (clockwise on the wheel), A -> C, C -> sprocket mark
    (clockwise on the sprocket); lower run: sprocket mark -> D, D -> B, B -> wheel mark.
    """
    th_ds, th_sa, th_rw = q
    rds, rws = p["r_ds"], p["r_ws"]
    W = (-p["l_sa"] * math.cos(th_sa), p["l_sa"] * math.sin(th_sa))
    P = (p["ds_x"], p["ds_z"])
    u = (P[0] - W[0], P[1] - W[1])
    a = _normal_angle(u, rws - rds, 0.0, math.pi)
    b = _normal_angle(u, rws - rds, -math.pi, 0.0)
    nu, nl = (math.cos(a), math.sin(a)), (math.cos(b), math.sin(b))
    A = (W[0] + rws * nu[0], W[1] + rws * nu[1])
    C = (P[0] + rds * nu[0], P[1] + rds * nu[1])
    B = (W[0] + rws * nl[0], W[1] + rws * nl[1])
    D = (P[0] + rds * nl[0], P[1] + rds * nl[1])
    span_u, span_l = math.dist(A, C), math.dist(B, D)
    mu_w = math.pi - (th_sa + th_rw)
    mu_d = -th_ds
    L_u = rws * (mu_w - a) + span_u + rds * (a - mu_d)
    L_l = rds * (mu_d - b) + span_l + rws * (b + TWO_PI - mu_w)
    # tangency residuals: the run is perpendicular to both radii
    t_u = ((C[0] - A[0]) / span_u, (C[1] - A[1]) / span_u)
    t_l = ((B[0] - D[0]) / span_l, (B[1] - D[1]) / span_l)
    tangency = max(abs(t_u[0] * nu[0] + t_u[1] * nu[1]), abs(t_l[0] * nl[0] + t_l[1] * nl[1]))
    return dict(A=A, B=B, C=C, D=D, W=W, P=P, a=a, b=b, span_u=span_u, span_l=span_l,
                L_u=L_u, L_l=L_l, t_u=t_u, t_l=t_l, tangency=tangency,
                wrap_wheel=TWO_PI + b - a, wrap_sprocket=a - b)


def chain_moments(p, q, T_u, T_l):
    """Generalized chain forces from the run tensions acting at the touch points, as forces on
    material points: (sprocket about P, arm+wheel about O with th_rw fixed, wheel about W).
    The upper run pulls A towards C and C towards A; the lower pulls B towards D and D towards B."""
    g = tangent_construction(p, q)
    FA = (T_u * g["t_u"][0], T_u * g["t_u"][1])
    FC = (-FA[0], -FA[1])
    FB = (-T_l * g["t_l"][0], -T_l * g["t_l"][1])   # t_l points D -> B; B is pulled towards D
    FD = (-FB[0], -FB[1])
    rel = lambda X, O: (X[0] - O[0], X[1] - O[1])
    P, W = g["P"], g["W"]
    Q_ds = -_cross(rel(g["C"], P), FC) - _cross(rel(g["D"], P), FD)
    Q_sa = -_cross(g["A"], FA) - _cross(g["B"], FB)
    Q_rw = -_cross(rel(g["A"], W), FA) - _cross(rel(g["B"], W), FB)
    return Q_ds, Q_sa, Q_rw


def _fd(f, x, h):
    """4th-order central difference."""
    return (-f(x + 2 * h) + 8 * f(x + h) - 8 * f(x - h) + f(x - 2 * h)) / (12 * h)


def check_geometry(p=None, verbose=True):
    """Construction vs closed forms: lengths, gradients (FD of the construction), the open-belt
    sum, the material-point moments, and the traction sign. Returns the worst figures."""
    p = p or make_params()
    q0 = (0.0, p["th_sa0"], 0.0)
    g0 = tangent_construction(p, q0)
    cu0, cl0 = lengths(p, q0)
    rds, rws, dr = p["r_ds"], p["r_ws"], p["dr"]
    worst = dict(length=0.0, grad=0.0, grad_dd=0.0, belt=0.0, tangency=0.0, moment=0.0, points=0.0)
    qs = [(0.0, 0.0, 0.0), (0.3, 0.3, -0.2), (-1.7, -0.3, 2.4), (25.0, 0.15, -9.0),
          (-3.0, -0.12, 1.1), (0.01, 0.29, 0.0)]
    for q in qs:
        g = tangent_construction(p, q)
        cu, cl = lengths(p, q)
        gm = geometry(p, q[1])
        # lengths relative to q0 (the marks' constants cancel)
        worst["length"] = max(worst["length"], abs((g["L_u"] - g0["L_u"]) - (cu - cu0)),
                              abs((g["L_l"] - g0["L_l"]) - (cl - cl0)))
        # touch points against the brief's formulas
        for X, centre, r, ang in ((g["A"], g["W"], rws, gm["phi"] + gm["alpha"]),
                                  (g["C"], g["P"], rds, gm["phi"] + gm["alpha"]),
                                  (g["B"], g["W"], rws, gm["phi"] - gm["alpha"]),
                                  (g["D"], g["P"], rds, gm["phi"] - gm["alpha"])):
            worst["points"] = max(worst["points"], math.dist(X, (centre[0] + r * math.cos(ang),
                                                                   centre[1] + r * math.sin(ang))))
        worst["tangency"] = max(worst["tangency"], g["tangency"], abs(g["span_u"] - gm["T"]),
                                abs(g["span_l"] - gm["T"]))
        # open belt: 2T + pi(r1+r2) + 2(r1-r2) asin((r1-r2)/d), here with zero constant
        belt = 2 * gm["T"] + math.pi * (rws + rds) + 2 * dr * math.asin(dr / gm["d"])
        worst["belt"] = max(worst["belt"], abs(g["L_u"] + g["L_l"] - belt))
        # gradients: FD of the construction vs closed form, each coordinate
        cf = [(rds, gm["dLu"], -rws), (-rds, gm["dLl"], rws)]
        for i in range(3):
            def run(x, j):
                qq = list(q)
                qq[i] = x
                g2 = tangent_construction(p, qq)
                return g2["L_u"] if j == 0 else g2["L_l"]
            for j in range(2):
                fd = _fd(lambda x: run(x, j), q[i], 1e-3)
                worst["grad"] = max(worst["grad"], abs(fd - cf[j][i]))
        # second th_sa derivative (used by the inextensible model) against FD of the closed form
        for key, dkey in (("Lu", "dLu"), ("Ll", "dLl")):
            fd2 = _fd(lambda x: geometry(p, x)[dkey], q[1], 1e-3)
            worst["grad_dd"] = max(worst["grad_dd"], abs(fd2 - gm["dd" + key]))
        # material-point virtual work: the touch-point forces' moments = -T grad L
        for T_u, T_l in ((300.0, 0.0), (0.0, 200.0)):
            Q = chain_moments(p, q, T_u, T_l)
            want = [-T_u * a - T_l * b for a, b in zip(*cf)]
            worst["moment"] = max(worst["moment"], max(abs(x - y) / 300.0 for x, y in zip(Q, want)))
    gm = geometry(p, 0.0)
    sign = sign_check(p)
    if verbose:
        print("1. geometry (construction vs closed forms, th_sa in [-0.3, 0.3], th_ds to 25 rad)")
        print(f"   at th_sa = 0: d = {gm['d']:.6f} m, T = {gm['T']:.6f} m, alpha = {gm['alpha']:.6f}, "
              f"phi = {gm['phi']:.6f}, dL_u/dth_sa = {gm['dLu']:+.6f}, dL_l/dth_sa = {gm['dLl']:+.6f} m/rad")
        print(f"   wraps at q0: wheel {math.degrees(g0['wrap_wheel']):.2f} deg, sprocket "
              f"{math.degrees(g0['wrap_sprocket']):.2f} deg")
        print(f"   max |dL construction - dL closed|      = {worst['length']:.2e} m")
        print(f"   max touch-point distance              = {worst['points']:.2e} m; tangency/span {worst['tangency']:.1e}")
        print(f"   max |grad FD(construction) - closed|  = {worst['grad']:.2e} m/rad")
        print(f"   max |d2L/dth_sa2 FD - closed|         = {worst['grad_dd']:.2e} m/rad^2")
        print(f"   max |L_u + L_l - open belt|           = {worst['belt']:.2e} m (constant 0 with these marks)")
        print(f"   touch-point force moments vs -T grad L: {worst['moment']:.2e} (relative)")
        print(f"   sign: tau_eng = +10 N.m from rest, arm locked, 20 ms: T_u max {sign[0]:.3f} N, "
              f"T_l max {sign[1]:.3f} N -> {'UPPER' if sign[0] > 0 and sign[1] == 0 else 'WRONG'} run")
    return worst, sign


def sign_check(p, tau=10.0, t_end=0.02, n=200):
    """Arm locked at th_sa0, from rest at q0, tau_eng > 0 only: RK4 on (th_ds, th_rw) with the
    construction lengths (not the closed forms). Returns the max tension of each run."""
    q0 = (0.0, p["th_sa0"], 0.0)
    g0 = tangent_construction(p, q0)

    def tensions(th_ds, th_rw):
        g = tangent_construction(p, (th_ds, p["th_sa0"], th_rw))
        return (p["k"] * max(g["L_u"] - g0["L_u"], 0.0),
                p["k"] * max(g["L_l"] - g0["L_l"] - p["slack"], 0.0))

    def f(_t, x):
        T_u, T_l = tensions(x[0], x[1])
        return [x[2], x[3], (tau - p["r_ds"] * (T_u - T_l)) / p["J_ds"],
                p["r_ws"] * (T_u - T_l) / p["J_rw"]]

    x, h, mu, ml = [0.0] * 4, t_end / n, 0.0, 0.0
    for i in range(n):
        x = rk4(f, x, i * h, h)
        T_u, T_l = tensions(x[0], x[1])
        mu, ml = max(mu, T_u), max(ml, T_l)
    return mu, ml


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


# ------------------------------------------------------------------------------------------------
# 3. Full elastic model
# ------------------------------------------------------------------------------------------------

def _chain_state(p, x, gm=None):
    """Extensions, their rates and gradients at state x."""
    e_u, e_l, gu, gl = extensions(p, x[0:3], gm)
    w = x[3:6]
    de_u = sum(a * b for a, b in zip(gu, w))
    de_l = sum(a * b for a, b in zip(gl, w))
    return e_u, e_l, de_u, de_l, gu, gl


def _indicators(p, x):
    """(e_u, e_l, e_u_dot, e_l_dot) at state x, inlined like _full_rhs (the step-end checks run
    as often as the stages)."""
    l, dr, rds, rws = p["l_sa"], p["dr"], p["r_ds"], p["r_ws"]
    th = x[1]
    co, si = math.cos(th), math.sin(th)
    ux, uz = p["ds_x"] + l * co, p["ds_z"] - l * si
    d2 = ux * ux + uz * uz
    d = math.sqrt(d2)
    dd = (-ux * l * si - uz * l * co) / d
    T = math.sqrt(d2 - dr * dr)
    dT = d * dd / T
    a = rds * x[0] - rws * x[2]
    rate = rds * x[3] - rws * x[5]
    if p["printed"]:
        e_u = T - p["T_ref"] + a
        e_l = T - p["T_ref"] - a - p["slack"]
        return e_u, e_l, dT * x[4] + rate, dT * x[4] - rate
    phi, alpha = math.atan2(uz, ux), math.acos(dr / d)
    dphi = (-ux * l * co + uz * l * si) / d2
    dalpha = dr * dd / (d * T)
    e_u = T - dr * (phi + alpha) - rws * th + a - p["Lu_ref"]
    e_l = T + dr * (phi - alpha) + rws * th - a - p["Ll_ref"] - p["slack"]
    return (e_u, e_l, (dT - dr * (dphi + dalpha) - rws) * x[4] + rate,
            (dT + dr * (dphi - dalpha) + rws) * x[4] - rate)


def _full_status(p, x):
    """Per run: (e > 0, k e + c e_dot > 0); a run pulls when both hold. With c = 0 the second is
    the first, so only e's sign is tracked."""
    e_u, e_l, de_u, de_l = _indicators(p, x)
    k, c = p["k"], p["c_chain"]
    if c == 0.0:
        return (e_u > 0.0, e_l > 0.0)
    return (e_u > 0.0, k * e_u + c * de_u > 0.0, e_l > 0.0, k * e_l + c * de_l > 0.0)


def _tensions(p, mode, e_u, e_l, de_u, de_l):
    k, c = p["k"], p["c_chain"]
    if c == 0.0:
        return (k * e_u if mode[0] else 0.0), (k * e_l if mode[1] else 0.0)
    return ((k * e_u + c * de_u) if mode[0] and mode[1] else 0.0,
            (k * e_l + c * de_l) if mode[2] and mode[3] else 0.0)


def _full_rhs(p):
    """f(x, mode, u), x = (q, w, dissipated, input work), u the inputs at that instant. The force
    law is frozen by mode (smooth inside). Same equations as geometry()/extensions()/free_forces(),
    inlined for speed (checked against them in check_full)."""
    l, dr, rds, rws = p["l_sa"], p["dr"], p["r_ds"], p["r_ws"]
    px, pz, k, c = p["ds_x"], p["ds_z"], p["k"], p["c_chain"]
    jds, jrw, isa = p["J_ds"], p["J_rw"], p["I_sa"]
    Lu_ref, Ll_ref, T_ref, slack = p["Lu_ref"], p["Ll_ref"], p["T_ref"], p["slack"]
    pre, ks, cs, th0, G = p["tau_preload"], p["k_susp"], p["c_susp"], p["th_sa0"], p["G"]
    gds, grw, printed = p["gamma_ds"], p["gamma_rw"], p["printed"]
    dr2 = dr * dr
    sqrt, atan2, acos, cos, sin = math.sqrt, math.atan2, math.acos, math.cos, math.sin

    def f(x, mode, u):
        tau_eng, tau_load, c_brake = u
        crw = c_brake + grw
        th_ds, th, th_rw, w_ds, w_sa, w_rw = x[0], x[1], x[2], x[3], x[4], x[5]
        co, si = cos(th), sin(th)
        ux, uz = px + l * co, pz - l * si
        d2 = ux * ux + uz * uz
        d = sqrt(d2)
        dd = (-ux * l * si - uz * l * co) / d
        T = sqrt(d2 - dr2)
        dT = d * dd / T
        a = rds * th_ds - rws * th_rw
        if printed:
            e_u = T - T_ref + a
            e_l = T - T_ref - a - slack
            gu = gl = dT
        else:
            phi, alpha = atan2(uz, ux), acos(dr / d)
            dphi = (-ux * l * co + uz * l * si) / d2
            dalpha = dr * dd / (d * T)
            e_u = T - dr * (phi + alpha) - rws * th + a - Lu_ref
            e_l = T + dr * (phi - alpha) + rws * th - a - Ll_ref - slack
            gu = dT - dr * (dphi + dalpha) - rws
            gl = dT + dr * (dphi - dalpha) + rws
        # exact gradients for the force in every case
        phi_, alpha_ = atan2(uz, ux), acos(dr / d)
        dphi_ = (-ux * l * co + uz * l * si) / d2
        dalpha_ = dr * dd / (d * T)
        Gu = dT - dr * (dphi_ + dalpha_) - rws
        Gl = dT + dr * (dphi_ - dalpha_) + rws
        rate = rds * w_ds - rws * w_rw
        de_u = gu * w_sa + rate
        de_l = gl * w_sa - rate
        diss = gds * w_ds * w_ds + cs * w_sa * w_sa + crw * w_rw * w_rw
        if c == 0.0:
            T_u = k * e_u if mode[0] else 0.0
            T_l = k * e_l if mode[1] else 0.0
        else:
            T_u = (k * e_u + c * de_u) if mode[0] and mode[1] else 0.0
            T_l = (k * e_l + c * de_l) if mode[2] and mode[3] else 0.0
            diss += (T_u - (k * e_u if mode[0] else 0.0)) * de_u
            diss += (T_l - (k * e_l if mode[2] else 0.0)) * de_l
        f0 = tau_eng - gds * w_ds - rds * (T_u - T_l)
        f1 = pre - ks * (th - th0) - cs * w_sa - G * co + tau_load - T_u * Gu - T_l * Gl
        f2 = tau_load - crw * w_rw + rws * (T_u - T_l)
        a_sa = (f1 - f2) / isa
        return [w_ds, w_sa, w_rw, f0 / jds, a_sa, f2 / jrw - a_sa, diss,
                tau_eng * w_ds + tau_load * (w_sa + w_rw)]
    return f


def _full_rhs_plain(p):
    """The same right-hand side from the shared helpers (slow; used to check _full_rhs)."""
    def f(x, mode, u):
        q, w = x[0:3], x[3:6]
        gm = geometry(p, q[1])
        e_u, e_l, de_u, de_l, gu, gl = _chain_state(p, x, gm)
        T_u, T_l = _tensions(p, mode, e_u, e_l, de_u, de_l)
        gu, gl = (p["r_ds"], gm["dLu"], -p["r_ws"]), (-p["r_ds"], gm["dLl"], p["r_ws"])
        fr = free_forces(p, q, w, u)
        fr = [a - T_u * b - T_l * c for a, b, c in zip(fr, gu, gl)]
        acc = mass_solve(p, fr)
        diss = free_dissipation(p, w, u[2])
        if p["c_chain"] != 0.0:
            ku = p["k"] * e_u if mode[0] else 0.0
            kl = p["k"] * e_l if mode[2] else 0.0
            diss += (T_u - ku) * de_u + (T_l - kl) * de_l
        return list(w) + acc + [diss, input_power(w, u)]
    return f


def full_outputs(p, t, x, mode=None):
    """One output row of the full model."""
    q, w = x[0:3], x[3:6]
    if mode is None:
        mode = _full_status(p, x)
    gm = geometry(p, q[1])
    e_u, e_l, de_u, de_l, _, _ = _chain_state(p, x, gm)
    T_u, T_l = _tensions(p, mode, e_u, e_l, de_u, de_l)
    e_chain = 0.5 * p["k"] * (max(e_u, 0.0) ** 2 + max(e_l, 0.0) ** 2)
    e_kin = kinetic(p, w)
    e_g, e_s = potentials(p, q[1])
    return dict(time=t, theta_ds=q[0], theta_sa=q[1], theta_rw=q[2], w_ds=w[0], w_sa=w[1],
                w_rw=w[2], T_upper=T_u, T_lower=T_l, e_upper=e_u, e_lower=e_l,
                tau_chain_ds=-p["r_ds"] * (T_u - T_l), tau_chain_rw=p["r_ws"] * (T_u - T_l),
                tau_chain_sa=-T_u * gm["dLu"] - T_l * gm["dLl"],
                energy_kinetic=e_kin, energy_gravity=e_g, energy_suspension=e_s,
                energy_chain=e_chain, energy_dissipated=x[6], work_input=x[7],
                energy_balance=e_kin + e_g + e_s + e_chain + x[6] - x[7])


def default_substeps(p, h, per=0.015):
    """RK6 substeps per communication step: (fastest eigenvalue) * substep <= per. The chain
    mode's eigenvalues are below max(sqrt(k/m_eff), c/m_eff) in modulus for any damping."""
    m_eff = 1.0 / (p["r_ds"] ** 2 / p["J_ds"] + p["r_ws"] ** 2 / p["J_rw"])
    rate = max(math.sqrt(p["k"] / m_eff), p["c_chain"] / m_eff) + p["c_susp"] / p["I_sa"]
    return max(4, math.ceil(h * rate / per))


def full_model(p, inputs, t_end, h=1e-3, substeps=None, x0=None, stride=1, interpolate=False):
    """Full elastic chain. inputs(t) -> (tau_eng, tau_load, c_brake), sampled at the
    communication points and held over each step, or interpolated linearly between them
    (step_inputs). Rows (dicts, see full_outputs) every `stride` steps, starting at t = 0.

    T_run = k e + c e_dot when e > 0 and k e + c e_dot > 0, else 0. Each change of that status
    is located by bisection and the RK6 step restarts there, so the solution is smooth between
    restarts and the global error is that of RK6 on smooth pieces. tau_chain_ds is the chain's
    generalized force on th_ds, -r_ds (T_u - T_l); tau_chain_sa the one on th_sa, i.e. the
    chain's moment about O on swing arm + wheel, -T_u dL_u/dth_sa - T_l dL_l/dth_sa.
    Returns (rows, events) with events (time, old status, new status).
    """
    n = int(round(t_end / h))
    sub = substeps or default_substeps(p, h)
    x = list(x0) if x0 is not None else [0.0, p["th_sa0"], 0.0, 0.0, 0.0, 0.0]
    x = x[:6] + [0.0, 0.0]
    mode = _full_status(p, x)

    def indicators(a, b, mode):
        ea, eb = _indicators(p, a), _indicators(p, b)
        return [(ea[0], ea[2], eb[0], eb[2]), (ea[1], ea[3], eb[1], eb[3])]

    rows = [full_outputs(p, 0.0, x)]
    eng = Switching(_full_rhs(p), lambda y, m, u: _full_status(p, y),
                    probe=_hermite_probe(indicators))
    for i in range(n):
        u, _ = step_inputs(inputs, i, h, interpolate)
        x, mode = eng.step(x, mode, i * h, h, sub, u)
        if (i + 1) % stride == 0:
            rows.append(full_outputs(p, round((i + 1) * h, 12), x, mode))
    return rows, eng.events


# ------------------------------------------------------------------------------------------------
# 2. The thesis's printed lengths
# ------------------------------------------------------------------------------------------------

def thesis_printed_lengths_energy_drift(verbose=True, t_end=1.0):
    """Printed extensions (exact only with a locked arm) in the tension, exact gradient in the
    virtual work: the chain force is then not the gradient of any potential, so energy drifts as
    soon as the arm moves. No damping, g on, no inputs; the chain starts pre-tensioned
    (th_ds = 0.1 rad, 3 mm) and the arm is thrown upward (w_sa = 1 rad/s). Energy = kinetic +
    gravity + suspension + k/2 e_+^2 of the extension used in the tension."""
    out = {}
    for printed in (False, True):
        p = make_params(printed=printed, gamma_ds=0.0, gamma_rw=0.0, c_susp=0.0, c_chain=0.0)
        rows, _ = full_model(p, lambda t: (0.0, 0.0, 0.0), t_end, x0=[0.1, 0.0, 0.0, 0.0, 1.0, 0.0],
                             substeps=12)
        E = [r["energy_balance"] for r in rows]
        out[printed] = (max(abs(e - E[0]) for e in E) / E[0], E[0],
                        max(abs(r["theta_sa"]) for r in rows))
    if verbose:
        print("2. printed (thesis) vs exact lengths, no damping, arm moving "
              f"(|th_sa| up to {out[False][2]:.3f} rad), {t_end} s:")
        print(f"   E0 = {out[False][1]:.4f} J; max |E - E0|/E0: exact {out[False][0]:.2e}, "
              f"printed {out[True][0]:.2e}")
    return out


# ------------------------------------------------------------------------------------------------
# 4. QSS model
# ------------------------------------------------------------------------------------------------

def qss_tension(p, w_rw, u):
    """Signed tension T_s = T_u - T_l and the wheel acceleration of the QSS model.

    From the full model with th_sa_dot = th_sa_ddot = 0 and L_run_dot = 0 (so th_ds_dot = rho
    th_rw_dot): DS row J_ds rho a = Y - r_ds T_s, RW row J_rw a = X + r_ws T_s, hence
    (J_rw + rho^2 J_ds) a = X + rho Y and T_s = (r_ds Y/J_ds - r_ws X/J_rw)/(r_ds^2/J_ds + r_ws^2/J_rw).
    """
    tau_eng, tau_load, c_brake = u
    rho, rds, rws, jds, jrw = p["rho"], p["r_ds"], p["r_ws"], p["J_ds"], p["J_rw"]
    X = tau_load - (c_brake + p["gamma_rw"]) * w_rw
    Y = tau_eng - p["gamma_ds"] * rho * w_rw
    a = (X + rho * Y) / (jrw + rho * rho * jds)
    T_s = (rds * Y / jds - rws * X / jrw) / (rds * rds / jds + rws * rws / jrw)
    return T_s, a


def qss_arm(p, T_s, w_rw, c_brake, th_start=None):
    """Swing-arm angle from the SA row minus the RW row at th_sa_ddot = 0:
    0 = tau_susp(th) - G cos th + (c_brake + gamma_rw) w_rw - r_ws T_s - T_u L_u' - T_l L_l'
    (tau_load cancels). Newton with the analytic derivative."""
    T_u, T_l = max(T_s, 0.0), max(-T_s, 0.0)
    th = p["th_sa0"] if th_start is None else th_start
    for _ in range(60):
        gm = geometry(p, th)
        f = (p["tau_preload"] - p["k_susp"] * (th - p["th_sa0"]) - p["G"] * math.cos(th)
             + (c_brake + p["gamma_rw"]) * w_rw - p["r_ws"] * T_s - T_u * gm["dLu"] - T_l * gm["dLl"])
        df = -p["k_susp"] + p["G"] * math.sin(th) - T_u * gm["ddLu"] - T_l * gm["ddLl"]
        step = f / df
        th -= step
        if abs(step) < 1e-16:
            break
    return th


def qss_state(p, th_rw, w_rw, u, th_start=None):
    """Full-model state (q, w) reconstructed by the QSS: th_sa from qss_arm, th_ds from the taut
    run's extension |T_s|/k (linear in th_ds), th_ds_dot = rho th_rw_dot, th_sa_dot = 0.
    T_s = 0 leaves th_ds anywhere in the slack: the upper run's end (e_u = 0) is taken."""
    T_s, a = qss_tension(p, w_rw, u)
    th_sa = qss_arm(p, T_s, w_rw, u[2], th_start)
    gm = geometry(p, th_sa)
    rds, rws = p["r_ds"], p["r_ws"]
    if T_s >= 0.0:   # e_u = Lu + r_ds th_ds - r_ws th_rw - Lu_ref = T_s/k
        th_ds = (T_s / p["k"] + p["Lu_ref"] - gm["Lu"] + rws * th_rw) / rds
    else:            # e_l = Ll - r_ds th_ds + r_ws th_rw - Ll_ref - slack = -T_s/k
        th_ds = (gm["Ll"] + rws * th_rw - p["Ll_ref"] - p["slack"] + T_s / p["k"]) / rds
    return [th_ds, th_sa, th_rw, p["rho"] * w_rw, 0.0, w_rw], T_s, a


def _phi12(z):
    """phi1(z) = (e^z - 1)/z, phi2(z) = (e^z - 1 - z)/z^2, accurate near 0."""
    if abs(z) < 1e-3:
        return (1 + z / 2 + z * z / 6 + z**3 / 24 + z**4 / 120,
                0.5 + z / 6 + z * z / 24 + z**3 / 120 + z**4 / 720)
    e = math.expm1(z)
    return e / z, (e - z) / (z * z)


def _qss_forcing(p, u):
    """(F, beta) of J_eff w' = F - beta w: F = tau_load + rho tau_eng, beta = c_brake + gamma_rw
    + rho^2 gamma_ds."""
    return u[1] + p["rho"] * u[0], u[2] + p["gamma_rw"] + p["rho"] ** 2 * p["gamma_ds"]


def _qss_held_step(p, jeff, th, w, u, h):
    """Exact step with F, beta constant (exponential integrators phi1, phi2): (th, w, work)."""
    F, beta = _qss_forcing(p, u)
    z = -beta / jeff * h
    f1, f2 = _phi12(z)
    th_new = th + w * h * f1 + F / jeff * h * h * f2
    w_new = w * math.exp(z) + F / jeff * h * f1
    return th_new, w_new, F * (th_new - th)


def _qss_ramp_step(p, jeff, th, w, u, h, terms):
    """Exact step with F, beta linear in time (interpolated inputs), as the Taylor series of the
    solution in sigma = s/h: g(sigma) = w(h sigma) obeys g' = A + B sigma - (P + Q sigma) g with
    A = h F0/J, B = h (F1 - F0)/J, P = h beta0/J, Q = h (beta1 - beta0)/J, so its coefficients
    follow (n+1) a_{n+1} = A [n=0] + B [n=1] - P a_n - Q a_{n-1}; th and work = int F w dt are
    term-by-term integrals. The terms fall like P^n/n! with P < 3e-3 here, so `terms` = 8 is at
    roundoff (a ramping beta has no elementary closed form; the series needs none).
    Returns (th, w, work)."""
    (F0, b0), (F1, b1) = _qss_forcing(p, u(0.0)), _qss_forcing(p, u(h))
    A, B, P, Q = h * F0 / jeff, h * (F1 - F0) / jeff, h * b0 / jeff, h * (b1 - b0) / jeff
    dF = F1 - F0
    a_prev, a = 0.0, w
    w_end, th_int, work = a, a, a * (F0 + dF / 2)
    for n in range(terms - 1):
        a_prev, a = a, ((A if n == 0 else B if n == 1 else 0.0) - P * a - Q * a_prev) / (n + 1)
        w_end += a
        th_int += a / (n + 2)
        work += a * (F0 / (n + 2) + dF / (n + 3))
    return th + h * th_int, w_end, h * work


# Series terms per 1 ms step of the QSS model with interpolated inputs (_qss_ramp_step; the
# reference's refinement check doubles them).
QSS_RAMP_TERMS = 8


def qss_model(p, inputs, t_end, h=1e-3, x0=None, stride=1, interpolate=False,
              terms=QSS_RAMP_TERMS):
    """QSS chain and arm. State (th_rw, w_rw): J_eff w' = F - beta w (_qss_forcing). Held
    inputs: F and beta are constant over the step, solved in closed form; interpolated ones:
    linear in the step, solved by the solution's series with `terms` terms (_qss_ramp_step). The
    dissipated energy is F w integrated minus the kinetic energy gained. The taut run (sign of
    T_s) enters only the algebraic outputs, not this ODE, so no switch has to be located. Rows as
    full_model's where they exist (th_sa, th_ds algebraic from the inputs at the row's instant;
    w_sa = 0)."""
    jeff = p["J_rw"] + p["rho"] ** 2 * p["J_ds"]
    th, w = (x0 if x0 is not None else (0.0, 0.0))
    diss = work = 0.0
    th_sa = p["th_sa0"]

    def row(t, th, w, u):
        nonlocal th_sa
        x, T_s, _ = qss_state(p, th, w, u, th_sa)
        th_sa = x[1]
        gm = geometry(p, x[1])
        e_u, e_l, _, _ = extensions(p, x[0:3], gm)
        T_u, T_l = max(T_s, 0.0), max(-T_s, 0.0)
        e_g, e_s = potentials(p, x[1])
        return dict(time=t, theta_ds=x[0], theta_sa=x[1], theta_rw=th, w_ds=x[3], w_sa=0.0,
                    w_rw=w, T_upper=T_u, T_lower=T_l, e_upper=e_u, e_lower=e_l,
                    tau_chain_ds=-p["r_ds"] * T_s, tau_chain_rw=p["r_ws"] * T_s,
                    tau_chain_sa=-T_u * gm["dLu"] - T_l * gm["dLl"],
                    energy_kinetic=0.5 * jeff * w * w, energy_gravity=e_g, energy_suspension=e_s,
                    energy_chain=0.5 * T_s * T_s / p["k"], energy_dissipated=diss, work_input=work)

    n = int(round(t_end / h))
    rows = [row(0.0, th, w, inputs(0.0))]
    for i in range(n):
        u, u_end = step_inputs(inputs, i, h, interpolate)
        if interpolate:
            th_new, w_new, dwork = _qss_ramp_step(p, jeff, th, w, u, h, terms)
        else:
            th_new, w_new, dwork = _qss_held_step(p, jeff, th, w, u_end, h)
        work += dwork
        diss += dwork - 0.5 * jeff * (w_new * w_new - w * w)
        th, w = th_new, w_new
        if (i + 1) % stride == 0:
            rows.append(row(round((i + 1) * h, 12), th, w, u_end))
    return rows


def check_qss(verbose=True):
    """(a) Algebraic: at a QSS-reconstructed state the FULL model's accelerations must be exactly
    (rho a, 0, a), a the QSS wheel acceleration, and its tension T_s: this tests T_s, the arm
    equation and th_ds at once. (b) Dynamic, slow traction over 1.5 s: the full model (chain
    damped at zeta 0.7) converges to the inextensible model like 1/k; the QSS differs from that
    limit by the arm dynamics it drops (th_sa_dot = 0; th_rw is relative to the arm), which a
    100x stiffer suspension shrinks 100x, and then full(k = 1e7) ~ QSS."""
    worst_a = worst_t = 0.0
    cases = [(30.0, -20.0, 0.0, 15.0), (-8.0, -5.0, 0.0, 30.0), (0.0, -3.0, 2.0, 20.0),
             (12.0, 10.0, 0.5, -4.0), (-20.0, 40.0, 1.0, 10.0)]
    for kk in (1e5, 1e7):
        pk = make_params(k=kk, c_chain=50.0)
        for tau_eng, tau_load, c_b, w_rw in cases:
            u = (tau_eng, tau_load, c_b)
            x, T_s, a = qss_state(pk, 3.7, w_rw, u)
            mode = _full_status(pk, x)
            acc = _full_rhs(pk)(x + [0.0, 0.0], mode, u)[3:6]
            worst_a = max(worst_a, abs(acc[0] / pk["rho"] - a) / abs(a), abs(acc[1]) / abs(a),
                          abs(acc[2] - a) / abs(a))
            T_u, T_l = _tensions(pk, mode, *_indicators(pk, x))
            worst_t = max(worst_t, abs((T_u - T_l) - T_s) / abs(T_s))

    def inputs(t):
        s = min(t / 1.5, 1.0)
        s = s * s * (3 - 2 * s)
        return 25.0 * s, -8.0 * s, 0.0
    t_end = 1.5
    d = lambda A, B, key, i0=0: max(abs(a[key] - b[key]) for a, b in zip(A[i0:], B[i0:]))
    res = []
    for k_susp, c_susp, ks in ((1e4, 200.0, (1e5, 1e6, 1e7)), (1e6, 2000.0, (1e7,))):
        p = make_params(k_susp=k_susp, c_susp=c_susp)
        m_eff = 1.0 / (p["r_ds"] ** 2 / p["J_ds"] + p["r_ws"] ** 2 / p["J_rw"])
        r_in, _, _ = inextensible_model(p, inputs, t_end, stride=10)
        r_q = qss_model(p, inputs, t_end, stride=10)
        full = []
        for kk in ks:
            pk = make_params(k=kk, c_chain=1.4 * math.sqrt(kk * m_eff), k_susp=k_susp, c_susp=c_susp)
            r_f, _ = full_model(pk, inputs, t_end, stride=10,
                                substeps=default_substeps(pk, 1e-3, per=0.05))
            r_qk = qss_model(pk, inputs, t_end, stride=10)
            full.append((kk, d(r_f, r_in, "theta_rw"), d(r_f, r_in, "T_upper", 10),
                         d(r_f, r_qk, "theta_rw"), d(r_f, r_qk, "theta_ds"), d(r_f, r_qk, "T_upper", 10)))
        res.append((k_susp, d(r_q, r_in, "theta_rw"), d(r_q, r_in, "theta_sa"),
                    d(r_q, r_in, "T_upper", 10), max(r["T_upper"] for r in r_q), full))
    if verbose:
        print("4. QSS: full-model accelerations at QSS states vs (rho a, 0, a): max relative error "
              f"{worst_a:.1e}; full tension vs T_s {worst_t:.1e} (roundoff of e = T/k at k = 1e7)")
        for k_susp, q_rw, q_sa, q_T, Tmax, full in res:
            print(f"   slow traction 1.5 s, k_susp {k_susp:.0e} (T_u up to {Tmax:.0f} N): QSS vs "
                  f"inextensible: th_rw {q_rw:.2e} rad, th_sa {q_sa:.2e} rad, T_u {q_T:.2e} N")
            for kk, i_rw, i_T, q_rw2, q_ds2, q_T2 in full:
                print(f"     full k = {kk:.0e}: vs inextensible th_rw {i_rw:.2e}, T_u {i_T:.2e}; "
                      f"vs QSS th_rw {q_rw2:.2e}, th_ds {q_ds2:.2e}, T_u {q_T2:.2e}")
        print("     (T_u ~0.3 N of 793 N at the steepest rise: the damped chain lags each held 1 ms input"
              " step; 0.25 ms steps give 0.09 N)")
    return worst_a, worst_t, res


# ------------------------------------------------------------------------------------------------
# 5. Inextensible model
# ------------------------------------------------------------------------------------------------

def _constraint(p, mode, gm):
    """A = grad L_run for the taut run of mode 'U' or 'L', and A_dot q_dot / th_sa_dot^2."""
    if mode == "U":
        return (p["r_ds"], gm["dLu"], -p["r_ws"]), gm["ddLu"]
    return (-p["r_ds"], gm["dLl"], p["r_ws"]), gm["ddLl"]


def _constrained(p, x, mode, u):
    """Accelerations and tension in a taut mode, minimal coordinates s = (th_sa, th_rw).

    q_dot = B s_dot with B = [[-A_sa/A_ds, -A_rw/A_ds], [1, 0], [0, 1]] (A B = 0), q_ddot =
    B s_ddot + b, b = (-(A_sa'/A_ds) w_sa^2, 0, 0). B^T M B s_ddot = B^T (U0 - M b) removes the
    chain force -A^T lambda. lambda then from the DS row, J_ds q_ddot_ds = U0_ds - A_ds lambda,
    and independently from lambda = (A M^-1 A^T)^-1 (A M^-1 U0 + A_dot q_dot).
    """
    q, w = x[0:3], x[3:6]
    gm = geometry(p, q[1])
    A, dA_sa = _constraint(p, mode, gm)
    w = [-(A[1] * w[1] + A[2] * w[2]) / A[0], w[1], w[2]]
    U0 = free_forces(p, q, w, u)
    jds, jrw, isa = p["J_ds"], p["J_rw"], p["I_sa"]
    c1, c2 = -A[1] / A[0], -A[2] / A[0]
    b0 = -dA_sa / A[0] * w[1] ** 2
    # M = diag(J_ds) (+) [[isa+jrw, jrw], [jrw, jrw]] on (sa, rw)
    m11 = jds * c1 * c1 + isa + jrw
    m12 = jds * c1 * c2 + jrw
    m22 = jds * c2 * c2 + jrw
    r1 = c1 * (U0[0] - jds * b0) + U0[1]
    r2 = c2 * (U0[0] - jds * b0) + U0[2]
    det = m11 * m22 - m12 * m12
    a_sa = (m22 * r1 - m12 * r2) / det
    a_rw = (m11 * r2 - m12 * r1) / det
    a_ds = c1 * a_sa + c2 * a_rw + b0
    lam = (U0[0] - jds * a_ds) / A[0]
    Minv_At = mass_solve(p, A)
    Minv_U = mass_solve(p, U0)
    lam2 = (sum(a * b for a, b in zip(A, Minv_U)) + dA_sa * w[1] ** 2) / sum(
        a * b for a, b in zip(A, Minv_At))
    return w, [a_ds, a_sa, a_rw], lam, lam2, A


def _project(p, x, mode):
    """Put th_ds and w_ds exactly on the taut run's constraint (L linear in th_ds)."""
    if mode not in ("U", "L"):
        return x
    gm = geometry(p, x[1])
    A, _ = _constraint(p, mode, gm)
    y = list(x)
    if mode == "U":   # e_u = 0
        y[0] = (p["Lu_ref"] - gm["Lu"] + p["r_ws"] * x[2]) / p["r_ds"]
    else:             # e_l = 0
        y[0] = (gm["Ll"] + p["r_ws"] * x[2] - p["Ll_ref"] - p["slack"]) / p["r_ds"]
    y[3] = -(A[1] * x[4] + A[2] * x[5]) / A[0]
    return y


def inextensible_model(p, inputs, t_end, h=1e-3, substeps=10, x0=None, stride=1, mode0=None,
                       interpolate=False):
    """Inextensible chain: modes 'U' (upper run taut), 'L' (lower taut), 'F' (slack); inputs
    held or interpolated as in full_model.

    In U/L, th_ds is eliminated exactly by the run's constraint (projected after every RK stage
    result) and the tension is lambda >= 0 (pulling); lambda < 0 -> F (located). In F the six
    states are free; a run's extension reaching 0 (located) is a plastic impact
    q_dot+ = q_dot- - M^-1 A^T (A M^-1 A^T)^-1 A q_dot-, losing (A q_dot-)^2 / (2 A M^-1 A^T),
    after which the run is taut (or free at once if its lambda < 0). If both runs would be taut
    the swing arm locks: not modelled, raises. x = (q, w, dissipated, input work, impact loss).
    Returns (rows, events, impacts) with impacts (time, run, loss formula, kinetic-energy drop).
    """
    n = int(round(t_end / h))
    x = list(x0) if x0 is not None else [0.0, p["th_sa0"], 0.0, 0.0, 0.0, 0.0]
    x = x[:6] + [0.0, 0.0, 0.0]
    impacts = []

    def lam_of(y, mode, u):
        return _constrained(p, y, mode, u)[2]

    def pick_mode(y, u):
        e_u, e_l, _, _ = extensions(p, y[0:3])
        if abs(e_u) < 1e-12 and lam_of(_project(p, y, "U"), "U", u) >= 0.0:
            return "U"
        if abs(e_l) < 1e-12 and lam_of(_project(p, y, "L"), "L", u) >= 0.0:
            return "L"
        return "F"

    mode = mode0 or pick_mode(x, inputs(0.0))
    x = _project(p, x, mode)

    def rhs(y, m, u):
        if m == "F":
            q, w = y[0:3], y[3:6]
            acc = mass_solve(p, free_forces(p, q, w, u))
        else:
            w, acc, _, _, _ = _constrained(p, y, m, u)
        return list(w) + acc + [free_dissipation(p, w, u[2]), input_power(w, u), 0.0]

    def status(y, m, u):
        e_u, e_l, _, _ = extensions(p, y[0:3])
        if m == "F":
            return "U" if e_u > 0.0 else ("L" if e_l > 0.0 else "F")
        other = e_l if m == "U" else e_u
        if other > 0.0:
            return "LOCK"
        return "F" if lam_of(y, m, u) < 0.0 else m

    def transition(y, old, new, t, u):
        if new == "LOCK":
            raise RuntimeError(f"both runs taut at t = {t}: the swing arm would lock")
        if old != "F":
            return y, new
        gm = geometry(p, y[1])
        A, _ = _constraint(p, new, gm)
        w = y[3:6]
        Aw = sum(a * b for a, b in zip(A, w))
        MiA = mass_solve(p, A)
        AMA = sum(a * b for a, b in zip(A, MiA))
        w_new = [wi - mi * Aw / AMA for wi, mi in zip(w, MiA)]
        loss = 0.5 * Aw * Aw / AMA
        drop = kinetic(p, w) - kinetic(p, w_new)
        y = list(y[0:3]) + w_new + [y[6], y[7], y[8] + loss]
        y = _project(p, y, new)
        impacts.append((t, new, loss, drop))
        if lam_of(y, new, u) < 0.0:
            return y, "F"
        return y, new

    def row(t, y, m, u):
        gm = geometry(p, y[1])
        e_u, e_l, _, _ = extensions(p, y[0:3], gm)
        lam = lam2 = 0.0
        if m in ("U", "L"):
            _, _, lam, lam2, _ = _constrained(p, y, m, u)
        T_u = lam if m == "U" else 0.0
        T_l = lam if m == "L" else 0.0
        e_kin = kinetic(p, y[3:6])
        e_g, e_s = potentials(p, y[1])
        return dict(time=t, theta_ds=y[0], theta_sa=y[1], theta_rw=y[2], w_ds=y[3], w_sa=y[4],
                    w_rw=y[5], T_upper=T_u, T_lower=T_l, e_upper=e_u, e_lower=e_l,
                    tau_chain_ds=-p["r_ds"] * (T_u - T_l), tau_chain_rw=p["r_ws"] * (T_u - T_l),
                    tau_chain_sa=-T_u * gm["dLu"] - T_l * gm["dLl"], energy_kinetic=e_kin,
                    energy_gravity=e_g, energy_suspension=e_s, energy_chain=0.0,
                    energy_dissipated=y[6] + y[8], energy_impact=y[8], work_input=y[7],
                    energy_balance=e_kin + e_g + e_s + y[6] + y[8] - y[7], mode=m,
                    lambda_check=abs(lam - lam2))

    rows = [row(0.0, x, mode, inputs(0.0))]
    eng = Switching(rhs, status, transition, after_step=lambda y, m: _project(p, y, m))
    for i in range(n):
        u, u_end = step_inputs(inputs, i, h, interpolate)
        x, mode = eng.step(x, mode, i * h, h, substeps, u)
        if (i + 1) % stride == 0:
            rows.append(row(round((i + 1) * h, 12), x, mode, u_end))
    return rows, eng.events, impacts


# ------------------------------------------------------------------------------------------------
# 6. Reference scenario
# ------------------------------------------------------------------------------------------------

def _ramp(t, t0, t1, v0, v1):
    if t <= t0:
        return v0
    if t >= t1:
        return v1
    return v0 + (v1 - v0) * (t - t0) / (t1 - t0)


def reference_inputs(t):
    """2 s: traction (upper run) from rest against a road resistance (both ramped in over 0.2 s,
    the resistance 15 N.m higher over 0.3-0.5 s); at 0.6 s the throttle closes into engine
    braking and the chain crosses the slack onto the lower run; traction again from 1.0 s (slack
    crossed back); from 1.4 s the brake with a light engine drag, lower run taut again. The arm
    squats and extends with the chain's moment and the load torque; the wheel never rolls
    backwards. Piecewise linear with two jumps in tau_load (0.3 s, 0.5 s) and a sine; the
    references sample it at the communication points (ChainDrive_in.csv), held or interpolated."""
    tau_eng = (_ramp(t, 0.0, 0.2, 0.0, 30.0) if t < 0.6 else
               _ramp(t, 0.6, 0.7, 30.0, -12.0) if t < 1.0 else
               _ramp(t, 1.0, 1.1, -12.0, 20.0) if t < 1.4 else
               _ramp(t, 1.4, 1.5, 20.0, -4.0))
    tau_load = (-(10.0 + 5.0 * math.sin(3.0 * t)) * _ramp(t, 0.0, 0.2, 0.0, 1.0)
                - (15.0 if 0.3 <= t < 0.5 else 0.0))
    c_brake = _ramp(t, 1.4, 1.5, 0.0, 2.0)
    return tau_eng, tau_load, c_brake


# Compared outputs, all FMU variable names. The full and inextensible models: the states
# (energy_dissipated is one) and the tensions, plus the impact losses of the inextensible chain.
# QSS: every row entry of qss_model that the FMU also outputs (all but work_input).
REF_NAMES = ["time", "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "T_upper",
             "T_lower", "energy_dissipated"]
INEXTENSIBLE_NAMES = REF_NAMES + ["energy_impact"]
QSS_NAMES = ["time", "theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "T_upper",
             "T_lower", "e_upper", "e_lower", "tau_chain_ds", "tau_chain_rw", "tau_chain_sa",
             "energy_kinetic", "energy_gravity", "energy_suspension", "energy_chain",
             "energy_dissipated"]

# chain_model -> (subdirectory of reference-fmus/ChainDrive, what, compared outputs)
# Subdirectory: (chain_model, parameters other than the defaults as FMU names, what, columns).
SCENARIOS = {"": (1, {}, "full elastic", REF_NAMES),
             "qss": (2, {}, "quasi-steady-state", QSS_NAMES),
             "inextensible": (3, {}, "inextensible", INEXTENSIBLE_NAMES),
             "stiff": (1, {"k_chain": 1e6, "c_chain": 230.0}, "full elastic, k = 1e6 N/m, 5 % damped",
                       REF_NAMES)}
# The FMU's parameter names for the keys of make_params.
FMU_NAMES = {"k_chain": "k"}


def scenario_params(fmu_params):
    return make_params(**{FMU_NAMES.get(n, n): v for n, v in fmu_params.items()})


def run_model(chain_model, p, inputs, t_end, h=1e-3, substeps=None, stride=10, interpolate=False):
    """(rows, events, impacts) of one chain model, inputs held or interpolated (step_inputs). The
    QSS model has no located events (the taut run is not in its ODE) and only the inextensible
    one has impacts. substeps: RK6 substeps per step; for the QSS model the series terms of an
    interpolated step (the held one is closed-form)."""
    if chain_model == 1:
        rows, events = full_model(p, inputs, t_end, h, substeps=substeps, stride=stride,
                                  interpolate=interpolate)
        return rows, events, []
    if chain_model == 2:
        kw = {} if substeps is None else {"terms": substeps}
        return qss_model(p, inputs, t_end, h, stride=stride, interpolate=interpolate, **kw), [], []
    if chain_model == 3:
        kw = {} if substeps is None else {"substeps": substeps}
        return inextensible_model(p, inputs, t_end, h, stride=stride, interpolate=interpolate, **kw)
    raise ValueError(f"chain_model {chain_model}")


def write_reference(directory, substeps=None, chain_model=1, fmu_params=None):
    """Cross-Check files for one chain model (and the parameters fmu_params, by their FMU names;
    the defaults otherwise), on reference_inputs:
    ChainDrive_in.csv (every 1 ms step), ChainDrive_ref.csv (every 10 ms; columns: the FMU's
    variable names in SCENARIOS) with each input held over each step as a co-simulation master
    applies the table, ChainDrive_ref_interpolated.csv (same rows and columns) with the inputs
    interpolated linearly between the rows of ChainDrive_in.csv, as FMPy reads the table and a
    Model Exchange importer applies it at every evaluation, ChainDrive_ref.opt and
    ChainDrive_par.csv (chain_model, which the validation's importers set before
    initialization). substeps: RK6 substeps per step for both (None: each model's default).
    Returns {"held": (rows, events, impacts, seconds), "interpolated": (...)}."""
    fmu_params = fmu_params or {}
    p = scenario_params(fmu_params)
    h, t_end = 1e-3, 2.0
    n = int(round(t_end / h))
    names = next(v[3] for v in SCENARIOS.values() if v[0] == chain_model)
    out = {}
    for kind in ("held", "interpolated"):
        t0 = time.perf_counter()
        rows, events, impacts = run_model(chain_model, p, reference_inputs, t_end, h,
                                          substeps=substeps, stride=10,
                                          interpolate=kind == "interpolated")
        out[kind] = (rows, events, impacts, time.perf_counter() - t0)
    os.makedirs(directory, exist_ok=True)
    ins = [(round(i * h, 10),) + reference_inputs(i * h) for i in range(n)]
    ins.append((round(n * h, 10),) + reference_inputs(n * h))
    write_csv(os.path.join(directory, "ChainDrive_in.csv"), ["time", "tau_eng", "tau_load", "c_brake"], ins)
    for kind, suffix in (("held", ""), ("interpolated", "_interpolated")):
        write_csv(os.path.join(directory, f"ChainDrive_ref{suffix}.csv"), names,
                  [[r[k] for k in names] for r in out[kind][0]])
    write_opt(os.path.join(directory, "ChainDrive_ref.opt"), 0.0, t_end, h, 1e-8)
    with open(os.path.join(directory, "ChainDrive_par.csv"), "w") as f:
        f.write(f'"name","value"\n"chain_model",{chain_model:d}\n')
        for name, value in fmu_params.items():
            f.write(f'"{name}",{value!r}\n')
    return out


def _relative_difference(a, b, names):
    """Largest |a - b| over the rows relative to each signal's range (as the validation judges)."""
    worst = 0.0
    for k in names:
        scale = max(abs(r[k]) for r in a)
        diff = max(abs(x[k] - y[k]) for x, y in zip(a, b))
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst


def _scenario_substeps(chain_model, p):
    """RK6 substeps per 1 ms step a scenario is written with (QSS: the series terms of an
    interpolated step)."""
    if chain_model == 2:
        return QSS_RAMP_TERMS
    return 10 if chain_model == 3 else default_substeps(p, 1e-3)


def _check_solution(chain_model, p, rows, substeps, names, interpolate, bound):
    """Energy balance (full and inextensible, impact losses booked) and the difference to a
    rerun with twice the RK6 substeps (QSS: series terms), relative to each signal's range: the
    refinement must stay below `bound`. The held QSS step is closed-form: nothing to refine.
    Returns the figures."""
    fig = {}
    if chain_model != 2:
        work = max(max(abs(r["work_input"]) for r in rows), 1.0)
        fig["balance"] = max(abs(r["energy_balance"]) for r in rows) / work
        assert fig["balance"] < 1e-9, (f"chain_model {chain_model}: energy balance off by "
                                       f"{fig['balance']:.1e}")
    if substeps is None:
        return fig
    t0 = time.perf_counter()
    fine, _, _ = run_model(chain_model, p, reference_inputs, 2.0, substeps=2 * substeps, stride=10,
                           interpolate=interpolate)
    fig["refine_seconds"] = time.perf_counter() - t0
    fig["refinement"] = _relative_difference(rows, fine, names[1:])
    fig["substeps"] = substeps
    fig["unit"] = "terms" if chain_model == 2 else "substeps"
    assert fig["refinement"] < bound, (f"chain_model {chain_model}: substeps x2 moved it by "
                                       f"{fig['refinement']:.1e}")
    return fig


def _describe(fig):
    """One line of a solution's figures."""
    parts = [f"{fig['seconds']:.2f} s"]
    if fig["events"] or fig["impacts"]:
        parts.append(f"{fig['events']} located switches, {fig['impacts']} impacts")
    if "balance" in fig:
        parts.append(f"energy balance {fig['balance']:.1e} of the work")
    if "refinement" in fig:
        parts.append(f"{fig['unit']} {fig['substeps']} -> {2 * fig['substeps']} moves it "
                     f"{fig['refinement']:.1e} of the ranges ({fig['refine_seconds']:.1f} s)")
    else:
        parts.append("closed form per step")
    return "; ".join(parts)


def write_references(root, verbose=True):
    """The four scenarios of reference-fmus/ChainDrive (root, SCENARIOS): the full model in root,
    the QSS model in root/qss, the inextensible one in root/inextensible, the stiff damped chain
    in root/stiff, each with ChainDrive_ref.csv (inputs held over each step) and
    ChainDrive_ref_interpolated.csv (inputs interpolated linearly between the rows of
    ChainDrive_in.csv). Each solution is checked before it is kept: the energy balance (full and
    inextensible, impact losses booked) and a rerun with twice the RK6 substeps (QSS interpolated:
    series terms), whose difference must stay far below the validation's 1e-6 of the ranges:
    1e-7 held, 1e-9 interpolated (the held QSS step is closed-form: nothing to refine).
    Returns {subdirectory: {kind: figures}}."""
    out = {}
    for sub, (chain_model, fmu_params, what, names) in SCENARIOS.items():
        directory = os.path.join(root, sub) if sub else root
        p = scenario_params(fmu_params)
        substeps = _scenario_substeps(chain_model, p)
        solutions = write_reference(directory, substeps=substeps, chain_model=chain_model,
                                    fmu_params=fmu_params)
        figs = {}
        for kind, (rows, events, impacts, seconds) in solutions.items():
            interpolate = kind == "interpolated"
            fig = dict(seconds=seconds, events=len(events), impacts=len(impacts))
            refine = None if chain_model == 2 and not interpolate else substeps
            fig.update(_check_solution(chain_model, p, rows, refine, names, interpolate,
                                       1e-9 if interpolate else 1e-7))
            if chain_model == 2:
                # T_s changes sign: the sprocket jumps across the slack, the other run's
                # length with it.
                fig["crossings"] = sum(1 for a, b in zip(rows, rows[1:])
                                       if (a["T_upper"] > 0) != (b["T_upper"] > 0))
            figs[kind] = fig
        held, interp = solutions["held"][0], solutions["interpolated"][0]
        figs["interpolated"]["vs_held"] = _relative_difference(held, interp, names[1:])
        out[sub or "."] = figs
        if verbose:
            extra = (f"; the taut run changes {figs['held']['crossings']} times between rows"
                     if chain_model == 2 else "")
            print(f"ChainDrive/{sub or '.'}: chain_model {chain_model} ({what}){extra}")
            print(f"   held:         {_describe(figs['held'])}")
            print(f"   interpolated: {_describe(figs['interpolated'])}; differs from held by "
                  f"{figs['interpolated']['vs_held']:.1e} of the ranges")
    return out


def _tension_changes(events):
    """The status events as (time, pulling run 'U', 'L' or '-' for none)."""
    out = []
    for t, _, new in events:
        up, low = (new[0], new[1]) if len(new) == 2 else (new[0] and new[1], new[2] and new[3])
        out.append((round(t, 6), "U" if up else ("L" if low else "-")))
    return out


def check_full(verbose=True, directory="/tmp/chain_ref"):
    """The reference run: energy balance, step-halving error, events."""
    import random
    rng = random.Random(7)
    fast = 0.0
    for printed in (False, True):
        for c_chain in (0.0, 300.0):
            pp = make_params(printed=printed, c_chain=c_chain)
            for _ in range(100):
                x = ([rng.uniform(-3, 3), rng.uniform(-0.3, 0.3), rng.uniform(-3, 3)]
                     + [rng.uniform(-20, 20) for _ in range(3)] + [0.0, 0.0])
                u = (rng.uniform(-30, 30), rng.uniform(-30, 30), rng.uniform(0, 3))
                m = tuple(rng.random() < 0.5 for _ in range(2 if c_chain == 0.0 else 4))
                a, b = _full_rhs(pp)(x, m, u), _full_rhs_plain(pp)(x, m, u)
                fast = max(fast, max(abs(i - j) / (1 + abs(j)) for i, j in zip(a, b)))
    rows, events, _, seconds = write_reference(directory)["held"]
    p = make_params()
    sub = default_substeps(p, 1e-3)
    rows2, _ = full_model(p, reference_inputs, 2.0, substeps=2 * sub, stride=10)
    scale = {k: max(abs(r[k]) for r in rows) for k in REF_NAMES[1:]}
    err = {k: max(abs(a[k] - b[k]) for a, b in zip(rows, rows2)) for k in REF_NAMES[1:]}
    rel = max(err[k] / scale[k] for k in err if scale[k] > 0)
    bal = max(abs(r["energy_balance"]) for r in rows)
    thr = max(max(r["work_input"] for r in rows), max(r["energy_dissipated"] for r in rows))
    ch = _tension_changes(events)
    rows_c, _ = full_model(make_params(c_chain=500.0), reference_inputs, 2.0, stride=10)
    bal_c = max(abs(r["energy_balance"]) for r in rows_c)
    if verbose:
        print(f"3/6. full model, reference scenario 2 s ({sub} RK6 substeps/ms, {len(events)} located "
              f"switches, {seconds:.1f} s; inlined vs plain right-hand side {fast:.1e}):")
        print(f"   pulling run changes (t, run): {ch}")
        print(f"   energy balance |E + E_diss - W_in| max {bal:.2e} J (input work {thr:.1f} J, "
              f"relative {bal / thr:.1e}); with c_chain = 500 N.s/m: {bal_c:.2e} J")
        print(f"   substeps {sub} vs {2 * sub}: max relative difference {rel:.1e}; "
              + ", ".join(f"{k} {err[k]:.1e}" for k in ("theta_rw", "theta_sa", "w_ds", "T_upper", "T_lower")))
        print(f"   ranges: th_sa [{min(r['theta_sa'] for r in rows):+.4f}, "
              f"{max(r['theta_sa'] for r in rows):+.4f}] rad, w_rw max {scale['w_rw']:.2f} rad/s, "
              f"T_u max {scale['T_upper']:.0f} N, T_l max {scale['T_lower']:.0f} N, "
              f"E_diss {rows[-1]['energy_dissipated']:.2f} J")
    return dict(balance=bal, rel=rel, events=ch, err=err)


def check_inextensible(verbose=True):
    """(a) Reference scenario with all damping off: energy balance between impacts (impact
    losses booked), impact loss = kinetic-energy drop, lambda two ways. (b) Default damping:
    inextensible vs full model at k = 1e7 with a damped chain."""
    p0 = make_params(gamma_ds=0.0, gamma_rw=0.0, c_susp=0.0)
    no_brake = lambda t: reference_inputs(t)[0:2] + (0.0,)
    rows, events, impacts = inextensible_model(p0, no_brake, 2.0)
    diss = max(r["energy_dissipated"] - r["energy_impact"] for r in rows)
    bal = max(abs(r["energy_balance"]) for r in rows)
    lam = max(r["lambda_check"] / max(1.0, abs(r["T_upper"] + r["T_lower"])) for r in rows)
    imp = max((abs(a - b) for _, _, a, b in impacts), default=0.0)
    modes = [(round(t, 6), new) for t, old, new in events]
    # (b) default damping vs full at high k
    p = make_params()
    r_in, ev_in, imp_in = inextensible_model(p, reference_inputs, 2.0, stride=10)
    m_eff = 1.0 / (p["r_ds"] ** 2 / p["J_ds"] + p["r_ws"] ** 2 / p["J_rw"])
    cmp = []
    for kk in (1e6, 1e7):
        pk = make_params(k=kk, c_chain=2 * 1.0 * math.sqrt(kk * m_eff))
        r_f, _ = full_model(pk, reference_inputs, 2.0, stride=10,
                            substeps=default_substeps(pk, 1e-3, per=0.05))
        cmp.append((kk, max(abs(a["theta_rw"] - b["theta_rw"]) for a, b in zip(r_in, r_f)),
                    max(abs(a["theta_sa"] - b["theta_sa"]) for a, b in zip(r_in, r_f)),
                    max(abs(a["w_rw"] - b["w_rw"]) for a, b in zip(r_in, r_f))))
    if verbose:
        print(f"5. inextensible, reference inputs without the brake, no damping/friction "
              f"(non-impact dissipation {diss:.1e} J):")
        print(f"   modes (t, new): {modes}")
        for t, run, loss, drop in impacts:
            print(f"   impact at {t:.6f} s into {run}: loss formula {loss:.6e} J, KE drop {drop:.6e} J")
        print(f"   max |loss - KE drop| {imp:.1e} J; energy balance (impacts booked) max {bal:.2e} J; "
              f"lambda (DS row) vs (AM^-1A^T)^-1(...) relative {lam:.1e}")
        print(f"   default damping: {len(imp_in)} impacts, total loss "
              f"{sum(i[2] for i in imp_in):.4f} J; vs full model with critically damped chain:")
        for kk, a, b, c in cmp:
            print(f"   k = {kk:.0e}: max |th_rw diff| {a:.2e} rad, |th_sa diff| {b:.2e} rad, |w_rw diff| {c:.2e} rad/s")
    return dict(balance=bal, impacts=impacts, lam=lam, cmp=cmp)


def _table(inputs, h, n):
    """The input table read as FMPy reads it: linear in t between inputs(k h), k = 0..n."""
    def u(t):
        k = min(max(int(t / h), 0), n - 1)
        a, b = inputs(k * h), inputs((k + 1) * h)
        frac = (t - k * h) / h
        return tuple(x + (y - x) * frac for x, y in zip(a, b))
    return u


# The integrated states of each chain model, as output columns: outputs that also read the
# inputs at a row (the QSS model's algebraic ones, the inextensible tension) would compare the
# last held value with the table's.
STATE_NAMES = {1: REF_NAMES[1:],
               2: ["theta_rw", "w_rw", "energy_dissipated"],
               3: ["theta_ds", "theta_sa", "theta_rw", "w_ds", "w_sa", "w_rw", "energy_dissipated",
                   "energy_impact"]}


def check_interpolated(verbose=True, ms=(2, 4, 8)):
    """The interpolated references against the held code path on m times finer steps, each
    holding the table's value at its midpoint: that differs from the ramp by O((h/m)^2), so the
    difference must fall 4x per halving (observed order 2) towards the interpolated solution, not
    level off; this tests the time-dependent stages and switches independently of their own
    refinement. The Richardson extrapolation of the last two, (4 H(2m) - H(m))/3, lands far
    closer where the solution is smooth in the step; not with impacts, whose loss depends on
    where in a held step the input crossing falls. States only (STATE_NAMES), relative to each
    one's range, per chain model on the default parameters."""
    h, t_end = 1e-3, 2.0
    n = int(round(t_end / h))
    table = _table(reference_inputs, h, n)
    out = {}
    for chain_model, _, what, _ in (v for v in SCENARIOS.values() if not v[1]):
        p = make_params()
        ref, _, _ = run_model(chain_model, p, reference_inputs, t_end, h,
                              substeps=_scenario_substeps(chain_model, p), interpolate=True)
        diffs, held = [], []
        for m in ms:
            hm = h / m
            mid = lambda t, hm=hm: table(t + hm / 2)
            sub = (default_substeps(p, hm) if chain_model == 1 else
                   None if chain_model == 2 else max(3, math.ceil(10 / m)))
            rows, _, _ = run_model(chain_model, p, mid, t_end, hm, substeps=sub, stride=10 * m)
            held.append(rows)
            diffs.append(_relative_difference(ref, rows, STATE_NAMES[chain_model]))
        extra = [{k: (4 * b[k] - a[k]) / 3 for k in STATE_NAMES[chain_model]}
                 for a, b in zip(held[-2], held[-1])]
        out[what] = diffs, _relative_difference(ref, extra, STATE_NAMES[chain_model])
        if verbose:
            orders = ", ".join(f"{math.log2(a / b):.2f}" for a, b in zip(diffs, diffs[1:]))
            print(f"   {what}: held on h/m with midpoint inputs vs interpolated, m = "
                  + ", ".join(f"{m}: {d:.1e}" for m, d in zip(ms, diffs))
                  + f" (order {orders}); extrapolated {out[what][1]:.1e}")
    return out


def check_references(verbose=True):
    """The four scenarios, held and interpolated, written to a scratch directory with their
    convergence figures (the same run as generate.py's)."""
    with tempfile.TemporaryDirectory() as root:
        return write_references(root, verbose)


def main():
    t0 = time.process_time()
    print("ChainDrive independent reference (reference-fmus/chain_drive.py)")
    check_rk6_order()
    check_geometry()
    thesis_printed_lengths_energy_drift()
    check_full()
    check_qss()
    check_inextensible()
    print("6. references, inputs held and interpolated (the latter also against held inputs on "
          "finer steps):")
    check_interpolated()
    check_references()
    print(f"total CPU {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
