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

/// One declared variable.
#[derive(Default)]
struct Declaration {
    kind: String,
    name: Option<LitStr>,
    index: Option<Expr>,
    start: Option<Expr>,
    unit: Option<LitStr>,
    describe: Option<LitStr>,
    min: Option<Expr>,
    max: Option<Expr>,
    discrete: bool,
    depends_on: Option<Expr>,
    initial_depends_on: Option<Expr>,
    state: bool,
    angle: bool,
    from: Option<Ident>,
    derivative: Option<LitStr>,
}

/// What `#[variables(...)]` says of an embedded field.
#[derive(Default)]
struct Embedding {
    with: Option<ExprPath>,
    /// The names of the variables `with` declares (a `&[&str]`), for the dependency check.
    names: Option<Expr>,
    /// For a model generic over its number type: the function that visits the Real
    /// variables `with` declares, in the same order
    /// (`fn visit<D: Scalar>(field: &mut FieldType<D>, f: &mut dyn FnMut(&mut D))`).
    visit: Option<ExprPath>,
    /// (names, is initial, dependencies)
    overrides: Vec<(Vec<Ident>, bool, Expr)>,
}

enum Role {
    Plain(Vec<Declaration>),
    Embedded(Box<Embedding>),
}

struct Field {
    ident: Ident,
    ty: Type,
    start: Option<Expr>,
    role: Role,
}

/// `depends_on = NAMES`: a list literal becomes a `&'static [&str]`.
fn names(e: &Expr) -> Tokens {
    match e {
        Expr::Array(_) => quote!(&#e),
        _ => quote!(#e),
    }
}

/// The key of one `key = value` (or `flag`) inside an attribute.
fn key_of(meta: &syn::meta::ParseNestedMeta) -> String {
    meta.path
        .get_ident()
        .map(|i| i.to_string())
        .unwrap_or_default()
}

fn parse_declaration(kind: &str, attr: &syn::Attribute) -> syn::Result<Declaration> {
    let mut d = Declaration {
        kind: kind.to_string(),
        ..Default::default()
    };
    if matches!(attr.meta, syn::Meta::Path(_)) {
        return Ok(d);
    }
    attr.parse_nested_meta(|meta| {
        let key = key_of(&meta);
        match key.as_str() {
            "name" => d.name = Some(meta.value()?.parse()?),
            "index" => d.index = Some(meta.value()?.parse()?),
            "start" => d.start = Some(meta.value()?.parse()?),
            "unit" => d.unit = Some(meta.value()?.parse()?),
            "describe" => d.describe = Some(meta.value()?.parse()?),
            "min" => d.min = Some(meta.value()?.parse()?),
            "max" => d.max = Some(meta.value()?.parse()?),
            "depends_on" => d.depends_on = Some(meta.value()?.parse()?),
            "initial_depends_on" => d.initial_depends_on = Some(meta.value()?.parse()?),
            "from" => d.from = Some(meta.value()?.parse()?),
            "derivative" => d.derivative = Some(meta.value()?.parse()?),
            "discrete" => d.discrete = true,
            "state" => d.state = true,
            "angle" => d.angle = true,
            _ => return Err(meta.error(format!("unknown key `{key}` in #[{kind}]"))),
        }
        Ok(())
    })?;
    if (d.angle || d.from.is_some() || d.derivative.is_some()) && !d.state {
        return Err(syn::Error::new(
            attr.span(),
            "`angle`, `from` and `derivative` declare a state: add `state`",
        ));
    }
    Ok(d)
}

fn parse_embedding(attr: &syn::Attribute) -> syn::Result<Embedding> {
    let mut e = Embedding::default();
    if matches!(attr.meta, syn::Meta::Path(_)) {
        return Ok(e);
    }
    attr.parse_nested_meta(|meta| {
        let key = key_of(&meta);
        match key.as_str() {
            "with" => e.with = Some(meta.value()?.parse()?),
            "names" => e.names = Some(meta.value()?.parse()?),
            "visit" => e.visit = Some(meta.value()?.parse()?),
            "depends_on" | "initial_depends_on" => {
                let content;
                syn::parenthesized!(content in meta.input);
                let which = content.parse_terminated(Ident::parse, Token![,])?;
                meta.input.parse::<Token![=]>()?;
                let deps: Expr = meta.input.parse()?;
                e.overrides.push((
                    which.into_iter().collect(),
                    key == "initial_depends_on",
                    deps,
                ));
            }
            _ => return Err(meta.error(format!("unknown key `{key}` in #[variables]"))),
        }
        Ok(())
    })?;
    Ok(e)
}

fn parse_field(f: &syn::Field) -> syn::Result<Field> {
    let ident = f.ident.clone().expect("named field");
    let mut start = None;
    let mut declarations = Vec::new();
    let mut embedding = None;
    for attr in &f.attrs {
        let Some(name) = attr.path().get_ident().map(|i| i.to_string()) else {
            continue;
        };
        if name == "start" {
            start = Some(attr.parse_args::<Expr>()?);
        } else if name == "variables" {
            embedding = Some(parse_embedding(attr)?);
        } else if KINDS.contains(&name.as_str()) {
            declarations.push(parse_declaration(&name, attr)?);
        }
    }
    let role = match (embedding, declarations.is_empty()) {
        (Some(_), false) => {
            return Err(syn::Error::new(
                ident.span(),
                "a field is either #[variables] or declares variables, not both",
            ))
        }
        (Some(e), true) => Role::Embedded(Box::new(e)),
        (None, _) => Role::Plain(declarations),
    };
    if let Role::Plain(ds) = &role {
        if ds.len() > 1 && ds.iter().any(|d| d.index.is_none()) {
            return Err(syn::Error::new(
                ident.span(),
                "a field with several declarations declares its elements: give each an `index`",
            ));
        }
        if ds.len() > 1 && ds.iter().any(|d| d.start.is_some()) {
            return Err(syn::Error::new(
                ident.span(),
                "give an array field's start values once, with #[start(...)]",
            ));
        }
        if let (Some(_), Some(d)) = (&start, ds.iter().find(|d| d.start.is_some())) {
            return Err(syn::Error::new(
                d.start.span(),
                "the start value is given twice",
            ));
        }
    }
    Ok(Field {
        ident,
        ty: f.ty.clone(),
        start,
        role,
    })
}

/// Whether a field (or its elements) is an `i32`: an Integer variable.
fn is_integer(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.is_ident("i32"),
        Type::Array(a) => is_integer(&a.elem),
        _ => false,
    }
}

/// `tokens` with every `from` replaced by `to`: a field's type at another number type.
fn subst(tokens: Tokens, from: &Ident, to: &Tokens) -> Tokens {
    tokens
        .into_iter()
        .map(|tt| match tt {
            TokenTree::Ident(i) if &i == from => to.clone(),
            TokenTree::Group(g) => {
                let mut group = Group::new(g.delimiter(), subst(g.stream(), from, to));
                group.set_span(g.span());
                Tokens::from(TokenTree::Group(group))
            }
            other => Tokens::from(other),
        })
        .collect()
}

/// Whether `tokens` name `param`: a field whose type follows the number type.
fn mentions(tokens: Tokens, param: &Ident) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => &i == param,
        TokenTree::Group(g) => mentions(g.stream(), param),
        _ => false,
    })
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let vis = &input.vis;
    // A struct generic over its number type (`struct Gear<S = f64>`): the variable table is
    // the f64 one's, and the derive also writes how it is lifted to another number type.
    let param: Option<Ident> = input.generics.type_params().next().map(|p| p.ident.clone());
    let this = match &param {
        Some(_) => quote!(#name<f64>),
        None => quote!(#name),
    };
    let at = |ty: &Type, to: Tokens| match &param {
        Some(p) => subst(quote!(#ty), p, &to),
        None => quote!(#ty),
    };
    let lift_path = quote!(::fmu_runtime::lift::Lifted);
    let mut lift = Vec::new();
    let mut sync = Vec::new();
    let mut visit = Vec::new();
    let mut lifted_start = Vec::new();
    let Data::Struct(data) = &input.data else {
        return Err(syn::Error::new(
            Span::call_site(),
            "Variables: a struct only",
        ));
    };
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new(
            Span::call_site(),
            "Variables: named fields only",
        ));
    };
    let fields = named
        .named
        .iter()
        .map(parse_field)
        .collect::<syn::Result<Vec<_>>>()?;

    let rt = quote!(::fmu_runtime::declare);
    let mut defaults = Vec::new();
    let mut declare = Vec::new();
    let mut get = Vec::new();
    let mut set = Vec::new();
    let mut start_states = Vec::new();
    // `+ output * 0.0` for each Real output: the sum is 0 when all are finite, NaN otherwise.
    let mut output_zeros = Vec::new();
    let mut lenses = Vec::new();
    // Each state's slot in the index struct: its name, type and index from an offset `o`.
    let mut slots: Vec<(Ident, Tokens, Tokens)> = Vec::new();
    // Every variable name (own ones, then each embedded part's or family's list) and every
    // dependency list (own ones, then each embedded part's), for the compile-time check.
    let mut own_names = Vec::new();
    let mut name_parts = Vec::new();
    // Each list once (a constant such as `DYNAMIC` serves many variables), named after the
    // first variable that declares it, so that the check stays quick.
    let mut own_dependencies = Vec::new();
    let mut lists_seen = std::collections::HashSet::new();
    let mut dependency_parts = Vec::new();
    // The offset of the next state in the vector, and the angle bits so far.
    let mut offset = quote!(0usize);
    let mut angles = quote!(0u64);

    for f in &fields {
        let ident = &f.ident;
        let (ty, ty_d) = (at(&f.ty, quote!(f64)), at(&f.ty, quote!(__D)));
        let field_ty = &f.ty;
        let follows = param
            .as_ref()
            .is_some_and(|p| mentions(quote!(#field_ty), p));
        if follows {
            lift.push(quote!(#ident: <#ty_d as #lift_path<#ty>>::lift(&from.#ident)));
            sync.push(quote!(<#ty_d as #lift_path<#ty>>::sync(&mut self.#ident, &from.#ident);));
        } else {
            lift.push(quote!(#ident: ::core::clone::Clone::clone(&from.#ident)));
            sync.push(quote!(::core::clone::Clone::clone_from(&mut self.#ident, &from.#ident);));
        }
        let start = match (&f.start, &f.role) {
            (Some(e), _) => quote!(#e),
            (None, Role::Plain(ds)) => match ds.first().and_then(|d| d.start.as_ref()) {
                Some(e) => quote!(#e),
                None => quote!(::core::default::Default::default()),
            },
            (None, Role::Embedded(_)) => quote!(::core::default::Default::default()),
        };
        defaults.push(quote!(#ident: #start));

        match &f.role {
            Role::Embedded(e) => {
                if let Some(with) = &e.with {
                    let Some(family) = &e.names else {
                        return Err(syn::Error::new(
                            ident.span(),
                            "a family declared `with` a function lists its variables: add `names = LIST`",
                        ));
                    };
                    name_parts.push(quote!(#family));
                    declare.push(quote!(#with::<L>(vars);));
                    if param.is_some() {
                        let Some(v) = &e.visit else {
                            return Err(syn::Error::new(
                                ident.span(),
                                "a family of a model generic over its number type names the function that visits it: add `visit = FUNCTION`",
                            ));
                        };
                        visit.push(quote!(#v(&mut self.#ident, f);));
                    }
                    continue;
                }
                name_parts.push(quote!(<#ty as #rt::Variables>::NAMES));
                dependency_parts.push(quote!(<#ty as #rt::Variables>::DEPENDENCIES));
                for (which, initial, deps) in &e.overrides {
                    let deps = names(deps);
                    let which: Vec<String> = which.iter().map(|i| i.to_string()).collect();
                    if lists_seen.insert(deps.to_string()) {
                        let w = which.first().cloned().unwrap_or_else(|| ident.to_string());
                        own_dependencies.push(quote!(#rt::Dependencies { of: #w, names: #deps }));
                    }
                    let kind = if *initial {
                        "initial_depends_on"
                    } else {
                        "depends_on"
                    };
                    let of = format!("#[variables({kind}(...))] on {ident}");
                    own_dependencies
                        .push(quote!(#rt::Dependencies { of: #of, names: &[#(#which),*] }));
                }
                let lens = format_ident!("__{}_{}", name, ident);
                lenses.push(quote! {
                    #[doc(hidden)]
                    #[allow(non_camel_case_types)]
                    #vis struct #lens;
                    impl #rt::Lens for #lens {
                        type Outer = #this;
                        type Inner = #ty;
                        #[inline(always)]
                        fn get(m: &#this) -> &#ty { &m.#ident }
                        #[inline(always)]
                        fn get_mut(m: &mut #this) -> &mut #ty { &mut m.#ident }
                    }
                });
                let overrides = e.overrides.iter().map(|(which, initial, deps)| {
                    let which = which.iter().map(|i| i.to_string());
                    let deps = names(deps);
                    let field = if *initial {
                        quote!(initial_depends_on)
                    } else {
                        quote!(depends_on)
                    };
                    quote! {
                        for v in &mut vars[first..] {
                            if [#(#which),*].contains(&v.name) {
                                v.#field = ::core::option::Option::Some(#deps);
                            }
                        }
                    }
                });
                declare.push(quote! {{
                    let first = vars.len();
                    <#ty as #rt::Variables>::declare::<#rt::Then<L, #lens>>(vars);
                    #(#overrides)*
                }});
                let n = quote!(<#ty as #rt::Variables>::STATES);
                slots.push((
                    ident.clone(),
                    quote!(<#ty as #rt::Variables>::StateIndex),
                    quote!(<<#ty as #rt::Variables>::StateIndex>::at(o + #offset)),
                ));
                get.push(quote!(#rt::Variables::get_states(&self.#ident, &mut x[#offset..#offset + #n]);));
                set.push(quote!(#rt::Variables::set_states(&mut self.#ident, &x[#offset..#offset + #n]);));
                start_states.push(quote!(#rt::Variables::start_states(&mut self.#ident);));
                visit.push(quote!(<#ty_d as #lift_path<#ty>>::visit(&mut self.#ident, f);));
                lifted_start
                    .push(quote!(<#ty_d as #lift_path<#ty>>::start_states(&mut self.#ident);));
                output_zeros.push(quote!(+ #rt::Variables::output_zeros(&self.#ident)));
                angles = quote!(#angles | (<#ty as #rt::Variables>::ANGLES << (#offset)));
                offset = quote!(#offset + #n);
            }
            Role::Plain(ds) => {
                for d in ds {
                    let place = match &d.index {
                        Some(i) => quote!(#ident[#i]),
                        None => quote!(#ident),
                    };
                    let var_name = match (&d.name, &d.index) {
                        (Some(n), _) => quote!(#n),
                        (None, None) => {
                            let s = LitStr::new(&ident.to_string(), ident.span());
                            quote!(#s)
                        }
                        (None, Some(i)) => {
                            return Err(syn::Error::new(i.span(), "an element needs a `name`"))
                        }
                    };
                    let access = if is_integer(&f.ty) {
                        quote!(::fmu_runtime::Access::Integer {
                            get: |m: &L::Outer| <L as #rt::Lens>::get(m).#place,
                            set: |m: &mut L::Outer, v| <L as #rt::Lens>::get_mut(m).#place = v,
                        })
                    } else {
                        quote!(::fmu_runtime::Access::Real {
                            get: |m: &L::Outer| <L as #rt::Lens>::get(m).#place,
                            set: |m: &mut L::Outer, v| <L as #rt::Lens>::get_mut(m).#place = v,
                        })
                    };
                    if !is_integer(&f.ty) {
                        visit.push(quote!(f(&mut self.#place);));
                    }
                    if matches!(d.kind.as_str(), "output" | "support_torque") && !is_integer(&f.ty)
                    {
                        output_zeros.push(quote!(+ self.#place * 0.0));
                    }
                    let declared = if d.kind == "support_torque" {
                        quote!("tau_support")
                    } else {
                        var_name.clone()
                    };
                    own_names.push(declared.clone());
                    for e in [&d.depends_on, &d.initial_depends_on].into_iter().flatten() {
                        let e = names(e);
                        if lists_seen.insert(e.to_string()) {
                            own_dependencies
                                .push(quote!(#rt::Dependencies { of: #declared, names: #e }));
                        }
                    }
                    let kind = Ident::new(&d.kind, Span::call_site());
                    let mut var = if d.kind == "support_torque" {
                        quote!(::fmu_runtime::Var::<L::Outer>::support_torque(#access))
                    } else {
                        quote!(::fmu_runtime::Var::<L::Outer>::#kind(#var_name, #access))
                    };
                    if let Some(u) = &d.unit {
                        var = quote!(#var.unit(#u));
                    }
                    if let Some(s) = &d.describe {
                        var = quote!(#var.describe(#s));
                    }
                    if let Some(e) = &d.min {
                        var = quote!(#var.min(#e));
                    }
                    if let Some(e) = &d.max {
                        var = quote!(#var.max(#e));
                    }
                    if d.discrete {
                        var = quote!(#var.discrete());
                    }
                    if let Some(e) = &d.depends_on {
                        let e = names(e);
                        var = quote!(#var.depends_on(#e));
                    }
                    if let Some(e) = &d.initial_depends_on {
                        let e = names(e);
                        var = quote!(#var.initial_depends_on(#e));
                    }
                    if d.state {
                        let Some(derivative) = &d.derivative else {
                            return Err(syn::Error::new(
                                ident.span(),
                                "a state names its `derivative`",
                            ));
                        };
                        var = quote!(#var.state(#derivative));
                        if is_integer(&f.ty) {
                            return Err(syn::Error::new(ident.span(), "a state is an f64"));
                        }
                        get.push(quote!(x[#offset] = self.#place;));
                        set.push(quote!(self.#place = x[#offset];));
                        if let Some(from) = &d.from {
                            start_states.push(quote!(self.#place = self.#from;));
                            lifted_start.push(quote!(self.#place = self.#from;));
                        }
                        if d.angle {
                            angles = quote!(#angles | (1u64 << (#offset)));
                        }
                        // Named after the field, or an array's element after its variable.
                        let slot = match (&d.index, &d.name) {
                            (None, _) => ident.clone(),
                            (Some(_), Some(n)) => {
                                syn::parse_str::<Ident>(&n.value()).map_err(|_| {
                                    syn::Error::new(
                                        n.span(),
                                        "a state element's name is an identifier",
                                    )
                                })?
                            }
                            (Some(i), None) => {
                                return Err(syn::Error::new(i.span(), "an element needs a `name`"))
                            }
                        };
                        slots.push((slot, quote!(usize), quote!(o + #offset)));
                        offset = quote!(#offset + 1);
                    }
                    declare.push(quote!(vars.push(#var);));
                }
            }
        }
    }

    let index = format_ident!("{}States", name);
    let index_doc = format!(
        "The index of each state of [`{name}`] in the state vector, by name: a model writes its \
         derivatives as `dx[Self::STATE.w] = ...` (written by `#[derive(Variables)]`)."
    );
    let (n_names, n_dependencies) = (own_names.len(), own_dependencies.len());
    let names_len = quote!(#n_names #(+ (#name_parts).len())*);
    let dependencies_len = quote!(#n_dependencies #(+ (#dependency_parts).len())*);
    let slot_names = slots.iter().map(|s| &s.0);
    let slot_types = slots.iter().map(|s| &s.1);
    let slot_names2 = slots.iter().map(|s| &s.0);
    let slot_values = slots.iter().map(|s| &s.2);
    let lifted = param.as_ref().map(|_| {
        quote! {
            impl<__D: ::fmu_runtime::Scalar> #lift_path<#this> for #name<__D> {
                type Jet = __D;
                fn lift(from: &#this) -> Self {
                    #name { #(#lift),* }
                }
                #[inline]
                fn sync(&mut self, from: &#this) {
                    #(#sync)*
                }
                #[allow(unused_variables)]
                fn visit(&mut self, f: &mut dyn FnMut(&mut __D)) {
                    #(#visit)*
                }
                fn start_states(&mut self) {
                    #(#lifted_start)*
                }
            }
        }
    });
    Ok(quote! {
        #lifted

        #[doc = #index_doc]
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #vis struct #index {
            #(pub #slot_names: #slot_types,)*
        }

        impl #index {
            /// The indices for states that start at `o` in the vector.
            #[allow(unused_variables, clippy::identity_op)]
            pub const fn at(o: usize) -> Self {
                #index { #(#slot_names2: #slot_values,)* }
            }
        }

        impl #this {
            /// Each state's index in the state vector, by name.
            #[allow(dead_code)]
            pub const STATE: #index = #index::at(0);
        }

        impl ::core::default::Default for #this {
            fn default() -> Self {
                #name { #(#defaults),* }
            }
        }

        #(#lenses)*

        impl #rt::Variables for #this {
            const STATES: usize = #offset;
            const ANGLES: u64 = #angles;
            type StateIndex = #index;
            const NAMES: &'static [&'static str] = &#rt::sorted_names::<{ #names_len }>(
                &[&[#(#own_names),*] #(, #name_parts)*],
            );
            const DEPENDENCIES: &'static [#rt::Dependencies] =
                &#rt::concat_dependencies::<{ #dependencies_len }>(
                    &[&[#(#own_dependencies),*] #(, #dependency_parts)*],
                );

            #[allow(unused_variables)]
            fn declare<L: #rt::Lens<Inner = Self>>(vars: &mut ::std::vec::Vec<::fmu_runtime::Var<L::Outer>>) {
                #(#declare)*
            }

            #[inline(always)]
            #[allow(unused_variables)]
            fn get_states(&self, x: &mut [f64]) {
                // One length check; the constant indices below need none.
                let x = &mut x[..#offset];
                #(#get)*
            }

            #[inline(always)]
            #[allow(unused_variables)]
            fn set_states(&mut self, x: &[f64]) {
                let x = &x[..#offset];
                #(#set)*
            }

            fn start_states(&mut self) {
                #(#start_states)*
            }

            #[inline(always)]
            fn output_zeros(&self) -> f64 {
                0.0 #(#output_zeros)*
            }
        }
    })
}

/// The declaration errors a component author meets, each on the smallest field that makes it
/// (the derive itself cannot run outside a compiler; its parts can).
#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn field(fields: syn::FieldsNamed) -> syn::Result<Field> {
        parse_field(&fields.named[0])
    }

    fn refused(r: syn::Result<Field>, why: &str) {
        match r {
            Ok(_) => panic!("accepted; expected: {why}"),
            Err(e) => assert!(e.to_string().contains(why), "{e}"),
        }
    }

    #[test]
    fn each_state_key_needs_state() {
        refused(
            field(parse_quote!({ #[output(angle)] phi: f64 })),
            "add `state`",
        );
        refused(
            field(parse_quote!({ #[output(from = phi_start)] phi: f64 })),
            "add `state`",
        );
        refused(
            field(parse_quote!({ #[output(derivative = "w")] phi: f64 })),
            "add `state`",
        );
        field(
            parse_quote!({ #[output(state, angle, from = phi_start, derivative = "w")] phi: f64 }),
        )
        .expect("a declared state");
    }

    #[test]
    fn a_family_lists_its_names_and_a_state_element_is_named_as_an_identifier() {
        let expanded = |input: DeriveInput| expand(&input).map(|_| ());
        let refused = |r: syn::Result<()>, why: &str| match r {
            Ok(_) => panic!("accepted; expected: {why}"),
            Err(e) => assert!(e.to_string().contains(why), "{e}"),
        };
        refused(
            expanded(parse_quote!(
                struct M {
                    #[variables(with = family)]
                    f: [f64; 2],
                }
            )),
            "add `names = LIST`",
        );
        expanded(parse_quote!(
            struct M {
                #[variables(with = family, names = &NAMES)]
                f: [f64; 2],
            }
        ))
        .expect("a family with its names");
        refused(
            expanded(parse_quote!(
                struct M {
                    #[output(name = "q[1]", index = 0, state, derivative = "r")]
                    q: [f64; 1],
                }
            )),
            "a state element's name is an identifier",
        );
    }

    #[test]
    fn an_array_declares_each_element_with_its_index_and_its_start_once() {
        refused(
            field(parse_quote!({
                #[output(name = "a", index = 0)]
                #[output(name = "b")]
                q: [f64; 2]
            })),
            "give each an `index`",
        );
        refused(
            field(parse_quote!({
                #[output(name = "a", index = 0, start = 1.0)]
                #[output(name = "b", index = 1)]
                q: [f64; 2]
            })),
            "start values once",
        );
        // One declaration: no index needed, and its own start value.
        field(parse_quote!({ #[parameter(start = 1.0)] j: f64 })).expect("one declaration");
        field(parse_quote!({
            #[output(name = "a", index = 0)]
            #[output(name = "b", index = 1)]
            #[start([0.0; 2])]
            q: [f64; 2]
        }))
        .expect("an array declared element by element");
    }

    #[test]
    fn i32_fields_and_arrays_of_them_are_integers() {
        assert!(is_integer(&parse_quote!(i32)));
        assert!(is_integer(&parse_quote!([i32; 3])));
        assert!(!is_integer(&parse_quote!(f64)));
        assert!(!is_integer(&parse_quote!([f64; 3])));
    }
}
