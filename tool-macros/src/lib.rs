//! `#[tool]`: turns an `async fn` into a tool served by every front end of `tool-runtime`;
//! `#[resource("uri")]` and `#[prompt]` turn one into an MCP resource or prompt.
//!
//! Use them through `tool_runtime` (re-exported); the generated code reaches its
//! dependencies through `::tool_runtime::__private`, so users add nothing else.
//!
//! `#[tool]` runs parse (`attr.rs`) → model (`model.rs`) → check (`check.rs`) → expand
//! (`expand.rs`); `#[resource]` (`resource.rs`) and `#[prompt]` (`prompt.rs`) share the
//! options, parameters, checks and expansion pieces of `#[tool]` and of each other (`item.rs`). On any error the user's fn is still emitted, with the errors beside it, so
//! callers and IDEs keep working.
// Every public item is documented, and `pub` means reachable by users.
#![warn(missing_docs, unreachable_pub)]

mod attr;
mod check;
mod ctxt;
mod expand;
mod item;
mod model;
mod prompt;
mod resource;

#[cfg(test)]
mod tests;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemFn;

/// Turns an `async fn` (or a plain `fn`, run on the blocking pool) into a tool: its input and output JSON Schemas, a validator, and a
/// registration every front end finds. See the `tool-runtime` crate for the options.
#[proc_macro_attribute]
pub fn tool(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand_tool(attr.into(), item.into()).into()
}

/// The whole expansion, on `proc_macro2` tokens so tests can call it.
#[allow(clippy::needless_pass_by_value)] // Reason: mirrors the proc-macro entry point's signature.
pub(crate) fn expand_tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let message = syn::Error::new(
                e.span(),
                "#[tool] applies to a fn item; write `#[tool] async fn name(...) -> T { ... }` (or a plain `fn`, run on the blocking pool)",
            )
            .to_compile_error();
            return quote!(#message #item);
        }
    };
    let cx = ctxt::Ctxt::default();
    let attrs = attr::ToolAttrs::parse(&cx, attr);
    let tool = model::Tool::from_fn(&cx, &attrs, &item);
    check::check(&cx, &item, &tool);
    strip_param_attrs(&mut item);
    // An `async` tool that awaits nothing is fine, one parameter per argument is the point, and
    // a plain fn's parameters are owned because they come from the call: these pedantic lints
    // would fire on correct tools.
    item.attrs.push(syn::parse_quote!(#[allow(
        clippy::unused_async,
        clippy::too_many_arguments,
        clippy::needless_pass_by_value
    )]));
    if let Some(errors) = cx.finish() {
        let errors = errors.to_compile_error();
        quote!(#item #errors)
    } else {
        let generated = expand::expand(&tool);
        quote!(#item #generated)
    }
}

/// Turns a fn into an MCP resource read by URI: `#[resource("devices://{id}/status")]`. Its
/// template's variables are its parameters. See the `tool-runtime` crate for the options.
#[proc_macro_attribute]
pub fn resource(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand_item(
        "resource",
        attr.into(),
        item.into(),
        resource::expand_resource,
    )
    .into()
}

/// Turns a fn into an MCP prompt: its parameters are the prompt's arguments, its result the
/// messages. See the `tool-runtime` crate for the options.
#[proc_macro_attribute]
pub fn prompt(
    attr: proc_macro::TokenStream,
    item: proc_macro::TokenStream,
) -> proc_macro::TokenStream {
    expand_item("prompt", attr.into(), item.into(), prompt::expand_prompt).into()
}

/// `#[resource]` or `#[prompt]` (`what`), on `proc_macro2` tokens so tests can call it: the
/// fn is emitted as written (parameter attributes stripped), with the generated items or the
/// errors beside it.
#[allow(clippy::needless_pass_by_value)] // Reason: mirrors the proc-macro entry point's signature.
pub(crate) fn expand_item(
    what: &str,
    attr: TokenStream,
    item: TokenStream,
    expand: fn(TokenStream, &ItemFn) -> (TokenStream, ctxt::Ctxt),
) -> TokenStream {
    let mut item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(e) => {
            let message = syn::Error::new(
                e.span(),
                format!("#[{what}] applies to a fn item: `#[{what}] async fn name(...) -> T {{ ... }}` (or a plain `fn`)"),
            )
            .to_compile_error();
            return quote!(#message #item);
        }
    };
    let (generated, cx) = expand(attr, &item);
    strip_param_attrs(&mut item);
    item.attrs.push(syn::parse_quote!(#[allow(
        clippy::unused_async,
        clippy::too_many_arguments,
        clippy::needless_pass_by_value
    )]));
    if let Some(errors) = cx.finish() {
        let errors = errors.to_compile_error();
        quote!(#item #errors)
    } else {
        quote!(#item #generated)
    }
}

/// Doc comments and `#[arg]` on parameters are read by the macro and are not valid Rust on a
/// fn parameter, so they are removed from the emitted fn (also when there are errors).
fn strip_param_attrs(item: &mut ItemFn) {
    for input in &mut item.sig.inputs {
        if let syn::FnArg::Typed(pt) = input {
            pt.attrs
                .retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("arg"));
        }
    }
}
