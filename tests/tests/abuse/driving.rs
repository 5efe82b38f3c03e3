//! Instances as the tests drive them: an FMU's Real variables, a started instance, and a run's
//! outputs as bits.

use super::*;

pub(crate) fn reals(fmu: &Fmu, causality: Causality) -> Vec<(String, u32)> {
    fmu.md
        .model_variables
        .iter()
        .filter(|v| v.causality == causality && matches!(v.kind, VariableType::Real { .. }))
        .map(|v| (v.name.clone(), v.value_reference))
        .collect()
}

pub(crate) fn started(fmu: &Fmu) -> Instance<'_> {
    let inst = fmu.instantiate("abuse");
    inst.initialize(0.0, Some(10.0), &[]);
    inst
}
/// Steps k in `steps` (t = k ms) with inputs of variant `i`, and returns every Real output
/// after every step, as bits. Every status must be OK.
pub(crate) fn drive(
    inst: &Instance,
    inputs: &[(String, u32)],
    outputs: &[(String, u32)],
    steps: std::ops::Range<usize>,
    i: usize,
) -> Vec<u64> {
    let name = &inst.fmu.md.model_name;
    let shift = 0.1 * i as f64;
    let mut bits = Vec::new();
    for k in steps {
        let t = k as f64 * 1e-3;
        for (j, (n, vr)) in inputs.iter().enumerate() {
            // Ratios must stay positive; inputs with a declared minimum (a brake coefficient)
            // stay above it; other inputs swing both ways.
            let swing = (1.0 + shift) * ((j + 1 + i) as f64 * 3.0 * t).sin();
            let min = inst
                .fmu
                .md
                .model_variables
                .iter()
                .find(|v| &v.name == n)
                .and_then(|v| match v.kind {
                    model_description::VariableType::Real { min, .. } => min,
                    _ => None,
                });
            let u = if n == "r" {
                1.0 + 0.5 * t + shift
            } else if let Some(min) = min {
                min + swing.abs()
            } else {
                swing
            };
            assert_eq!(inst.set_real(&[*vr], &[u]), OK, "{name} {n}");
        }
        assert_eq!(inst.do_step(t, 1e-3), OK, "{name}: {}", inst.log_text());
        for (n, vr) in outputs {
            let mut v = [0.0];
            assert_eq!(inst.get_real(&[*vr], &mut v), OK, "{name} {n}");
            bits.push(v[0].to_bits());
        }
    }
    bits
}
