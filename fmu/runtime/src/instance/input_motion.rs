//! How a Real input moves in Model Exchange: the rate the event indicators' band reads, from
//! the values an importer sets in Continuous-Time Mode.

/// How a Real input moves in Model Exchange, as seen from the values the importer sets.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct InputMotion {
    time: f64,
    value: f64,
    /// Between the last two times it was set at (0 until then).
    pub(crate) rate: f64,
}

impl Default for InputMotion {
    fn default() -> Self {
        InputMotion {
            time: f64::NAN,
            value: 0.0,
            rate: 0.0,
        }
    }
}

impl InputMotion {
    pub(crate) fn observe(&mut self, t: f64, value: f64) {
        if t != self.time && self.time.is_finite() {
            self.rate = (value - self.value) / (t - self.time);
        }
        (self.time, self.value) = (t, value);
    }
}
