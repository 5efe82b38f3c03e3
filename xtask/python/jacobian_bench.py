"""What a full Jacobian df/dx costs through the FMI 2.0 Model Exchange API, exact against forward
differences, in instructions counted by callgrind (deterministic), for every FMU in FMU_DIR
(tests/c/jacobian_cost.c makes the calls; see it for the three ways an importer asks).

Usage: jacobian_bench.py FMU_DIR    prints the Markdown table (and returns its lines to bench.py)
"""
import os
import re
import subprocess
import sys
import tempfile

from fmpy import read_model_description

import platforms

POINTS = 200
HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "tests", "c", "jacobian_cost.c")

# The calls each mode's instructions are counted in; "none" sets the states and evaluates the
# derivatives at each point only: what the differences' count includes besides them.
COUNTED = {
    "exact": ["fmi2GetDirectionalDerivative"],
    "seeded": ["fmi2GetDirectionalDerivative"],
    "difference": ["fmi2SetContinuousStates", "fmi2GetDerivatives"],
    "none": ["fmi2SetContinuousStates", "fmi2GetDerivatives"],
}


def build(work):
    binary = os.path.join(work, "jacobian_cost")
    subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", binary, SOURCE, "-ldl", "-lm"],
                   check=True)
    return binary


def count(program, binary, fmu_dir, guid, mode, states, derivatives, work):
    out = os.path.join(work, f"callgrind.{mode}")
    command = (["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
               + [f"--toggle-collect={f}" for f in COUNTED[mode]]
               + [program, binary, "file://" + fmu_dir, guid, mode, str(POINTS), states,
                  derivatives])
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"jacobian_cost {mode} failed: {done.stdout}{done.stderr}")
    with open(out) as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))


def table(fmu_dir):
    lines = ["| FMU | states | exact, one unit seed per state | exact, every state seeded | "
             "forward differences | exact / differences, unit seeds | every state seeded | "
             "one right-hand side |",
             "|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        program = build(work)
        for name in sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu")):
            fmu = os.path.join(fmu_dir, name)
            md = read_model_description(fmu)
            derivatives = [d.variable for d in md.derivatives]
            states = [d.derivative for d in derivatives]
            unpacked = platforms.unpack(fmu, os.path.join(work, name))
            binary = os.path.join(unpacked, "binaries", "linux64",
                                  md.modelExchange.modelIdentifier + ".so")
            refs = (",".join(str(v.valueReference) for v in states),
                    ",".join(str(v.valueReference) for v in derivatives))
            n = {m: count(program, binary, unpacked, md.guid, m, *refs, work) / POINTS
                 for m in ("exact", "seeded", "difference", "none")}
            differences = n["difference"] - n["none"]
            lines.append(f"| {name[:-4]} | {len(states)} | {n['exact']:,.0f} | {n['seeded']:,.0f} | "
                         f"{differences:,.0f} | {n['exact'] / differences:.2f} | "
                         f"{n['seeded'] / differences:.2f} | {n['none']:,.0f} |")
            print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    print("\n".join(table(sys.argv[1])))
