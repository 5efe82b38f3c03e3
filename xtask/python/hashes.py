#!/usr/bin/env python3
"""Hashes of every reference scenario's outputs as the C harness (tests/c/fmu_run.c) computes
them on linux64 and on win64 under Wine, and for the FMI 3.0 FMUs (its `run3`: Event Mode, early
return, intermediate updates) on x86_64-linux, x86_64-windows under Wine and aarch64-linux under
qemu-user (called by `cargo xtask hashes`).

One line per FMU, scenario and platform: the SHA-256 of the outputs' IEEE-754 bits at every
communication point, printed and written to docs/result-hashes.txt. A refactoring that must change
no result leaves that file as it was (`git diff docs/result-hashes.txt`).

With `--check PLATFORM [MODEL]` (the inner loop of a refactoring): only that FMI 2.0 platform
(linux64, say) and the FMI 3.0 platform of the same machine (x86_64-linux), and that FMU,
compared with docs/result-hashes.txt rather than written; exits 1 on a difference, or when a
line to compare with is missing.
"""
import hashlib
import os
import sys
import tempfile

import numpy as np

import platforms
from validate import scenarios_of
from importers import Scenario


def digest(time, values, names):
    h = hashlib.sha256(np.asarray(time, dtype="<f8").tobytes())
    for n in names:
        h.update(np.asarray(values[n], dtype="<f8").tobytes())
    return h.hexdigest()


# The FMI 3.0 platform that runs where an FMI 2.0 one does.
SAME_MACHINE3 = {"linux64": "x86_64-linux", "win64": "x86_64-windows"}


def check(fmu_dir, ref_root, platform, only):
    with open(os.path.join(os.path.dirname(ref_root), "docs", "result-hashes.txt")) as f:
        kept = dict(line.rsplit(" ", 1) for line in f.read().splitlines())
    differ = 0
    for name in sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu")):
        model = name[:-4]
        if only and model != only:
            continue
        runs = [(platform, os.path.join(fmu_dir, name), platform)]
        if platform in SAME_MACHINE3:
            three = SAME_MACHINE3[platform]
            runs.append((three, os.path.join(fmu_dir, "fmi3", name), f"fmi3 {three}"))
        for directory in scenarios_of(ref_root, model):
            sc = Scenario(directory, model)
            for run_on, fmu, label in runs:
                key = f"{os.path.relpath(directory, ref_root)} {label}"
                with tempfile.TemporaryDirectory() as work:
                    time, values = platforms.simulate(run_on, fmu, sc, work)
                got = digest(time, values, sc.outputs)
                same = kept.get(key) == got
                differ += not same
                verdict = "same" if same else f"DIFFERS: {got} (kept: {kept.get(key)})"
                print(f"{key} {verdict}", flush=True)
    return 1 if differ else 0


def main(fmu_dir, ref_root):
    lines = []
    for name in sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu")):
        model = name[:-4]
        for directory in scenarios_of(ref_root, model):
            sc = Scenario(directory, model)
            where = os.path.relpath(directory, ref_root)
            runs = [(p, os.path.join(fmu_dir, name), p) for p in ("linux64", "win64")]
            runs += [(p, os.path.join(fmu_dir, "fmi3", name), f"fmi3 {p}")
                     for p in platforms.PLATFORMS3]
            for platform, fmu, label in runs:
                with tempfile.TemporaryDirectory() as work:
                    time, values = platforms.simulate(platform, fmu, sc, work)
                lines.append(f"{where} {label} {digest(time, values, sc.outputs)}")
                print(lines[-1], flush=True)
    with open(os.path.join(os.path.dirname(ref_root), "docs", "result-hashes.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[3] == "--check":
        sys.exit(check(sys.argv[1], sys.argv[2], sys.argv[4], sys.argv[5] if len(sys.argv) > 5 else None))
    sys.exit(main(sys.argv[1], sys.argv[2]))
