//! What the derive writes from the fields' declarations: the default instance, the variable
//! table, the state vector's get and set, the state names and the dependency lists.

use super::*;

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
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
    let mut seed_states = Vec::new();
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
                // A part over the parameters' number type (`Part<Param<S>>`: fixed after
                // initialization) hands on its numbers as the model's, where they are jets.
                visit.push(if is_param(&f.ty) {
                    quote!(<#ty_d as #lift_path<#ty>>::visit(&mut self.#ident, &mut |j| {
                        f(j.and_then(<__D as ::fmu_runtime::Scalar>::param_mut))
                    });)
                } else {
                    quote!(<#ty_d as #lift_path<#ty>>::visit(&mut self.#ident, f);)
                });
                lifted_start
                    .push(quote!(<#ty_d as #lift_path<#ty>>::start_states(&mut self.#ident);));
                seed_states.push(quote!(<#ty_d as #lift_path<#ty>>::seed_states(
                    &mut self.#ident, &from.#ident, first.wrapping_sub(#offset));));
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
                        // A parameter declared `Param<S>` is a plain f64 among the jets after
                        // initialization: visited as None there.
                        visit.push(if is_param(&f.ty) {
                            quote!(f(<__D as ::fmu_runtime::Scalar>::param_mut(&mut self.#place));)
                        } else {
                            quote!(f(::core::option::Option::Some(&mut self.#place));)
                        });
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
                        seed_states.push(quote!(self.#place =
                            <__D as ::fmu_runtime::Scalar>::seeded_lane(from.#place, (#offset).wrapping_sub(first));));
                        set.push(quote!(self.#place = x[#offset];));
                        if let Some(from) = &d.from {
                            start_states.push(quote!(self.#place = self.#from;));
                            let from_param =
                                fields.iter().any(|g| g.ident == *from && is_param(&g.ty));
                            lifted_start.push(if from_param {
                                quote!(self.#place = <__D as ::fmu_runtime::Scalar>::param(self.#from);)
                            } else {
                                quote!(self.#place = self.#from;)
                            });
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
                type Moving = #name<<__D as ::fmu_runtime::Scalar>::Moving>;
                fn lift(from: &#this) -> Self {
                    #name { #(#lift),* }
                }
                #[inline]
                fn sync(&mut self, from: &#this) {
                    #(#sync)*
                }
                #[allow(unused_variables)]
                fn visit(&mut self, f: &mut dyn FnMut(::core::option::Option<&mut __D>)) {
                    #(#visit)*
                }
                fn start_states(&mut self) {
                    #(#lifted_start)*
                }
                #[inline(always)]
                #[allow(unused_variables, clippy::identity_op)]
                fn seed_states(&mut self, from: &#this, first: usize) {
                    #(#seed_states)*
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
