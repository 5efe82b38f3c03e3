#!/usr/bin/env python3
"""The inner loop's validation of one component (`cargo xtask dev <Model>`): its FMI 2.0 and
FMI 3.0 FMUs (linux64 binary) pass `fmpy validate`, and FMPy and the C harness simulate every
reference scenario within the bound of the whole validation (validate.py). The other importers,
platforms and checks run in `cargo xtask validate` and `cargo xtask test`.

usage: quick.py FMU_DIR REF_ROOT MODEL
"""
import os
import sys

from fmpy.validation import validate_fmu

import platforms
from importers import IMPORTERS, IMPORTERS3, Scenario
from validate import run_importers, scenarios_of

QUICK = {"FMPy": IMPORTERS["FMPy"], "C linux64": IMPORTERS["C linux64"]}
QUICK3 = {"FMPy": IMPORTERS3["FMPy"], "C x86_64-linux": platforms.fmi3_x86_64_linux}


def main(fmu_dir, ref_root, model):
    problems = []
    scenarios = scenarios_of(ref_root, model)
    if not scenarios:
        problems.append(f"no reference result in {os.path.join(ref_root, model)}")
    worst = {}
    for label, fmu, table in [("", os.path.join(fmu_dir, f"{model}.fmu"), QUICK),
                              ("FMI 3.0 ", os.path.join(fmu_dir, "fmi3", f"{model}.fmu"), QUICK3)]:
        problems += [f"{label}fmpy validate: {p}" for p in validate_fmu(fmu)]
        for directory in scenarios:
            sc = Scenario(directory, model)
            where = os.path.relpath(directory, ref_root)
            mine = {}
            found = run_importers(fmu, sc, where, table, lambda _: True, mine, [], label)
            problems += [f"{label}{p}" for p in found]
            for imp, dev in mine.items():
                worst[label + imp] = max(worst.get(label + imp, 0.0), dev)
    devs = ", ".join(f"{imp} {dev:.2e}" for imp, dev in worst.items())
    print(f"{model}: fmpy validate, FMPy and the C harness (FMI 2.0 and 3.0), "
          f"{len(scenarios)} reference(s): {'FAIL' if problems else 'ok'} (max deviation: {devs})")
    for p in problems:
        print(f"  {p}")
    print(f"quick: {0 if problems else 1} passed, {1 if problems else 0} failed")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
