//! The faer backend's names without the faer backend.
//!
//! `diffsol` 0.18 enables this crate's `faer` feature and re-exports these names whatever its own
//! features are. With `faer-backend` off, faer is not compiled; the names stay, as types that
//! have no value, so that `diffsol` builds unchanged and nothing can use the absent backend.
#![cfg(not(feature = "faer-backend"))]

use std::{convert::Infallible, marker::PhantomData};

macro_rules! absent {
    ($($name:ident),*) => {$(
        #[doc = "Absent: this build has no faer backend (`faer-backend` off)."]
        pub struct $name<T>(Infallible, PhantomData<T>);
    )*};
}
absent!(FaerMat, FaerSparseMat, FaerVec, FaerLU, FaerSparseLU);

/// Absent: this build has no faer backend (`faer-backend` off).
pub struct FaerVecRef<'a, T>(Infallible, PhantomData<&'a T>);
/// Absent: this build has no faer backend (`faer-backend` off).
pub struct FaerVecMut<'a, T>(Infallible, PhantomData<&'a mut T>);
/// Absent: this build has no faer backend (`faer-backend` off).
pub struct FaerVecIndex(Infallible);
/// Absent: this build has no faer backend (`faer-backend` off).
pub struct FaerContext(Infallible);

/// The faer linear solvers' module: empty without the backend.
pub mod linear_solver {}
