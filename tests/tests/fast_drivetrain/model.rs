//! The complete n-shaft model the FMU is tested against, written shaft by shaft (Newton-Euler per
//! shaft, Lagrange's equation summed shaft by shaft), with its vector algebra and random shaft sets;
//! a Train also sets itself up in the FMU.

use super::*;

pub(crate) type V3 = [f64; 3];

pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub(crate) fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(crate) fn scale(k: f64, a: V3) -> V3 {
    [k * a[0], k * a[1], k * a[2]]
}

/// A body turning about y: J = diag(jxx, jyy, jxx) in the casing frame whatever its angle.
pub(crate) fn inertia(jxx: f64, jyy: f64, w: V3) -> V3 {
    [jxx * w[0], jyy * w[1], jxx * w[2]]
}

/// xorshift64*: reproducible random sets without a dependency.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 11) as f64 / (1u64 << 53) as f64;
        lo + (hi - lo) * x
    }
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Shaft {
    pub(crate) m: f64,
    pub(crate) jxx: f64,
    pub(crate) jyy: f64,
    pub(crate) hx: f64,
    pub(crate) hz: f64,
}

/// A drivetrain: shafts and, per gear, every shaft's ratio to the sprocket shaft.
#[derive(Debug, Clone)]
pub(crate) struct Train {
    pub(crate) shafts: Vec<Shaft>,
    pub(crate) ratios: Vec<Vec<f64>>,
    pub(crate) crank: usize,
    pub(crate) sprocket: usize,
}

impl Train {
    /// The FMU's default: crank, balancer, main shaft, counter shaft, six gears.
    pub(crate) fn default_twin() -> Train {
        let shaft = |m, jxx, jyy, hx, hz| Shaft {
            m,
            jxx,
            jyy,
            hx,
            hz,
        };
        let primary = 1.925;
        Train {
            shafts: vec![
                shaft(8.0, 0.06, 0.009, 0.0, 0.0),
                shaft(1.8, 0.012, 0.0012, 0.08, 0.02),
                shaft(3.5, 0.02, 0.0045, -0.11, -0.06),
                shaft(2.8, 0.016, 0.0012, -0.2, -0.02),
            ],
            ratios: [2.846, 2.125, 1.632, 1.3, 1.091, 0.964]
                .iter()
                .map(|g| vec![primary * g, -primary * g, -g, 1.0])
                .collect(),
            crank: 0,
            sprocket: 3,
        }
    }

    pub(crate) fn random(rng: &mut Rng, n: usize, gears: usize) -> Train {
        let shafts = (0..n)
            .map(|_| {
                let jyy = rng.uniform(1e-4, 1e-2);
                Shaft {
                    m: rng.uniform(0.5, 10.0),
                    jxx: jyy * rng.uniform(0.5, 8.0),
                    jyy,
                    hx: rng.uniform(-0.3, 0.3),
                    hz: rng.uniform(-0.2, 0.2),
                }
            })
            .collect();
        let sprocket = (rng.uniform(0.0, n as f64) as usize).min(n - 1);
        let ratios = (0..gears)
            .map(|_| {
                (0..n)
                    .map(|k| {
                        if k == sprocket {
                            1.0
                        } else {
                            let sign = if rng.uniform(-1.0, 1.0) < 0.0 {
                                -1.0
                            } else {
                                1.0
                            };
                            sign * rng.uniform(-1.5, 1.5).exp()
                        }
                    })
                    .collect()
            })
            .collect();
        Train {
            shafts,
            ratios,
            crank: 0,
            sprocket,
        }
    }

    /// Sets every parameter of the train on an instance in initialization mode.
    pub(crate) fn set(&self, inst: &Instance) {
        let int = |name: &str, v: usize| assert_eq!(inst.set_int(name, v as i32), OK, "{name}");
        int("nShafts", self.shafts.len());
        int("nGears", self.ratios.len());
        int("iCrank", self.crank + 1);
        int("iSprocket", self.sprocket + 1);
        for (k, s) in self.shafts.iter().enumerate() {
            let n = k + 1;
            for (name, v) in [
                ("m", s.m),
                ("Jxx", s.jxx),
                ("Jyy", s.jyy),
                ("hx", s.hx),
                ("hz", s.hz),
            ] {
                assert_eq!(
                    inst.set(&format!("{name}[{n}]"), v),
                    OK,
                    "{}",
                    inst.log_text()
                );
            }
        }
        for (g, r) in self.ratios.iter().enumerate() {
            for (k, r) in r.iter().enumerate() {
                assert_eq!(inst.set(&format!("rho[{},{}]", g + 1, k + 1), *r), OK);
            }
        }
    }

    /// Instantiates, sets the train, `reals` and the gear, initializes at tolerance `tol`.
    pub(crate) fn start<'a>(
        &self,
        fmu: &'a Fmu,
        tol: f64,
        gear: i32,
        reals: &[(&str, f64)],
    ) -> Instance<'a> {
        let inst = fmu.instantiate("fast_drivetrain");
        assert_eq!(inst.setup_experiment(Some(tol), 0.0, None), OK);
        assert_eq!(inst.enter_initialization_mode(), OK);
        self.set(&inst);
        for (name, v) in reals {
            assert_eq!(inst.set(name, *v), OK, "{name}");
        }
        assert_eq!(inst.set_int("gear", gear), OK);
        assert_eq!(inst.exit_initialization_mode(), OK, "{}", inst.log_text());
        inst
    }

    /// Complete model: the spin's generalized momentum sum_k rho_k Jyy_k Omega_k,y.
    pub(crate) fn momentum(&self, gear: usize, omega_y: f64, w: f64) -> f64 {
        self.shafts
            .iter()
            .zip(&self.ratios[gear])
            .map(|(s, r)| r * s.jyy * (omega_y + r * w))
            .sum()
    }

    /// Complete model: the sprocket speed with generalized momentum `p`, from
    /// p = sum_k rho_k Jyy_k (omega_y + rho_k w).
    pub(crate) fn speed(&self, gear: usize, omega_y: f64, p: f64) -> f64 {
        let (a, b) = self.coupling(gear);
        (p - a * omega_y) / b
    }

    /// Complete model: the sprocket acceleration, from d/dt sum_k rho_k Jyy_k Omega_k,y = Q.
    pub(crate) fn acceleration(&self, gear: usize, domega_y: f64, q: f64) -> f64 {
        let (a, b) = self.coupling(gear);
        (q - a * domega_y) / b
    }

    /// sum_k rho_k Jyy_k and sum_k rho_k^2 Jyy_k, shaft by shaft.
    fn coupling(&self, gear: usize) -> (f64, f64) {
        let shafts = self.shafts.iter().zip(&self.ratios[gear]);
        shafts.fold((0.0, 0.0), |(a, b), (s, r)| {
            (a + r * s.jyy, b + r * r * s.jyy)
        })
    }

    /// Complete model: rotational kinetic energy and angular momentum of the shafts, with the
    /// casing twist (v, omega) about the casing origin, shaft by shaft.
    pub(crate) fn energy_momentum(&self, gear: usize, v: V3, omega: V3, w: f64) -> (f64, V3) {
        let mut energy = 0.0;
        let mut momentum = [0.0; 3];
        for (s, r) in self.shafts.iter().zip(&self.ratios[gear]) {
            let h = [s.hx, 0.0, s.hz];
            let vel = add(v, cross(omega, h));
            let big = add(omega, [0.0, r * w, 0.0]);
            let jw = inertia(s.jxx, s.jyy, big);
            energy += 0.5 * s.m * dot(vel, vel) + 0.5 * dot(big, jw);
            momentum = add(momentum, add(scale(s.m, cross(h, vel)), jw));
        }
        (energy, momentum)
    }

    /// Complete model: the moment of the shafts on the casing, Newton-Euler shaft by shaft:
    /// tau_ext e_y - sum_k (J_k dOmega_k/dt + omega x J_k Omega_k).
    pub(crate) fn casing_moment(
        &self,
        gear: usize,
        omega: V3,
        domega: V3,
        w: f64,
        dw: f64,
        tau_ext: f64,
    ) -> V3 {
        let mut m = [0.0, tau_ext, 0.0];
        for (s, r) in self.shafts.iter().zip(&self.ratios[gear]) {
            let big = add(omega, [0.0, r * w, 0.0]);
            let dbig = add(domega, [0.0, r * dw, 0.0]);
            let rate = add(
                inertia(s.jxx, s.jyy, dbig),
                cross(omega, inertia(s.jxx, s.jyy, big)),
            );
            m = add(m, scale(-1.0, rate));
        }
        m
    }
}
