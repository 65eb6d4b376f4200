//! Expansion: the generated code, read from the model only.
//!
//! For `async fn device_add(...)` this emits, beside the untouched fn:
//! - `struct device_add {}` (type namespace only, so it sits beside the fn) whose associated
//!   items are the tool's handle: `device_add::NAME` and `device_add::descriptor()`;
//! - inside `descriptor()`: the args struct (serde + schemars derives), default fns, the schema
//!   fns, the call fns that decode (from a `Value`, or from the HTTP front end's parsed tree),
//!   inject and await the user's fn, the static descriptor,
//!   its `inventory` submission, and one trait check per parameter, spanned at its type.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::model::{Output, ParamKind, Tool};

#[allow(clippy::too_many_lines)] // Reason: one quote! of the whole output reads best in one piece.
pub(crate) fn expand(tool: &Tool) -> TokenStream {
    let krate = &tool.krate;
    let private = quote!(#krate::__private);
    let fn_ident = &tool.ident;
    let vis = &tool.vis;
    let name = &tool.name;
    let title = &tool.title;
    let description = &tool.description;
    let summary = &tool.summary;

    let serde_path = format!("{}::serde", private.to_string().replace(' ', ""));
    let schemars_path = format!("{}::schemars", private.to_string().replace(' ', ""));

    let Args {
        fields,
        default_fns,
        mut checks,
    } = args_struct(tool, &private);

    let params = param_hints(tool, &private);
    let Call {
        injections,
        requires,
        arguments: call_args,
        checks: injected_checks,
    } = call_parts(tool, &private);
    checks.extend(injected_checks);
    // A plain `fn` runs on the blocking pool (or inline in a one-shot CLI process), with what it
    // takes moved there: the arguments, the injected values, and a clone of the context.
    let invoke = if tool.blocking {
        quote! {{
            #[allow(unused_variables)]
            let __tool_ctx = #private::Clone::clone(&__tool_ctx);
            #private::blocking(move || #fn_ident(#(#call_args),*)).await
        }}
    } else {
        quote!(#fn_ident(#(#call_args),*).await)
    };

    // The value the tool returned, or (from a `Result`) its `Ok` value, an `Err` returned
    // converted.
    let (output_ty, value) = match &tool.output {
        Output::Unit => (quote!(()), quote!(__tool_out)),
        Output::Plain(ty) => (ty.to_token_stream(), quote!(__tool_out)),
        Output::Result(ty) => {
            let err_ty = quote!(<#ty as #private::IntoToolResult>::Err);
            // Checked at `E` when the type is written `Result<T, E>`, else at the whole type
            // (an alias such as `io::Result<T>`).
            let (checked, span) = crate::model::result_error(ty).map_or_else(
                || {
                    (
                        quote_spanned!(ty.span()=> <#ty as #private::IntoToolResult>::Err),
                        ty.span(),
                    )
                },
                |e| (e.to_token_stream(), e.span()),
            );
            checks
                .push(quote_spanned! {span=> const _: () = #private::assert_error::<#checked>(); });
            (
                quote!(<#ty as #private::IntoToolResult>::Ok),
                quote! {
                    match #private::IntoToolResult::into_result(__tool_out) {
                        #private::Ok(__tool_out) => __tool_out,
                        #private::Err(__tool_err) => {
                            use #private::{Convertible as _, Unconvertible as _};
                            return #private::Err((&&#private::Marker::<#err_ty>::new()).convert(__tool_err));
                        }
                    }
                },
            )
        }
    };
    // Encoded and described through a marker, so only `assert_output` reports a type without
    // the derives.
    let finish = quote! {{
        use #private::{Writable as _, Unwritable as _};
        (&&#private::Marker::<#output_ty>::new()).encode(&#value)
    }};
    if let Output::Plain(ty) | Output::Result(ty) = &tool.output {
        checks.push(quote_spanned! {ty.span()=>
            const _: () = #private::assert_output::<#output_ty>();
        });
    }

    let opt =
        |v: Option<bool>| v.map_or_else(|| quote!(#private::None), |b| quote!(#private::Some(#b)));
    let read_only = opt(tool.annotations.read_only);
    let destructive = opt(tool.annotations.destructive);
    let idempotent = opt(tool.annotations.idempotent);
    let open_world = opt(tool.annotations.open_world);
    let tags = &tool.tags;
    let roles = &tool.roles;
    // Spanned at each path, so a fn of the wrong signature is reported there.
    let guards = tool.guards.iter().map(|g| {
        quote_spanned! {g.span()=> #private::guard(#g) }
    });
    let dry_run = tool.dry_run;
    let rate = tool
        .rate
        .as_ref()
        .and_then(|p| p.value)
        .map_or_else(
            || quote!(#private::None),
            |(count, secs)| {
                quote!(#private::Some(#private::Rate { count: #count, per: #private::Duration::from_secs(#secs) }))
            },
        );
    let truncate_output = tool.truncate_output;
    let max_output = tool
        .max_output
        .as_ref()
        .and_then(|p| p.value)
        .map_or_else(|| quote!(#private::None), |n| quote!(#private::Some(#n)));
    let concurrency = tool
        .concurrency
        .as_ref()
        .and_then(|l| l.base10_parse::<u32>().ok())
        .map_or_else(|| quote!(#private::None), |n| quote!(#private::Some(#n)));
    let timeout = tool.timeout.as_ref().and_then(|p| p.value).map_or_else(
        || quote!(#private::None),
        |ms| quote!(#private::Some(#private::Duration::from_millis(#ms))),
    );
    let handle_doc = format!(
        " The `{name}` tool generated by `#[tool]`: `{fn_ident}::NAME`, and `{fn_ident}::descriptor()` for explicit registration."
    );
    let descriptor_doc = format!(
        " The tool's descriptor, for explicit registration: `Registry::builder().tool({fn_ident}::descriptor())`."
    );

    let undocumented = undocumented_warning(tool);

    quote! {
        #undocumented

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
                    use #private::{Writable as _, Unwritable as _};
                    (&&#private::Marker::<#output_ty>::new()).describe()
                }

                fn __tool_content() -> bool {
                    use #private::{Writable as _, Unwritable as _};
                    (&&#private::Marker::<#output_ty>::new()).content()
                }

                async fn __tool_run(
                    __tool_args: __ToolArgs,
                    __tool_ctx: #private::CallContext,
                ) -> #private::Result<#private::Value, #private::ToolError> {
                    #(#injections)*
                    let __tool_out = #invoke;
                    #finish
                }

                fn __tool_call(
                    __tool_value: #private::Value,
                    __tool_ctx: #private::CallContext,
                ) -> #private::BoxFuture<'static, #private::Result<#private::Value, #private::ToolError>> {
                    #private::boxed(async move {
                        let __tool_args: __ToolArgs = #private::decode(__tool_value)?;
                        __tool_run(__tool_args, __tool_ctx).await
                    })
                }

                fn __tool_call_parsed(
                    __tool_parsed: #private::ParsedArgs<'_>,
                    __tool_ctx: &#private::CallContext,
                ) -> #private::Option<#private::BoxFuture<'static, #private::Result<#private::Value, #private::ToolError>>> {
                    let __tool_args: __ToolArgs = __tool_parsed.decode()?;
                    #private::Some(#private::boxed(__tool_run(__tool_args, #private::Clone::clone(__tool_ctx))))
                }

                static __TOOL_DESCRIPTOR: #private::ToolDescriptor = #private::ToolDescriptor {
                    name: #name,
                    title: #title,
                    description: #description,
                    summary: #summary,
                    annotations: #private::Annotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    tags: &[#(#tags),*],
                    roles: &[#(#roles),*],
                    guards: &[#(#guards),*],
                    timeout: #timeout,
                    rate: #rate,
                    concurrency: #concurrency,
                    max_output: #max_output,
                    truncate_output: #truncate_output,
                    dry_run: #dry_run,
                    requires: &[#(#requires),*],
                    params: &[#(#params),*],
                    defined_at: ::core::concat!(::core::module_path!(), " at ", ::core::file!(), ":", ::core::line!()),
                    input_schema: __tool_input_schema,
                    output_schema: __tool_output_schema,
                    content: __tool_content,
                    call: __tool_call,
                    call_parsed: __tool_call_parsed,
                };

                #private::inventory::submit! {
                    #private::ToolRegistration(&__TOOL_DESCRIPTOR)
                }

                &__TOOL_DESCRIPTOR
            }
        }
    }
}

/// A compiler warning at the fn's name when the tool has no description: stable Rust gives
/// macros no warnings of their own, so it is the `deprecated` lint on a constant named for the
/// problem, used there. `#[tool(require_docs)]` makes it an error instead (see check.rs).
fn undocumented_warning(tool: &Tool) -> TokenStream {
    if !tool.description.is_empty() || tool.require_docs {
        return TokenStream::new();
    }
    let note = format!(
        "tool `{}` has no description, so models and --help show nothing for it; add a `/// What it does.` doc comment above the fn, or `#[tool(description = \"...\")]`",
        tool.name
    );
    let constant = format_ident!("tool_without_description", span = tool.ident.span());
    quote_spanned! {tool.ident.span()=>
        const _: () = {
            #[deprecated(note = #note)]
            #[allow(non_upper_case_globals)]
            const tool_without_description: () = ();
            #constant
        };
    }
}

/// The args struct's fields, their default fns and readers, and one trait check per field type.
struct Args {
    fields: Vec<TokenStream>,
    default_fns: Vec<TokenStream>,
    checks: Vec<TokenStream>,
}

fn args_struct(tool: &Tool, private: &TokenStream) -> Args {
    let mut fields = Vec::new();
    let mut default_fns = Vec::new();
    let mut checks = Vec::new();
    for p in tool.inputs() {
        let ident = &p.ident;
        let ty = &p.ty;
        let docs = &p.doc_attrs;
        let mut attrs = Vec::new();
        // A `bool` defaults to `false` and a `Vec<T>` to empty unless `#[arg(required)]`.
        let default = match p.args.default.get() {
            Some(default) => Some((default.to_token_stream(), default.span())),
            None if p.args.required.get().is_none() => {
                crate::model::implicit_default(ty).map(|d| (d, ty.span()))
            }
            None => None,
        };
        let has_default = default.is_some();
        if let Some((default, span)) = default {
            let default_fn = format_ident!(
                "__tool_default_{}",
                ident.to_string().trim_start_matches("r#")
            );
            let path = default_fn.to_string();
            // Spanned at the default, so a value that does not fit the type is reported there.
            default_fns.push(quote_spanned! {span=>
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
        // Read and described through `Marker<T>`, which asks nothing of the type: a type
        // without the derives is reported once, by `assert_param`, instead of again inside
        // serde's and schemars' derives.
        let name = ident.to_string();
        let name = name.trim_start_matches("r#");
        let read_fn = format_ident!("__tool_read_{}", name);
        let describe_fn = format_ident!("__tool_describe_{}", name);
        default_fns.push(quote! {
            fn #read_fn<'de, D: #private::serde::Deserializer<'de>>(
                d: D,
            ) -> #private::Result<#ty, D::Error> {
                #[allow(unused_imports)]
                use #private::{Readable as _, Unreadable as _};
                (&&#private::Marker::<#ty>::new()).read(d)
            }
            fn #describe_fn(
                generator: &mut #private::schemars::SchemaGenerator,
            ) -> #private::schemars::Schema {
                #[allow(unused_imports)]
                use #private::{Readable as _, Unreadable as _};
                (&&#private::Marker::<#ty>::new()).describe(generator)
            }
        });
        let (read, describe) = (read_fn.to_string(), describe_fn.to_string());
        attrs.push(quote!(#[serde(deserialize_with = #read)]));
        attrs.push(quote!(#[schemars(schema_with = #describe)]));
        // Without `deserialize_with`, serde reads a missing `Option` field as `None`; with it,
        // it must be told.
        if !has_default && crate::model::option_inner(ty).is_some() {
            attrs.push(quote!(#[serde(default)]));
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

    Args {
        fields,
        default_fns,
        checks,
    }
}

/// Injected values, the required state, the arguments of the user's fn in declaration order,
/// and a trait check per injected type.
struct Call {
    injections: Vec<TokenStream>,
    requires: Vec<TokenStream>,
    arguments: Vec<TokenStream>,
    checks: Vec<TokenStream>,
}

fn call_parts(tool: &Tool, private: &TokenStream) -> Call {
    let mut checks = Vec::new();
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

    Call {
        injections,
        requires,
        arguments: call_args,
        checks,
    }
}

/// What front ends need beyond the schema, per caller-supplied parameter, in declaration order.
fn param_hints(tool: &Tool, private: &TokenStream) -> Vec<TokenStream> {
    tool.inputs()
        .map(|p| {
            let name = p.ident.to_string();
            let name = name.trim_start_matches("r#");
            let short = p
                .args
                .short
                .get()
                .map_or_else(|| quote!(#private::None), |c| quote!(#private::Some(#c)));
            let positional = p.args.positional.get().is_some();
            let inner = crate::model::option_inner(&p.ty).unwrap_or(&p.ty);
            let path = crate::model::last_segment_is(inner, "PathBuf");
            quote! {
                #private::ParamHint {
                    name: #private::Cow::Borrowed(#name),
                    short: #short,
                    positional: #positional,
                    path: #path,
                }
            }
        })
        .collect()
}
