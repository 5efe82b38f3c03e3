//! The linear model of an FMU at an operating point, from its own derivatives:
//!
//! ```text
//! dx/dt = A dx + B du,   dy = C dx + D du
//! ```
//!
//! with `x` the continuous states, `u` the continuous Real inputs and `y` the continuous Real
//! outputs (the knowns and unknowns after initialization, FMI 2.0.4 section 2.2.8). The
//! operating point is where the tests' Model Exchange importer ([`crate::importer`]) has
//! brought a reference scenario; the entries come from `fmi2GetDirectionalDerivative`, one unit
//! seed per known, or from central differences of the same FMU, to compare with. The
//! eigenvalues and the frequency response use nalgebra.

use crate::importer::{run_until, DormandPrince};
use crate::scenario::Scenario;
use crate::{Fmu, Instance, OK};
use model_description::{Causality, Variability, VariableType};
use nalgebra::{Complex, DMatrix, DVector};

/// A linear model at an operating point; the matrices row by row.
#[derive(Clone, Debug)]
pub struct Linear {
    pub states: Vec<String>,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub time: f64,
    pub x: Vec<f64>,
    pub u: Vec<f64>,
    pub a: Vec<Vec<f64>>,
    pub b: Vec<Vec<f64>>,
    pub c: Vec<Vec<f64>>,
    pub d: Vec<Vec<f64>>,
}

/// An oscillatory mode: a pair `-zeta w_n +- i w_n sqrt(1 - zeta^2)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mode {
    /// The undamped natural frequency `w_n / (2 pi)`.
    pub hz: f64,
    pub damping_ratio: f64,
}

/// The value references of the linear model's states, derivatives, inputs and outputs, with
/// their names.
struct Variables {
    states: Vec<(u32, String)>,
    derivatives: Vec<u32>,
    inputs: Vec<(u32, String)>,
    outputs: Vec<(u32, String)>,
}

fn variables(fmu: &Fmu) -> Variables {
    let vars = &fmu.md.model_variables;
    let s = crate::structure::structure(&fmu.md);
    let named = |vr: u32| (vr, vars[vr as usize].name.clone());
    let continuous_real = |vr: &u32| {
        let v = &vars[*vr as usize];
        v.variability == Variability::Continuous && matches!(v.kind, VariableType::Real { .. })
    };
    let of = |causality: Causality| -> Vec<(u32, String)> {
        vars.iter()
            .filter(|v| v.causality == causality)
            .map(|v| v.value_reference)
            .filter(continuous_real)
            .map(named)
            .collect()
    };
    Variables {
        states: s.states.iter().map(|vr| named(*vr)).collect(),
        derivatives: s.derivatives,
        inputs: of(Causality::Input),
        outputs: of(Causality::Output),
    }
}

/// Where the scenario `scenario` of `fmu` (its reference scenario if None; its stop time if
/// `at` is None) brings the importer: the instance in Continuous-Time Mode there, and the time.
pub fn operating_point<'a>(
    fmu: &'a Fmu,
    scenario: Option<&str>,
    at: Option<f64>,
) -> Result<(Instance<'a>, f64), String> {
    let model = &fmu.md.model_name;
    let all = crate::scenario::scenarios(model);
    let sc: &Scenario = match scenario {
        None => all.first(),
        Some(name) => all
            .iter()
            .find(|s| s.dir.file_name().is_some_and(|f| f == name)),
    }
    .ok_or_else(|| format!("{model}: no scenario {}", scenario.unwrap_or("")))?;
    let at = at.unwrap_or(sc.stop);
    if !(0.0..=sc.stop).contains(&at) {
        return Err(format!(
            "{model}: --at {at} lies outside the scenario's 0 to {} s",
            sc.stop
        ));
    }
    Ok((operating_point_of(fmu, sc, at), at))
}

/// The instance at `at` of the scenario `sc` (its parameters and inputs), through the tests'
/// Model Exchange importer (Dormand-Prince at 1e-10, events located), in Continuous-Time Mode.
pub fn operating_point_of<'a>(fmu: &'a Fmu, sc: &Scenario, at: f64) -> Instance<'a> {
    run_until(fmu, sc, at, DormandPrince { rtol: 1e-10 }).inst
}

impl Linear {
    /// From `fmi2GetDirectionalDerivative` at the instance's point (at `time`), one unit seed
    /// per known.
    pub fn exact(fmu: &Fmu, inst: &Instance, time: f64) -> Result<Linear, String> {
        Linear::build(fmu, inst, time, |unknowns, known, column| {
            match inst.directional_derivative(unknowns, &[known], &[1.0], column) {
                OK => Ok(()),
                s => Err(format!(
                    "fmi2GetDirectionalDerivative returned {s}: {}",
                    inst.log_text()
                )),
            }
        })
    }

    /// From central differences of the derivatives and outputs at the instance's point, each
    /// known moved by `1e-6 (1 + |value|)` and set back (one-sided ones for an input at a bound
    /// of its range).
    pub fn differences(fmu: &Fmu, inst: &Instance, time: f64) -> Result<Linear, String> {
        let v = variables(fmu);
        let states: Vec<u32> = v.states.iter().map(|s| s.0).collect();
        let (_, x0) = inst.continuous_states();
        Linear::build(fmu, inst, time, |unknowns, known, column| {
            let at = |delta: f64| -> Result<Vec<f64>, String> {
                let mut out = vec![0.0; unknowns.len()];
                match states.iter().position(|s| *s == known) {
                    Some(i) => {
                        let mut x = x0.clone();
                        x[i] += delta;
                        check(inst.set_continuous_states(&x), inst)?;
                    }
                    None => {
                        let mut u = [0.0];
                        check(inst.get_real(&[known], &mut u), inst)?;
                        check(inst.set_real(&[known], &[u[0] + delta]), inst)?;
                        check(inst.get_real(unknowns, &mut out), inst)?;
                        check(inst.set_real(&[known], &[u[0]]), inst)?;
                        return Ok(out);
                    }
                }
                check(inst.get_real(unknowns, &mut out), inst)?;
                check(inst.set_continuous_states(&x0), inst)?;
                Ok(out)
            };
            let mut value = [0.0];
            check(inst.get_real(&[known], &mut value), inst)?;
            let h = 1e-6 * (1.0 + value[0].abs());
            let up = at(h)?;
            match at(-h) {
                Ok(down) => {
                    for (c, (a, b)) in column.iter_mut().zip(up.iter().zip(&down)) {
                        *c = (a - b) / (2.0 * h);
                    }
                }
                // An input at a bound of its range (a brake coefficient at 0) is moved one
                // way: the one-sided difference of second order, (4 f(h) - f(2h) - 3 f(0)) / 2h.
                Err(_) => {
                    let (base, twice) = (at(0.0)?, at(2.0 * h)?);
                    for (i, c) in column.iter_mut().enumerate() {
                        *c = (4.0 * up[i] - twice[i] - 3.0 * base[i]) / (2.0 * h);
                    }
                }
            }
            Ok(())
        })
    }

    /// The four matrices, column by column: `column(unknowns, known, out)` writes the
    /// derivatives of `unknowns` by `known`.
    fn build(
        fmu: &Fmu,
        inst: &Instance,
        time: f64,
        mut column: impl FnMut(&[u32], u32, &mut [f64]) -> Result<(), String>,
    ) -> Result<Linear, String> {
        let v = variables(fmu);
        let vrs = |named: &[(u32, String)]| named.iter().map(|n| n.0).collect::<Vec<u32>>();
        let (states, inputs, outputs) = (vrs(&v.states), vrs(&v.inputs), vrs(&v.outputs));
        let mut block = |rows: &[u32], knowns: &[u32]| -> Result<Vec<Vec<f64>>, String> {
            let mut m = vec![vec![0.0; knowns.len()]; rows.len()];
            let mut out = vec![0.0; rows.len()];
            for (j, k) in knowns.iter().enumerate() {
                if rows.is_empty() {
                    break;
                }
                column(rows, *k, &mut out)?;
                for (i, value) in out.iter().enumerate() {
                    m[i][j] = *value;
                }
            }
            Ok(m)
        };
        let (a, b) = (
            block(&v.derivatives, &states)?,
            block(&v.derivatives, &inputs)?,
        );
        let (c, d) = (block(&outputs, &states)?, block(&outputs, &inputs)?);
        let (_, x) = inst.continuous_states();
        let mut u = vec![0.0; inputs.len()];
        check(inst.get_real(&inputs, &mut u), inst)?;
        let names = |named: Vec<(u32, String)>| named.into_iter().map(|n| n.1).collect();
        Ok(Linear {
            states: names(v.states),
            inputs: names(v.inputs),
            outputs: names(v.outputs),
            time,
            x,
            u,
            a,
            b,
            c,
            d,
        })
    }

    fn matrix(rows: &[Vec<f64>], columns: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows.len(), columns, |i, j| rows[i][j])
    }

    /// The eigenvalues of A as (re, im), sorted by real part, then imaginary part.
    pub fn eigenvalues(&self) -> Vec<(f64, f64)> {
        let n = self.states.len();
        let mut e: Vec<(f64, f64)> = Linear::matrix(&self.a, n)
            .complex_eigenvalues()
            .iter()
            .map(|z| (z.re, z.im))
            .collect();
        e.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
        e
    }

    /// The transfer from input `j` to output `i` at `hz`: `C (s I - A)^-1 B + D`, `s = 2 pi i hz`;
    /// None where `s I - A` is singular.
    pub fn response(&self, i: usize, j: usize, hz: f64) -> Option<Complex<f64>> {
        let n = self.states.len();
        let s = Complex::new(0.0, 2.0 * std::f64::consts::PI * hz);
        let m = DMatrix::from_fn(n, n, |r, c| {
            let diagonal = if r == c { s } else { Complex::new(0.0, 0.0) };
            diagonal - Complex::new(self.a[r][c], 0.0)
        });
        let b = DVector::from_fn(n, |r, _| Complex::new(self.b[r][j], 0.0));
        let z = m.lu().solve(&b)?;
        let cz: Complex<f64> = (0..n).map(|r| z[r] * self.c[i][r]).sum();
        Some(cz + self.d[i][j])
    }

    /// The pairs (input, output) an output declares a dependency on, by index into `inputs`
    /// and `outputs`.
    pub fn declared_pairs(&self, fmu: &Fmu) -> Vec<(usize, usize)> {
        let vars = &fmu.md.model_variables;
        let mut pairs = vec![];
        for o in &fmu.md.model_structure.outputs {
            let name = &vars[o.index - 1].name;
            let Some(i) = self.outputs.iter().position(|n| n == name) else {
                continue;
            };
            for d in o.dependencies.iter().flatten() {
                if let Some(j) = self.inputs.iter().position(|n| *n == vars[d - 1].name) {
                    pairs.push((j, i));
                }
            }
        }
        pairs
    }
}

fn check(status: crate::Status, inst: &Instance) -> Result<(), String> {
    match status {
        OK => Ok(()),
        s => Err(format!("status {s}: {}", inst.log_text())),
    }
}

/// The oscillatory modes of `eigenvalues`: each pair with an imaginary part, once (the one
/// above the axis), from the slowest. A pair within 1e-6 of the largest eigenvalue's size of
/// zero is a zero eigenvalue, not a mode: a repeated zero (a free rotation: angle and speed)
/// comes out of the eigenvalue solver split by about the square root of the rounding error.
pub fn modes(eigenvalues: &[(f64, f64)]) -> Vec<Mode> {
    let largest = eigenvalues
        .iter()
        .fold(0.0f64, |m, (re, im)| m.max(re.hypot(*im)));
    let mut modes: Vec<Mode> = eigenvalues
        .iter()
        .filter(|(re, im)| *im > 0.0 && re.hypot(*im) > 1e-6 * largest)
        .map(|(re, im)| {
            let wn = re.hypot(*im);
            Mode {
                hz: wn / (2.0 * std::f64::consts::PI),
                damping_ratio: -re / wn,
            }
        })
        .collect();
    modes.sort_by(|a, b| a.hz.total_cmp(&b.hz));
    modes
}

#[cfg(test)]
mod tests {
    use super::modes;

    /// The ChainDrive's linear model at the end of its reference scenario: a free rotation
    /// (a double zero, split by rounding) beside two modes.
    #[test]
    fn a_split_zero_is_no_mode() {
        let eigenvalues = [
            (-11.72418, -31.96791),
            (-11.72418, 31.96791),
            (-2.743882, 0.0),
            (-0.1741318, -137.5588),
            (-0.1741318, 137.5588),
            (8.325991e-14, -1.124298e-12),
            (8.325991e-14, 1.124298e-12),
        ];
        let found = modes(&eigenvalues);
        assert_eq!(found.len(), 2);
        assert!((found[0].hz - 5.419228).abs() < 1e-4, "{}", found[0].hz);
        assert!((found[1].hz - 21.893186).abs() < 1e-4, "{}", found[1].hz);
        assert!((found[1].damping_ratio - 0.001266).abs() < 1e-6);
    }
}
