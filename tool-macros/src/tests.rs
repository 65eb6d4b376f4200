//! Expansion snapshots: what `#[tool]` generates for representative fns, pretty-printed.
//! Review changes with `cargo insta review` (or `INSTA_UPDATE=always` and `git diff`).

use quote::quote;

use crate::expand_tool;

fn expand(attr: proc_macro2::TokenStream, item: proc_macro2::TokenStream) -> String {
    let tokens = expand_tool(attr, item);
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}

#[test]
fn state_option_defaults_and_constraints() {
    insta::assert_snapshot!(expand(
        quote!(annotations(destructive = false)),
        quote! {
            /// Generate a short-lived pairing code.
            ///
            /// The code is stored until it expires.
            pub async fn device_add(
                store: State<Store>,
                /// Workspace name
                workspace: Option<String>,
                /// Lifetime in seconds
                #[arg(default = 300, range(min = 30, max = 86400))]
                ttl_seconds: u32,
                /// Code pattern
                #[arg(pattern = "^[0-9]+$", length(max = 10))]
                code: String,
            ) -> Result<PairingCode, ToolError> {
                todo!()
            }
        }
    ));
}

#[test]
fn context_name_timeout_tags_and_plain_output() {
    insta::assert_snapshot!(expand(
        quote!(
            name = "who-am-i",
            title = "Who am I",
            timeout = "2s",
            tags("meta", "debug"),
            annotations(read_only, idempotent)
        ),
        quote! {
            /// Report the caller.
            async fn whoami(ctx: &CallContext, owned: CallContext) -> String {
                ctx.request_id().to_owned()
            }
        }
    ));
}

#[test]
fn renamed_crate_and_unit_output() {
    insta::assert_snapshot!(expand(
        quote!(crate = "rt"),
        quote! {
            /// Do nothing.
            pub(crate) async fn noop() {}
        }
    ));
}

#[test]
fn errors_keep_the_user_fn_and_strip_param_attributes() {
    insta::assert_snapshot!(expand(
        quote!(nmae = "x", timeout = "soon"),
        quote! {
            fn add(
                /// First
                #[arg(range(min = 1))]
                a: String,
                b: &str,
            ) -> i64 {
                1
            }
        }
    ));
}

#[test]
fn the_crate_level_docs_switch_reads_package_metadata() {
    use crate::model::manifest_requires_docs;
    assert!(manifest_requires_docs(
        "[package]\nname = \"x\"\n\n[package.metadata.tool-runtime]\nrequire-docs = true # all of them\n"
    ));
    assert!(!manifest_requires_docs(
        "[package.metadata.tool-runtime]\nrequire-docs = false\n[dependencies]\nrequire-docs = true\n"
    ));
    assert!(!manifest_requires_docs("[package]\nname = \"x\"\n"));
}

fn expand_item(
    what: &str,
    attr: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> String {
    let expand = if what == "resource" {
        crate::resource::expand_resource
    } else {
        crate::prompt::expand_prompt
    };
    let tokens = crate::expand_item(what, attr, item, expand);
    match syn::parse2::<syn::File>(tokens.clone()) {
        Ok(file) => prettyplease::unparse(&file),
        Err(_) => tokens.to_string(),
    }
}

#[test]
fn resource_template_state_list_and_completion() {
    insta::assert_snapshot!(expand_item(
        "resource",
        quote!(
            "devices://{id}/files/{path*}{?verbose}",
            mime = "application/json",
            ttl = "30s",
            scope = "private",
            size = "2KiB",
            audience("user"),
            priority = 0.5,
            icon(
                "https://example.com/d.png",
                mime = "image/png",
                sizes("48x48")
            ),
            list = device_files,
            roles("ops"),
            rate = "10/min"
        ),
        quote! {
            /// A device's file.
            pub async fn device_file(
                #[arg(complete = device_ids)] id: u32,
                #[arg(unscreened)] path: String,
                verbose: Option<bool>,
                store: State<Store>,
            ) -> Result<FileInfo, ToolError> {
                todo!()
            }
        }
    ));
}

#[test]
fn prompt_with_typed_and_optional_arguments() {
    insta::assert_snapshot!(expand_item(
        "prompt",
        quote!(name = "code-review", timeout = "2s"),
        quote! {
            /// Review code.
            fn review(
                /// The code
                code: String,
                /// At most this many remarks
                #[arg(complete = limits)]
                limit: Option<u32>,
                ctx: &CallContext,
            ) -> Vec<PromptMessage> {
                todo!()
            }
        }
    ));
}
