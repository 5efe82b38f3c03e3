//! fmi3Get/Set of the variables: Float64 and Int32, the read-only extra variables (time, the
//! event indicators), and the types these models have none of.

use super::*;

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_float64<M: Model>(
    c: *mut c_void,
    vr: *const ValueReference,
    n: usize,
    v: *mut f64,
    n_values: usize,
) -> Status {
    call::<M>(c, "fmi3GetFloat64", allowed::GET, |inst| {
        scalars(n, n_values)?;
        let (vrs, values) = (slice(vr, n, "valueReferences")?, slice_mut(v, n, "values")?);
        inst.intermediate_access(Use::Get, vrs)?;
        let n_vars = inst.core.vars.len();
        if vrs.iter().all(|vr| (*vr as usize) < n_vars) {
            return inst.core.get_real(vrs, values);
        }
        // The time or an event indicator among them: one at a time, the indicators evaluated
        // once.
        let mut status = OK;
        let mut z: Option<Vec<f64>> = None;
        for (vr, value) in vrs.iter().zip(values.iter_mut()) {
            match extra::<M>(*vr, n_vars) {
                Some(Extra::Time) => *value = inst.core.time,
                Some(Extra::Indicator(i)) => {
                    if z.is_none() {
                        inst.core.refresh()?;
                        let mut all = vec![0.0; M::EVENT_INDICATORS];
                        status = status.max(inst.core.get_event_indicators(&mut all)?);
                        z = Some(all);
                    }
                    *value = z.as_ref().map_or(0.0, |z| z[i]);
                }
                None => {
                    status = status.max(inst.core.get_real(&[*vr], std::slice::from_mut(value))?)
                }
            }
        }
        Ok(status)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_int32<M: Model>(
    c: *mut c_void,
    vr: *const ValueReference,
    n: usize,
    v: *mut i32,
    n_values: usize,
) -> Status {
    call::<M>(c, "fmi3GetInt32", allowed::GET, |inst| {
        scalars(n, n_values)?;
        let vrs = slice(vr, n, "valueReferences")?;
        inst.intermediate_access(Use::Get, vrs)?;
        inst.core.get_integer(vrs, slice_mut(v, n, "values")?)
    })
}

/// The time and the event indicators are read-only; the rest is the core's check.
fn check_settable<M: Model>(inst: &Instance3<M>, vrs: &[ValueReference]) -> Result<(), String> {
    let n_vars = inst.core.vars.len();
    for vr in vrs {
        match extra::<M>(*vr, n_vars) {
            Some(Extra::Time) => {
                return Err(format!(
                    "time (vr {vr}) is the independent variable and cannot be set"
                ))
            }
            Some(Extra::Indicator(i)) => {
                return Err(format!(
                    "{} (vr {vr}) is a calculated local variable and cannot be set",
                    indicator_name(i)
                ))
            }
            None => {}
        }
    }
    Ok(())
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn set_float64<M: Model>(
    c: *mut c_void,
    vr: *const ValueReference,
    n: usize,
    v: *const f64,
    n_values: usize,
) -> Status {
    call::<M>(c, "fmi3SetFloat64", allowed::SET, |inst| {
        scalars(n, n_values)?;
        let vrs = slice(vr, n, "valueReferences")?;
        check_settable(inst, vrs)?;
        inst.intermediate_access(Use::Set, vrs)?;
        let status = inst.core.set_real(vrs, slice(v, n, "values")?)?;
        inst.intermediate_set_made();
        Ok(status)
    })
}

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn set_int32<M: Model>(
    c: *mut c_void,
    vr: *const ValueReference,
    n: usize,
    v: *const i32,
    n_values: usize,
) -> Status {
    call::<M>(c, "fmi3SetInt32", allowed::SET, |inst| {
        scalars(n, n_values)?;
        let vrs = slice(vr, n, "valueReferences")?;
        check_settable(inst, vrs)?;
        inst.intermediate_access(Use::Set, vrs)?;
        inst.core.set_integer(vrs, slice(v, n, "values")?)
    })
}

/// Getters and setters of the types these models have no variable of: any value reference is
/// of another type.
pub(super) unsafe fn no_such_type<M: Model>(
    c: *mut c_void,
    function: &str,
    states: &[FmiState],
    vr: *const ValueReference,
    n: usize,
) -> Status {
    call::<M>(c, function, states, |_| {
        call::no_such_type(slice(vr, n, "valueReferences")?, "Float64 and Int32")
    })
}
