//! Ordinary differential equations: the integration of a model over one communication step,
//! with its state and time events ([`integrator`]), by the methods it chooses from
//! ([`methods`]): explicit Runge-Kutta pairs on one engine ([`erk`] with the tableaux
//! [`tsit5`], [`vern6`], [`dop853`]) and diffsol's BDF ([`bdf`]), each driven through the same
//! [`integrator::Method`] interface by one segment loop.

pub mod bdf;
pub mod dop853;
pub mod erk;
pub mod explicit;
pub mod integrator;
pub mod methods;
pub mod tsit5;
pub mod vern6;

pub use integrator::{event_iteration, Ended, Integrator, StepError, Stops, MAX_EVENT_ITERATIONS};
