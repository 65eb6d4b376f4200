//! `#[resource("uri-template", ...)]`: a fn read by URI. Its options are parsed here, its
//! template by `tool_grammar::uri_template` (the runtime's grammar), and every template
//! variable must be a parameter and every caller-given parameter a variable.
//!
//! For `async fn device_status(id: String) -> Status` it emits, beside the fn, the handle
//! `struct device_status {}` with `NAME`, `URI` and `descriptor()`; inside `descriptor()` the
//! read fn (each variable read from its text with `from_text`, injected values, the call, the
//! value made a `ResourceBody`), the list and completion wrappers, the static
//! `ResourceDescriptor` and its `inventory` submission.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{ItemFn, LitStr, Token};
use tool_grammar::uri_template::Template;

use crate::attr::{
    Attr, CommonAttrs, IconAttr, did_you_mean, icon, lit_str, path_name, skip_value, string_list,
};
use crate::ctxt::Ctxt;
use crate::expand::{opt_timeout, options_descriptor};
use crate::item::{self, Item};
use crate::model::{Parsed, option_inner};

const OPTIONS: &str = "`name = \"...\"`, `title = \"...\"`, `mime = \"...\"`, `ttl = \"30s\"`, `scope = \"public\"` or `\"private\"`, `size = 1234` or `\"2KiB\"`, `audience(\"user\", \"assistant\")`, `priority = 0.5`, `icon(\"https://...\", mime = \"...\", sizes(\"48x48\"))`, `list = path::to::fn`, `roles(\"...\")`, `scopes(\"...\")`, `timeout = \"5s\"`, `rate = \"10/min\"`, `concurrency = 4`, `crate = \"...\"`";

const NAMES: &[&str] = &[
    "name",
    "title",
    "mime",
    "ttl",
    "scope",
    "size",
    "audience",
    "priority",
    "icon",
    "list",
    "roles",
    "scopes",
    "timeout",
    "rate",
    "concurrency",
    "crate",
];

const RETURNS: &str = "contents: `String` or `&'static str` (text), `Vec<u8>` or `bytes::Bytes` (a blob), `ResourceContents`, `Vec<ResourceContents>`, `ResourceBody`, or any `Serialize` type (JSON), or a `Result` of one";

struct ResourceAttrs {
    uri: Option<LitStr>,
    common: CommonAttrs,
    mime: Attr<LitStr>,
    ttl: Attr<LitStr>,
    scope: Attr<LitStr>,
    size: Attr<syn::Lit>,
    audience: Attr<Vec<LitStr>>,
    priority: Attr<syn::Lit>,
    icons: Vec<IconAttr>,
    list: Attr<syn::Path>,
}

impl ResourceAttrs {
    fn parse(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut attrs = ResourceAttrs {
            uri: None,
            common: CommonAttrs::new(),
            mime: Attr::none("mime"),
            ttl: Attr::none("ttl"),
            scope: Attr::none("scope"),
            size: Attr::none("size"),
            audience: Attr::none("audience"),
            priority: Attr::none("priority"),
            icons: Vec::new(),
            list: Attr::none("list"),
        };
        let first = |input: syn::parse::ParseStream<'_>| -> syn::Result<(LitStr, TokenStream)> {
            let uri: LitStr = input.parse()?;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            Ok((uri, input.parse()?))
        };
        let span = tokens
            .clone()
            .into_iter()
            .next()
            .map_or_else(Span::call_site, |t| t.span());
        let Ok((uri, rest)) = syn::parse::Parser::parse2(first, tokens) else {
            cx.error(
                span,
                "#[resource] takes the resource's URI first: `#[resource(\"devices://{id}/status\")]`, then its options",
            );
            return attrs;
        };
        attrs.uri = Some(uri);
        let parser = syn::meta::parser(|meta| {
            attrs.parse_one(cx, &meta);
            Ok(())
        });
        if let Err(e) = syn::parse::Parser::parse2(parser, rest) {
            cx.syn_error(e);
        }
        attrs
    }

    fn parse_one(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) {
        let span = meta.path.span();
        let key = path_name(&meta.path);
        let result = if let Some(result) = self.common.parse_one(cx, meta, &key) {
            result
        } else {
            match key.as_str() {
                "mime" => lit_str(meta).map(|v| self.mime.set(cx, span, v)),
                "ttl" => lit_str(meta).map(|v| self.ttl.set(cx, span, v)),
                "scope" => lit_str(meta).map(|v| self.scope.set(cx, span, v)),
                "size" => meta
                    .value()
                    .and_then(syn::parse::ParseBuffer::parse::<syn::Lit>)
                    .map(|v| self.size.set(cx, span, v)),
                "priority" => meta
                    .value()
                    .and_then(syn::parse::ParseBuffer::parse::<syn::Lit>)
                    .map(|v| self.priority.set(cx, span, v)),
                "audience" => string_list(meta, "audience").map(|v| self.audience.set(cx, span, v)),
                "icon" => icon(meta).map(|i| self.icons.push(i)),
                "list" => meta
                    .value()
                    .and_then(syn::parse::ParseBuffer::parse::<syn::Path>)
                    .map_err(|e| {
                        syn::Error::new(e.span(), "`list` takes a fn path: `list = my_list`")
                    })
                    .map(|v| self.list.set(cx, span, v)),
                other => {
                    cx.error(
                        span,
                        format!(
                            "unknown option `{other}` in #[resource]{}; the options are {OPTIONS}",
                            did_you_mean(other, NAMES)
                        ),
                    );
                    skip_value(meta)
                }
            }
        };
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
}

/// The resource's own options, read.
struct Resource {
    item: Item,
    uri: LitStr,
    template: Option<Template>,
    mime: Option<String>,
    ttl: Option<Parsed<u64>>,
    scope: Option<LitStr>,
    size: Option<syn::Lit>,
    audience: Vec<LitStr>,
    priority: Option<syn::Lit>,
    list: Option<syn::Path>,
}

pub(crate) fn expand_resource(attr: TokenStream, item: &ItemFn) -> (TokenStream, Ctxt) {
    let cx = Ctxt::default();
    let mut attrs = ResourceAttrs::parse(&cx, attr);
    let Some(uri) = attrs.uri.take() else {
        return (TokenStream::new(), cx);
    };
    let icons = std::mem::take(&mut attrs.icons);
    let model = Item::from_fn(&cx, &attrs.common, icons, item);
    let resource = Resource {
        template: tool_grammar::uri_template::parse(&uri.value()).ok(),
        uri,
        mime: attrs.mime.get().map(LitStr::value),
        ttl: Parsed::read(attrs.ttl.get(), tool_grammar::duration_ms),
        scope: attrs.scope.get().cloned(),
        size: attrs.size.get().cloned(),
        audience: attrs.audience.get().cloned().unwrap_or_default(),
        priority: attrs.priority.get().cloned(),
        list: attrs.list.get().cloned(),
        item: model,
    };
    check(&cx, item, &resource);
    (expand(&resource), cx)
}

fn check(cx: &Ctxt, item: &ItemFn, r: &Resource) {
    r.item.check(cx, item, "#[resource]", "resource", RETURNS);
    let uri = &r.uri;
    let Some(template) = &r.template else {
        let why = tool_grammar::uri_template::parse(&uri.value())
            .err()
            .unwrap_or_default();
        cx.error(
            uri.span(),
            format!(
                "invalid URI template: {why}; write a variable as `{{name}}` (one path segment), `{{name*}}` (the rest of the path) or `{{?a,b}}` (optional query variables, last)"
            ),
        );
        return;
    };
    for var in template.variables() {
        if !r.item.inputs().any(|p| item::param_name(p) == var) {
            cx.error(
                uri.span(),
                format!(
                    "the URI template has the variable `{var}` but the fn has no parameter `{var}`; add one, such as `{var}: String`"
                ),
            );
        }
    }
    for p in r.item.inputs() {
        let name = item::param_name(p);
        if !template.variables().any(|v| v == name) {
            cx.error(
                p.ident.span(),
                format!(
                    "`{name}` is no variable of the URI template `{}`: add `{{{name}}}` to the URI, or have the pipeline supply it (`State<T>`, `CallContext`, `#[arg(inject)]`)",
                    uri.value()
                ),
            );
        } else if template.query.contains(&name) && option_inner(&p.ty).is_none() {
            let ty = &p.ty;
            cx.error_spanned(
                ty,
                format!(
                    "`{name}` is a query variable (`{{?{name}}}`), which a URI may leave out: make it an `Option<{}>`",
                    quote!(#ty).to_string().replace(' ', "")
                ),
            );
        }
    }
    if let Some(Parsed { lit, value }) = &r.ttl
        && value.is_none()
    {
        cx.error(
            lit.span(),
            format!(
                "invalid ttl `{}`: write a whole number with a unit, such as \"30s\", \"5m\" or \"1h\"",
                lit.value()
            ),
        );
    }
    if let Some(scope) = &r.scope
        && !matches!(scope.value().as_str(), "public" | "private")
    {
        cx.error(
            scope.span(),
            "`scope` is who may cache a read: \"public\" (any cache) or \"private\" (the caller's own)",
        );
    }
    if let Some(size) = &r.size
        && size_value(size).is_none()
    {
        cx.error(
            size.span(),
            "`size` is the resource's size in bytes: a whole number (`size = 1234`) or one with a unit (`size = \"2KiB\"`)",
        );
    }
    for a in &r.audience {
        if !matches!(a.value().as_str(), "user" | "assistant") {
            cx.error(
                a.span(),
                "an audience is \"user\" or \"assistant\": `audience(\"user\", \"assistant\")`",
            );
        }
    }
    if let Some(priority) = &r.priority
        && priority_value(priority).is_none()
    {
        cx.error(
            priority.span(),
            "`priority` is a number from 0 (optional) to 1 (required): `priority = 0.5`",
        );
    }
}

fn size_value(lit: &syn::Lit) -> Option<u64> {
    match lit {
        syn::Lit::Int(i) => i.base10_parse().ok(),
        syn::Lit::Str(s) => tool_grammar::size(&s.value()).and_then(|n| u64::try_from(n).ok()),
        _ => None,
    }
}

fn priority_value(lit: &syn::Lit) -> Option<f32> {
    let value: f32 = match lit {
        syn::Lit::Float(f) => f.base10_parse().ok()?,
        syn::Lit::Int(i) => i.base10_parse().ok()?,
        _ => return None,
    };
    (0.0..=1.0).contains(&value).then_some(value)
}

#[allow(clippy::too_many_lines)] // Reason: one quote! of the whole output reads best in one piece.
fn expand(r: &Resource) -> TokenStream {
    let item = &r.item;
    let krate = &item.krate;
    let private = item.private();
    let item::FnCall {
        checks,
        reads,
        injections,
        requires,
        invoke,
        ok_ty,
        value,
    } = item::fn_call(item, &quote!(__tool_values));
    let body = quote_spanned! {item::return_span(item)=>
        (&&&#private::Marker::<#ok_ty>::new()).body(__tool_out)
    };
    let (completer_fns, completers) = item::completers(item);
    let (list_fn, list) = match &r.list {
        Some(path) => {
            let call =
                quote_spanned! {path.span()=> #krate::resource::Lister::run(#path, __tool_ctx) };
            (
                quote! {
                    fn __tool_list(
                        __tool_ctx: #private::CallContext,
                    ) -> #private::BoxFuture<'static, #private::Result<::std::vec::Vec<#private::Listed>, #private::ToolError>> {
                        #call
                    }
                },
                quote!(#private::Some(__tool_list)),
            )
        }
        None => (TokenStream::new(), quote!(#private::None)),
    };
    let variables = r.template.iter().flat_map(Template::variables).map(|var| {
        let screened = !item
            .inputs()
            .any(|p| item::param_name(p) == var && p.args.unscreened.get().is_some());
        quote!((#var, #screened))
    });
    let opt_str =
        |v: Option<&str>| v.map_or_else(|| quote!(#private::None), |s| quote!(#private::Some(#s)));
    let name = &item.name;
    let uri = &r.uri;
    let title = &item.title;
    let description = &item.description;
    let mime = opt_str(r.mime.as_deref());
    let ttl = opt_timeout(r.ttl.as_ref(), &private);
    let scope = match r.scope.as_ref().map(LitStr::value).as_deref() {
        Some("public") => quote!(#private::Some(#private::CacheScope::Public)),
        Some("private") => quote!(#private::Some(#private::CacheScope::Private)),
        _ => quote!(#private::None),
    };
    let size = r
        .size
        .as_ref()
        .and_then(size_value)
        .map_or_else(|| quote!(#private::None), |n| quote!(#private::Some(#n)));
    let priority = r
        .priority
        .as_ref()
        .and_then(priority_value)
        .map_or_else(|| quote!(#private::None), |p| quote!(#private::Some(#p)));
    let audience = &r.audience;
    let icons = item::icons(item);
    let options = options_descriptor(&item.options, &requires, &private);

    let body = quote! {
        #(#checks)*

        fn __tool_read(
            __tool_uri: #private::String,
            __tool_values: #private::BTreeMap<#private::String, #private::String>,
            __tool_ctx: #private::CallContext,
        ) -> #private::BoxFuture<'static, #private::Result<#private::ResourceBody, #private::ToolError>> {
            #private::Box::pin(async move {
                let _ = __tool_uri;
                #(#reads)*
                #(#injections)*
                let __tool_out = #invoke;
                let __tool_out = #value;
                #[allow(unused_imports)]
                use #private::{KnownBody as _, JsonBody as _, NoBody as _};
                #body
            })
        }

        #list_fn
        #(#completer_fns)*

        static __TOOL_DESCRIPTOR: #private::ResourceDescriptor = #private::ResourceDescriptor {
            name: #name,
            uri: #uri,
            title: #title,
            description: #description,
            mime_type: #mime,
            ttl: #ttl,
            scope: #scope,
            size: #size,
            audience: &[#(#audience),*],
            priority: #priority,
            icons: #icons,
            variables: &[#(#variables),*],
            options: #options,
            read: __tool_read,
            list: #list,
            completers: &[#(#completers),*],
        };

        #private::inventory::submit! {
            #private::ResourceRegistration(&__TOOL_DESCRIPTOR)
        }

        &__TOOL_DESCRIPTOR
    };
    let uri_doc = " The resource's URI, or its URI template.";
    let vis = &item.vis;
    let consts = quote! {
        #[doc = #uri_doc]
        #vis const URI: &'static str = #uri;
    };
    item::handle(
        item,
        &quote!(#private::ResourceDescriptor),
        &consts,
        &body,
        "resource",
        "resource",
    )
}
