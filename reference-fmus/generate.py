#!/usr/bin/env python3
"""Writes the reference results in reference-fmus/ from independent solutions.

Nothing here calls an FMU: each model's equations are solved in plain Python, from the derivation
in its documentation, in closed form wherever one exists. Files follow the FMI Cross-Check layout:
<Model>_in.csv (inputs), <Model>_ref.csv (reference outputs), <Model>_ref.opt (settings), and
sub-scenarios in subdirectories laid out the same way.

<Model>_ref.csv holds each input over each communication step at the value of the table's row at
the step's start (sample and hold), which is what a co-simulation master without input
derivatives applies. The Gear's and LossyGear's main scenarios step their inputs on communication
points (two rows at one time), so there the table itself says the same and nothing else.

A scenario whose inputs are continuous (one row per 1 ms communication point, no two rows at one
time) also has <Model>_ref_interpolated.csv: the same rows and columns, for the inputs
interpolated linearly between the rows of <Model>_in.csv, as FMPy reads an input table and as a
Model Exchange importer applies it at every evaluation of the derivatives. Each model has one
integrator for both, driven by each step's inputs at its start and its end (`step_inputs`: equal
when held); outputs that depend on the inputs are recorded with the inputs at the step's end as
applied, i.e. the held value of the step that ended there, or the next row.

Closed forms stay exact with interpolated inputs (integrals of polynomials in time) and are
checked against RK4, which integrates those polynomials exactly; the other models integrate with
RK4, the inputs evaluated at every stage's time, and are checked against half their substeps.
Each prints the figure for its interpolated reference (`report`).
"""
import math  # noqa: F401  (the generators cargo xtask new adds below use it)
import os

import chain_drive as chain_drive_model
from common import rk4, write_csv, write_opt  # noqa: F401
# Each model's generators in their own module (600-line rule), all importable from here, as
# bench.py and cargo xtask new's `generate.<module>()` use them; the shared stepping first.
from stepping import (HERE, write_scenario, input_rows, step_inputs, inputs_at, march, rk4_steps,
                      rk4_march, deviation, report, converged)  # noqa: F401
from gear_refs import (GEAR, GEAR_OUTPUTS, gear_row, gear, gear_ramp, lossy_gear,
                       LossyGearEquations, first_instant, lossy_gear_breaks_away,
                       lossy_gear_mesh_switch, lossy_gear_roll, lossy_gear_step, lossy_gear_motion,
                       lossy_gear_breakaway)  # noqa: F401
from ratio_refs import (CRANK, crank_position, crank_ratio, crank_slider_motion, write_crank_slider,
                        crank_slider, crank_slider_spin_up, cvt, variable_ratio_transmission,
                        variable_ratio_coupling)  # noqa: F401
from fast_drivetrain_refs import fast_drivetrain, fast_drivetrain_shift  # noqa: F401


def chain_drive():
    """ChainDrive, one scenario per chain model (parameter chain_model, set through
    ChainDrive_par.csv): the full elastic chain in ChainDrive/, the quasi-steady-state one in
    ChainDrive/qss/, the inextensible one in ChainDrive/inextensible/, all on the same inputs
    (traction from rest, engine braking across the slack onto the lower run, traction again,
    the brake). The independent solutions (tangent-point geometry, RK6 with located tension
    kinks, the exact QSS step, modes and plastic impacts) and their self-checks are in
    chain_drive.py."""
    return chain_drive_model.write_references(os.path.join(HERE, "ChainDrive"))


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["FastDrivetrain"]:
        fast_drivetrain()
        fast_drivetrain_shift()
        sys.exit(0)
    if sys.argv[1:] == ["ChainDrive"]:
        chain_drive()
        sys.exit(0)
    chain_drive()
    fast_drivetrain()
    fast_drivetrain_shift()
    variable_ratio_transmission()
    variable_ratio_coupling()
    crank_slider()
    cvt()
    gear()
    gear_ramp()
    lossy_gear()
    held, interpolated = lossy_gear_breakaway()
    print("LossyGear breakaway switches, held:", held)
    print("LossyGear breakaway switches, interpolated:", interpolated)
    print("reference-fmus: written")
