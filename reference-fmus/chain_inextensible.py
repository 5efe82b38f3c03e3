"""ChainDrive reference, the inextensible chain (chain_model 3): modes U, L, F with located
switches and plastic impacts."""
from chain_geometry import (extensions, free_dissipation, free_forces, geometry, input_power,
                            kinetic, mass_solve, potentials)
from chain_rk6 import Switching, step_inputs


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
