"""Runs one reference scenario of one FMU in each importer a user might have.

Every runner returns (time, {output: values}) with the outputs at the communication points it
produced, so `validate.py` judges all importers with one comparison. The quirks each runner works
around are the ones docs/importers.md lists under "Importer notes".
"""
import tempfile

import platforms
# The runners, by what runs the FMU, and the scenario they run, each in its own module
# (600-line rule); every name importable from here as before.
from scenario import (Scenario, read_inputs, read_parameters,
                      at_communication_points)  # noqa: F401
from fmpy_runners import (fmpy, ME_TOLERANCE_FACTOR, ME_SMALLEST_TOLERANCE, me_tolerance, fmpy_me,
                          fmpy_me_interpolated, fmpy_me_interpolated_as_shipped, fmpy_event_mode,
                          fmpy_intermediate)  # noqa: F401
from tool_runners import (fmi_sim, fmi_sim_me, left_limit_steps, libcosim, container,
                          fmi_sim_event_mode)  # noqa: F401


# Judged: each must come within 1e-6 of every reference. All but "FMPy ME" use the Co-Simulation
# interface.
IMPORTERS = {
    "FMPy": fmpy,
    "FMPy ME": fmpy_me,
    "fmi-sim": fmi_sim,
    "libcosim": libcosim,
    "fmucontainer+FMPy": container,
    "C linux64": platforms.linux64,
    "C win64 (Wine)": platforms.win64,
}

# Run and reported, never judged: the importer's own method cannot reach the bound.
NOT_JUDGED = {
    "fmi-sim ME": fmi_sim_me,
}

# Model Exchange with the inputs interpolated between the table's rows (no input events), on the
# scenarios that have <Model>_ref_interpolated.csv and judged against it. fmi-sim's forward Euler
# reads the table at each step's start whatever the interpolation, and is reported, not judged.
INTERPOLATED = {
    "FMPy ME interpolated": fmpy_me_interpolated,
}
INTERPOLATED_NOT_JUDGED = {
    "FMPy ME interpolated, as shipped": fmpy_me_interpolated_as_shipped,
    "fmi-sim ME interpolated": fmi_sim_me,
}


# The FMI 3.0 FMUs (target/fmu/fmi3/), judged as the FMI 2.0 ones: FMPy and fmi-sim without
# and with Event Mode (and early return), FMPy as Model Exchange, and the C harness's FMI 3.0
# importer (Event Mode, early return, intermediate updates) on the three platforms.
IMPORTERS3 = {
    "FMPy": fmpy,
    "FMPy event mode": fmpy_event_mode,
    "FMPy ME": fmpy_me,
    "fmi-sim": fmi_sim,
    "fmi-sim event mode": fmi_sim_event_mode,
    "C x86_64-linux": platforms.fmi3_x86_64_linux,
    "C x86_64-windows (Wine)": platforms.fmi3_x86_64_windows,
    "C aarch64-linux (qemu)": platforms.fmi3_aarch64_linux,
}
NOT_JUDGED3 = {
    "fmi-sim ME": fmi_sim_me,
}
INTERPOLATED3 = {
    "FMPy ME interpolated": fmpy_me_interpolated,
}


def reference_of(importer, sc):
    """The reference an importer is compared with (None: the scenario has none for it)."""
    if importer in INTERPOLATED or importer in INTERPOLATED_NOT_JUDGED:
        return sc.ref_interpolated
    return sc.ref


def judged(importer):
    return importer in IMPORTERS or importer in INTERPOLATED


# Every run this process made, by importer, FMU file and scenario: the validation asks for some
# twice (FMPy on the FMI 2.0 FMU, once in its own column and once against FMI 3.0).
_RUNS = {}


def simulate(importer, fmu, sc, table=None):
    run = (table or {**IMPORTERS, **NOT_JUDGED, **INTERPOLATED, **INTERPOLATED_NOT_JUDGED})[importer]
    key = (run, *platforms.run_key(fmu, sc))
    if key not in _RUNS:
        with tempfile.TemporaryDirectory() as work:
            _RUNS[key] = run(fmu, sc, work)
    return _RUNS[key]
