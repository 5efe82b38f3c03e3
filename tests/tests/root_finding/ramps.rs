//! The inputs of the runs from rest: every input a ramp from its start value, per model.

use super::*;

/// From rest (parameters), every input `u = start + slope t` over one second.
pub(crate) struct Ramps {
    pub(crate) model: &'static str,
    parameters: &'static [(&'static str, f64)],
    inputs: &'static [(&'static str, f64, f64)],
}

/// The engine pulling from zero (the chain, just taut at rest, must tighten), a growing road
/// load and brake.
const CHAIN_RAMPS: &[(&str, f64, f64)] = &[
    ("tau_eng", 0.0, 150.0),
    ("tau_load", 0.0, -20.0),
    ("c_brake", 0.0, 0.05),
];

/// Slopes chosen so that every FMU's modes switch inside the second: the LossyGear breaks away
/// and sticks again, the crank passes dead centres, the CVT's sheaves reach a stop, the power
/// flow of the variable-ratio FMUs turns, the chain goes taut.
pub(crate) const RAMPS: &[Ramps] = &[
    Ramps {
        model: "Gear",
        parameters: &[],
        inputs: &[("tau_a", 0.0, 0.5), ("tau_b", 0.0, -0.3)],
    },
    Ramps {
        model: "LossyGear",
        parameters: &[("w_b_start", 0.0)],
        inputs: &[("tau_a", 0.0, 20.0), ("tau_b", 0.0, 1.0)],
    },
    Ramps {
        model: "CrankSlider",
        parameters: &[],
        inputs: &[("tau", 0.0, 3.0), ("f", 0.0, -20.0)],
    },
    Ramps {
        model: "CrankSlider",
        parameters: &[("w_start", 300.0), ("phi_start", 600.0)],
        inputs: &[("tau", 0.0, 3.0), ("f", 0.0, -20.0)],
    },
    Ramps {
        model: "CVT",
        parameters: &[],
        inputs: &[
            ("tau_1", 0.0, 0.2),
            ("tau_2", 0.0, -0.1),
            ("F_1", 0.0, 100.0),
            ("F_2", 0.0, 20.0),
        ],
    },
    Ramps {
        model: "VariableRatioTransmission",
        parameters: &[],
        inputs: &[
            ("tau_B_ext", 0.0, 2.0),
            ("tau_F_ext", 0.0, -3.0),
            ("r", 1.0, 0.5),
        ],
    },
    Ramps {
        model: "VariableRatioCoupling",
        parameters: &[],
        inputs: &[("w_B", 0.0, 10.0), ("w_F", 0.0, 12.0), ("r", 1.0, 0.5)],
    },
    Ramps {
        model: "FastDrivetrain",
        parameters: &[],
        inputs: &[
            ("tau_eng", 0.0, 40.0),
            ("tau_ext", 0.0, -20.0),
            ("omega_x", 0.0, 0.5),
            ("omega_y", 0.0, 0.2),
            ("omega_z", 0.0, 0.1),
        ],
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 1.0)],
        inputs: CHAIN_RAMPS,
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 2.0)],
        inputs: CHAIN_RAMPS,
    },
    Ramps {
        model: "ChainDrive",
        parameters: &[("chain_model", 3.0)],
        inputs: CHAIN_RAMPS,
    },
];

impl Ramps {
    pub(crate) fn scenario(&self) -> Scenario {
        let stop = 1.0;
        Scenario {
            dir: PathBuf::from(format!("(ramps {:?})", self.parameters)),
            names: self.inputs.iter().map(|i| i.0.to_string()).collect(),
            integers: vec![false; self.inputs.len()],
            rows: [0.0, stop]
                .iter()
                .map(|&t| {
                    std::iter::once(t)
                        .chain(self.inputs.iter().map(|(_, u0, du)| u0 + du * t))
                        .collect()
                })
                .collect(),
            params: self
                .parameters
                .iter()
                .map(|(n, v)| (n.to_string(), *v))
                .collect(),
            stop,
            step: 1e-3,
            tol: RTOL,
        }
    }
}
