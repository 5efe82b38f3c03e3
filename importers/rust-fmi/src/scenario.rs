//! The reference scenarios of `reference-fmus/` as the validation reads them (its
//! `scenario.py`): the input table, the parameters, the settings and the reference, and the
//! validation's judgement of a run against the reference.

use std::path::{Path, PathBuf};

/// The validation's bound: every output within `REL` of its largest magnitude (plus `ABS`).
pub const REL: f64 = 1e-6;
pub const ABS: f64 = 1e-9;

/// A table: its column names and rows.
pub struct Table {
    pub names: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    pub fn read(path: &Path) -> Table {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let names = cells(lines.next().expect("a header"))
            .map(str::to_string)
            .collect();
        let rows = lines
            .map(|l| {
                cells(l)
                    .map(|c| {
                        c.parse()
                            .unwrap_or_else(|e| panic!("{}: {c}: {e}", path.display()))
                    })
                    .collect()
            })
            .collect();
        Table { names, rows }
    }

    pub fn column(&self, name: &str) -> Option<Vec<f64>> {
        let j = self.names.iter().position(|n| n == name)?;
        Some(self.rows.iter().map(|r| r[j]).collect())
    }
}

fn cells(line: &str) -> impl Iterator<Item = &str> {
    line.split(',').map(|c| c.trim().trim_matches('"'))
}

/// One scenario: `<Model>_ref.opt`, `_in.csv`, `_par.csv` and `_ref.csv` of one directory.
pub struct Scenario {
    pub dir: PathBuf,
    pub stop: f64,
    pub step: f64,
    pub tol: f64,
    /// The inputs (time first), and which of them are Integers (written without a fraction).
    pub inputs: Option<Table>,
    pub integer_inputs: Vec<bool>,
    /// Parameters as written: a Real or an Integer by the variable's type.
    pub params: Vec<(String, String)>,
    pub reference: Table,
}

/// The scenarios of `model`: the main one, then those of its subdirectories.
pub fn scenarios(model: &str) -> Vec<Scenario> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../reference-fmus")
        .join(model);
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("{}: {e}", root.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    dirs.insert(0, root);
    dirs.into_iter()
        .filter(|d| d.join(format!("{model}_ref.csv")).is_file())
        .map(|dir| read(model, dir))
        .collect()
}

fn read(model: &str, dir: PathBuf) -> Scenario {
    let file = |suffix: &str| dir.join(format!("{model}_{suffix}"));
    let opt = std::fs::read_to_string(file("ref.opt")).expect("the settings");
    let setting = |key: &str| -> f64 {
        opt.lines()
            .find_map(|l| {
                let (k, v) = l.split_once(',')?;
                (k.trim() == key).then(|| v.trim().parse().expect("a number"))
            })
            .unwrap_or_else(|| panic!("{key} in {}", dir.display()))
    };
    let input_path = file("in.csv");
    let (inputs, integer_inputs) = if input_path.is_file() {
        let text = std::fs::read_to_string(&input_path).expect("the inputs");
        let rows: Vec<Vec<&str>> = text
            .lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| cells(l).collect())
            .collect();
        let table = Table::read(&input_path);
        let integer = (1..table.names.len())
            .map(|j| {
                rows.iter().all(|r| {
                    let v = r[j].trim_start_matches('-');
                    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
                })
            })
            .collect();
        (Some(table), integer)
    } else {
        (None, vec![])
    };
    let par_path = file("par.csv");
    let params = if par_path.is_file() {
        let text = std::fs::read_to_string(&par_path).expect("the parameters");
        text.lines()
            .skip(1)
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let mut c = cells(l);
                let name = c.next().expect("a name").to_string();
                (name, c.next().expect("a value").to_string())
            })
            .collect()
    } else {
        vec![]
    };
    Scenario {
        stop: setting("StopTime"),
        step: setting("StepSize"),
        tol: setting("RelTol"),
        reference: Table::read(&file("ref.csv")),
        dir,
        inputs,
        integer_inputs,
        params,
    }
}

/// An input's value to set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Real(f64),
    Integer(i32),
}

impl Scenario {
    /// The communication points: 0, step, ..., stop.
    pub fn grid(&self) -> Vec<f64> {
        let n = (self.stop / self.step).round() as usize;
        (0..=n).map(|k| k as f64 * self.step).collect()
    }

    /// The inputs at `t` as the validation's importers set them: linear between rows, the
    /// later row where two share a time, an Integer the row's value at or before `t`.
    pub fn inputs_at(&self, t: f64) -> Vec<(&str, Value)> {
        let Some(table) = &self.inputs else {
            return vec![];
        };
        let rows = &table.rows;
        let i = rows.iter().rposition(|r| r[0] <= t + 1e-12).unwrap_or(0);
        let (r, next) = (&rows[i], rows.get(i + 1));
        let w = match next {
            Some(n) if (r[0] - t).abs() > 1e-12 => (t - r[0]) / (n[0] - r[0]),
            _ => 0.0,
        };
        table.names[1..]
            .iter()
            .enumerate()
            .map(|(j, name)| {
                let value = if self.integer_inputs[j] {
                    Value::Integer(r[j + 1] as i32)
                } else {
                    let later = next.map_or(r[j + 1], |n| n[j + 1]);
                    Value::Real(r[j + 1] + w * (later - r[j + 1]))
                };
                (name.as_str(), value)
            })
            .collect()
    }

    /// The largest deviation of a run (outputs `names` at `time`) from the reference, each
    /// output relative to its largest magnitude in the reference, or the first point off the
    /// validation's bound.
    pub fn judge(&self, time: &[f64], names: &[String], rows: &[Vec<f64>]) -> Result<f64, String> {
        let end = *time.last().expect("a result");
        if (end - self.stop).abs() > 1e-9 {
            return Err(format!("ended at {end}, not {}", self.stop));
        }
        let ref_time = self.reference.column("time").expect("a time column");
        let mut worst = 0.0f64;
        for (j, name) in names.iter().enumerate() {
            let Some(reference) = self.reference.column(name) else {
                continue;
            };
            let scale = reference.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            // A run that reports nothing at the start time is judged from its first point on.
            let judged = ref_time
                .iter()
                .zip(&reference)
                .filter(|(t, _)| **t >= time[0] - 1e-12);
            for (t, r) in judged {
                let sim = interpolate(time, rows, j, *t);
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
