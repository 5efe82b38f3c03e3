//! The C ABI of FMU states: get, set, free, serialize and deserialize, in boxes both versions
//! hand out ([`crate::abi`]).

use super::*;
use crate::abi::{bytes_of, free, serialize_into, store};

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
