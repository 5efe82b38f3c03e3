//! What both C ABI layers share below the instance core: the importer's pointers as slices and
//! references, checked for NULL, and the boxes FMU states are handed out in (the same format in
//! both versions; a state names its version, [`crate::instance::snapshot`]).

use crate::describe;
use crate::instance::Instance;
use crate::model::Model;
use std::ffi::{c_char, c_void, CStr};

/// A directional derivative answered at once, ahead of the call's guard
/// ([`Instance::directional_at_once`], which cannot panic): whether it was. NULL pointers, and
/// everything else, take the full path, which names what is wrong.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn directional_at_once<M: Model>(
    inst: &mut Instance<M>,
    unknowns: *const u32,
    n_unknowns: usize,
    knowns: *const u32,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> bool {
    // A NULL pointer, even with a length of 0, takes the full path.
    if lowest(unknowns, knowns, seed, sensitivity) == 0 {
        return false;
    }
    inst.directional_at_once(
        std::slice::from_raw_parts(unknowns, n_unknowns),
        std::slice::from_raw_parts(knowns, n_knowns),
        std::slice::from_raw_parts(seed, n_knowns),
        std::slice::from_raw_parts_mut(sensitivity, n_unknowns),
    )
}

/// [`Instance::swept_at_once`]: whether it answered. A NULL pointer takes the full path.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn swept_at_once<M: Model>(
    inst: &Instance<M>,
    unknowns: *const u32,
    n_unknowns: usize,
    knowns: *const u32,
    n_knowns: usize,
    seed: *const f64,
    sensitivity: *mut f64,
) -> bool {
    // A first call at a point leaves at once.
    if !inst.swept_here() || lowest(unknowns, knowns, seed, sensitivity) == 0 {
        return false;
    }
    inst.swept_at_once(
        std::slice::from_raw_parts(unknowns, n_unknowns),
        std::slice::from_raw_parts(knowns, n_knowns),
        std::slice::from_raw_parts(seed, n_knowns),
        std::slice::from_raw_parts_mut(sensitivity, n_unknowns),
    )
}

/// The lowest of a derivative call's four addresses: 0 if any is NULL (one branch for the four
/// checks, and fewer instructions than LLVM makes of four comparisons).
#[inline(always)]
fn lowest(unknowns: *const u32, knowns: *const u32, seed: *const f64, out: *mut f64) -> usize {
    [knowns as usize, seed as usize, out as usize]
        .into_iter()
        .fold(unknowns as usize, usize::min)
}

/// A pointer and a length from the importer as a slice; `n == 0` needs no pointer.
pub(crate) unsafe fn slice<'a, T>(ptr: *const T, n: usize, what: &str) -> Result<&'a [T], String> {
    slice_if(ptr, n).ok_or_else(|| format!("{what} is NULL with a length of {n}"))
}

pub(crate) unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    n: usize,
    what: &str,
) -> Result<&'a mut [T], String> {
    slice_mut_if(ptr, n).ok_or_else(|| format!("{what} is NULL with a length of {n}"))
}

/// [`slice`] without the reason it is not one.
#[inline(always)]
pub(crate) unsafe fn slice_if<'a, T>(ptr: *const T, n: usize) -> Option<&'a [T]> {
    match n {
        0 => Some(&[]),
        _ => (!ptr.is_null()).then(|| std::slice::from_raw_parts(ptr, n)),
    }
}

/// [`slice_mut`] without the reason it is not one.
#[inline(always)]
pub(crate) unsafe fn slice_mut_if<'a, T>(ptr: *mut T, n: usize) -> Option<&'a mut [T]> {
    match n {
        0 => Some(&mut []),
        _ => (!ptr.is_null()).then(|| std::slice::from_raw_parts_mut(ptr, n)),
    }
}

pub(crate) unsafe fn out<'a, T>(ptr: *mut T, what: &str) -> Result<&'a mut T, String> {
    ptr.as_mut().ok_or_else(|| format!("{what} is NULL"))
}

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

/// A string from the importer (NULL: none).
pub(crate) unsafe fn text(p: *const c_char) -> Option<String> {
    p.as_ref()
        .map(|_| CStr::from_ptr(p).to_string_lossy().into_owned())
}

/// What instantiation checks in both versions: an instance name, and the token of this model's
/// description (`what`: FMI 2.0's fmuGUID, FMI 3.0's instantiationToken).
pub(crate) fn check_instantiation<M: Model>(
    name: &str,
    token: Option<String>,
    what: &str,
) -> Result<(), String> {
    if name.is_empty() {
        return Err("instanceName is NULL or empty".into());
    }
    let expected = describe::guid::<M>();
    let given = token.ok_or_else(|| format!("{what} is NULL"))?;
    if given != expected {
        return Err(format!("{what} {given} does not match {expected}"));
    }
    Ok(())
}
