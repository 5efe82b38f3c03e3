"""ChainDrive reference, the quasi-steady-state chain (chain_model 2): exact held steps and the
series step for interpolated inputs, with its self-check."""
import math

from chain_elastic import (_full_rhs, _full_status, _indicators, _tensions, default_substeps,
                           full_model)
from chain_geometry import extensions, geometry, make_params, potentials
from chain_inextensible import inextensible_model
from chain_rk6 import step_inputs


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
