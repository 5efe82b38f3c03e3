"""ChainDrive reference, the full elastic chain (chain_model 1), and why the thesis's printed
lengths cannot serve instead of the exact ones."""
import math

from chain_geometry import (extensions, free_dissipation, free_forces, geometry, input_power,
                            kinetic, make_params, mass_solve, potentials)
from chain_rk6 import Switching, _hermite_probe, step_inputs


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
