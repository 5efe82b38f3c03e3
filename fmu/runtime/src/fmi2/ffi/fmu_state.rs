//! The C ABI of FMU states: get, set, free, serialize and deserialize.

use super::*;

/// An FMU state handed to the importer: the serialized bytes.
struct FmuState {
    bytes: Vec<u8>,
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2GetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        let slot = out(state, "FMUstate")?;
        let bytes = inst.snapshot();
        match (*slot as *mut FmuState).as_mut() {
            // A state passed in is overwritten, as the standard allows.
            Some(existing) => existing.bytes = bytes,
            None => *slot = Box::into_raw(Box::new(FmuState { bytes })) as *mut c_void,
        }
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules; `state` was made by this model's fmi2GetFMUstate or
/// fmi2DeSerializeFMUstate.
pub unsafe fn set_fmu_state<M: Model>(c: *mut c_void, state: *mut c_void) -> Status {
    call::<M>(c, "fmi2SetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        let s = (state as *const FmuState)
            .as_ref()
            .ok_or("FMUstate is NULL")?;
        inst.restore(&s.bytes)?;
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn free_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2FreeFMUstate", allowed::ANY_BUT_FATAL, |_| {
        if let Some(slot) = state.as_mut() {
            if !slot.is_null() {
                drop(Box::from_raw(*slot as *mut FmuState));
                *slot = std::ptr::null_mut();
            }
        }
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn serialized_fmu_state_size<M: Model>(
    c: *mut c_void,
    state: *mut c_void,
    size: *mut usize,
) -> Status {
    call::<M>(
        c,
        "fmi2SerializedFMUstateSize",
        allowed::ANY_BUT_FATAL,
        |_| {
            let s = (state as *const FmuState)
                .as_ref()
                .ok_or("FMUstate is NULL")?;
            *out(size, "size")? = s.bytes.len();
            Ok(OK)
        },
    )
}

/// # Safety
/// As [`set_fmu_state`]; `bytes` holds `size` bytes.
pub unsafe fn serialize_fmu_state<M: Model>(
    c: *mut c_void,
    state: *mut c_void,
    bytes: *mut c_char,
    size: usize,
) -> Status {
    call::<M>(c, "fmi2SerializeFMUstate", allowed::ANY_BUT_FATAL, |_| {
        let s = (state as *const FmuState)
            .as_ref()
            .ok_or("FMUstate is NULL")?;
        if size < s.bytes.len() {
            return Err(format!(
                "buffer of {size} bytes is smaller than the state ({})",
                s.bytes.len()
            ));
        }
        let dst = slice_mut(bytes as *mut u8, s.bytes.len(), "serializedState")?;
        dst.copy_from_slice(&s.bytes);
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules; `bytes` holds `size` bytes.
pub unsafe fn deserialize_fmu_state<M: Model>(
    c: *mut c_void,
    bytes: *const c_char,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    call::<M>(
        c,
        "fmi2DeSerializeFMUstate",
        allowed::ANY_BUT_FATAL,
        |inst| {
            let src = slice(bytes as *const u8, size, "serializedState")?;
            // Check it against this instance's model now, so a corrupt state fails here.
            inst.check_snapshot(src)?;
            let slot = out(state, "FMUstate")?;
            match (*slot as *mut FmuState).as_mut() {
                Some(existing) => existing.bytes = src.to_vec(),
                None => {
                    *slot = Box::into_raw(Box::new(FmuState {
                        bytes: src.to_vec(),
                    })) as *mut c_void
                }
            }
            Ok(OK)
        },
    )
}
