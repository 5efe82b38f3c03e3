//! `#[derive(Variables)]`: a component's variables declared once, as attributes on the fields
//! that hold them. From them the derive writes the `Default` instance (the start values), the
//! variable table, the state vector's get and set, which states are angles, and how states
//! take their start values; the runtime derives modelDescription.xml and the documentation's
//! table from the same declarations.
//!
//! ```ignore
//! #[derive(Debug, Clone, Variables)]
//! pub struct Gear {
//!     #[variables]                         // a struct with declarations of its own, in place
//!     gear: GearInterface,
//!     #[parameter(start = 0.1, unit = "kg.m2", min = 0.0, describe = "...")]
//!     j_a: f64,
//!     #[output(unit = "rad", state, angle, from = phi_b_start, derivative = "w_b", describe = "...")]
//!     phi_b: f64,
//!     #[output(name = "theta_ds", index = 0, unit = "rad", state, derivative = "w_ds")]
//!     #[output(name = "theta_sa", index = 1, unit = "rad", state, derivative = "w_sa")]
//!     #[start([0.0; 2])]
//!     q: [f64; 2],
//! }
//! ```
//!
//! One attribute declares one variable; its kind is the attribute's name: `parameter`,
//! `calculated_parameter`, `input`, `output`, `local`, or `support_torque` (the housing
//! torque, named and described by the runtime). Keys:
//! - `name = "J_a"`: the variable's name (default: the field's); `index = k`: element `k` of an
//!   array field;
//! - `start = expr`: the field's value in the default instance, hence the start value;
//!   `#[start(expr)]` gives it for a field declared element by element or not at all;
//! - `unit`, `describe`, `min`, `max`, `discrete`;
//! - `depends_on = NAMES` and `initial_depends_on = NAMES` (a `&[&str]` constant or a list
//!   `["a", "b"]`): the ModelStructure dependencies; absent, the variable depends on every
//!   known;
//! - `state`: a continuous state, in the state vector in declaration order; `derivative =
//!   "name"`, the variable that is its time derivative; `angle`, it is a shaft angle (its error
//!   is controlled relative to the distance travelled); `from = field`, the start parameter
//!   whose value it takes when initialization ends (before `Model::initialize`, which sets the
//!   states computed otherwise).
//!
//! The derive also writes `<Name>States`, each state's index in the state vector by name (a
//! field's name, or an array element's variable name; an embedded part's states under the
//! field that embeds it), and the constant `Name::STATE`. A model writes its derivatives by
//! state name, so that the declaration order in another crate cannot misplace one:
//! `dx[Self::STATE.gear.w_b] = a_b`.
//!
//! `#[variables]` embeds a field whose type derives `Variables`: its declarations, states
//! included, come in at that place. `#[variables(depends_on(a, b) = NAMES)]` (and
//! `initial_depends_on(...)`) replaces the dependencies of the embedded variables named.
//! `#[variables(with = Self::family, names = &FAMILY_NAMES)]` declares a field's variables by
//! a function `fn family<L: Lens<Inner = Self>>(vars: &mut Vec<Var<L::Outer>>)`, for families
//! of parameters written by a macro; `names` lists the names it declares.
//!
//! Every name a dependency list gives is checked at compile time: the derive writes the
//! model's names and lists (`Variables::NAMES`, `Variables::DEPENDENCIES`), and `export_fmu!`
//! evaluates `check_dependencies`, so a misspelt name fails the build with "the dependencies
//! of `y` name `uu`, which the model does not declare".

use proc_macro::TokenStream;
use proc_macro2::{Group, Span, TokenStream as Tokens, TokenTree};
use quote::{format_ident, quote};
use syn::parse::Parse;
use syn::spanned::Spanned;
use syn::{
    parse_macro_input, Data, DeriveInput, Expr, ExprPath, Fields, Ident, LitStr, Token, Type,
};

// The derive by part: reading the declarations, writing the code, and the token surgery the
// writing needs.
mod expand;
mod lift;
mod parse;

use expand::expand;
use lift::{is_param, mentions, subst};
use parse::{is_integer, names, parse_field, Role};

const KINDS: &[&str] = &[
    "parameter",
    "calculated_parameter",
    "input",
    "output",
    "local",
    "support_torque",
];

#[proc_macro_derive(
    Variables,
    attributes(
        parameter,
        calculated_parameter,
        input,
        output,
        local,
        support_torque,
        variables,
        start
    )
)]
pub fn derive_variables(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(e) => e.to_compile_error().into(),
    }
}

/// The declaration errors a component author meets, each on the smallest field that makes it
/// (the derive itself cannot run outside a compiler; its parts can).
#[cfg(test)]
mod tests;
