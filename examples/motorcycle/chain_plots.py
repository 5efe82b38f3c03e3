"""chain_drive.py's figures: protocol 1, protocol 2 and the coupled system."""
import numpy as np

from chain_analysis import col
from chain_setup import (C_MAIN, C_STEPS, H, K_DEFAULT, K_VALUES, MODELS, P1_BRAKE, P1_BRAKE_TIME,
                         P1_CUT, P1_RAMP, P1_TORQUE, P2_PEAK)


# ------------------------------------------------------------------------------------------
# Plots


COLORS = {1: "C0", 2: "C1", 3: "C2"}
STYLE = {1: dict(lw=0.9), 2: dict(lw=1.4, ls="--"), 3: dict(lw=1.2, ls=":")}


def plot_protocol1(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(6, 1, figsize=(9, 15))
    zoom = (P1_CUT - 0.05, P1_CUT + 0.3)
    for m, rec in runs.items():
        t = rec["time"]
        kw = dict(color=COLORS[m], **STYLE[m])
        for a in ax[:2]:
            a.plot(t, 1e3 * col(rec, "e_upper"), label=f"{MODELS[m]}: upper", **kw)
            a.plot(t, 1e3 * col(rec, "e_lower"), alpha=0.5, label=f"{MODELS[m]}: lower", **kw)
        ax[2].plot(t, col(rec, "T_upper"), label=f"{MODELS[m]}: upper", **kw)
        ax[2].plot(t, col(rec, "T_lower"), alpha=0.5, label=f"{MODELS[m]}: lower", **kw)
        ax[3].plot(t, col(rec, "w_ds"), label=MODELS[m], **kw)
        ax[4].plot(t, 1e3 * col(rec, "theta_sa"), label=MODELS[m], **kw)
        ax[5].plot(t, col(rec, "w_wheel"), label=MODELS[m], **kw)
    qss = runs[2]
    fd = np.diff(col(qss, "theta_ds")) / H
    ax[3].plot(qss["time"][1:], fd, color="C3", lw=0.6, alpha=0.7,
               label="QSS, finite difference of theta_ds (as the thesis plots it)")
    ax[3].set_ylim(-10, 1.15 * np.max(col(runs[1], "w_ds")))
    ax[1].set_xlim(*zoom)
    ax[0].set_ylabel("chain extension / mm\n(negative: slack)")
    ax[1].set_ylabel(f"extension / mm\n{zoom[0]:g} to {zoom[1]:g} s")
    ax[2].set_ylabel("chain tension / N")
    ax[3].set_ylabel("drive sprocket\nspeed / (rad/s)")
    ax[4].set_ylabel("swing-arm angle / mrad\n(positive: wheel up)")
    ax[5].set_ylabel("rear wheel speed / (rad/s)")
    ax[5].set_xlabel("time / s")
    for a in ax:
        a.legend(fontsize=7, ncol=3, loc="upper right")
        a.grid(alpha=0.3)
    for a in ax[2:]:
        a.sharex(ax[0])
    ax[0].set_title(f"Protocol 1 (thesis 2.4.1), k = {K_DEFAULT:g} N/m: engine torque ramp to "
                    f"{P1_TORQUE:g} N.m over {P1_RAMP:g} s, cut at {P1_CUT:g} s,\n"
                    f"brake c_brake = {P1_BRAKE:g} N.m.s/rad from {P1_BRAKE_TIME:g} s", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_protocol2(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(4, 2, figsize=(12, 13))
    for row, k in enumerate(K_VALUES):
        for m in MODELS:
            rec = runs[(m, k)]
            t = rec["time"]
            kw = dict(color=COLORS[m], **STYLE[m])
            ax[row, 0].plot(t, 1e3 * col(rec, "e_upper"), label=f"{MODELS[m]}: upper", **kw)
            ax[row, 0].plot(t, 1e3 * col(rec, "e_lower"), alpha=0.5,
                            label=f"{MODELS[m]}: lower", **kw)
            ax[row, 1].plot(t, col(rec, "T_upper"), label=f"{MODELS[m]}: upper", **kw)
            ax[row, 1].plot(t, col(rec, "T_lower"), alpha=0.5, label=f"{MODELS[m]}: lower", **kw)
        ax[row, 0].set_ylabel(f"k = {k:g} N/m\nextension / mm")
        ax[row, 1].set_ylabel("tension / N")
        for a in ax[row]:
            a.legend(fontsize=7, ncol=3, loc="upper right")
            a.grid(alpha=0.3)
    widths = dict(zip(K_VALUES, (3.0, 1.8, 0.8)))
    for k in K_VALUES:
        rec = runs[(1, k)]
        e = np.maximum(col(rec, "e_upper"), col(rec, "e_lower"))
        ax[3, 0].plot(rec["time"], k * e, lw=widths[k], label=f"full, k = {k:g}")
    block = 100  # envelope: the largest |difference| in each 0.1 s
    for i, k in enumerate(K_VALUES):
        ref = col(runs[(1, k)], "w_wheel")
        for m in (2, 3):
            diff = np.abs(col(runs[(m, k)], "w_wheel") - ref)[:-1].reshape(-1, block).max(axis=1)
            t = runs[(m, k)]["time"][:-1].reshape(-1, block).mean(axis=1)
            ax[3, 1].semilogy(t, diff, color=f"C{i + 4}", lw=1.5 if m == 2 else 1.0,
                              ls="-" if m == 2 else ":", label=f"{MODELS[m]}, k = {k:g}")
    ax[3, 0].set_ylabel("k x extension of the\nlonger run / N")
    ax[3, 0].set_ylim(-100, None)
    ax[3, 1].set_ylabel("|w_wheel - w_wheel of the full model|\n/ (rad/s), largest in each 0.1 s")
    for a in ax[3]:
        a.set_xlabel("time / s")
        a.legend(fontsize=7, ncol=2)
        a.grid(alpha=0.3)
    fig.suptitle(f"Protocol 2 (thesis 2.4.2): {P2_PEAK:g} N.m engine-torque triangle 0-10 s, "
                 f"-{P2_PEAK:g} N.m load-torque triangle 10-20 s", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def plot_coupled(runs, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    main = runs[C_MAIN][0]
    t = main["time"]
    fig, ax = plt.subplots(4, 1, figsize=(9, 11), sharex=True)
    ax[0].plot(t, main["rpm"], label="engine speed / rpm")
    ax[0].set_ylabel("rpm")
    twin = ax[0].twinx()
    twin.plot(t, main["w_wheel"], "C1", label="rear wheel / (rad/s)")
    twin.set_ylabel("rad/s")
    ax[0].legend(loc="upper left", fontsize=8)
    twin.legend(loc="upper right", fontsize=8)
    ax[1].plot(t, main["tau_c"], label="coupling torque on the chain's sprocket")
    ax[1].plot(t, main["tau_chain"], lw=0.8, label="r_ds (T_upper - T_lower)")
    ax[1].set_ylabel("N.m")
    ax[1].legend(fontsize=8)
    ax[2].plot(t, 1e3 * main["twist"], label="coupling twist S theta_FD - theta_CD")
    ax[2].set_ylabel("mrad")
    ax[2].legend(fontsize=8)
    for h in C_STEPS:
        rec = runs[h][0]
        line, = ax[3].plot(rec["time"], rec["residual"], label=f"residual, h = {h * 1e3:g} ms")
        ax[3].plot(rec["time"], rec["estimate"], "--", color=line.get_color(), lw=0.8)
    ax[3].set_ylabel("energy residual / J\n(dashed: first-order estimate)")
    ax[3].set_xlabel("time / s")
    ax[3].legend(fontsize=8)
    for a in ax:
        a.grid(alpha=0.3)
    ax[0].set_title("FastDrivetrain -> coupling spring-damper -> ChainDrive (full chain, "
                    "k = 1e5 N/m), FMPy master")
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
