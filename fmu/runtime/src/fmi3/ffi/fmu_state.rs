//! The C ABI of FMU states: get, set, free, serialize and deserialize, in the format and with
//! the checks of the FMI 2.0 ABI ([`crate::instance::snapshot`], [`crate::instance::restore`]). A
//! state names the FMI version it was taken in: FMI 2.0 and FMI 3.0 states are not
//! interchangeable (their state machines differ), and one of the other is refused by name.

use super::*;
use crate::abi::{bytes_of, free, serialize_into, store};

/// # Safety
/// FMI 3.0 pointer rules.
pub unsafe fn get_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi3GetFMUState", allowed::ANY_BUT_FATAL, |inst| {
        store(state, inst.core.snapshot())?;
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules; `state` came from this model's fmi3GetFMUState or
/// fmi3DeserializeFMUState.
pub unsafe fn set_fmu_state<M: Model>(c: *mut c_void, state: *mut c_void) -> Status {
    call::<M>(c, "fmi3SetFMUState", allowed::ANY_BUT_FATAL, |inst| {
        inst.core.restore(bytes_of(state)?)?;
        Ok(OK)
    })
}

/// # Safety
/// As [`set_fmu_state`].
pub unsafe fn free_fmu_state<M: Model>(c: *mut c_void, state: *mut *mut c_void) -> Status {
    call::<M>(c, "fmi3FreeFMUState", allowed::ANY_BUT_FATAL, |_| {
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
        "fmi3SerializedFMUStateSize",
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
    bytes: *mut u8,
    size: usize,
) -> Status {
    call::<M>(c, "fmi3SerializeFMUState", allowed::ANY_BUT_FATAL, |_| {
        serialize_into(state, bytes, size)?;
        Ok(OK)
    })
}

/// # Safety
/// FMI 3.0 pointer rules; `bytes` holds `size` bytes.
pub unsafe fn deserialize_fmu_state<M: Model>(
    c: *mut c_void,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    call::<M>(
        c,
        "fmi3DeserializeFMUState",
        allowed::ANY_BUT_FATAL,
        |inst| {
            let src = slice(bytes, size, "serializedState")?;
            // Checked against this instance's model now, so a corrupt state fails here.
            inst.core.check_snapshot(src)?;
            store(state, src.to_vec())?;
            Ok(OK)
        },
    )
}
