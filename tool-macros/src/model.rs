//! Meaning: the tool as data, read from the fn and its attributes. Expansion reads only this.

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::spanned::Spanned;
use syn::{FnArg, ItemFn, Pat, ReturnType, Type};

use crate::attr::{ArgAttrs, CommonAttrs, ToolAttrs};
use crate::ctxt::Ctxt;

#[allow(clippy::struct_excessive_bools)] // independent switches of the attribute and the fn
pub(crate) struct Tool {
    pub(crate) ident: syn::Ident,
    pub(crate) vis: syn::Visibility,
    pub(crate) name: String,
    pub(crate) name_span: Span,
    /// `title = "..."`, or one derived from the name ("device_add" → "Device add").
    pub(crate) title: String,
    pub(crate) description: String,
    /// The description's first paragraph, its lines joined by spaces.
    pub(crate) summary: String,
    pub(crate) annotations: Annotations,
    pub(crate) tags: Vec<String>,
    /// `roles`, `timeout`, `rate`, `concurrency`: what resources and prompts take too.
    pub(crate) options: ItemOptions,
    pub(crate) guards: Vec<syn::Path>,
    /// Bytes.
    pub(crate) max_output: Option<Parsed<usize>>,
    pub(crate) truncate_output: bool,
    pub(crate) require_docs: bool,
    /// `#[tool(dry_run)]`: the tool honours `ctx.dry_run()`.
    pub(crate) dry_run: bool,
    /// `confirm = "..."`: the question asked before a destructive call, `{param}` filled in.
    pub(crate) confirm: Option<syn::LitStr>,
    /// `task = "optional" | "required" | "forbidden"`: whether calls may run as tasks.
    pub(crate) task: Option<Parsed<&'static str>>,
    /// `detach = "explicit" | "start"`: where a call that runs as a task becomes one.
    pub(crate) detach: Option<Parsed<&'static str>>,
    pub(crate) krate: TokenStream,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
    /// A plain `fn`, run on the blocking pool.
    pub(crate) blocking: bool,
}

/// A string option read once, in the grammar the runtime shares (`tool_grammar`): the literal,
/// for errors at its span, and its value (`None` when it does not parse, which `check`
/// reports).
pub(crate) struct Parsed<T> {
    pub(crate) lit: syn::LitStr,
    pub(crate) value: Option<T>,
}

impl<T> Parsed<T> {
    pub(crate) fn read(lit: Option<&syn::LitStr>, parse: fn(&str) -> Option<T>) -> Option<Self> {
        lit.map(|lit| Parsed {
            value: parse(&lit.value()),
            lit: lit.clone(),
        })
    }
}

#[derive(Default)]
pub(crate) struct Annotations {
    pub(crate) read_only: Option<bool>,
    pub(crate) destructive: Option<bool>,
    pub(crate) idempotent: Option<bool>,
    pub(crate) open_world: Option<bool>,
}

pub(crate) struct Param {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
    pub(crate) doc: Option<String>,
    pub(crate) doc_attrs: Vec<syn::Attribute>,
    pub(crate) args: ArgAttrs,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// Supplied by the caller: in the schema.
    Input,
    /// Supplied by the pipeline through `FromCallContext`.
    Injected,
    /// `&CallContext`.
    ContextRef,
}

pub(crate) enum Output {
    /// No `->`: the tool returns `()`.
    Unit,
    /// `-> T`.
    Plain(Type),
    /// `-> Result<T, E>` (any type whose last segment is `Result`).
    Result(Type),
}

impl Tool {
    pub(crate) fn from_fn(cx: &Ctxt, attrs: &ToolAttrs, item: &ItemFn) -> Tool {
        let ident = item.sig.ident.clone();
        let fn_name = ident.to_string();
        let fn_name = fn_name.strip_prefix("r#").unwrap_or(&fn_name).to_owned();
        let (name, name_span) = attrs
            .common
            .name
            .get()
            .map_or((fn_name.clone(), ident.span()), |l| (l.value(), l.span()));

        let doc = doc_text(&item.attrs).unwrap_or_default();
        let description = attrs.description.get().map_or(doc, syn::LitStr::value);
        let title = attrs
            .common
            .title
            .get()
            .map_or_else(|| tool_grammar::title_from_name(&name), syn::LitStr::value);
        let summary = tool_grammar::first_paragraph(&description);
        let krate = attrs
            .common
            .krate
            .get()
            .map_or_else(|| quote!(::tool_runtime), |p| quote!(#p));

        let params = params_of(cx, item);
        let output = output_of(item);

        Tool {
            blocking: item.sig.asyncness.is_none(),
            vis: item.vis.clone(),
            name,
            name_span,
            title,
            description,
            summary,
            annotations: Annotations {
                read_only: attrs.read_only.get().copied(),
                destructive: attrs.destructive.get().copied(),
                idempotent: attrs.idempotent.get().copied(),
                open_world: attrs.open_world.get().copied(),
            },
            options: ItemOptions::from_common(&attrs.common),
            guards: attrs.guards.clone(),
            tags: attrs
                .tags
                .get()
                .map(|t| t.iter().map(syn::LitStr::value).collect())
                .unwrap_or_default(),
            max_output: Parsed::read(attrs.max_output.get(), tool_grammar::size),
            truncate_output: attrs.truncate_output.get().is_some(),
            require_docs: attrs.require_docs.get().is_some() || crate_requires_docs(),
            dry_run: attrs.dry_run.get().is_some(),
            confirm: attrs.confirm.get().cloned(),
            task: Parsed::read(attrs.task.get(), task_mode),
            detach: Parsed::read(attrs.detach.get(), task_detach),
            krate,
            params,
            output,
            ident,
        }
    }

    pub(crate) fn inputs(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.kind == ParamKind::Input)
    }
}

/// The options `#[tool]`, `#[resource]` and `#[prompt]` take alike, read once from the
/// attribute's common part: what the runtime's `ItemOptions` holds.
pub(crate) struct ItemOptions {
    pub(crate) roles: Vec<String>,
    pub(crate) scopes: Vec<String>,
    /// Milliseconds.
    pub(crate) timeout: Option<Parsed<u64>>,
    /// Calls, and seconds per period.
    pub(crate) rate: Option<Parsed<(u32, u64)>>,
    pub(crate) concurrency: Option<syn::LitInt>,
}

impl ItemOptions {
    pub(crate) fn from_common(common: &CommonAttrs) -> ItemOptions {
        ItemOptions {
            roles: common
                .roles
                .get()
                .map(|t| t.iter().map(syn::LitStr::value).collect())
                .unwrap_or_default(),
            scopes: common
                .scopes
                .get()
                .map(|t| t.iter().map(syn::LitStr::value).collect())
                .unwrap_or_default(),
            timeout: Parsed::read(common.timeout.get(), tool_grammar::duration_ms),
            rate: Parsed::read(common.rate.get(), tool_grammar::rate),
            concurrency: common.concurrency.get().cloned(),
        }
    }
}

impl Param {
    pub(crate) fn from_pat_type(cx: &Ctxt, pt: &syn::PatType) -> Param {
        let ident = match &*pt.pat {
            Pat::Ident(pi) if pi.subpat.is_none() => pi.ident.clone(),
            other => {
                cx.error_spanned(
                    other,
                    "tool parameters must be plain names, such as `device_id: String`; the name is the argument's name in the schema",
                );
                syn::Ident::new("__invalid", other.span())
            }
        };
        let mut args = ArgAttrs::empty();
        for attr in pt.attrs.iter().filter(|a| a.path().is_ident("arg")) {
            args.parse_into(cx, attr);
        }
        let doc_attrs: Vec<_> = pt
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .cloned()
            .collect();
        let ty = (*pt.ty).clone();
        let kind = if is_context_ref(&ty) {
            ParamKind::ContextRef
        } else if args.inject.get().is_some()
            || last_segment_is(&ty, "State")
            || last_segment_is(&ty, "CallContext")
        {
            ParamKind::Injected
        } else {
            ParamKind::Input
        };
        Param {
            ident,
            doc: doc_text(&pt.attrs),
            doc_attrs,
            kind,
            args,
            ty,
        }
    }
}

pub(crate) fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(tp) = ty else { return None };
    let seg = tp.path.segments.last()?;
    if seg.ident != "Option" {
        return None;
    }
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) => match a.args.first()? {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

/// The `E` of a return type written `Result<T, E>`; `None` for an alias such as
/// `io::Result<T>`, whose error type only the compiler knows.
pub(crate) fn result_error(ty: &Type) -> Option<&Type> {
    let Type::Path(tp) = ty else { return None };
    let seg = tp.path.segments.last()?;
    match &seg.arguments {
        syn::PathArguments::AngleBracketed(a) if a.args.len() == 2 => match a.args.last()? {
            syn::GenericArgument::Type(t) => Some(t),
            _ => None,
        },
        _ => None,
    }
}

fn is_context_ref(ty: &Type) -> bool {
    matches!(ty, Type::Reference(r) if r.mutability.is_none() && last_segment_is(&r.elem, "CallContext"))
}

/// The default a parameter of this type has without `#[arg(default)]`: `false` for a `bool`,
/// empty for a `Vec<T>` (a flag, a repeatable flag); `None` for every other type.
pub(crate) fn implicit_default(ty: &Type) -> Option<proc_macro2::TokenStream> {
    if last_segment_is(ty, "bool") {
        Some(quote::quote!(false))
    } else if last_segment_is(ty, "Vec") {
        Some(quote::quote!(::std::vec::Vec::new()))
    } else {
        None
    }
}

pub(crate) fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Path(tp) if tp.qself.is_none() => {
            tp.path.segments.last().is_some_and(|s| s.ident == name)
        }
        Type::Group(g) => last_segment_is(&g.elem, name),
        Type::Paren(p) => last_segment_is(&p.elem, name),
        _ => false,
    }
}

/// The joined text of `///` comments, with rustdoc's leading space removed; `None` if absent.
pub(crate) fn doc_text(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .flat_map(|s| {
            s.split('\n')
                .map(|l| l.trim_end_matches('\r').to_owned())
                .collect::<Vec<_>>()
        })
        .map(|l| l.strip_prefix(' ').map(str::to_owned).unwrap_or(l))
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The crate-level switch: `[package.metadata.tool-runtime] require-docs = true` in the
/// Cargo.toml of the crate being compiled.
fn crate_requires_docs() -> bool {
    let Ok(dir) = std::env::var("CARGO_MANIFEST_DIR") else {
        return false;
    };
    let Ok(manifest) = std::fs::read_to_string(std::path::Path::new(&dir).join("Cargo.toml"))
    else {
        return false;
    };
    manifest_requires_docs(&manifest)
}

pub(crate) fn manifest_requires_docs(manifest: &str) -> bool {
    let mut in_section = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_section = line == "[package.metadata.tool-runtime]";
        } else if in_section {
            let compact: String = line
                .split('#')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .collect();
            if compact == "require-docs=true" || compact == "require_docs=true" {
                return true;
            }
        }
    }
    false
}

/// The parameters of `item` (`self` is reported by check.rs).
pub(crate) fn params_of(cx: &Ctxt, item: &ItemFn) -> Vec<Param> {
    item.sig
        .inputs
        .iter()
        .filter_map(|arg| match arg {
            FnArg::Typed(pt) => Some(Param::from_pat_type(cx, pt)),
            FnArg::Receiver(_) => None,
        })
        .collect()
}

/// What `item` returns: nothing, a `Result`, or a plain value.
pub(crate) fn output_of(item: &ItemFn) -> Output {
    match &item.sig.output {
        ReturnType::Default => Output::Unit,
        ReturnType::Type(_, ty) if last_segment_is(ty, "Result") => Output::Result((**ty).clone()),
        ReturnType::Type(_, ty) => Output::Plain((**ty).clone()),
    }
}

/// The runtime's `TaskDetach` variant named `name`.
fn task_detach(name: &str) -> Option<&'static str> {
    match name {
        "start" => Some("Start"),
        "explicit" => Some("Explicit"),
        _ => None,
    }
}

/// The runtime's `TaskMode` variant named `name`.
fn task_mode(name: &str) -> Option<&'static str> {
    match name {
        "forbidden" => Some("Forbidden"),
        "optional" => Some("Optional"),
        "required" => Some("Required"),
        _ => None,
    }
}
