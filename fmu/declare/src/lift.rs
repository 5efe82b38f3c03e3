//! Token surgery for a field's type written at another number type than the component's.

use super::*;

/// `tokens` with every `from` replaced by `to`: a field's type at another number type.
pub(crate) fn subst(tokens: Tokens, from: &Ident, to: &Tokens) -> Tokens {
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
pub(crate) fn mentions(tokens: Tokens, param: &Ident) -> bool {
    tokens.into_iter().any(|tt| match tt {
        TokenTree::Ident(i) => &i == param,
        TokenTree::Group(g) => mentions(g.stream(), param),
        _ => false,
    })
}

/// Whether a field's type is over the parameters' number type: `Param<S>`, or a part or an
/// array over it (`Part<Param<S>>`); fixed after initialization, a plain f64 among the jets.
pub(crate) fn is_param(ty: &Type) -> bool {
    fn names_param(tokens: Tokens) -> bool {
        tokens.into_iter().any(|tt| match tt {
            TokenTree::Ident(i) => i == "Param",
            TokenTree::Group(g) => names_param(g.stream()),
            _ => false,
        })
    }
    names_param(quote!(#ty))
}
