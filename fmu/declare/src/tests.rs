use super::parse::Field;
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
    field(parse_quote!({ #[output(state, angle, from = phi_start, derivative = "w")] phi: f64 }))
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
