//! Serialized FMU states edited as a tool or an attacker could: values changed and the
//! checksum made right again. The layout is the runtime's (`fmu/runtime/src/fmi2/snapshot.rs`):
//! magic, version, GUID, FMI state, six `f64`s, then the values in value-reference order, the
//! input derivatives, and an FNV-1a 64 checksum of everything before it.

/// FNV-1a 64, the checksum of a serialized state.
pub fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

/// Where the value of value reference 0 starts, and how many values there are.
fn values(bytes: &[u8]) -> (usize, usize) {
    let guid_len = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes")) as usize;
    let count_at = 16 + guid_len + 1 + 6 * 8;
    let n = u32::from_le_bytes(bytes[count_at..count_at + 4].try_into().expect("4 bytes"));
    (count_at + 4, n as usize)
}

/// The value a state holds for value reference `vr`.
pub fn value(bytes: &[u8], vr: u32) -> f64 {
    let (at, n) = values(bytes);
    assert!(
        (vr as usize) < n,
        "value reference {vr} beyond the state's {n} values"
    );
    let i = at + 8 * vr as usize;
    f64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"))
}

/// The state with the given values changed and a correct checksum.
pub fn crafted(bytes: &[u8], changes: &[(u32, f64)]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    let (at, n) = values(&b);
    for &(vr, x) in changes {
        assert!(
            (vr as usize) < n,
            "value reference {vr} beyond the state's {n} values"
        );
        let i = at + 8 * vr as usize;
        b[i..i + 8].copy_from_slice(&x.to_le_bytes());
    }
    let body = b.len() - 8;
    let sum = fnv1a_64(&b[..body]);
    b[body..].copy_from_slice(&sum.to_le_bytes());
    b
}
