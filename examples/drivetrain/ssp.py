#!/usr/bin/env python3
"""The drivetrain of drivetrain.py as an SSP 1.0 system, and the SSP run in the importers here.

    python ssp.py <dir with the .fmu files> [--check] [--out <file.ssp>]

writes <dir>/../ssp/drivetrain.ssp (with target/fmu: target/ssp/drivetrain.ssp, a build
artifact: it holds the three FMUs) and SystemStructure.ssd next to this file (its copy of the
package's system description: small, deterministic, independent of the FMUs' contents).

What the package holds (one description: the table COMPONENTS and CONNECTIONS below, the
parameters and the step imported from drivetrain.py):

    SystemStructure.ssd               the system: components, connectors, connections,
                                      parameter bindings (inline SSV parameter sets), the
                                      DefaultExperiment (0..3 s) and its 1 ms fixed step
                                      (OSP annotation, read by libcosim)
    resources/LossyGear.fmu
    resources/VariableRatioCoupling.fmu
    resources/CVT.fmu

An SSP system connects FMUs only. drivetrain.py's master loop also contains four sources that are
not FMUs: the engine torque (a function of time), the coupling's ratio command (time), the road
load (a function of the CVT's secondary speed w2) and the sheave controller (a PID on the CVT's
s2, with a state of its own). They stay outside the SSP: the system's boundary is the FMU
sub-network, and those inputs (LossyGear.tau_a, VariableRatioCoupling.r, CVT.tau_2, CVT.F_2) are
left unconnected in the SSD, to be driven by the importer each step; the primary sheave's clamp
(CVT.F_1, a constant) is given as a start value in the CVT's parameter set. The boundary is not
made of system-level connectors because libcosim's SSP parser requires startElement and
endElement on every connection (it cannot read a connection to the system's own connectors), and
FMPy's cannot either (see fmpy_limits()).

Importers:
- OSP libcosim (libcosimpy): CosimExecution.from_ssp_file on the .ssp; its step comes from the
  SSD's annotation. The boundary inputs go in through an override manipulator before each step,
  computed from the outputs a last-value observer read after the previous one, with the source
  functions imported from drivetrain.py.
- FMPy 0.3.32's fmpy.ssp validates the SSD against the SSP 1.0 schema (read_ssd), but its
  simulate_ssp cannot run this system: see fmpy_limits(), which --check also demonstrates.

--check compares the libcosim run with drivetrain.py's master loop at 1 ms: for w_a, w_b, w1, w2,
s2 and the energy terms, max |libcosim - CS(1 ms)| must be below the CS(1 ms) coupling error
estimate 2 max |CS(1 ms) - CS(0.5 ms)| (which model_exchange.py shows equals max |ME - CS(1 ms)|
to 0.2 %). The two masters differ only in the order of exchange within a communication point:
libcosim reads the coupling's torques after its step, from the speeds of the previous point,
where drivetrain.py first gives the coupling the new speeds (it has direct feedthrough). The
check shows that too: drivetrain.py's loop in libcosim's order (jacobi_master) gives libcosim's
results to 1e-12. It also asserts libcosim's energy residual (3.2 times the master loop's, as the
lagged torque adds its own first-order error), the gear's breakaway, the sheave's tracking,
FMPy's limits, and that the .ssp is reproducible. It ends with "ssp: all checks passed".
"""
import os
import shutil
import sys
import tempfile
import time
import zipfile
import xml.etree.ElementTree as ET

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import drivetrain as dt  # noqa: E402  (the one description of the system's numbers)

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "osp": "http://opensimulationplatform.com/SSP/OSPAnnotations",
}
for _prefix, _uri in NS.items():
    # libcosim reads the SSD with boost's property tree: it matches these literal prefixes.
    ET.register_namespace(_prefix, _uri)

# The system. Parameters: drivetrain.py's (everything else keeps the FMUs' defaults); the clamp
# force is the start value of the CVT's input F_1, held since nothing is connected to it.
COMPONENTS = {
    "LossyGear": {
        "parameters": dt.GEAR,
        "inputs": ["tau_a", "tau_b"],
        "outputs": ["phi_a", "w_a", "phi_b", "w_b", "energy_loss", "mode"],
    },
    "VariableRatioCoupling": {
        "parameters": dt.COUPLING,
        "inputs": ["w_B", "w_F", "r"],
        "outputs": ["tau_B", "tau_F", "phi", "energy_loss"],
    },
    "CVT": {
        "parameters": {**dt.CVT, "F_1": dt.CLAMP},
        "inputs": ["tau_1", "tau_2", "F_1", "F_2"],
        "outputs": ["phi1", "w1", "phi2", "w2", "s1", "v1", "s2", "v2", "ds1_ds2", "ratio",
                    "energy_impact"],
    },
}
# (from, to, factor): the coupling's outputs are the torques the shafts apply to it, so the
# torques on the shafts are their negatives (as in drivetrain.py's loop).
CONNECTIONS = [
    (("LossyGear", "w_b"), ("VariableRatioCoupling", "w_B"), None),
    (("CVT", "w1"), ("VariableRatioCoupling", "w_F"), None),
    (("VariableRatioCoupling", "tau_B"), ("LossyGear", "tau_b"), -1.0),
    (("VariableRatioCoupling", "tau_F"), ("CVT", "tau_1"), -1.0),
]
# Inputs left to the importer (what drivetrain.py's master computes that is not an FMU).
BOUNDARY = {
    ("LossyGear", "tau_a"): "engine torque, drivetrain.engine_torque(t)",
    ("VariableRatioCoupling", "r"): "ratio command, drivetrain.ratio_command(t)",
    ("CVT", "tau_2"): "road load, drivetrain.road_torque(CVT.w2)",
    ("CVT", "F_2"): "sheave controller: -F_1 ds1_ds2 - PID(s2 - s2_ref(t)), "
                    "drivetrain.GAINS, drivetrain.s2_reference",
}
NAME = "drivetrain"
# Every component's inline parameter set has this one name: an SSP engine that applies the sets
# of one name, chosen at run time, then parameterizes every component (libcosim's named sets).
PARAMETER_SET = "drivetrain"


def q(prefix, tag):
    return f"{{{NS[prefix]}}}{tag}"


def fmt(value):
    return repr(float(value))


def variable_types(fmu_dir):
    """{(component, variable): 'Real' | 'Integer' | ...} from the FMUs' modelDescription.xml;
    also checks that every name of the description is a variable of its FMU."""
    from fmpy import read_model_description
    types = {}
    for name, c in COMPONENTS.items():
        md = read_model_description(os.path.join(fmu_dir, f"{name}.fmu"))
        fmu_types = {v.name: v.type for v in md.modelVariables}
        for var in [*c["parameters"], *c["inputs"], *c["outputs"]]:
            if var not in fmu_types:
                raise KeyError(f"{name}.fmu has no variable {var}")
            types[name, var] = fmu_types[var]
    return types


def ssd_text(types):
    """SystemStructure.ssd: deterministic text from COMPONENTS, CONNECTIONS and drivetrain.py
    (the FMUs give only the variables' types)."""
    root = ET.Element(q("ssd", "SystemStructureDescription"),
                      {"version": "1.0", "name": NAME, "generationTool": "examples/drivetrain/ssp.py",
                       "description": "engine -> LossyGear -> VariableRatioCoupling -> CVT -> road "
                                      "load, the FMU sub-network of examples/drivetrain/drivetrain.py"})
    boundary = "; ".join(f"{c}.{v}: {what}" for (c, v), what in BOUNDARY.items())
    system = ET.SubElement(root, q("ssd", "System"), {
        "name": NAME,
        "description": "Unconnected inputs, to be driven by the importer at every "
                       f"communication point (held over the step): {boundary}."})
    elements = ET.SubElement(system, q("ssd", "Elements"))
    for name, c in COMPONENTS.items():
        comp = ET.SubElement(elements, q("ssd", "Component"), {
            "name": name, "type": "application/x-fmu-sharedlibrary",
            "source": f"resources/{name}.fmu"})
        connectors = ET.SubElement(comp, q("ssd", "Connectors"))
        for kind in ("input", "output"):
            for var in c[kind + "s"]:
                con = ET.SubElement(connectors, q("ssd", "Connector"), {"name": var, "kind": kind})
                ET.SubElement(con, q("ssc", types[name, var]))
        if c["parameters"]:
            bindings = ET.SubElement(comp, q("ssd", "ParameterBindings"))
            binding = ET.SubElement(bindings, q("ssd", "ParameterBinding"))
            values = ET.SubElement(binding, q("ssd", "ParameterValues"))
            pset = ET.SubElement(values, q("ssv", "ParameterSet"),
                                 {"version": "1.0", "name": PARAMETER_SET})
            params = ET.SubElement(pset, q("ssv", "Parameters"))
            for var, value in c["parameters"].items():
                p = ET.SubElement(params, q("ssv", "Parameter"), {"name": var})
                if types[name, var] == "Integer":
                    ET.SubElement(p, q("ssv", "Integer"), {"value": str(int(value))})
                else:
                    ET.SubElement(p, q("ssv", "Real"), {"value": fmt(value)})
    connections = ET.SubElement(system, q("ssd", "Connections"))
    for (a, va), (b, vb), factor in CONNECTIONS:
        con = ET.SubElement(connections, q("ssd", "Connection"), {
            "startElement": a, "startConnector": va, "endElement": b, "endConnector": vb})
        if factor is not None:
            ET.SubElement(con, q("ssc", "LinearTransformation"),
                          {"factor": fmt(factor), "offset": "0.0"})
    experiment = ET.SubElement(root, q("ssd", "DefaultExperiment"),
                               {"startTime": "0.0", "stopTime": fmt(dt.STOP)})
    annotations = ET.SubElement(experiment, q("ssd", "Annotations"))
    osp = ET.SubElement(annotations, q("ssc", "Annotation"), {"type": "com.opensimulationplatform"})
    algorithm = ET.SubElement(osp, q("osp", "Algorithm"))
    ET.SubElement(algorithm, q("osp", "FixedStepAlgorithm"), {"baseStepSize": fmt(dt.MAIN_STEP)})
    ET.indent(root)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            + ET.tostring(root, encoding="unicode") + "\n")


def write_ssp(fmu_dir, path):
    """The .ssp: the SSD and the FMUs, with fixed timestamps (same inputs, same bytes)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    text = ssd_text(variable_types(fmu_dir))
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        def add(name, data):
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, data)
        add("SystemStructure.ssd", text.encode())
        for name in COMPONENTS:
            with open(os.path.join(fmu_dir, f"{name}.fmu"), "rb") as f:
                add(f"resources/{name}.fmu", f.read())
    os.replace(tmp, path)
    return text


def run_libcosim(ssp_path):
    """The SSP in OSP libcosim, with drivetrain.py's sources and sheave controller around it.

    Returns the same records as drivetrain.simulate, on the same grid t_k = k h."""
    from libcosimpy.CosimEnums import CosimVariableType
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimManipulator import CosimManipulator
    from libcosimpy.CosimObserver import CosimObserver
    from fmpy import read_model_description

    log_output_level(CosimLogLevel.ERROR)
    execution = CosimExecution.from_ssp_file(os.path.abspath(ssp_path))  # step: the SSD's
    override = CosimManipulator.create_override()
    execution.add_manipulator(override)
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer)
    index, refs, types = {}, {}, {}
    for name in COMPONENTS:
        i = execution.slave_index_from_instance_name(name)
        index[name] = i
        for v in execution.slave_variables(i):
            refs[name, v.name.decode()] = v.reference
            types[name, v.name.decode()] = CosimVariableType(v.type)

    def get(name, *variables):
        return observer.last_real_values(index[name], [refs[name, v] for v in variables])

    def get_int(name, variable):
        return observer.last_integer_values(index[name], [refs[name, variable]])[0]

    def override_inputs(values):
        for (name, var), value in values.items():
            if not override.slave_real_values(index[name], [refs[name, var]], [float(value)]):
                raise RuntimeError(f"libcosim refused {name}.{var} = {value}")

    # The energy bookkeeping needs the inertias: the gear's are the SSD's, the CVT's its
    # defaults (the SSD sets none); and libcosim initializes the FMUs at its first step, so
    # nothing is observable at t = 0 before that step's inputs must be given. Both come from
    # initializing each FMU of the package once in FMPy, with the SSD's parameter sets.
    initial, cvt_par = initial_values(ssp_path)
    j1, j2, m1, m2 = (cvt_par[k] for k in ("J1", "J2", "m1", "m2"))
    j_a, j_b = dt.GEAR["J_a"], dt.GEAR["J_b"]
    k_p = dt.COUPLING["k_p"]
    h = dt.MAIN_STEP  # the step the SSD gives libcosim (checked after the run)
    n = int(round(dt.STOP / h))
    kp_s, kd_s, ki_s = dt.GAINS
    clamp = COMPONENTS["CVT"]["parameters"]["F_1"]

    rec = {k: np.zeros(n + 1) for k in
           ["time", "w_a", "w_b", "w1", "w2", "s2", "mode", "work_engine", "work_road",
            "work_actuators", "stored", "dissipated", "residual"]}
    w_engine = w_road = w_act = 0.0
    integral = 0.0
    e0 = 0.0
    state0 = None
    for k in range(n + 1):
        t = k * h
        if k == 0:
            phi_a, w_a, phi_b, w_b, loss_gear, mode = (initial["LossyGear", v] for v in (
                "phi_a", "w_a", "phi_b", "w_b", "energy_loss", "mode"))
            phi, loss_coupling = (initial["VariableRatioCoupling", v] for v in ("phi", "energy_loss"))
            phi1, w1, phi2, w2, s1, v1, s2, v2, ds1_ds2, impact = (initial["CVT", v] for v in (
                "phi1", "w1", "phi2", "w2", "s1", "v1", "s2", "v2", "ds1_ds2", "energy_impact"))
        else:
            phi_a, w_a, phi_b, w_b, loss_gear = get("LossyGear", "phi_a", "w_a", "phi_b", "w_b",
                                                    "energy_loss")
            mode = get_int("LossyGear", "mode")
            phi, loss_coupling = get("VariableRatioCoupling", "phi", "energy_loss")
            phi1, w1, phi2, w2, s1, v1, s2, v2, ds1_ds2, impact = get(
                "CVT", "phi1", "w1", "phi2", "w2", "s1", "v1", "s2", "v2", "ds1_ds2",
                "energy_impact")
            # The exact work of the held source inputs over the step just taken.
            w_engine += tau_e * (phi_a - state0["phi_a"])
            w_road += tau_road * (phi2 - state0["phi2"])
            w_act += clamp * (s1 - state0["s1"]) + f_2 * (s2 - state0["s2"])
        e = (0.5 * (j_a * w_a**2 + j_b * w_b**2) + 0.5 * k_p * phi**2
             + 0.5 * (j1 * w1**2 + j2 * w2**2 + m1 * v1**2 + m2 * v2**2))
        if k == 0:
            e0 = e
        diss = loss_gear + loss_coupling + impact
        work = w_engine + w_road + w_act
        for key, value in dict(time=t, w_a=w_a, w_b=w_b, w1=w1, w2=w2, s2=s2, mode=mode,
                               work_engine=w_engine, work_road=w_road, work_actuators=w_act,
                               stored=e - e0, dissipated=diss,
                               residual=work - (e - e0) - diss).items():
            rec[key][k] = value
        if k == n:
            break
        tau_e, tau_road = dt.engine_torque(t), dt.road_torque(w2)
        err = s2 - dt.s2_reference(t)
        f_2 = -clamp * ds1_ds2 - kp_s * err - kd_s * v2 - ki_s * integral
        override_inputs({("LossyGear", "tau_a"): tau_e,
                         ("VariableRatioCoupling", "r"): dt.ratio_command(t),
                         ("CVT", "tau_2"): tau_road,
                         ("CVT", "F_2"): f_2})
        state0 = dict(phi_a=phi_a, phi2=phi2, s1=s1, s2=s2)
        if not execution.step():
            raise RuntimeError(f"libcosim step at t = {t} failed")
        integral += err * h
    end = execution.status().current_time
    if end != round(dt.STOP * 1e9):
        raise RuntimeError(f"libcosim ended at {end} ns after {n} steps: not the SSD's 1 ms step")
    return rec


def initial_values(ssp_path):
    """Each component of the package initialized alone in FMPy with the parameter set its SSD
    binds (read back with fmpy.ssp.ssd.read_ssd): its outputs at t = 0 (the connected inputs at
    their start values, 0: the coupling's torques at rest), and the CVT's Real parameters."""
    from fmpy.ssp.ssd import read_ssd
    ssd = read_ssd(ssp_path)  # validates SystemStructure.ssd against the SSP 1.0 schema
    out, cvt_par = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        with zipfile.ZipFile(ssp_path) as z:
            z.extractall(tmp)
        for comp in ssd.system.elements:
            params = {}
            for binding in comp.parameterBindings:
                for pset in binding.parameterValues:
                    params.update({p.name: float(p.value) for p in pset.parameters})
            fmu_dir = os.path.join(tmp, os.path.dirname(comp.source))
            slave = dt.Slave(fmu_dir, comp.name, params, dt.STOP)
            for var in COMPONENTS[comp.name]["outputs"]:
                if slave.types[var] == "Integer":
                    out[comp.name, var] = slave.fmu.getInteger([slave.vr[var]])[0]
                else:
                    out[comp.name, var] = slave.get(var)[0]
            if comp.name == "CVT":
                cvt_par = {v.name: slave.get(v.name)[0] for v in slave.md.modelVariables
                           if v.type == "Real" and v.causality == "parameter"}
            slave.close()
    return out, cvt_par


def fmpy_limits(ssp_path):
    """Why FMPy 0.3.32's fmpy.ssp.simulation.simulate_ssp cannot run this system, each reason
    shown on this package (its source: fmpy/ssp/simulation.py and ssd.py). Returns the reasons."""
    import inspect
    from fmpy.ssp import simulation
    from fmpy.ssp.ssd import read_ssd
    ssd = read_ssd(ssp_path)  # parses, and validates against the SSP 1.0 schema: that works
    reasons = []
    # 1. Connections: read_ssd looks for ssd:LinearTransformation, but SSP 1.0 puts it in the
    #    ssc namespace (ssc:LinearTransformation, the one libcosim reads), and simulate_ssp copies
    #    every value unchanged anyway (end.value = start.value): the coupling's reaction torques
    #    would reach the shafts with the wrong sign.
    flipped = [c for c in ssd.system.connections
               if (c.startConnector, c.endConnector) in (("tau_B", "tau_b"), ("tau_F", "tau_1"))]
    assert len(flipped) == 2
    src = inspect.getsource(simulation.simulate_ssp)
    if all(getattr(c, "linearTransformation", None) is None for c in flipped) or \
            "linearTransformation" not in src:
        reasons.append("connections: LinearTransformation (factor -1 on tau_B -> tau_b and "
                       "tau_F -> tau_1) is not read from ssc: and never applied by simulate_ssp")
    # 2. Parameters: the ParameterBindings are parsed but simulate_ssp applies only its own
    #    parameter_set argument (names 'Component.variable').
    if "parameterBindings" not in inspect.getsource(simulation):
        reasons.append("parameters: the components' ParameterBindings are parsed but not applied "
                       "(only simulate_ssp's parameter_set argument is)")
    # 3. The boundary: simulate_ssp's inputs are functions of time, input[name](time), given to
    #    system connectors; the road load and the sheave controller feed back CVT outputs.
    if "input[connector.name](time)" in src:
        reasons.append("boundary: system inputs are functions of time only (input[name](time)), "
                       "so the road load (of w2) and the sheave controller (of s2, v2, ds1_ds2) "
                       "cannot be closed around the system")
    # 4. An unconnected input connector (the boundary inputs here) makes get_connections reuse
    #    the previous connector's source (a stale local variable) or raise UnboundLocalError;
    #    and every declared input is overwritten before every step with its connector value,
    #    which starts at 0.0 (so CVT.F_1's start value of 500 N would be replaced by 0).
    try:
        from fmpy.ssp.ssd import get_connections
        from fmpy.ssp.simulation import add_path
        add_path(ssd.system)
        cons = get_connections(ssd.system)
        wired = {(b.parent.name, b.name): (a.parent.name, a.name) for a, b in cons}
        bogus = {k: v for k, v in wired.items() if k in BOUNDARY}
        if bogus:
            reasons.append("unconnected inputs: get_connections wires them to a stale source: "
                           + ", ".join(f"{a}.{b} <- {c}.{d}" for (a, b), (c, d) in bogus.items()))
    except (UnboundLocalError, KeyError) as e:
        reasons.append(f"unconnected inputs: get_connections fails ({type(e).__name__}: {e})")
    return reasons


def jacobi_master(fmu_dir, h=dt.MAIN_STEP):
    """drivetrain.py's loop with libcosim's order of exchange, to explain its deviation: every
    FMU steps with the inputs it was given, then its outputs go to the connected inputs, so the
    coupling's torques are read after its step, computed from the speeds of the previous
    communication point (drivetrain.py sets the new speeds before reading them: the coupling
    has direct feedthrough). Same FMUs, parameters, sources and controller; speeds only."""
    gear = dt.Slave(fmu_dir, "LossyGear", dt.GEAR, dt.STOP)
    coupling = dt.Slave(fmu_dir, "VariableRatioCoupling", dt.COUPLING, dt.STOP)
    cvt = dt.Slave(fmu_dir, "CVT", dt.CVT, dt.STOP)
    n, integral = int(round(dt.STOP / h)), 0.0
    kp_s, kd_s, ki_s = dt.GAINS
    rec = {k: np.zeros(n + 1) for k in ("w_a", "w_b", "w1", "w2", "s2")}
    # Initialization: the connections are evaluated once (libcosim does so in init mode).
    coupling.set("w_B", gear.get("w_b")[0])
    coupling.set("w_F", cvt.get("w1")[0])
    tau_b, tau_f = coupling.get("tau_B", "tau_F")
    for k in range(n + 1):
        t = k * h
        w_a, w_b = gear.get("w_a", "w_b")
        w1, w2, s2, v2, ds1_ds2 = cvt.get("w1", "w2", "s2", "v2", "ds1_ds2")
        for key, value in dict(w_a=w_a, w_b=w_b, w1=w1, w2=w2, s2=s2).items():
            rec[key][k] = value
        if k == n:
            break
        err = s2 - dt.s2_reference(t)
        coupling.set("r", dt.ratio_command(t))
        gear.set("tau_a", dt.engine_torque(t))
        gear.set("tau_b", -tau_b)
        cvt.set("tau_1", -tau_f)
        cvt.set("tau_2", dt.road_torque(w2))
        cvt.set("F_1", dt.CLAMP)
        cvt.set("F_2", -dt.CLAMP * ds1_ds2 - kp_s * err - kd_s * v2 - ki_s * integral)
        for slave in (gear, coupling, cvt):
            slave.fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        integral += err * h
        tau_b, tau_f = coupling.get("tau_B", "tau_F")  # before its speeds are updated
        coupling.set("w_B", gear.get("w_b")[0])
        coupling.set("w_F", cvt.get("w1")[0])
    for slave in (gear, coupling, cvt):
        slave.close()
    return rec


SIGNALS = ["w_a", "w_b", "w1", "w2", "s2", "work_engine", "work_road", "stored", "dissipated"]


def compare(ssp_run, cs1, cs05):
    """max |SSP - CS(1 ms)| against the CS(1 ms) coupling error estimate
    2 max |CS(1 ms) - CS(0.5 ms)| (on the 1 ms grid), per signal."""
    rows = []
    for name in SIGNALS:
        dev = float(np.max(np.abs(ssp_run[name] - cs1[name])))
        est = 2.0 * float(np.max(np.abs(cs1[name] - cs05[name][::2])))
        rows.append((name, dev, est))
    return rows


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    fmu_dir = os.path.abspath(args[0] if args else os.path.join(HERE, "../../target/fmu"))
    out = os.path.join(os.path.dirname(fmu_dir), "ssp", f"{NAME}.ssp")
    if "--out" in argv:
        out = os.path.abspath(argv[argv.index("--out") + 1])
    cpu0, wall0 = time.process_time(), time.time()
    text = write_ssp(fmu_dir, out)
    with open(os.path.join(HERE, "SystemStructure.ssd"), "w") as f:
        f.write(text)
    print(f"wrote {out} ({os.path.getsize(out)} bytes) and examples/drivetrain/SystemStructure.ssd")

    run = run_libcosim(out)
    print(f"libcosim: {len(run['time']) - 1} steps of {dt.MAIN_STEP * 1e3:g} ms, final w2 "
          f"{run['w2'][-1]:.6f} rad/s, max |energy residual| {np.max(np.abs(run['residual'])):.3e} J")
    reasons = fmpy_limits(out)
    print("FMPy 0.3.32 fmpy.ssp: read_ssd validates and parses the package; simulate_ssp cannot "
          "run it:")
    for r in reasons:
        print("  -", r)
    if "--check" not in argv:
        return 0

    cs1 = dt.simulate(fmu_dir, dt.MAIN_STEP)
    cs05 = dt.simulate(fmu_dir, dt.MAIN_STEP / 2)
    rows = compare(run, cs1, cs05)
    print(f"{'signal':12s} {'max|libcosim-CS(1ms)|':>22s} {'2 max|CS(1ms)-CS(0.5ms)|':>25s} ratio")
    for name, dev, est in rows:
        print(f"{name:12s} {dev:22.3e} {est:25.3e} {dev / est:5.2f}")
    failures = []
    # 0. One parameter-set name: an engine that applies the sets named PARAMETER_SET reaches
    #    every component that has parameters (read back from the package, schema-validated).
    from fmpy.ssp.ssd import read_ssd
    named = {c.name: [p.name for b in c.parameterBindings for ps in b.parameterValues
                      for p in ps.parameters if ps.name == PARAMETER_SET]
             for c in read_ssd(out).system.elements}
    for name, c in COMPONENTS.items():
        if sorted(named.get(name, [])) != sorted(c["parameters"]):
            failures.append(f"{name}: the parameter set '{PARAMETER_SET}' sets "
                            f"{named.get(name)} instead of {sorted(c['parameters'])}")
    # 1. The SSP system run by libcosim is drivetrain.py's system: it stays within the 1 ms
    #    co-simulation's coupling error of the master loop, signal by signal.
    for name, dev, est in rows:
        if not dev <= est:
            failures.append(f"{name}: libcosim deviates {dev:.3e} > coupling error {est:.3e}")
    #    And what separates them is the order of exchange alone: the master loop run in
    #    libcosim's order gives libcosim's results to rounding (1e-9 of each signal's range).
    jac = jacobi_master(fmu_dir)
    for name in ("w_a", "w_b", "w1", "w2", "s2"):
        dev = float(np.max(np.abs(run[name] - jac[name])))
        scale = float(np.max(np.abs(cs1[name])))
        print(f"{name:12s} max |libcosim - master loop in libcosim's order| = {dev:.1e}")
        if not dev <= 1e-9 * scale:
            failures.append(f"{name}: libcosim deviates {dev:.3e} from the Jacobi master loop")
    # 2. Its own energy residual is a coupling error of the same order as the master loop's
    #    (results.json: 2.23e-3 J at 1 ms, 1.4e-5 of the engine's work).
    ratio = np.max(np.abs(run["residual"])) / np.max(np.abs(cs1["residual"]))
    print(f"max |energy residual|: libcosim / CS(1 ms) = {ratio:.3f}")
    if not 0.25 < ratio < 4.0:
        failures.append(f"energy residual ratio {ratio:.3f} outside (0.25, 4)")
    # 3. The same events: the gear starts stuck, ends forward, switches within a step of the
    #    master loop's switch; the sheave follows its reference within 0.2 mm.
    switch = [float(r["time"][np.argmax(r["mode"] == 1)]) for r in (run, cs1)]
    if not (run["mode"][0] == 0 and run["mode"][-1] == 1 and abs(switch[0] - switch[1]) <= 1.5e-3):
        failures.append(f"gear mode: starts {run['mode'][0]}, ends {run['mode'][-1]}, "
                        f"switches at {switch[0]} s (master loop {switch[1]} s)")
    s2_err = np.max(np.abs(run["s2"] - np.array([dt.s2_reference(t) for t in run["time"]])))
    if not s2_err < 2e-4:
        failures.append(f"sheave off its reference by {s2_err:.2e} m")
    # 4. FMPy's limits are as documented (if a new FMPy lifts them, this says so).
    if len(reasons) < 3:
        failures.append(f"FMPy's SSP limits changed: {reasons}; try running the SSP in FMPy")
    # 5. The package is deterministic: written again, the same bytes.
    again = out + ".again"
    write_ssp(fmu_dir, again)
    with open(out, "rb") as f1, open(again, "rb") as f2:
        if f1.read() != f2.read():
            failures.append("the .ssp is not reproducible")
    os.remove(again)
    print(f"CPU {time.process_time() - cpu0:.1f} s, wall {time.time() - wall0:.1f} s")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print("ssp: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
