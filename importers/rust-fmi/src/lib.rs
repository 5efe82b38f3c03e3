pub mod access;
pub mod run;
pub mod scenario;
