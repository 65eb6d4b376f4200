//! What `#[resource]` and `#[prompt]` share: the fn read into an [`Item`] (naming, the
//! pipeline's options, parameters, output), its checks, and the pieces of their expansions
//! (parameters read from text, completers, icons, the handle type).

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{ItemFn, ReturnType, Type};

use crate::attr::{CommonAttrs, IconAttr};
use crate::ctxt::Ctxt;
use crate::expand::{Call, call_parts, invoke, output_value};
use crate::model::{ItemOptions, Output, Param, ParamKind, doc_text};

/// A resource or prompt fn, read.
pub(crate) struct Item {
    pub(crate) ident: syn::Ident,
    pub(crate) vis: syn::Visibility,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    pub(crate) title: String,
    pub(crate) description: String,
    /// `roles`, `timeout`, `rate`, `concurrency`, as a tool's.
    pub(crate) options: ItemOptions,
    pub(crate) krate: TokenStream,
    pub(crate) icons: Vec<IconAttr>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
    /// A plain `fn`, run on the blocking pool.
    pub(crate) blocking: bool,
}

impl Item {
    pub(crate) fn from_fn(
        cx: &Ctxt,
        common: &CommonAttrs,
        icons: Vec<IconAttr>,
        item: &ItemFn,
    ) -> Item {
        let ident = item.sig.ident.clone();
        let fn_name = syn::ext::IdentExt::unraw(&ident).to_string();
        let (name, name_span) = common
            .name
            .get()
            .map_or((fn_name, ident.span()), |l| (l.value(), l.span()));
        let title = common
            .title
            .get()
            .map_or_else(|| tool_grammar::title_from_name(&name), syn::LitStr::value);
        let params = crate::model::params_of(cx, item);
        let output = crate::model::output_of(item);
        Item {
            vis: item.vis.clone(),
            name,
            name_span,
            title,
            description: doc_text(&item.attrs).unwrap_or_default(),
            options: ItemOptions::from_common(common),
            krate: common
                .krate
                .get()
                .map_or_else(|| quote!(::tool_runtime), |p| quote!(#p)),
            icons,
            params,
            output,
            blocking: item.sig.asyncness.is_none(),
            ident,
        }
    }

    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.kind == ParamKind::Input)
    }

    pub(crate) fn private(&self) -> TokenStream {
        let krate = &self.krate;
        quote!(#krate::__private)
    }

    /// The rules both follow. `what` is the attribute (`#[resource]`), `kind` the noun
    /// (`resource`), `returns` what the fn may return.
    pub(crate) fn check(&self, cx: &Ctxt, item: &ItemFn, what: &str, kind: &str, returns: &str) {
        crate::check::check_signature(cx, item, what);
        match &item.sig.output {
            ReturnType::Default => cx.error(
                item.sig.ident.span(),
                format!("a {kind} fn returns its {returns}; add a return type"),
            ),
            ReturnType::Type(_, ty) if matches!(**ty, Type::ImplTrait(_)) => cx.error_spanned(
                ty,
                format!("a {kind} cannot return `impl Trait`; write the type: {returns}"),
            ),
            ReturnType::Type(..) => {}
        }
        crate::check::check_name(cx, kind, &self.name, self.name_span);
        crate::check::check_options(cx, &self.options);
        for icon in &self.icons {
            let src = icon.src.value();
            if !(src.starts_with("https://")
                || src.starts_with("http://")
                || src.starts_with("data:"))
            {
                cx.error(
                    icon.src.span(),
                    format!(
                        "an icon's source is an `https:` (or `http:`) or `data:` URL, not `{src}`"
                    ),
                );
            }
        }
        for p in &self.params {
            let a = &p.args;
            for span in [
                a.default.span(),
                a.range.span(),
                a.length.span(),
                a.pattern.span(),
                a.positional.span(),
                a.short.get().map(syn::LitChar::span),
                a.header.span(),
                a.required.span(),
            ]
            .into_iter()
            .flatten()
            {
                cx.error(
                    span,
                    format!(
                        "this option applies to #[tool] parameters; a {kind}'s parameters take `complete = path::to::fn`{}",
                        if kind == "resource" { " and `unscreened`" } else { "" }
                    ),
                );
            }
            if p.kind != ParamKind::Input {
                for span in [a.complete.span(), a.unscreened.span()]
                    .into_iter()
                    .flatten()
                {
                    cx.error(
                        span,
                        format!(
                            "`{}` is injected by the pipeline, not given by callers, so it takes no argument options; remove this option",
                            p.ident
                        ),
                    );
                }
                continue;
            }
            crate::check::check_param_name(cx, &p.ident);
            if matches!(p.ty, Type::Reference(_) | Type::ImplTrait(_)) {
                cx.error_spanned(
                    &p.ty,
                    format!("{kind} parameters are read from text and must be owned: use `String`, a number, a `bool`, an enum, or an `Option` of one"),
                );
            }
        }
    }
}

/// The parameter's variable in the generated code: `__tool_arg_{name}`.
pub(crate) fn arg_var(p: &Param) -> syn::Ident {
    format_ident!(
        "__tool_arg_{}",
        syn::ext::IdentExt::unraw(&p.ident).to_string()
    )
}

/// The name a parameter goes by: its identifier, without `r#`.
pub(crate) fn param_name(p: &Param) -> String {
    syn::ext::IdentExt::unraw(&p.ident).to_string()
}

/// `let __tool_arg_x: T = <T as TextValue>::from_text("x", source.get("x"))?;` for each input, spanned at
/// its type so a type that does not read from text is reported there.
pub(crate) fn read_inputs(item: &Item, source: &TokenStream) -> Vec<TokenStream> {
    let krate = &item.krate;
    item.inputs()
        .map(|p| {
            let var = arg_var(p);
            let name = param_name(p);
            let ty = &p.ty;
            let read = quote_spanned! {ty.span()=>
                <#ty as #krate::tool::TextValue>::from_text(#name, #source.get(#name))
            };
            quote!(let #var: #ty = #read?;)
        })
        .collect()
}

/// The call of an item's fn, as `#[resource]` and `#[prompt]` both write it: its inputs read
/// from the map `source`, its injected parameters, the call, and its output taken apart.
pub(crate) struct FnCall {
    /// Compile-time checks of the parameters' and the output's types.
    pub(crate) checks: Vec<TokenStream>,
    /// `let`s reading each input from text.
    pub(crate) reads: Vec<TokenStream>,
    /// `let`s making each injected parameter.
    pub(crate) injections: Vec<TokenStream>,
    /// The state types the injected parameters need.
    pub(crate) requires: Vec<TokenStream>,
    /// The call of the fn (awaited, or on the blocking pool).
    pub(crate) invoke: TokenStream,
    /// The output's success type.
    pub(crate) ok_ty: TokenStream,
    /// `__tool_out` taken apart into its success value, or returned as the error.
    pub(crate) value: TokenStream,
}

/// How `item`'s fn is called, its inputs read from the map named `source`.
pub(crate) fn fn_call(item: &Item, source: &TokenStream) -> FnCall {
    let private = item.private();
    let reads = read_inputs(item, source);
    let Call {
        injections,
        requires,
        arguments,
        mut checks,
    } = call_parts(&item.params, &private, |p| {
        let var = arg_var(p);
        quote!(#var)
    });
    let invoke = invoke(&item.ident, item.blocking, &arguments, &private);
    let (ok_ty, value) = output_value(&item.output, &item.krate, &mut checks);
    FnCall {
        checks,
        reads,
        injections,
        requires,
        invoke,
        ok_ty,
        value,
    }
}

/// One wrapper fn per `#[arg(complete = f)]` and the table naming them.
pub(crate) fn completers(item: &Item) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let krate = &item.krate;
    let private = item.private();
    let mut fns = Vec::new();
    let mut table = Vec::new();
    for p in item.inputs() {
        let Some(path) = p.args.complete.get() else {
            continue;
        };
        let name = param_name(p);
        let wrapper = format_ident!("__tool_complete_{}", name);
        let call =
            quote_spanned! {path.span()=> #krate::tool::CompleteFn::run(#path, __tool_completing) };
        fns.push(quote! {
            fn #wrapper(
                __tool_completing: #private::Completing,
            ) -> #private::BoxFuture<'static, #private::Result<::std::vec::Vec<#private::String>, #private::ToolError>> {
                #call
            }
        });
        table.push(quote!((#name, #wrapper as #private::Completer)));
    }
    (fns, table)
}

/// `&[(src, mime, &[sizes])]`.
pub(crate) fn icons(item: &Item) -> TokenStream {
    let private = item.private();
    let icons = item.icons.iter().map(|i| {
        let src = &i.src;
        let mime = i
            .mime
            .as_ref()
            .map_or_else(|| quote!(#private::None), |m| quote!(#private::Some(#m)));
        let sizes = &i.sizes;
        quote!((#src, #mime, &[#(#sizes),*]))
    });
    quote!(&[#(#icons),*])
}

/// Where a return type that does not fit is reported: at the type.
pub(crate) fn return_span(item: &Item) -> Span {
    match &item.output {
        Output::Plain(ty) | Output::Result(ty) => ty.span(),
        Output::Unit => item.ident.span(),
    }
}

/// The handle: a type named as the fn, with `NAME` and `descriptor()`.
pub(crate) fn handle(
    item: &Item,
    descriptor_ty: &TokenStream,
    consts: &TokenStream,
    body: &TokenStream,
    what: &str,
    register: &str,
) -> TokenStream {
    let fn_ident = &item.ident;
    let vis = &item.vis;
    let name = &item.name;
    let handle_doc = format!(
        " The `{name}` {what} generated by `#[{what}]`: `{fn_ident}::NAME`, and `{fn_ident}::descriptor()` for explicit registration."
    );
    let descriptor_doc = format!(
        " The {what}'s descriptor, for explicit registration: `Registry::builder().{register}({fn_ident}::descriptor())`."
    );
    let name_doc = format!(" The {what}'s name.");
    quote! {
        #[doc = #handle_doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #fn_ident {}

        #[allow(clippy::all, clippy::pedantic)]
        impl #fn_ident {
            #[doc = #name_doc]
            #vis const NAME: &'static str = #name;
            #consts

            #[doc = #descriptor_doc]
            #[must_use]
            #vis fn descriptor() -> &'static #descriptor_ty {
                #body
            }
        }
    }
}

/// The doc text of a parameter, or empty.
pub(crate) fn param_doc(p: &Param) -> String {
    p.doc.clone().unwrap_or_default()
}
