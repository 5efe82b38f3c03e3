//! The FMU state as bytes: a versioned, explicit format, not a memory dump.
//!
//! Layout (little endian):
//! - magic `b"FMURSST\0"`, format version `u32`;
//! - GUID: `u32` length and UTF-8 bytes (a state only loads into the model that wrote it);
//! - FMI state `u8`, then `time`, `start_time`, `stop_time` (NaN: undefined), `tolerance`,
//!   `last_successful_time`, `step_size` (the integrator's next trial step; NaN: none yet),
//!   each `f64`;
//! - `u32` count and the value of every declared variable in value-reference order (`f64`;
//!   integers are exact in it);
//! - `u32` count and the input derivative of every variable (0 for non-inputs);
//! - FNV-1a 64 checksum of everything before it, so that a corrupted state is rejected.
//!
//! The integrator restarts every segment from the model's states; its trial step size is the
//! only thing of its own that changes results, so it is saved (since version 3).

pub const MAGIC: &[u8; 8] = b"FMURSST\0";
pub const VERSION: u32 = 3;

/// Everything an FMU state holds besides the model's declared variables.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub fmi_state: u8,
    pub time: f64,
    pub start_time: f64,
    pub stop_time: Option<f64>,
    pub tolerance: f64,
    pub last_successful_time: f64,
    pub step_size: f64,
    pub values: Vec<f64>,
    pub slopes: Vec<f64>,
}

impl Snapshot {
    pub fn encode(&self, guid: &str) -> Vec<u8> {
        let mut b = Vec::with_capacity(64 + guid.len() + 8 * (self.values.len() * 2));
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&VERSION.to_le_bytes());
        b.extend_from_slice(&(guid.len() as u32).to_le_bytes());
        b.extend_from_slice(guid.as_bytes());
        b.push(self.fmi_state);
        for x in [
            self.time,
            self.start_time,
            self.stop_time.unwrap_or(f64::NAN),
            self.tolerance,
            self.last_successful_time,
            self.step_size,
        ] {
            b.extend_from_slice(&x.to_le_bytes());
        }
        for list in [&self.values, &self.slopes] {
            b.extend_from_slice(&(list.len() as u32).to_le_bytes());
            for x in list.iter() {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
        let sum = fnv1a_64(&b);
        b.extend_from_slice(&sum.to_le_bytes());
        b
    }

    /// Parses and checks a state written by [`Snapshot::encode`] for the model with `guid` and
    /// `n_values` variables.
    pub fn decode(bytes: &[u8], guid: &str, n_values: usize) -> Result<Snapshot, String> {
        if bytes.len() < 8 + 4 + 8 {
            return Err(format!("FMU state truncated: {} bytes", bytes.len()));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        let mut r = Reader {
            bytes: body,
            pos: 0,
        };
        if r.take(8)? != MAGIC {
            return Err("not an FMU state of this runtime (bad magic)".into());
        }
        let version = r.u32()?;
        if version != VERSION {
            return Err(format!(
                "FMU state format version {version} is not the version this FMU reads, {VERSION}"
            ));
        }
        let len = r.u32()? as usize;
        let their_guid = r.take(len)?;
        if their_guid != guid.as_bytes() {
            return Err(format!(
                "FMU state belongs to GUID {}, not {guid}",
                String::from_utf8_lossy(their_guid)
            ));
        }
        if fnv1a_64(body).to_le_bytes() != sum {
            return Err("FMU state is corrupted (checksum mismatch) or truncated".into());
        }
        let fmi_state = r.take(1)?[0];
        let time = r.f64()?;
        let start_time = r.f64()?;
        let stop_time = Some(r.f64()?).filter(|x| !x.is_nan());
        let tolerance = r.f64()?;
        let last_successful_time = r.f64()?;
        let step_size = r.f64()?;
        let values = r.list(n_values)?;
        let slopes = r.list(n_values)?;
        if r.pos != body.len() {
            let extra = body.len() - r.pos;
            return Err(format!("{extra} trailing bytes after the FMU state"));
        }
        if ![time, start_time, tolerance, last_successful_time]
            .iter()
            .all(|x| x.is_finite())
        {
            return Err("FMU state holds a non-finite time or tolerance".into());
        }
        if !(step_size.is_nan() || (step_size.is_finite() && step_size > 0.0)) {
            return Err(format!("FMU state holds a step size of {step_size}"));
        }
        Ok(Snapshot {
            fmi_state,
            time,
            start_time,
            stop_time,
            tolerance,
            last_successful_time,
            step_size,
            values,
            slopes,
        })
    }
}

fn fnv1a_64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100000001b3)
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("FMU state truncated at byte {}", self.pos))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn f64(&mut self) -> Result<f64, String> {
        Ok(f64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn list(&mut self, expected: usize) -> Result<Vec<f64>, String> {
        let n = self.u32()? as usize;
        if n != expected {
            return Err(format!(
                "FMU state has {n} values, the model has {expected}"
            ));
        }
        (0..n).map(|_| self.f64()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Snapshot {
        Snapshot {
            fmi_state: 2,
            time: 0.25,
            start_time: 0.0,
            stop_time: Some(1.0),
            tolerance: 1e-8,
            last_successful_time: 0.25,
            step_size: 1.5e-4,
            values: vec![1.0, -2.5, 3.0],
            slopes: vec![0.0, 0.5, 0.0],
        }
    }

    #[test]
    fn round_trip() {
        let s = sample();
        let b = s.encode("{g}");
        assert_eq!(Snapshot::decode(&b, "{g}", 3), Ok(s));
    }

    /// A state written by the previous format (version 2: no step size) is refused by name.
    #[test]
    fn an_older_version_is_refused_naming_both() {
        let mut b = sample().encode("{g}");
        b[8..12].copy_from_slice(&2u32.to_le_bytes());
        let body = b.len() - 8;
        let sum = fnv1a_64(&b[..body]);
        b[body..].copy_from_slice(&sum.to_le_bytes());
        let e = Snapshot::decode(&b, "{g}", 3).unwrap_err();
        assert!(e.contains("version 2") && e.contains("3"), "{e}");
    }

    #[test]
    fn every_truncation_and_wrong_model_is_rejected() {
        let b = sample().encode("{g}");
        for n in 0..b.len() {
            assert!(
                Snapshot::decode(&b[..n], "{g}", 3).is_err(),
                "truncated to {n}"
            );
        }
        assert!(Snapshot::decode(&b, "{other}", 3).is_err());
        assert!(Snapshot::decode(&b, "{g}", 4).is_err());
        let mut long = b.clone();
        long.push(0);
        assert!(Snapshot::decode(&long, "{g}", 3).is_err());
        // Any single flipped bit, anywhere, is caught.
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 0x10;
            assert!(Snapshot::decode(&bad, "{g}", 3).is_err(), "byte {i}");
        }
    }
}
