//! The reference scenarios' files (`<Model>_in.csv`, `_par.csv`, `_ref.opt`), read as the
//! validation's importers read them. Plain Rust without the harness's types: the rust-fmi
//! importer (`importers/rust-fmi`) includes this file too.

use std::path::{Path, PathBuf};

/// A reference scenario: its input table, parameters, stop time and communication step.
pub struct Scenario {
    pub dir: PathBuf,
    /// The inputs, in the columns of `rows` after the time.
    pub names: Vec<String>,
    /// Which inputs are Integers: their column is written without a fraction or exponent.
    pub integers: Vec<bool>,
    pub rows: Vec<Vec<f64>>,
    pub params: Vec<(String, f64)>,
    pub stop: f64,
    pub step: f64,
    /// The relative tolerance of the scenario's settings.
    pub tol: f64,
}

pub fn read_table(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = lines
        .next()
        .expect("a header")
        .split(',')
        .map(|s| s.trim().trim_matches('"').to_string())
        .collect();
    let rows = lines
        .map(|l| {
            l.split(',')
                .map(|s| s.trim().trim_matches('"').parse().expect("a number"))
                .collect()
        })
        .collect();
    (header, rows)
}

/// The reference scenarios of `model` under `reference` (the repository's `reference-fmus/`):
/// the main one, then the others.
pub fn scenarios_in(reference: &Path, model: &str) -> Vec<Scenario> {
    let root = reference.join(model);
    let mut dirs = vec![root.clone()];
    let mut subdirs: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    subdirs.sort();
    dirs.extend(
        subdirs
            .into_iter()
            .filter(|d| d.join(format!("{model}_ref.csv")).is_file()),
    );
    dirs.into_iter()
        .filter(|d| d.join(format!("{model}_ref.csv")).is_file())
        .map(|dir| {
            let opt = std::fs::read_to_string(dir.join(format!("{model}_ref.opt"))).unwrap();
            let value = |key: &str| -> f64 {
                opt.lines()
                    .find_map(|l| {
                        l.strip_prefix(key)?
                            .trim_start()
                            .strip_prefix(',')?
                            .trim()
                            .parse()
                            .ok()
                    })
                    .unwrap_or_else(|| panic!("{key} in {}", dir.display()))
            };
            let input = dir.join(format!("{model}_in.csv"));
            let (names, rows, integers) = if input.is_file() {
                let (h, r) = read_table(&input);
                let integers = integer_columns(&input)[1..].to_vec();
                (h[1..].to_vec(), r, integers)
            } else {
                (vec![], vec![vec![0.0]], vec![])
            };
            let par = dir.join(format!("{model}_par.csv"));
            let params = if par.is_file() {
                let text = std::fs::read_to_string(par).unwrap();
                text.lines()
                    .skip(1)
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| {
                        let (n, v) = l.split_once(',').unwrap();
                        (n.trim_matches('"').to_string(), v.trim().parse().unwrap())
                    })
                    .collect()
            } else {
                vec![]
            };
            Scenario {
                stop: value("StopTime"),
                step: value("StepSize"),
                tol: value("RelTol"),
                dir,
                names,
                integers,
                rows,
                params,
            }
        })
        .collect()
}

/// For each column of a table, whether every value in it is an integer as written (`2`, not
/// `2.0`): the Cross-Check files write an Integer variable's values so.
fn integer_columns(path: &Path) -> Vec<bool> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let columns = lines.next().map_or(0, |h| h.split(',').count());
    let mut integer = vec![true; columns];
    for line in lines {
        for (i, value) in line.split(',').enumerate() {
            let v = value.trim().trim_start_matches('-');
            integer[i] &= !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        }
    }
    integer
}

impl Scenario {
    /// The inputs at `t` as the validation's importers give them: linear between rows, the
    /// later row where two share a time.
    pub fn inputs_at(&self, t: f64) -> Vec<f64> {
        let i = self
            .rows
            .iter()
            .rposition(|r| r[0] <= t + 1e-12)
            .unwrap_or(0);
        let r = &self.rows[i];
        if (r[0] - t).abs() <= 1e-12 || i + 1 == self.rows.len() {
            return r[1..].to_vec();
        }
        let n = &self.rows[i + 1];
        let w = (t - r[0]) / (n[0] - r[0]);
        r[1..]
            .iter()
            .zip(&n[1..])
            .map(|(a, b)| a + w * (b - a))
            .collect()
    }

    /// `<Model>_ref_interpolated.csv`, the independent solution with the inputs interpolated
    /// linearly between the table's rows (a scenario with continuous inputs has one): its
    /// column names and rows.
    pub fn interpolated_reference(&self, model: &str) -> Option<(Vec<String>, Vec<Vec<f64>>)> {
        let path = self.dir.join(format!("{model}_ref_interpolated.csv"));
        path.is_file().then(|| read_table(&path))
    }

    /// Whether the inputs are continuous in time: no two rows of the table share a time.
    pub fn smooth(&self) -> bool {
        self.rows.windows(2).all(|w| w[1][0] > w[0][0])
    }

    /// The slopes of the inputs on the table's interval that starts at or holds `t`.
    pub fn slopes_at(&self, t: f64) -> Vec<f64> {
        let i = self
            .rows
            .iter()
            .rposition(|r| r[0] <= t + 1e-12)
            .unwrap_or(0)
            .min(self.rows.len().saturating_sub(2));
        match (self.rows.get(i), self.rows.get(i + 1)) {
            (Some(r), Some(n)) if n[0] > r[0] => r[1..]
                .iter()
                .zip(&n[1..])
                .map(|(a, b)| (b - a) / (n[0] - r[0]))
                .collect(),
            _ => vec![0.0; self.names.len()],
        }
    }

    /// The inputs at `t`, each an `(name, value, is_integer)`.
    pub fn typed_inputs_at(&self, t: f64) -> Vec<(&str, f64, bool)> {
        self.names
            .iter()
            .zip(self.inputs_at(t))
            .zip(&self.integers)
            .map(|((n, v), i)| (n.as_str(), v, *i))
            .collect()
    }
}
