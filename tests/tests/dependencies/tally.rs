//! What became of the dependency probe's samples and moves, and the bounds that say it saw
//! enough.

use super::variables;
use model_description::ModelDescription;
use std::collections::BTreeMap;

/// What became of the probe's samples and moves: the samples probed, those not (by why), and
/// the moves tried, refused by the FMU, leading outside the model's domain (a get discarded or
/// not finite), or to a get the FMU refused (an invalid parameter, say). Printed as fractions,
/// and bounded: most samples must be probed, and most small moves must end in values, or the
/// probe saw too little.
#[derive(Default)]
pub struct Tally {
    samples: usize,
    pub probed: usize,
    skipped: BTreeMap<&'static str, usize>,
    /// By move size (small: a relative 1e-5; far: the others): moves tried, refused by the
    /// FMU, leading outside the domain, leading to a refused get.
    moves: [[usize; 4]; 2],
    /// The gets refused so far ([`variables::GETS`]), as of the last move.
    refused_gets: usize,
    /// Real knowns moved at a sample, and those of them whose small moves were all refused or
    /// led outside the domain (at a bound, or a parameter the initialization rejects).
    knowns: usize,
    stuck: usize,
}

impl Tally {
    /// A tally of `samples` samples, none probed yet.
    pub fn of(samples: usize) -> Self {
        Tally {
            samples,
            ..Tally::default()
        }
    }

    pub fn skip(&mut self, why: &'static str) {
        *self.skipped.entry(why).or_default() += 1;
    }

    /// A move of a known, small or not: whether the FMU took it (`set`) and the values there
    /// were finite.
    pub fn move_to(&mut self, small: bool, set: bool, finite: bool) {
        let refused = variables::GETS.with(|g| g.get().1);
        let get_refused = refused > self.refused_gets;
        self.refused_gets = refused;
        let m = &mut self.moves[usize::from(!small)];
        m[0] += 1;
        m[1] += usize::from(!set);
        m[2] += usize::from(set && !finite && !get_refused);
        m[3] += usize::from(set && get_refused);
    }

    /// A Real known's moves at a sample done: whether a small one was taken.
    pub fn known(&mut self, moved: bool) {
        self.knowns += 1;
        self.stuck += usize::from(!moved);
    }

    pub fn check(&self, md: &ModelDescription, what: &str) {
        let share = |n: usize, of: usize| 100.0 * n as f64 / of.max(1) as f64;

        let skipped: Vec<String> = self
            .skipped
            .iter()
            .map(|(why, n)| format!("{why} {:.1} %", share(*n, self.samples)))
            .collect();
        eprintln!(
            "{}: {what}: {} of {} samples probed ({:.1} %; not: {}); moves refused, outside the domain and to a refused get: small {:.1} %, {:.1} % and {:.1} % of {}, far {:.1} %, {:.1} % and {:.1} % of {}; knowns no small move took: {:.1} % of {}",
            md.model_name,
            self.probed,
            self.samples,
            share(self.probed, self.samples),
            if skipped.is_empty() { "none".to_string() } else { skipped.join(", ") },
            share(self.moves[0][1], self.moves[0][0]),
            share(self.moves[0][2], self.moves[0][0]),
            share(self.moves[0][3], self.moves[0][0]),
            self.moves[0][0],
            share(self.moves[1][1], self.moves[1][0]),
            share(self.moves[1][2], self.moves[1][0]),
            share(self.moves[1][3], self.moves[1][0]),
            self.moves[1][0],
            share(self.stuck, self.knowns),
            self.knowns,
        );
        // A refused get is a parameter moved off its valid set (a CVT sheave's start at a
        // stop moved past it: up to 16 % of the small moves): a quarter would be most of a
        // model's parameters at the edge of their set, or a model refusing valid values.
        assert!(
            4 * self.moves[0][3] < self.moves[0][0],
            "{}: {what}: {} of {} small moves led to a refused get",
            md.model_name,
            self.moves[0][3],
            self.moves[0][0]
        );
        assert!(
            2 * self.probed > self.samples,
            "{}: {what}: only {} of {} samples probed",
            md.model_name,
            self.probed,
            self.samples
        );
        assert!(
            10 * self.stuck < self.knowns,
            "{}: {what}: a tenth or more of the knowns moved by no small move",
            md.model_name
        );
    }
}
