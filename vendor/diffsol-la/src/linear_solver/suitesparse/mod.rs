pub mod klu;
