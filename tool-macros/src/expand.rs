//! Expansion: the generated code, read from the model only.
//!
//! For `async fn device_add(...)` this emits, beside the untouched fn:
//! - `struct device_add {}` (type namespace only, so it sits beside the fn) whose associated
//!   items are the tool's handle: `device_add::NAME` and `device_add::descriptor()`;
//! - inside `descriptor()`: the args struct (serde + schemars derives), default fns, the schema
//!   fns, the call fn that decodes, injects and awaits the user's fn, the static descriptor,
//!   its `inventory` submission, and one trait check per parameter, spanned at its type.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::check::parse_duration_ms;
use crate::model::{Output, ParamKind, Tool};

pub(crate) fn expand(tool: &Tool) -> TokenStream {
    let krate = &tool.krate;
    let private = quote!(#krate::__private);
    let fn_ident = &tool.ident;
    let vis = &tool.vis;
    let name = &tool.name;
    let title = &tool.title;
    let summary = &tool.summary;
    let description = &tool.description;

    let serde_path = format!("{}::serde", private.to_string().replace(' ', ""));
    let schemars_path = format!("{}::schemars", private.to_string().replace(' ', ""));

    // The args struct and its default fns.
    let mut fields = Vec::new();
    let mut default_fns = Vec::new();
    let mut checks = Vec::new();
    for p in tool.inputs() {
        let ident = &p.ident;
        let ty = &p.ty;
        let docs = &p.doc_attrs;
        let mut attrs = Vec::new();
        if let Some(default) = p.args.default.get() {
            let default_fn = format_ident!(
                "__tool_default_{}",
                ident.to_string().trim_start_matches("r#")
            );
            let path = default_fn.to_string();
            // Spanned at the default, so a value that does not fit the type is reported there.
            default_fns.push(quote_spanned! {default.span()=>
                #[allow(clippy::unnecessary_wraps, clippy::default_numeric_fallback)]
                fn #default_fn() -> #ty { #default }
            });
            attrs.push(quote!(#[serde(default = #path)]));
        }
        if let Some(b) = p.args.range.get() {
            let min = b.min.as_ref().map(|m| quote!(min = #m));
            let max = b.max.as_ref().map(|m| quote!(max = #m));
            let parts = min.into_iter().chain(max);
            attrs.push(quote!(#[schemars(range(#(#parts),*))]));
        }
        if let Some(b) = p.args.length.get() {
            let min = b.min.as_ref().map(|m| quote!(min = #m));
            let max = b.max.as_ref().map(|m| quote!(max = #m));
            let parts = min.into_iter().chain(max);
            attrs.push(quote!(#[schemars(length(#(#parts),*))]));
        }
        if let Some(pattern) = p.args.pattern.get() {
            attrs.push(quote!(#[schemars(regex(pattern = #pattern))]));
        }
        fields.push(quote! {
            #(#docs)*
            #(#attrs)*
            #ident: #ty,
        });
        checks.push(quote_spanned! {ty.span()=>
            const _: () = #private::assert_param::<#ty>();
        });
    }

    // Injected values and the call of the user's fn, in declaration order.
    let mut injections = Vec::new();
    let mut requires = Vec::new();
    let mut call_args = Vec::new();
    for (i, p) in tool.params.iter().enumerate() {
        let ty = &p.ty;
        match p.kind {
            ParamKind::Input => {
                let ident = &p.ident;
                call_args.push(quote!(__tool_args.#ident));
            }
            ParamKind::ContextRef => call_args.push(quote!(&__tool_ctx)),
            ParamKind::Injected => {
                let var = format_ident!("__tool_inject_{}", i);
                injections.push(quote! {
                    let #var = <#ty as #private::FromCallContext>::from_context(&__tool_ctx)?;
                });
                requires.push(quote!(<#ty as #private::FromCallContext>::REQUIRES));
                checks.push(quote_spanned! {ty.span()=>
                    const _: () = #private::assert_injected::<#ty>();
                });
                call_args.push(quote!(#var));
            }
        }
    }

    let (output_ty, finish) = match &tool.output {
        Output::Unit => (quote!(()), quote!(#private::encode(&__tool_out))),
        Output::Plain(ty) => (ty.to_token_stream(), quote!(#private::encode(&__tool_out))),
        Output::Result(ty) => (
            quote!(<#ty as #private::IntoToolResult>::Ok),
            quote!(#private::encode(&#private::IntoToolResult::into_tool_result(__tool_out)?)),
        ),
    };
    if let Output::Plain(ty) | Output::Result(ty) = &tool.output {
        checks.push(quote_spanned! {ty.span()=>
            const _: () = #private::assert_output::<#output_ty>();
        });
    }

    let opt = |v: Option<bool>| match v {
        Some(b) => quote!(#private::Some(#b)),
        None => quote!(#private::None),
    };
    let read_only = opt(tool.annotations.read_only);
    let destructive = opt(tool.annotations.destructive);
    let idempotent = opt(tool.annotations.idempotent);
    let open_world = opt(tool.annotations.open_world);
    let tags = &tool.tags;
    let timeout = match tool
        .timeout
        .as_ref()
        .and_then(|l| parse_duration_ms(&l.value()))
    {
        Some(ms) => quote!(#private::Some(#private::Duration::from_millis(#ms))),
        None => quote!(#private::None),
    };
    let handle_doc = format!(
        " The `{name}` tool generated by `#[tool]`: `{fn_ident}::NAME`, and `{fn_ident}::descriptor()` for explicit registration."
    );
    let descriptor_doc = format!(
        " The tool's descriptor, for explicit registration: `Registry::builder().tool({fn_ident}::descriptor())`."
    );

    quote! {
        #[doc = #handle_doc]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #fn_ident {}

        #[allow(clippy::all, clippy::pedantic)]
        impl #fn_ident {
            /// The tool's name.
            #vis const NAME: &'static str = #name;

            #[doc = #descriptor_doc]
            #[must_use]
            #vis fn descriptor() -> &'static #private::ToolDescriptor {
                #(#checks)*

                #[derive(#private::serde::Deserialize, #private::schemars::JsonSchema)]
                #[serde(crate = #serde_path, deny_unknown_fields)]
                #[schemars(crate = #schemars_path)]
                struct __ToolArgs {
                    #(#fields)*
                }

                #(#default_fns)*

                fn __tool_input_schema() -> #private::Value {
                    #private::input_schema_for::<__ToolArgs>()
                }

                fn __tool_output_schema() -> #private::Value {
                    #private::output_schema_for::<#output_ty>()
                }

                fn __tool_call(
                    __tool_value: #private::Value,
                    __tool_ctx: #private::CallContext,
                ) -> #private::BoxFuture<'static, #private::Result<#private::Value, #private::ToolError>> {
                    #private::boxed(async move {
                        let __tool_args: __ToolArgs = #private::decode(__tool_value)?;
                        #(#injections)*
                        let __tool_out = #fn_ident(#(#call_args),*).await;
                        #finish
                    })
                }

                static __TOOL_DESCRIPTOR: #private::ToolDescriptor = #private::ToolDescriptor {
                    name: #name,
                    title: #title,
                    summary: #summary,
                    description: #description,
                    annotations: #private::Annotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    tags: &[#(#tags),*],
                    timeout: #timeout,
                    requires: &[#(#requires),*],
                    module_path: ::core::module_path!(),
                    file: ::core::file!(),
                    line: ::core::line!(),
                    input_schema: __tool_input_schema,
                    output_schema: __tool_output_schema,
                    call: __tool_call,
                };

                #private::inventory::submit! {
                    #private::ToolRegistration(&__TOOL_DESCRIPTOR)
                }

                &__TOOL_DESCRIPTOR
            }
        }
    }
}
