//! The C ABI of FMU states: get, set, free, serialize and deserialize. The FMI 3.0 ABI hands
//! out the same boxes through the helpers here.

use super::*;

/// An FMU state handed to the importer: the serialized bytes.
struct FmuState {
    bytes: Vec<u8>,
}

/// Stores `bytes` in the state `slot` points at (overwritten, as the standard allows), or in a
/// new one.
pub(crate) unsafe fn store(slot: *mut *mut c_void, bytes: Vec<u8>) -> Result<(), String> {
    let slot = out(slot, "FMUstate")?;
    match (*slot as *mut FmuState).as_mut() {
        Some(existing) => existing.bytes = bytes,
        None => *slot = Box::into_raw(Box::new(FmuState { bytes })) as *mut c_void,
    }
    Ok(())
}

/// The bytes of a state made by [`store`].
pub(crate) unsafe fn bytes_of<'a>(state: *mut c_void) -> Result<&'a [u8], String> {
    (state as *const FmuState)
        .as_ref()
        .map(|s| s.bytes.as_slice())
        .ok_or_else(|| "FMUstate is NULL".into())
}

/// Frees the state `slot` points at, if any, and clears the slot.
pub(crate) unsafe fn free(slot: *mut *mut c_void) {
    if let Some(slot) = slot.as_mut() {
        if !slot.is_null() {
            drop(Box::from_raw(*slot as *mut FmuState));
            *slot = std::ptr::null_mut();
        }
    }
}

/// Copies the bytes of `state` into the importer's buffer of `size` bytes.
pub(crate) unsafe fn serialize_into(
    state: *mut c_void,
    bytes: *mut u8,
    size: usize,
) -> Result<(), String> {
    let src = bytes_of(state)?;
    if size < src.len() {
        return Err(format!(
            "buffer of {size} bytes is smaller than the state ({})",
            src.len()
        ));
    }
    slice_mut(bytes, src.len(), "serializedState")?.copy_from_slice(src);
    Ok(())
}

/// # Safety
/// FMI 2.0 pointer rules.
pub unsafe fn get_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2GetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        store(state, inst.snapshot())?;
        Ok(OK)
    })
}

/// # Safety
/// FMI 2.0 pointer rules; `state` was made by this model's fmi2GetFMUstate or
/// fmi2DeSerializeFMUstate.
pub unsafe fn set_fmu_state<M: Model>(c: *mut c_void, state: *mut c_void) -> Status {
    call::<M>(c, "fmi2SetFMUstate", allowed::ANY_BUT_FATAL, |inst| {
        inst.restore(bytes_of(state)?)?;
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn free_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi2FreeFMUstate", allowed::ANY_BUT_FATAL, |_| {
        free(state);
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
            *out(size, "size")? = bytes_of(state)?.len();
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
        serialize_into(state, bytes as *mut u8, size)?;
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
            store(state, src.to_vec())?;
            Ok(OK)
        },
    )
}
