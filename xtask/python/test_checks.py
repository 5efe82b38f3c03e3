"""The validation's own checks must fail on the faults they exist for (`cargo xtask test` runs
this with unittest before the validation).

Each test hands a check a deliberately broken input: NaN and infinite outputs, a result off the
reference, a Linux binary linked against the build machine's glibc, a DLL that needs MinGW's
libgcc DLL, an FMU without its Windows binary, a scenario whose parameter file names the wrong
chain model (or an unknown parameter, or a fractional Integer), Model Exchange runs (FMPy ME)
against a perturbed reference and with the wrong chain model, an Integer input (a gear shift)
with a fraction or a row late, in every importer, and an FMI 3.0 importer setting the inputs at
the intermediate updates against one that holds them.
"""
import os
import shutil
import subprocess
import tempfile
import unittest
import zipfile

import numpy as np

import platforms
from fmpy import read_model_description

from importers import Scenario, fmpy_intermediate, judged, reference_of, simulate
from validate import compare

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def gear_scenario():
    return Scenario(os.path.join(ROOT, "reference-fmus", "Gear"), "Gear")


def exact_run(sc):
    return np.array(sc.ref["time"]), {n: np.array(sc.ref[n], dtype=float) for n in sc.outputs}


class Comparison(unittest.TestCase):
    def test_the_reference_itself_passes(self):
        sc = gear_scenario()
        problems, worst = compare(sc, *exact_run(sc))
        self.assertEqual(problems, [])
        self.assertEqual(worst, 0.0)

    def test_a_nan_output_fails_naming_the_variable_and_time(self):
        sc = gear_scenario()
        time, values = exact_run(sc)
        values["w_b"][7] = np.nan
        problems, worst = compare(sc, time, values)
        self.assertEqual(len(problems), 1)
        self.assertIn("w_b", problems[0])
        self.assertIn(f"t = {time[7]}", problems[0])
        self.assertEqual(worst, float("inf"))

    def test_an_infinite_output_fails(self):
        sc = gear_scenario()
        time, values = exact_run(sc)
        values["tau_mesh"][-1] = -np.inf
        problems, _ = compare(sc, time, values)
        self.assertTrue(any("tau_mesh" in p and "non-finite" in p for p in problems))

    def test_a_deviation_beyond_the_bound_fails(self):
        sc = gear_scenario()
        time, values = exact_run(sc)
        scale = np.max(np.abs(values["phi_a"]))
        values["phi_a"][100] += 2e-6 * scale
        problems, _ = compare(sc, time, values)
        self.assertTrue(any(p.startswith("phi_a: 1 points off") for p in problems))


class Parameters(unittest.TestCase):
    """<Model>_par.csv reaches the FMU: the ChainDrive's QSS scenario (chain_model = 2) with its
    parameter file changed to the full model must fail, so an importer that dropped the file
    would be caught."""
    FMU = os.path.join(ROOT, "target", "fmu", "ChainDrive.fmu")

    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.md = read_model_description(self.FMU)

    def tearDown(self):
        shutil.rmtree(self.work)

    def qss_with(self, par_text):
        """A copy of reference-fmus/ChainDrive/qss with the given ChainDrive_par.csv."""
        d = tempfile.mkdtemp(dir=self.work)
        shutil.copytree(os.path.join(ROOT, "reference-fmus", "ChainDrive", "qss"), d,
                        dirs_exist_ok=True)
        with open(os.path.join(d, "ChainDrive_par.csv"), "w") as f:
            f.write(par_text)
        return Scenario(d, "ChainDrive")

    def test_the_values_are_typed_by_the_model_description(self):
        sc = Scenario(os.path.join(ROOT, "reference-fmus", "ChainDrive", "qss"), "ChainDrive")
        values = sc.parameter_values(self.md)
        self.assertEqual(values, {"chain_model": 2})
        self.assertIs(type(values["chain_model"]), int)
        sc = self.qss_with('"name","value"\n"chain_model",3\n"k_chain",2e5\n')
        self.assertEqual(sc.parameter_values(self.md), {"chain_model": 3, "k_chain": 200000.0})

    def test_an_unknown_parameter_or_a_fractional_integer_is_refused(self):
        for text, word in (('"name","value"\n"chain_modle",2\n', "chain_modle"),
                           ('"name","value"\n"theta_ds",2\n', "theta_ds"),
                           ('"name","value"\n"chain_model",2.5\n', "Integer")):
            with self.assertRaises(ValueError) as caught:
                self.qss_with(text).parameter_values(self.md)
            self.assertIn(word, str(caught.exception))
        with self.assertRaises(ValueError):
            self.qss_with('"chain_model",2\n')  # no header

    def test_the_c_plan_carries_the_scenario_value(self):
        sc = self.qss_with('"name","value"\n"chain_model",3\n')
        plan = os.path.join(self.work, "plan.txt")
        platforms.write_plan(self.md, sc, plan)
        vr = next(v.valueReference for v in self.md.modelVariables if v.name == "chain_model")
        with open(plan) as f:
            lines = f.read().splitlines()
        n = int(lines[5].split()[1])
        params = {int(line.split()[1]): (line.split()[0], platforms.from_hex(line.split()[2]))
                  for line in lines[6:6 + n]}
        self.assertEqual(params[vr], ("I", 3.0))

    def test_a_wrong_chain_model_fails_the_scenario(self):
        right = Scenario(os.path.join(ROOT, "reference-fmus", "ChainDrive", "qss"), "ChainDrive")
        problems, worst = compare(right, *simulate("FMPy", self.FMU, right))
        self.assertEqual(problems, [])
        self.assertLess(worst, 1e-6)
        wrong = self.qss_with('"name","value"\n"chain_model",1\n')
        problems, worst = compare(wrong, *simulate("FMPy", self.FMU, wrong))
        self.assertTrue(any(p.startswith("theta_ds: ") for p in problems), problems)
        self.assertGreater(worst, 1e-3)

    @unittest.skipUnless(os.path.isfile(os.path.join(os.environ.get("FMU_RUN_DIR", "-"), "fmu_run")),
                         "the C harness is built by `cargo xtask validate` (FMU_RUN_DIR)")
    def test_a_wrong_chain_model_fails_the_c_harness_too(self):
        wrong = self.qss_with('"name","value"\n"chain_model",1\n')
        problems, _ = compare(wrong, *simulate("C linux64", self.FMU, wrong))
        self.assertTrue(any(p.startswith("theta_ds: ") for p in problems), problems)


class ModelExchange(unittest.TestCase):
    """The FMPy ME column judges the Model Exchange run: it passes on the references and fails
    on a reference moved by twice the bound at one point, and on a wrong chain model."""
    GEAR = os.path.join(ROOT, "target", "fmu", "Gear.fmu")
    CHAIN = os.path.join(ROOT, "target", "fmu", "ChainDrive.fmu")

    def test_the_inputs_are_held_over_each_step(self):
        sc = gear_scenario()
        table = sc.held_inputs()
        # Gear_in.csv steps tau_b from 0.2 to -0.3 at t = 0.4: two rows there, the old value
        # then the new one; constant elsewhere.
        jump = np.flatnonzero(np.isclose(table["time"], 0.4))
        self.assertEqual(len(jump), 2)
        self.assertEqual(list(table["tau_b"][jump]), [0.2, -0.3])
        self.assertEqual(table["time"][-1], sc.grid()[-1])
        sc = Scenario(os.path.join(ROOT, "reference-fmus", "CVT"), "CVT")
        table = sc.held_inputs()
        # F_2 ramps: the value of step k-1 up to t_k, then the value of step k.
        k = 10
        before, after = sc.input_at(sc.grid()[k - 1])[3], sc.input_at(sc.grid()[k])[3]
        self.assertNotEqual(before, after)
        rows = np.flatnonzero(np.isclose(table["time"], sc.grid()[k]))
        self.assertEqual(list(table["F_2"][rows]), [before, after])
        inside = (sc.grid()[k - 1] + sc.grid()[k]) / 2
        self.assertEqual(np.interp(inside, table["time"], table["F_2"]), before)

    def test_the_reference_passes_and_a_perturbed_reference_fails(self):
        sc = gear_scenario()
        problems, worst = compare(sc, *simulate("FMPy ME", self.GEAR, sc))
        self.assertEqual(problems, [])
        self.assertLess(worst, 1e-6)
        time, values = simulate("FMPy ME", self.GEAR, sc)
        i = int(np.flatnonzero(np.isclose(sc.ref["time"], 1.0))[0])
        sc.ref["phi_b"][i] += 2e-6 * np.max(np.abs(sc.ref["phi_b"]))
        problems, worst = compare(sc, time, values)
        self.assertEqual(len(problems), 1, problems)
        self.assertTrue(problems[0].startswith("phi_b: 1 points off, first at t = 1.0"), problems)
        self.assertGreater(worst, 1e-6)

    def test_a_wrong_chain_model_fails_the_model_exchange_run(self):
        right = Scenario(os.path.join(ROOT, "reference-fmus", "ChainDrive", "qss"), "ChainDrive")
        problems, worst = compare(right, *simulate("FMPy ME", self.CHAIN, right))
        self.assertEqual(problems, [])
        with tempfile.TemporaryDirectory() as d:
            shutil.copytree(os.path.join(ROOT, "reference-fmus", "ChainDrive", "qss"), d,
                            dirs_exist_ok=True)
            with open(os.path.join(d, "ChainDrive_par.csv"), "w") as f:
                f.write('"name","value"\n"chain_model",1\n')
            wrong = Scenario(d, "ChainDrive")
            problems, worst = compare(wrong, *simulate("FMPy ME", self.CHAIN, wrong))
        self.assertTrue(any(p.startswith("theta_ds: ") for p in problems), problems)
        self.assertGreater(worst, 1e-3)


class InterpolatedInputs(unittest.TestCase):
    """The `FMPy ME interpolated` column judges Model Exchange with smooth inputs against the
    reference for interpolated inputs: it passes there, fails against the reference for held
    inputs and on a perturbed reference, and FMPy as shipped lags its inputs."""
    GEAR = os.path.join(ROOT, "target", "fmu", "Gear.fmu")

    def ramp(self):
        return Scenario(os.path.join(ROOT, "reference-fmus", "Gear", "ramp"), "Gear")

    def test_it_runs_only_where_the_inputs_are_continuous(self):
        self.assertIsNone(reference_of("FMPy ME interpolated", gear_scenario()))
        self.assertIsNotNone(reference_of("FMPy ME interpolated", self.ramp()))
        self.assertTrue(judged("FMPy ME interpolated"))
        self.assertFalse(judged("FMPy ME interpolated, as shipped"))

    def test_the_interpolated_reference_passes_and_the_held_one_fails(self):
        sc = self.ramp()
        time, values = simulate("FMPy ME interpolated", self.GEAR, sc)
        problems, worst = compare(sc, time, values, sc.ref_interpolated)
        self.assertEqual(problems, [])
        self.assertLess(worst, 1e-6)
        problems, worst = compare(sc, time, values, sc.ref)
        self.assertTrue(problems)
        self.assertGreater(worst, 1e-6)
        i = len(sc.ref_interpolated["time"]) // 2
        sc.ref_interpolated["phi_b"][i] += 2e-6 * np.max(np.abs(sc.ref_interpolated["phi_b"]))
        problems, _ = compare(sc, time, values, sc.ref_interpolated)
        self.assertEqual(len(problems), 1, problems)

    def test_fmpy_as_shipped_lags_the_inputs_of_an_fmu_without_indicators(self):
        sc = self.ramp()
        problems, worst = compare(sc, *simulate("FMPy ME interpolated, as shipped", self.GEAR,
                                                sc), sc.ref_interpolated)
        self.assertGreater(worst, 1e-6)


class IntermediateUpdate(unittest.TestCase):
    """An FMI 3.0 importer that sets the inputs at every intermediate update (FMPy's FMU3Slave,
    `fmpy_intermediate`) follows the reference for interpolated inputs: at communication steps
    of 50 ms (several internal steps each) it comes closer to it than the same loop holding the
    inputs over each step."""
    FMU = os.path.join(ROOT, "target", "fmu", "fmi3", "CrankSlider.fmu")

    def test_inputs_set_at_the_updates_come_closer_than_held_ones(self):
        sc = Scenario(os.path.join(ROOT, "reference-fmus", "CrankSlider"), "CrankSlider")
        step = 50 * sc.step
        # The reference at the communication points only: compare() interpolates between them.
        k = sc.ref_interpolated["time"] / step
        ref = sc.ref_interpolated[np.isclose(k, np.round(k))]
        with tempfile.TemporaryDirectory() as work:
            held = compare(sc, *fmpy_intermediate(self.FMU, sc, work, step, False), ref)[1]
            updated = compare(sc, *fmpy_intermediate(self.FMU, sc, work, step), ref)[1]
        self.assertLess(updated, 0.5 * held, f"set at the updates {updated}, held {held}")


def fmu_with(work, linux_so=None, windows_dll=None, darwin=None):
    """Gear.fmu's modelDescription.xml with the given binaries."""
    path = os.path.join(work, "Gear.fmu")
    with zipfile.ZipFile(os.path.join(ROOT, "target", "fmu", "Gear.fmu")) as src, \
            zipfile.ZipFile(path, "w") as dst:
        dst.writestr("modelDescription.xml", src.read("modelDescription.xml"))
        if linux_so:
            dst.write(linux_so, "binaries/linux64/Gear.so")
        if windows_dll:
            dst.write(windows_dll, "binaries/win64/Gear.dll")
        if darwin:
            dst.write(darwin, "binaries/darwin64/Gear.dylib")
    return path


class IntegerInputs(unittest.TestCase):
    """FastDrivetrain/shift: the Integer input `gear` in the table, through every importer."""
    FMU = os.path.join(ROOT, "target", "fmu", "FastDrivetrain.fmu")
    SHIFT = os.path.join(ROOT, "reference-fmus", "FastDrivetrain", "shift")

    def setUp(self):
        self.work = tempfile.mkdtemp()
        self.md = read_model_description(self.FMU)

    def tearDown(self):
        shutil.rmtree(self.work)

    def shift_with(self, edit):
        """A copy of the shift scenario, its input table's text passed through `edit`."""
        d = tempfile.mkdtemp(dir=self.work)
        shutil.copytree(self.SHIFT, d, dirs_exist_ok=True)
        path = os.path.join(d, "FastDrivetrain_in.csv")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(edit(text))
        return Scenario(d, "FastDrivetrain")

    def test_the_gear_is_held_between_rows_and_steps_at_its_time(self):
        sc = Scenario(self.SHIFT, "FastDrivetrain")
        self.assertEqual(sc.integer_inputs(), ["gear"])
        self.assertEqual(sc.input_problems(self.md), [])
        gear = sc.input_names().index("gear")
        self.assertEqual([sc.input_at(t)[gear] for t in (0.4995, 0.5, 0.9999, 1.0, 1.7)],
                         [1, 2, 2, 3, 2])
        self.assertIs(type(sc.input_at(0.5)[gear]), int)

    def test_a_fractional_gear_is_refused(self):
        sc = self.shift_with(lambda text: text.replace(",2\n", ",2.5\n", 1))
        problems = sc.input_problems(self.md)
        self.assertTrue(any("gear is an Integer input" in p for p in problems), problems)

    def test_the_c_plan_sets_the_gear_as_an_integer(self):
        sc = Scenario(self.SHIFT, "FastDrivetrain")
        plan = os.path.join(self.work, "plan.txt")
        platforms.write_plan(self.md, sc, plan)
        vr = next(v.valueReference for v in self.md.modelVariables if v.name == "gear")
        with open(plan) as f:
            line = next(l for l in f if l.startswith("inputs "))
        self.assertTrue(line.rstrip().endswith(f"I {vr}"), line)

    def test_a_shift_at_the_wrong_time_fails_in_every_importer(self):
        # The first shift one row later: the gear input is what moves the results.
        def late(text):
            lines = text.splitlines(keepends=True)
            i = next(k for k, l in enumerate(lines) if l.startswith("0.5,") and l.rstrip().endswith(",2"))
            lines[i] = lines[i].rstrip()[:-1] + "1\n"
            j = next(k for k, l in enumerate(lines) if l.startswith("0.501,"))
            lines[j] = lines[j].rstrip()[:-1] + "2\n"
            return "".join(lines)

        wrong = self.shift_with(late)
        for importer in ("FMPy", "FMPy ME", "fmi-sim", "libcosim", "fmucontainer+FMPy",
                         "C linux64"):
            problems, worst = compare(wrong, *simulate(importer, self.FMU, wrong))
            self.assertTrue(any(p.startswith("w_ds: ") for p in problems), (importer, problems))
            self.assertGreater(worst, 1e-4, importer)


class Allocations(unittest.TestCase):
    PASSES = ("as the scenario runs", "every Real input moved", "Model Exchange")

    def counts(self, allocating=None, steps=5000):
        return "".join(
            f"allocations: {what}: {steps} steps with logging off, "
            f"{2 if what == allocating else 0} of them allocated, "
            f"first at step {1 if what == allocating else 0}\n" for what in self.PASSES)

    def test_steps_that_allocate_nothing_pass(self):
        self.assertIsNone(platforms.allocation_problem(self.counts()))

    def test_an_allocating_step_fails_naming_it_and_its_pass(self):
        for what in self.PASSES:
            problem = platforms.allocation_problem(self.counts(allocating=what))
            self.assertIn("2 of 5000", problem)
            self.assertIn("step 1", problem)
            self.assertIn(what, problem)

    def test_a_missing_or_empty_count_fails(self):
        self.assertIsNotNone(platforms.allocation_problem(""))
        self.assertIsNotNone(platforms.allocation_problem(self.counts(steps=0)))
        without_me = self.counts().replace("Model Exchange", "something else")
        self.assertIsNotNone(platforms.allocation_problem(without_me))


class Binaries(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.work)

    def packaged(self, name):
        with zipfile.ZipFile(os.path.join(ROOT, "target", "fmu", "Gear.fmu")) as z:
            return z.extract(name, os.path.join(self.work, "packaged"))

    def shared_library(self, name, source):
        """`source` compiled by this machine's gcc into `name`.so in the work directory."""
        src = os.path.join(self.work, f"{name}.c")
        with open(src, "w") as f:
            f.write(source)
        so = os.path.join(self.work, f"{name}.so")
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", so, src], check=True)
        return so

    def test_the_packaged_gear_passes(self):
        fmu = os.path.join(ROOT, "target", "fmu", "Gear.fmu")
        problems, floor, imports = platforms.inspect_binaries(fmu, self.work)
        self.assertEqual(problems, [])
        self.assertLessEqual(floor, (2, 17))
        self.assertIn("kernel32.dll", imports)

    def test_a_host_glibc_build_is_refused(self):
        # Linked against this machine's glibc (2.34 or newer): dlopen has a GLIBC_2.34 version.
        host_so = self.shared_library(
            "host", "#include <dlfcn.h>\nvoid *load(const char *p) { return dlopen(p, RTLD_NOW); }\n")
        dll = self.packaged("binaries/win64/Gear.dll")
        problems, floor, _ = platforms.inspect_binaries(fmu_with(self.work, host_so, dll), self.work)
        self.assertGreater(floor, (2, 17))
        self.assertTrue(any("newer than 2.17" in p for p in problems), problems)

    def test_a_dll_needing_libgcc_s_is_refused(self):
        src = os.path.join(self.work, "needs_libgcc.c")
        with open(src, "w") as f:
            f.write("__declspec(dllexport) __int128 divide(__int128 a, __int128 b) { return a / b; }\n")
        dll = os.path.join(self.work, "needs_libgcc.dll")
        subprocess.run(["x86_64-w64-mingw32-gcc", "-shared", "-shared-libgcc", "-o", dll, src],
                       check=True)
        so = self.packaged("binaries/linux64/Gear.so")
        problems, _, imports = platforms.inspect_binaries(fmu_with(self.work, so, dll), self.work)
        self.assertIn("libgcc_s_seh-1.dll", imports)
        self.assertTrue(any("non-system DLLs: libgcc_s_seh-1.dll" in p for p in problems), problems)

    def test_a_macos_binary_without_arm64_is_refused(self):
        # The FMI 3.0 FMU's thin x86_64 binary in place of the universal one.
        with zipfile.ZipFile(os.path.join(ROOT, "target", "fmu", "fmi3", "Gear.fmu")) as z:
            thin = z.extract("binaries/x86_64-darwin/Gear.dylib", os.path.join(self.work, "3"))
        fmu = fmu_with(self.work, self.packaged("binaries/linux64/Gear.so"),
                       self.packaged("binaries/win64/Gear.dll"), darwin=thin)
        problems, _, _ = platforms.inspect_binaries(fmu, self.work)
        self.assertIn("binaries/darwin64/Gear.dylib: holds ['x86_64'], not ['x86_64', 'arm64']",
                      problems)

    def test_a_macos_binary_exporting_more_is_refused(self):
        # Gear's darwin64 binary beside a Linux library exporting one function more.
        more = self.shared_library("more", "int fmi2Extra(void) { return 0; }\n")
        fmu = fmu_with(self.work, more, self.packaged("binaries/win64/Gear.dll"),
                       darwin=self.packaged("binaries/darwin64/Gear.dylib"))
        problems, _, _ = platforms.inspect_binaries(fmu, self.work)
        self.assertTrue(any("Gear.dylib (arm64): exports differ from linux64's" in p
                            and "'fmi2Extra'" in p for p in problems), problems)

    def test_a_missing_windows_binary_is_refused(self):
        so = self.packaged("binaries/linux64/Gear.so")
        problems, _, _ = platforms.inspect_binaries(fmu_with(self.work, so), self.work)
        self.assertIn("no binaries/win64/Gear.dll", problems)


if __name__ == "__main__":
    unittest.main()
