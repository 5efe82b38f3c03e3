//! The FMI 2.0 symbols of a component FMU: [`crate::export_fmu!`] writes every function of the
//! FMI 2.0 list ([`fmi_abi::fmi2_functions!`]) as a call of its namesake in [`super::ffi`].

/// One `#[no_mangle]` function per entry of the FMI 2.0 list, for `$model`.
#[doc(hidden)]
#[macro_export]
macro_rules! __export_fmi2_functions {
    (($model:ty) $($symbol:ident $name:ident ($($arg:ident : $ty:ty),*) -> $ret:ty;)*) => {
        $(
            #[no_mangle]
            pub unsafe extern "C" fn $symbol($($arg: $ty),*) -> $ret {
                $crate::__export::ffi::$name::<$model>($($arg),*)
            }
        )*
    };
}
