"""ChainDrive reference, part 1: the parameters, the closed-form run lengths and forces every
model uses, and their check against the tangent-point construction from first principles.
Split from chain_drive.py (the project's 600-line rule); conventions in its docstring."""
import math

from common import rk4


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
