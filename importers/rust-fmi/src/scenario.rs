//! The reference scenarios of `reference-fmus/`, read by the test harness's reader
//! (`tests/src/scenario/files.rs`, included), their references, and the validation's
//! judgement of a run against a reference (validate.py's `compare`).

#[path = "../../../tests/src/scenario/files.rs"]
mod files;

pub use files::{read_table, Scenario};
use std::path::Path;

/// The validation's bound: every output within `REL` of its largest magnitude (plus `ABS`).
pub const REL: f64 = 1e-6;
pub const ABS: f64 = 1e-9;

/// The scenarios of `model`: the main one, then those of its subdirectories.
pub fn scenarios(model: &str) -> Vec<Scenario> {
    let reference = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../reference-fmus");
    files::scenarios_in(&reference, model)
}

/// An input's value to set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
}

/// A scenario's reference: its column names (time first) and rows.
pub struct Reference {
    pub names: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Reference {
    pub fn of(model: &str, sc: &Scenario) -> Reference {
        let (names, rows) = read_table(&sc.dir.join(format!("{model}_ref.csv")));
        Reference { names, rows }
    }

    fn column(&self, j: usize) -> impl Iterator<Item = f64> + '_ {
        self.rows.iter().map(move |r| r[j])
    }

    /// The largest deviation of a run (outputs `names`, each a column of the reference, at
    /// `time`) from the reference, each output relative to its largest magnitude in the
    /// reference, or the first point off the validation's bound.
    pub fn judge(&self, time: &[f64], names: &[String], rows: &[Vec<f64>]) -> Result<f64, String> {
        let end = *time.last().expect("a result");
        let stop = self.rows.last().expect("a reference")[0];
        if (end - stop).abs() > 1e-9 {
            return Err(format!("ended at {end}, not {stop}"));
        }
        let mut worst = 0.0f64;
        for (j, name) in names.iter().enumerate() {
            let column = 1 + self.names[1..]
                .iter()
                .position(|n| n == name)
                .expect("a column");
            let scale = self.column(column).fold(0.0f64, |m, v| m.max(v.abs()));
            // A run that reports nothing at the start time is judged from its first point on.
            let judged = self.column(0).zip(self.column(column));
            for (t, r) in judged.filter(|(t, _)| *t >= time[0] - 1e-12) {
                let sim = interpolate(time, rows, j, t);
                let err = (sim - r).abs();
                if err.is_nan() || err > REL * scale + ABS {
                    return Err(format!("{name} at t = {t}: {sim} against {r}"));
                }
                worst = worst.max(err / (scale + ABS / REL));
            }
        }
        Ok(worst)
    }
}

/// The communication points of `sc`: 0, step, ..., stop.
pub fn grid(sc: &Scenario) -> Vec<f64> {
    let n = (sc.stop / sc.step).round() as usize;
    (0..=n).map(|k| k as f64 * sc.step).collect()
}

/// The inputs at `t` as the harness's importers set them (`Scenario::typed_inputs_at`).
pub fn inputs_at(sc: &Scenario, t: f64) -> Vec<(&str, Value)> {
    sc.typed_inputs_at(t)
        .into_iter()
        .map(|(name, v, integer)| {
            let value = if integer {
                Value::Integer(v as i32)
            } else {
                Value::Real(v)
            };
            (name, value)
        })
        .collect()
}

/// Column `j` of `rows` at `t`, linear between the times of `time` (the first row at a time
/// that appears twice, as a run writes the left limit first).
fn interpolate(time: &[f64], rows: &[Vec<f64>], j: usize, t: f64) -> f64 {
    let k = time.partition_point(|s| *s < t - 1e-12);
    if k == time.len() {
        return rows[k - 1][j];
    }
    if k == 0 || (time[k] - t).abs() <= 1e-12 {
        return rows[k][j];
    }
    let w = (t - time[k - 1]) / (time[k] - time[k - 1]);
    rows[k - 1][j] + w * (rows[k][j] - rows[k - 1][j])
}
