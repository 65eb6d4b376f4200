//! `#[prompt]`: a fn whose parameters are a prompt's arguments (each read from the string the
//! wire carries with `from_text`) and whose result its messages.
//!
//! For `async fn review(code: String) -> String` it emits, beside the fn, the handle
//! `struct review {}` with `NAME` and `descriptor()`; inside `descriptor()` the get fn, the
//! completion wrappers, the static `PromptDescriptor` and its `inventory` submission.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::ItemFn;
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;

use crate::attr::{CommonAttrs, IconAttr, did_you_mean, icon, path_name, skip_value};
use crate::ctxt::Ctxt;
use crate::expand::options_descriptor;
use crate::item::{self, Item};
use crate::model::option_inner;

const OPTIONS: &str = "`name = \"...\"`, `title = \"...\"`, `icon(\"https://...\", mime = \"...\", sizes(\"48x48\"))`, `roles(\"...\")`, `scopes(\"...\")`, `timeout = \"5s\"`, `rate = \"10/min\"`, `concurrency = 4`, `crate = \"...\"`";

const NAMES: &[&str] = &[
    "name",
    "title",
    "icon",
    "roles",
    "scopes",
    "timeout",
    "rate",
    "concurrency",
    "crate",
];

const RETURNS: &str = "messages: `String` or `&str` (one user message), `PromptMessage`, `Vec<PromptMessage>` or `PromptReply`, or a `Result` of one";

struct PromptAttrs {
    common: CommonAttrs,
    icons: Vec<IconAttr>,
}

impl PromptAttrs {
    fn parse(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut attrs = PromptAttrs {
            common: CommonAttrs::new(),
            icons: Vec::new(),
        };
        let parser = syn::meta::parser(|meta| {
            attrs.parse_one(cx, &meta);
            Ok(())
        });
        if let Err(e) = syn::parse::Parser::parse2(parser, tokens) {
            cx.syn_error(e);
        }
        attrs
    }

    fn parse_one(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) {
        let span = meta.path.span();
        let key = path_name(&meta.path);
        let result = if let Some(result) = self.common.parse_one(cx, meta, &key) {
            result
        } else if key == "icon" {
            icon(meta).map(|i| self.icons.push(i))
        } else {
            cx.error(
                span,
                format!(
                    "unknown option `{key}` in #[prompt]{}; the options are {OPTIONS}",
                    did_you_mean(&key, NAMES)
                ),
            );
            skip_value(meta)
        };
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
}

pub(crate) fn expand_prompt(attr: TokenStream, item: &ItemFn) -> (TokenStream, Ctxt) {
    let cx = Ctxt::default();
    let mut attrs = PromptAttrs::parse(&cx, attr);
    let icons = std::mem::take(&mut attrs.icons);
    let model = Item::from_fn(&cx, &attrs.common, icons, item);
    model.check(&cx, item, "#[prompt]", "prompt", RETURNS);
    for p in model.inputs() {
        if let Some(span) = p.args.unscreened.span() {
            cx.error(
                span,
                "`unscreened` applies to #[resource] template variables, whose values are screened for `..` and absolute paths; a prompt's arguments are not: remove it",
            );
        }
    }
    (expand(&model), cx)
}

fn expand(item: &Item) -> TokenStream {
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
    } = item::fn_call(item, &quote!(__tool_args));
    let reply = quote_spanned! {item::return_span(item)=>
        <#ok_ty as #krate::prompt::PromptOutput>::into_reply(__tool_out)
    };
    let (completer_fns, completers) = item::completers(item);
    let arguments_meta = item.inputs().map(|p| {
        let name = item::param_name(p);
        let doc = item::param_doc(p);
        let required = option_inner(&p.ty).is_none();
        quote!((#name, #doc, #required))
    });
    let name = &item.name;
    let title = &item.title;
    let description = &item.description;
    let icons = item::icons(item);
    let options = options_descriptor(&item.options, &requires, &private);

    let body = quote! {
        #(#checks)*

        fn __tool_get(
            __tool_args: #private::BTreeMap<#private::String, #private::String>,
            __tool_ctx: #private::CallContext,
        ) -> #private::BoxFuture<'static, #private::Result<#private::PromptReply, #private::ToolError>> {
            #private::Box::pin(async move {
                #(#reads)*
                #(#injections)*
                let __tool_out = #invoke;
                let __tool_out = #value;
                #private::Ok(#reply)
            })
        }

        #(#completer_fns)*

        static __TOOL_DESCRIPTOR: #private::PromptDescriptor = #private::PromptDescriptor {
            name: #name,
            title: #title,
            description: #description,
            arguments: &[#(#arguments_meta),*],
            icons: #icons,
            options: #options,
            get: __tool_get,
            completers: &[#(#completers),*],
        };

        #private::inventory::submit! {
            #private::PromptRegistration(&__TOOL_DESCRIPTOR)
        }

        &__TOOL_DESCRIPTOR
    };
    item::handle(
        item,
        &quote!(#private::PromptDescriptor),
        &TokenStream::new(),
        &body,
        "prompt",
        "prompt",
    )
}
