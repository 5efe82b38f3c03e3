//! The declarations read from a field's attributes: one variable per attribute, an embedded part,
//! and what the field is.

use super::*;

/// One declared variable.
#[derive(Default)]
pub(crate) struct Declaration {
    pub(crate) kind: String,
    pub(crate) name: Option<LitStr>,
    pub(crate) index: Option<Expr>,
    pub(crate) start: Option<Expr>,
    pub(crate) unit: Option<LitStr>,
    pub(crate) describe: Option<LitStr>,
    pub(crate) min: Option<Expr>,
    pub(crate) max: Option<Expr>,
    pub(crate) discrete: bool,
    pub(crate) depends_on: Option<Expr>,
    pub(crate) initial_depends_on: Option<Expr>,
    pub(crate) state: bool,
    pub(crate) angle: bool,
    pub(crate) from: Option<Ident>,
    pub(crate) derivative: Option<LitStr>,
}

/// What `#[variables(...)]` says of an embedded field.
#[derive(Default)]
pub(crate) struct Embedding {
    pub(crate) with: Option<ExprPath>,
    /// The names of the variables `with` declares (a `&[&str]`), for the dependency check.
    pub(crate) names: Option<Expr>,
    /// For a model generic over its number type: the function that visits the Real
    /// variables `with` declares, in the same order
    /// (`fn visit<D: Scalar>(field: &mut FieldType<D>, f: &mut dyn FnMut(&mut D))`).
    pub(crate) visit: Option<ExprPath>,
    /// (names, is initial, dependencies)
    pub(crate) overrides: Vec<(Vec<Ident>, bool, Expr)>,
}

pub(crate) enum Role {
    Plain(Vec<Declaration>),
    Embedded(Box<Embedding>),
}

pub(crate) struct Field {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) start: Option<Expr>,
    pub(crate) role: Role,
}

/// `depends_on = NAMES`: a list literal becomes a `&'static [&str]`.
pub(crate) fn names(e: &Expr) -> Tokens {
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

pub(crate) fn parse_field(f: &syn::Field) -> syn::Result<Field> {
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
pub(crate) fn is_integer(ty: &Type) -> bool {
    match ty {
        Type::Path(p) => p.path.is_ident("i32"),
        Type::Array(a) => is_integer(&a.elem),
        _ => false,
    }
}
