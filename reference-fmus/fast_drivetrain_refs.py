"""The FastDrivetrain's references (generate.py): the default scenario and the gear shifts."""
import math
import os

from stepping import HERE, deviation, input_rows, march, report, rk4_steps, write_scenario


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
