"""The experiments of chain_drive.py: steps, chain models and stiffnesses, the protocols'
inputs, the coupled system's constants and the recorded columns. Split from chain_drive.py
(the project's 600-line rule), so that its analysis and plots read the same constants."""
import math


H = 1e-3                                  # communication step of the chain experiments, s
TIMING_REPEATS = 3
REF_TOLERANCE = 1e-12                     # for the check of the full model's own accuracy
MODELS = {1: "full", 2: "QSS", 3: "inextensible"}
K_DEFAULT = 1e5
K_VALUES = (1e4, 1e5, 1e6)

# Protocol 1 (the thesis gives no amplitudes): 10 N.m at the sprocket loads the chain to about
# 310 N, 3.1 mm at k = 1e5, more than the 2 mm of slack, so the torque cut at 5 s sends the
# sprocket through the slack; the brake decays the wheel with a time constant of 1.5 s.
P1_TORQUE, P1_RAMP, P1_CUT, P1_BRAKE_TIME, P1_BRAKE, P1_STOP = 10.0, 5.0, 5.0, 10.0, 0.5, 15.0
P1_JUMPS = (P1_CUT, P1_BRAKE_TIME)        # the inputs' discontinuities
# Protocol 2: symmetric triangles, 10 s base, peaks at 5 s and 15 s.
P2_PEAK, P2_BASE, P2_STOP = 50.0, 10.0, 20.0

# The coupled system. FastDrivetrain's casing frame has x forward, y along the shafts, z down:
# y points to the bike's right, and a sprocket turning the wheel forward turns negatively about
# y (w_ds < 0). ChainDrive counts forward positive. Angles and torques change sign across the
# interface: theta_CD = S theta_FD, and a torque tau (ChainDrive's sense) on the FastDrivetrain
# shaft is S tau in its sense.
S = -1.0
C_STEPS = (2e-3, 1e-3, 5e-4, 2.5e-4)     # at 4 ms the coupling mode (w h = 1.8) is unstable
C_MAIN = 1e-3
C_STOP = 7.0
C_CRANK, C_RAMP, C_CUT = 6.0, 3.0, 4.0   # crank torque: ramp to 6 N.m over 3 s, cut at 4 s
C_BRAKE_TIME, C_BRAKE = 5.0, 2.0
C_SHIFT_RPM = 5000.0                     # one upshift, 1 -> 2
C_D_SPIN = 0.002                         # N.m.s/rad, FastDrivetrain's drag at the sprocket shaft
K_COUPLING, ZETA_COUPLING = 1000.0, 0.5  # N.m/rad, damping ratio of the coupling mode
RPM = 60.0 / (2.0 * math.pi)

OUT = ["theta_ds", "theta_sa", "theta_rw", "theta_wheel", "w_ds", "w_sa", "w_rw", "w_wheel",
       "a_ds", "a_rw", "T_upper", "T_lower", "e_upper", "e_lower", "tau_chain_sa",
       "energy_kinetic", "energy_gravity", "energy_suspension", "energy_chain",
       "energy_dissipated", "energy_impact"]
ENERGY = ["energy_kinetic", "energy_gravity", "energy_suspension", "energy_chain",
          "energy_dissipated"]
COL = {name: i for i, name in enumerate(OUT)}
SLOW = ("w_wheel", "theta_sa", "w_ds")
UPPER, LOWER = 1, -1


def p1_inputs(t):
    tau = P1_TORQUE * t / P1_RAMP if t < P1_CUT else 0.0
    return (tau, 0.0, P1_BRAKE if t >= P1_BRAKE_TIME else 0.0)


def triangle(t, start, peak):
    x = (t - start) / P2_BASE
    return peak * (1.0 - abs(2.0 * x - 1.0)) if 0.0 <= x <= 1.0 else 0.0


def p2_inputs(t):
    return (triangle(t, 0.0, P2_PEAK), triangle(t, P2_BASE, -P2_PEAK), 0.0)
