"""The importers that run an FMU in FMPy (importers.py): Co-Simulation, Model Exchange with
held or interpolated inputs, FMI 3.0 with Event Mode and intermediate updates."""
import tempfile

import fmpy.simulation as fmpy_simulation
import fmpy.sundials as fmpy_sundials
import numpy as np
from fmpy import extract, read_model_description, simulate_fmu
from fmpy.fmi3 import FMU3Slave

from scenario import at_communication_points


def fmpy(fmu, sc, _work, start_values=None):
    # FMPy's output_interval is its communication step in co-simulation. start_values: FMPy sets
    # them before initialization and raises if one could not be set.
    if start_values is None:
        start_values = sc.parameter_values(read_model_description(fmu))
    r = simulate_fmu(fmu, start_time=sc.start, stop_time=sc.stop, output_interval=sc.step,
                     relative_tolerance=sc.tol, input=sc.inputs, output=sc.outputs,
                     start_values=start_values)
    return r["time"], {n: r[n] for n in sc.outputs}


# FMPy's CVode bounds the error of each of its internal steps (BDF, orders 1-5) by
# relative_tolerance (absolute tolerance: relative_tolerance times the states' nominal values, 1
# here). A held input changes at every communication point of most scenarios, and CVode restarts
# at order 1 with a tiny step at each: at the scenario's tolerance the deviations of those
# scenarios reach 1e4 to 4e6 times the tolerance, and fall in proportion to it (measured:
# "Importer notes" in docs/importers.md). The Model Exchange run therefore asks for the
# scenario's tolerance times ME_TOLERANCE_FACTOR (not below ME_SMALLEST_TOLERANCE), which keeps
# CVode's own error below 3e-7 of each signal's range on every scenario, so that the 1e-6
# comparison judges the FMU (its derivatives, event indicators and event updates) and not the
# host's solver.
ME_TOLERANCE_FACTOR = 1e-4
ME_SMALLEST_TOLERANCE = 1e-15


def me_tolerance(sc):
    return max(sc.tol * ME_TOLERANCE_FACTOR, ME_SMALLEST_TOLERANCE)


class _HeldInput(fmpy_simulation.Input):
    """FMPy 0.3.32's input, except that after an input event at t it keeps the value after the
    event at t.

    FMPy's Model Exchange loop sets an input event's new values in Event Mode and restarts CVode
    at t; CVode's root function (FMPy's CVodeSolver.g) then sets the inputs at t again without
    `after_event`, which gives the value *before* the jump, and the derivatives of CVode's first
    internal step after every input event are evaluated with the old inputs until the next root
    function call. Here a call at the time of the last event keeps the value after it; every
    other call (in particular the one that sets the inputs for the outputs recorded at a
    communication point, before that point's event) is FMPy's."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.event_time = None

    def apply(self, time, continuous=True, discrete=True, after_event=False):
        if after_event:
            self.event_time = time
        elif self.event_time is not None and time == self.event_time:
            after_event = True
        return super().apply(time, continuous=continuous, discrete=discrete,
                             after_event=after_event)


def fmpy_me(fmu, sc, _work, start_values=None):
    """FMPy as a Model Exchange importer: simulate_fmu(fmi_type="ModelExchange") with its CVode
    (BDF with root finding on the event indicators) and its event handling.

    The inputs are held over each step as in the co-simulation runs (`Scenario.held_inputs`,
    with `_HeldInput` in place of FMPy's Input for the run). FMPy samples the outputs at each
    output point and, with record_events, once more before and after every event; the values
    judged at a communication point are the first sample there: the states CVode reached, with
    the inputs of the step that ended there (as a co-simulation step reports them), before that
    point's input event."""
    if start_values is None:
        start_values = sc.parameter_values(read_model_description(fmu))
    original = fmpy_simulation.Input
    fmpy_simulation.Input = _HeldInput
    try:
        r = simulate_fmu(fmu, fmi_type="ModelExchange", solver="CVode", start_time=sc.start,
                         stop_time=sc.stop, output_interval=sc.step,
                         relative_tolerance=me_tolerance(sc), input=sc.held_inputs(),
                         output=sc.outputs, start_values=start_values, record_events=True)
    finally:
        fmpy_simulation.Input = original
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


class _InputsInRhs(fmpy_sundials.CVodeSolver):
    """FMPy 0.3.32's CVode solver, except that its right-hand side also sets the inputs at the
    time CVode asks for. FMPy sets them only in the root function (after each internal step and
    while a root is located) and at each stop, so the derivatives of an internal step see the
    inputs of its start, and an FMU without event indicators (no root function) sees them only
    at the output points: a lag of the order of CVode's internal step."""

    def f(self, t, y, ydot, user_data):
        self.input.apply(t)
        return super().f(t, y, ydot, user_data)


def fmpy_me_interpolated(fmu, sc, _work, inputs_in_rhs=True, tolerance=None):
    """FMPy as a Model Exchange importer, with the input table as a user gives it: interpolated
    linearly between its rows, no input events (the table has no two rows at one time), so
    CVode integrates across the communication points and only the event indicators stop it.
    Judged against <Model>_ref_interpolated.csv, with the inputs set at every evaluation
    (`_InputsInRhs`) at `me_tolerance` unless `tolerance` is given; `inputs_in_rhs=False` is
    FMPy as shipped. The values at a communication point are the first sample there
    (`at_communication_points`)."""
    start_values = sc.parameter_values(read_model_description(fmu))
    original = fmpy_sundials.CVodeSolver
    if inputs_in_rhs:
        fmpy_sundials.CVodeSolver = _InputsInRhs
    try:
        r = simulate_fmu(fmu, fmi_type="ModelExchange", solver="CVode", start_time=sc.start,
                         stop_time=sc.stop, output_interval=sc.step,
                         relative_tolerance=tolerance or me_tolerance(sc), input=sc.inputs,
                         output=sc.outputs, start_values=start_values, record_events=True)
    finally:
        fmpy_sundials.CVodeSolver = original
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


def fmpy_me_interpolated_as_shipped(fmu, sc, work):
    """`fmpy_me_interpolated` with FMPy's own input handling, at the scenario's tolerance as a
    user would ask (not judged: its input lag). Its right-hand side changes where the root
    function sets new inputs, so at 1e-4 of the scenario's tolerance CVode gives up (500 steps
    without reaching the next output point) on every FMU with event indicators."""
    return fmpy_me_interpolated(fmu, sc, work, inputs_in_rhs=False, tolerance=sc.tol)


def fmpy_event_mode(fmu, sc, _work):
    """FMPy as an FMI 3.0 Co-Simulation importer with Event Mode and early return
    (`use_event_mode`, `early_return_allowed`): a step that ends at an event is followed by
    Event Mode, the event iteration and Step Mode, and the next step goes on from the event to
    the communication point. FMPy also samples the outputs at each early return: the values
    judged are those at the communication points.

    At an early return FMPy sets the inputs of the event's time from its input table, so a
    table interpolated between the communication points would give the rest of the step other
    inputs than the reference holds: the inputs are given held over each step
    (`Scenario.held_inputs`), as the reference has them."""
    start_values = sc.parameter_values(read_model_description(fmu))
    r = simulate_fmu(fmu, start_time=sc.start, stop_time=sc.stop, output_interval=sc.step,
                     relative_tolerance=sc.tol, input=sc.held_inputs(), output=sc.outputs,
                     start_values=start_values, use_event_mode=True, early_return_allowed=True)
    return at_communication_points(sc, r["time"], {n: r[n] for n in sc.outputs})


def fmpy_intermediate(fmu, sc, work, step, required=True):
    """FMPy 0.3.32's FMI 3.0 Co-Simulation API (`FMU3Slave`) in a master loop of its own, with
    communication steps of `step`: the inputs, as the table interpolates them (`input_at`), are
    set at each communication point and, with the Real inputs required as intermediate
    variables (`required`), again at every intermediate update that asks for them
    (`intermediateVariableSetRequested`: the end of each of the FMU's internal steps), so that
    the FMU integrates the input signal rather than its value at the step's start. Without
    `required` the inputs are held over each step. Returns (time, {output: values}) at the
    communication points after the start. FMPy's `simulate_fmu` passes no intermediate update
    callback."""
    md = read_model_description(fmu)
    variables = {v.name: v for v in md.modelVariables}
    names = sc.input_names()
    integers = sc.integer_inputs()
    reals = [n for n in names if n not in integers]
    real_vrs = [variables[n].valueReference for n in reals]
    unzipped = extract(fmu, unzipdir=tempfile.mkdtemp(dir=work))
    slave = FMU3Slave(guid=md.guid, unzipDirectory=unzipped,
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="intermediate")
    problems = []

    def inputs_at(t):
        return dict(zip(names, sc.input_at(t)))

    def update(_env, time, set_requested, _get_allowed, _finished, _can_return_early,
               early_return_requested, _early_return_time):
        early_return_requested[0] = False
        if not set_requested:
            return
        try:
            values = inputs_at(time)
            slave.setFloat64(real_vrs, [values[n] for n in reals])
        except Exception as e:  # an exception cannot cross the C callback
            problems.append(f"t = {time}: {e}")

    slave.instantiate(intermediateUpdate=update,
                      requiredIntermediateVariables=real_vrs if required else None)
    for name, value in sc.parameter_values(md).items():
        vr = [variables[name].valueReference]
        (slave.setInt32 if isinstance(value, int) else slave.setFloat64)(vr, [value])
    slave.enterInitializationMode(tolerance=sc.tol, startTime=sc.start, stopTime=sc.stop)

    def set_inputs(t):
        values = inputs_at(t)
        if reals:
            slave.setFloat64(real_vrs, [values[n] for n in reals])
        for n in integers:
            slave.setInt32([variables[n].valueReference], [int(values[n])])

    set_inputs(sc.start)
    slave.exitInitializationMode()
    steps = int(round((sc.stop - sc.start) / step))
    reals_out = [n for n in sc.outputs if variables[n].type == "Float64"]
    integers_out = [n for n in sc.outputs if n not in reals_out]
    time, rows = [], []
    for k in range(steps):
        t = sc.start + k * step
        set_inputs(t)
        slave.doStep(t, step)
        time.append(sc.start + (k + 1) * step)
        rows.append(slave.getFloat64([variables[n].valueReference for n in reals_out]) +
                    slave.getInt32([variables[n].valueReference for n in integers_out]))
    slave.terminate()
    slave.freeInstance()
    if problems:
        raise RuntimeError("intermediate update: " + "; ".join(problems[:3]))
    rows = np.array(rows, dtype=float)
    return np.array(time), {n: rows[:, i] for i, n in enumerate(reals_out + integers_out)}
