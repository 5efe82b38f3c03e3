//! Ordinary differential equations: the integration of a model over one communication step,
//! with its state and time events ([`integrator`]), by the method it picks ([`pairs`]):
//! explicit Runge-Kutta pairs on one engine ([`erk`] with the tableaux [`tsit5`], [`vern6`],
//! [`dop853`]; [`explicit`]) and diffsol's BDF ([`bdf`]). Every method implements
//! [`segment::Method`] and is driven by one segment loop ([`segment::run`]); the methods depend
//! on [`segment`] alone, the integrator on all of them.

pub mod bdf;
pub mod dop853;
pub mod erk;
pub mod explicit;
pub mod integrator;
pub mod pairs;
pub mod segment;
pub mod tsit5;
pub mod vern6;

pub use integrator::{Ended, Integrator, Stops};
pub use segment::{event_iteration, StepError, MAX_EVENT_ITERATIONS};
