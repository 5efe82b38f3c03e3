"""`cargo xtask bench`, the deterministic half: instructions per fmi2DoStep and work-precision.

For every FMU, on its reference scenario (reference-fmus/<Model>/), through the C harness
(`fmu_run`, linux64):
  - instructions per fmi2DoStep, counted by valgrind's callgrind inside fmi2DoStep only
    (`--toggle-collect`), which does not depend on the machine's load;
  - the largest deviation from the independent reference, relative to each signal's range
    (validate.compare), from a native run of the whole scenario;
at the FMU's default tolerance and at 1e-4 ... 1e-12. Also the cost of a master's whole
communication point, fmi2SetReal/fmi2SetInteger of every input then fmi2DoStep, with the
reference inputs and with every Real input changed at every step (`set_cost`). Also the CrankSlider spin-up (its
first 2 s, against reference-fmus/generate.py's independent solution). Prints Markdown tables and writes them to
docs/performance.md, keeping the sections measured elsewhere (KEPT, at the end) as they are.

Usage: bench.py FMU_DIR REF_ROOT    (FMU_RUN_DIR: the harness's directory; BENCH_ONLY=sets:
the set-call table alone, printed, docs/performance.md left as it is)
"""
import math
import os
import re
import subprocess
import sys
import tempfile

from fmpy import read_model_description

import jacobian_bench
import platforms
from importers import Scenario
from validate import compare, scenarios_of

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "reference-fmus"))
import generate  # noqa: E402  (the references' independent solutions)

TOLERANCES = [1e-4, 1e-6, 1e-8, 1e-10, 1e-12]
# Callgrind runs about 50 times slower than native: it counts the first steps of each scenario.
COUNTED_STEPS = 1000


# The calls callgrind counts inside: the step alone, or a master's whole communication point.
STEP = ("fmi2DoStep",)
SET_AND_STEP = ("fmi2SetReal", "fmi2SetInteger", "fmi2DoStep")


def run_plan(binary, fmu_dir, plan, out, valgrind_out=None, counted_calls=STEP):
    command = [os.path.join(os.environ["FMU_RUN_DIR"], "fmu_run"), "run", plan, binary,
               "file://" + fmu_dir, out]
    if valgrind_out:
        command = (["valgrind", "--tool=callgrind"]
                   + [f"--toggle-collect={f}" for f in counted_calls]
                   + [f"--callgrind-out-file={valgrind_out}"] + command)
    done = subprocess.run(command, capture_output=True, text=True, env=BENCH_ENV)
    if done.returncode != 0:
        raise RuntimeError(f"fmu_run failed ({done.returncode}): {done.stdout}{done.stderr}")


# The harness's run passes alone (tests/c/fmu_run.c): not its passes that count allocations.
BENCH_ENV = dict(os.environ, FMU_RUN_BENCH="1")


def instructions(path):
    """Instructions callgrind counted (inside fmi2DoStep)."""
    with open(path) as f:
        return int(re.search(r"^summary: (\d+)", f.read(), re.M).group(1))


def most_in_one_step(binary, fmu_dir, plan, out, work):
    """The most instructions one fmi2DoStep took in the harness's run of `plan` (its steps, the
    repeat of the second half after a rollback and the repeat after fmi2Reset): callgrind
    dumps the count after every fmi2DoStep."""
    dumps = os.path.join(work, "dumps")
    os.makedirs(dumps, exist_ok=True)
    command = ["valgrind", "--tool=callgrind", "--toggle-collect=fmi2DoStep",
               "--dump-after=fmi2DoStep", f"--callgrind-out-file={os.path.join(dumps, 'cg')}",
               os.path.join(os.environ["FMU_RUN_DIR"], "fmu_run"), "run", plan, binary,
               "file://" + fmu_dir, out]
    done = subprocess.run(command, capture_output=True, text=True, env=BENCH_ENV)
    if done.returncode != 0:
        raise RuntimeError(f"fmu_run failed ({done.returncode}): {done.stdout}{done.stderr}")
    counts = [instructions(os.path.join(dumps, f)) for f in os.listdir(dumps) if f != "cg"]
    if len(counts) < 2:
        raise RuntimeError("callgrind dumped no doStep")
    return max(counts)


def measure(fmu, sc, tol, work, counted=COUNTED_STEPS, counted_calls=STEP, most=False):
    """(instructions per doStep over the first `counted` steps, largest relative deviation),
    and with `most` the most one of those doSteps took; `counted_calls`: the functions whose
    instructions count."""
    md = read_model_description(fmu)
    fmu_dir = platforms.unpack(fmu, work)
    binary = os.path.join(fmu_dir, "binaries", "linux64", md.coSimulation.modelIdentifier + ".so")
    sc.tol = tol
    plan, out = os.path.join(work, "plan.txt"), os.path.join(work, "out.txt")
    platforms.write_plan(md, sc, plan)
    run_plan(binary, fmu_dir, plan, out)
    problems, worst = compare(sc, *platforms.read_rows(out, sc.outputs))
    stop = sc.stop
    steps = min(sc.steps(), counted)
    sc.stop = sc.start + steps * sc.step
    platforms.write_plan(md, sc, plan)
    sc.stop = stop
    cg = os.path.join(work, "callgrind.out")
    run_plan(binary, fmu_dir, plan, out, cg, counted_calls)
    # The harness steps the scenario, repeats its second half after a rollback, and repeats it
    # whole after fmi2Reset.
    calls = steps + (steps - steps // 2) + steps
    if most:
        return instructions(cg) / calls, worst, most_in_one_step(binary, fmu_dir, plan, out, work)
    return instructions(cg) / calls, worst


def spin_up(fmu_dir):
    """Markdown lines: the CrankSlider's cost over the first 2 s of the spin-up, per tolerance."""
    fmu = os.path.join(fmu_dir, "CrankSlider.fmu")
    default = float(read_model_description(fmu).defaultExperiment.tolerance)
    lines = ["", "## CrankSlider spin-up", "",
             "From rest, torque 2 + sin(5 t_k) held over each 1 ms step, "
             "instructions over the first 2 s (2000 steps, about 68 dead centres; 214 rad/s at "
             "the end), deviation from the independent solution of reference-fmus/generate.py "
             "(RK4, 50 substeps, s' and s'' by differences). `tests/tests/crank_slider.rs` "
             "runs it for 5 s against a classical Runge-Kutta reference.", "",
             "| tolerance | instructions per doStep | largest deviation |", "|---|---|---|"]
    with tempfile.TemporaryDirectory() as work:
        directory = os.path.join(work, "spin")
        generate.crank_slider_spin_up(directory)
        for tol in sorted({1e-4, 1e-5, 1e-6, 1e-8, 1e-9, default}, reverse=True):
            with tempfile.TemporaryDirectory() as run:
                per_step, worst = measure(fmu, Scenario(directory, "CrankSlider"), tol, run,
                                          counted=2000)
            mark = " (default)" if tol == default else ""
            lines.append(f"| {tol:g}{mark} | {per_step:,.0f} | {worst:.1e} |")
            print(f"bench: CrankSlider spin-up at {tol:g}: {per_step:,.0f} instructions per doStep, "
                  f"deviation {worst:.1e}", file=sys.stderr, flush=True)
    return lines


def rippled(sc):
    """The scenario with every Real input changed at every communication point: scaled by
    1 - 5e-4 (1 - cos(2 pi t / 50 ms)), a smooth ripple towards zero that keeps each input
    inside its range. Integer inputs (a gear) stay as the table has them."""
    table = sc.input_at

    def input_at(t):
        f = 1.0 - 5e-4 * (1.0 - math.cos(2.0 * math.pi * t / 0.05))
        return [u if isinstance(u, int) else u * f for u in table(t)]
    sc.input_at = input_at
    return sc


def set_cost(fmu_dir, ref_root):
    """Markdown lines: instructions per communication point, the set calls of every input and
    fmi2DoStep, on each FMU's first reference scenario at its default tolerance, with the
    reference inputs and with every input changed at every step (`rippled`)."""
    lines = ["", "## The set calls and the step", "",
             "What a master spends at each communication point: fmi2SetReal and "
             "fmi2SetInteger of every input (the C harness sets them all at every step, as "
             "masters do), then fmi2DoStep; instructions over the first "
             f"{COUNTED_STEPS} steps of each FMU's first reference scenario at its default "
             "tolerance. *Reference inputs*: the table's, which change at a few rows only; "
             "*rippled*: every Real input scaled by 1 - 5e-4 (1 - cos(2 pi t / 50 ms)), so "
             "that every set call changes a value.", "",
             "| FMU | inputs | doStep alone | set + doStep, reference inputs | "
             "set + doStep, rippled |", "|---|---|---|---|---|"]
    for name in sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu")):
        fmu, model = os.path.join(fmu_dir, name), name[:-4]
        tol = float(read_model_description(fmu).defaultExperiment.tolerance)
        directory = scenarios_of(ref_root, model)[0]
        counts = []
        for calls, make in [(STEP, Scenario), (SET_AND_STEP, Scenario),
                            (SET_AND_STEP, lambda d, m: rippled(Scenario(d, m)))]:
            with tempfile.TemporaryDirectory() as work:
                counts.append(measure(fmu, make(directory, model), tol, work,
                                      counted_calls=calls)[0])
        n_inputs = len(Scenario(directory, model).input_names())
        lines.append(f"| {model} | {n_inputs} | " + " | ".join(f"{c:,.0f}" for c in counts) + " |")
        print(f"bench: {model} per step: doStep {counts[0]:,.0f}, set + doStep {counts[1]:,.0f}, "
              f"rippled {counts[2]:,.0f}", file=sys.stderr, flush=True)
    return lines


# What the Jacobian section says besides its table (the intro names the points counted).
JACOBIAN_TEXT = [
    ("What a Model Exchange importer pays for df/dx at a point where it has set the states and "
     "evaluated the derivatives, in instructions per Jacobian (callgrind, {POINTS} points near "
     "the start; tests/c/jacobian_cost.c): exact, with one fmi2GetDirectionalDerivative per "
     "state (its unit seed alone, as CVode and Rosenbrock importers ask) or with every state a "
     "known and a unit seed vector; forward differences, fmi2SetContinuousStates + "
     "fmi2GetDerivatives per state. The exact Jacobian comes from one pass of the model's own "
     "equations over jets (a lane per state) at the first call at a point; the other calls are "
     "answered from it.").replace("{POINTS}", str(jacobian_bench.POINTS)),
    ("How a call is answered: after initialization, with calls not logged, "
     "`fmi2GetDirectionalDerivative` and `fmi3GetDirectionalDerivative` go ahead of the call's "
     "guard. In FMI 2.0 a call at a point already swept is answered by the entry as a leaf "
     "(`Instance::swept_at_once`): the swept flag, the four pointers checked as their "
     "minimum, state and logging, then reads alone (`Jacobian::swept`); anything else goes on "
     "by a tail call (`directional_not_swept`, `Instance::directional_at_once`). The first "
     "call at a point sweeps the groups of its first unknown and first known "
     "(`Instance::first_sweep`), the state derivatives by the states (what a Model Exchange "
     "importer asks first) in its own frame: the lifted model's states take their values and "
     "seeds from `seed_states`, which the derive writes from the declarations (a store per "
     "state, no lookup; every model's Jacobian test checks it against the variable table), "
     "the model's derivatives over jets go straight into the columns kept "
     "(`values[chunk * rows + row]`, one sum of the chunk's entries telling whether any is not "
     "finite), inside `catch_unwind`; then the reads. A known's column: one known, as CVode "
     "and Rosenbrock importers ask, found by its place; every state with a unit seed, the "
     "knowns compared with the states' value references and the seed's entries other than 0 "
     "found as bits in one loop the state count unrolls, the column then found from its "
     "index (other seeds over several knowns: each known checked by its role byte). The "
     "state derivatives asked in their order are compared with the rows' unknowns and read "
     "in one loop the state count unrolls; other unknowns in the order swept (from three on) "
     "or by one lookup each. Anything else (Initialization Mode, a refusal, logCalls, a "
     "derivative not finite) takes the full path, which says why. Between an integrator's "
     "points only the states move (`fmi2SetContinuousStates`): the sweep seeds them with "
     "their values, no sync; `fmi2SetTime` to another time makes the columns stale and leaves "
     "the lifted model's values as they are."),
    ("The models' part: after initialization the parameters are plain f64 in the lifted model "
     "(`Param<S>`, `Jet<N, Fixed>`; Initialization Mode's `Jet<N, Moving>` keeps them as "
     "jets), so that a product by one costs N + 1 multiplications instead of 2N + 1. A "
     "function of one number alone, the parameters held (the CrankSlider's geometry at its "
     "angle), goes through `Scalar::of_one`: over jets after initialization it runs over a "
     "one-direction dual number and the chain rule carries its results to the number's "
     "directions, half the arithmetic of two lanes. A helper the derivatives use only in part "
     "(the variable-ratio torques' power terms) is inlined, so that the pass over jets keeps "
     "what it uses; the f64 code, already inlined there, is unchanged. The LossyGear's "
     "one-row loss table is held and lifted as parameters, and the quadrant's line that "
     "solved the flange torque gives its loss (the same bits; doStep 3,663 -> 3,652, its "
     "breakaway scenario 4,494 -> 4,516)."),
    ("What this gave (callgrind per point, symbol builds; unit seeds, then every state "
     "seeded): the states seeded by `seed_states` and the first sweep in `first_sweep`'s "
     "frame took 90 to 117 instructions off every FMU (the Gear 468 -> 376 and 552 -> 460, "
     "the ChainDrive 4,412 -> 4,304 and 5,196 -> 5,088); the unrolled comparison of every "
     "state seeded 59 to 515 more off the seeded calls (the Gear 460 -> 401, the "
     "ChainDrive 5,088 -> 4,573, the VariableRatioTransmission 2,228 -> 1,836); the "
     "unrolled read of the state derivatives 32 to 311 off both (the CrankSlider 600 -> 555 "
     "and 623 -> 591, the ChainDrive 4,294 -> 3,991); in the models, the variable-ratio "
     "torques inlined 85 and 128 (the VariableRatioCoupling 540 -> 455, the Transmission "
     "1,632 -> 1,504), the CrankSlider's geometry inlined and then through `of_one` 82 "
     "(682 -> 600), the LossyGear's table and line 81 (933 -> 852). Tried and measured "
     "without gain: the entry answering every call in one function (the second call pays "
     "the first's frame), an entry that only dispatches to a leaf or to the sweep (the "
     "seventh argument's move on each call costs what the first call saves), the first "
     "sweep inlined into the first call (+11 on the Gear), the several knowns compared in a "
     "loop over their count (+44 on the Gear: only the state count's unrolled loop pays), "
     "the in-order read from two unknowns (+9), the CrankSlider's reduced inertia and "
     "coupling through `of_one` too (+10, and 3 more on its right-hand side), the "
     "LossyGear's rolling torque inlined (its right-hand side +5, its breakaway doStep "
     "+0.9 %). Earlier steps (the leaf, the reads as slices, the role table in a register) "
     "are in the git history of this file."),
]


# Sections of docs/performance.md that tests measure, not this script: kept from the heading
# on when the page is rewritten.
KEPT = "## Model Exchange with an implicit integrator"


def kept_sections(doc):
    try:
        with open(doc) as f:
            text = f.read()
    except FileNotFoundError:
        return ""
    start = text.find(KEPT)
    return "" if start < 0 else "\n" + text[start:]


def main(fmu_dir, ref_root):
    if os.environ.get("BENCH_ONLY") == "sets":
        print("\n".join(set_cost(fmu_dir, ref_root)))
        return
    fmus = sorted(f for f in os.listdir(fmu_dir) if f.endswith(".fmu"))
    defaults, tables = [], []
    for name in fmus:
        fmu = os.path.join(fmu_dir, name)
        model = name[:-4]
        default = float(read_model_description(fmu).defaultExperiment.tolerance)
        # Every reference scenario of the model (ChainDrive: one per chain model).
        for directory in scenarios_of(ref_root, model):
            sc = Scenario(directory, model)
            label = os.path.relpath(directory, ref_root)
            if sc.parameters:
                label += " (" + ", ".join(f"{n} = {v}" for n, v in sc.parameters.items()) + ")"
            rows = []
            for tol in sorted(set(TOLERANCES + [default]), reverse=True):
                with tempfile.TemporaryDirectory() as work:
                    measured = measure(fmu, Scenario(directory, model), tol, work,
                                       most=tol == default)
                per_step, worst = measured[:2]
                rows.append((tol, per_step, worst))
                if tol == default:
                    defaults.append((label, default, per_step, measured[2], worst,
                                     sc.steps() * sc.step))
                print(f"bench: {label} at {tol:g}: {per_step:,.0f} instructions per doStep, "
                      f"deviation {worst:.1e}", file=sys.stderr, flush=True)
            tables.append((label, default, rows))
    lines = ["| FMU / scenario | default tolerance | instructions per fmi2DoStep | most in one "
             "fmi2DoStep | largest deviation from the reference (of the signal's range) | "
             "scenario |",
             "|---|---|---|---|---|---|"]
    for model, default, per_step, most, worst, length in defaults:
        lines.append(f"| {model} | {default:g} | {per_step:,.0f} | {most:,} | {worst:.1e} | "
                     f"{length:g} s, h = 1 ms |")
    lines += ["", "## Work-precision", "",
              "Reference scenario of each FMU; instructions over its first "
              f"{COUNTED_STEPS} steps. The deviation must fall as the tolerance tightens, "
              "down to the accuracy of the reference itself. Several reference scenarios are "
              "integrated exactly at any tolerance (piecewise polynomial motion): there the "
              "deviation is rounding only."]
    for model, default, rows in tables:
        lines += ["", f"### {model} (default tolerance {default:g})", "",
                  "| tolerance | instructions per doStep | largest deviation |", "|---|---|---|"]
        lines += [f"| {tol:g} | {per_step:,.0f} | {worst:.1e} |" for tol, per_step, worst in rows]
    lines += set_cost(fmu_dir, ref_root)
    lines += ["", "## A full Jacobian through the API", ""]
    lines += [p for para in JACOBIAN_TEXT for p in (para, "")]
    lines += jacobian_bench.table(fmu_dir)
    if "CrankSlider.fmu" in fmus:
        lines += spin_up(fmu_dir)
    print("\n".join(lines))
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "performance.md")
    kept = kept_sections(doc)
    with open(doc, "w") as f:
        f.write("# Cost and accuracy per step\n\n"
                "Written by `cargo xtask bench` (xtask/python/bench.py): instructions inside "
                "fmi2DoStep counted by valgrind's callgrind through the C harness (linux64 "
                "binary, reference scenario of each FMU, default tolerance), independent of "
                "the machine's load; deviations from the independent references in "
                "reference-fmus/.\n\n" + "\n".join(lines) + "\n" + kept)

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
