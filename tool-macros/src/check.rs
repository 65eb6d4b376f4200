//! Every rule a `#[tool]` fn must follow, each error spanned on the offending token and saying
//! what to write instead. All are collected; none stops the others.

use syn::{FnArg, ItemFn, Type};
use tool_grammar::QuestionPiece;

use crate::ctxt::Ctxt;
use crate::model::{
    ItemOptions, ParamKind, Parsed, Tool, implicit_default, last_segment_is, option_inner,
};

const NUMBERS: &[&str] = &[
    "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize", "f32",
    "f64",
];

pub(crate) fn check(cx: &Ctxt, item: &ItemFn, tool: &Tool) {
    check_signature(cx, item, "#[tool]");
    if let syn::ReturnType::Type(_, ty) = &item.sig.output
        && matches!(**ty, Type::ImplTrait(_))
    {
        cx.error_spanned(
            ty,
            "a tool cannot return `impl Trait`: its output schema is built from a concrete type",
        );
    }
    check_name(cx, "tool", &tool.name, tool.name_span);
    check_options(cx, &tool.options);
    check_max_output(cx, tool);
    check_task(cx, tool);
    check_confirm(cx, tool);
    check_params(cx, tool);
    if tool.require_docs && tool.description.is_empty() {
        cx.error(
            item.sig.ident.span(),
            format!(
                "tool `{}` has no description; add a `///` doc comment above the fn (required by `require_docs`)",
                tool.name
            ),
        );
    }
}

/// What every fn the macros take must be: a free, non-generic, safe Rust fn. `what` names the
/// macro: `#[tool]`.
pub(crate) fn check_signature(cx: &Ctxt, item: &ItemFn, what: &str) {
    let sig = &item.sig;
    if let Some(c) = &sig.constness {
        cx.error(
            c.span,
            format!("{what} fns cannot be `const`; remove `const`"),
        );
    }
    if let syn::Safety::Unsafe(_) = sig.safety {
        cx.error_spanned(&sig.safety, format!("{what} fns cannot be `unsafe`; callers from the network cannot uphold safety contracts"));
    }
    if let Some(abi) = &sig.abi {
        cx.error_spanned(
            abi,
            format!("{what} fns cannot have an `extern` ABI; remove it"),
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned(v, format!("{what} fns cannot be variadic"));
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned(
            &sig.generics,
            format!("{what} fns cannot be generic: the schema is built from concrete types; write the parameter types out"),
        );
    }
    for arg in &sig.inputs {
        if let FnArg::Receiver(r) = arg {
            cx.error_spanned(
                r,
                format!("{what} works on free fns, not methods: move the fn out of the `impl` and take what `self` held as a `State<T>` parameter"),
            );
        }
    }
}

/// A name every MCP client and LLM provider accepts; `kind` says whose: `tool`.
pub(crate) fn check_name(cx: &Ctxt, kind: &str, name: &str, span: proc_macro2::Span) {
    let bytes = name.as_bytes();
    let ok = matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-');
    if !ok {
        cx.error(
            span,
            format!(
                "invalid {kind} name `{name}`: names must match ^[A-Za-z_][A-Za-z0-9_-]{{0,63}}$ (a letter or `_`, then up to 63 letters, digits, `_` or `-`), so every MCP client and LLM provider accepts them"
            ),
        );
    }
}

/// A parameter's name is a property of the input schema: it must be one every LLM provider
/// accepts, `^[A-Za-z_][A-Za-z0-9_]{0,63}$`.
pub(crate) fn check_param_name(cx: &Ctxt, ident: &syn::Ident) {
    let name = syn::ext::IdentExt::unraw(ident).to_string();
    let bytes = name.as_bytes();
    let ok = matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if !ok {
        let ascii: String = name
            .chars()
            .filter_map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '_' => Some(c),
                'à'..='å' => Some('a'),
                'è'..='ë' => Some('e'),
                'ì'..='ï' => Some('i'),
                'ò'..='ö' => Some('o'),
                'ù'..='ü' => Some('u'),
                _ => None,
            })
            .take(64)
            .collect();
        cx.error(
            ident.span(),
            format!(
                "parameter name `{name}` is not portable: parameter names must match ^[A-Za-z_][A-Za-z0-9_]{{0,63}}$ (ASCII letters, digits and `_`, at most 64), the names every model provider accepts; rename it, for example to `{ascii}`"
            ),
        );
    }
}

/// The options the pipeline enforces: a time limit, a rate, a concurrency limit.
/// The options every item takes alike: a positive timeout, a rate that reads, a concurrency
/// above zero.
pub(crate) fn check_options(cx: &Ctxt, options: &ItemOptions) {
    let timeout = options.timeout.as_ref();
    let rate = options.rate.as_ref();
    let concurrency = options.concurrency.as_ref();
    if let Some(Parsed { lit, value }) = timeout
        && value.is_none_or(|ms| ms == 0)
    {
        cx.error(
            lit.span(),
            format!(
                "invalid timeout `{}`: write a positive whole number with a unit, such as \"500ms\", \"5s\", \"2m\" or \"1h\"",
                lit.value()
            ),
        );
    }
    if let Some(Parsed { lit, value: None }) = rate {
        cx.error(
            lit.span(),
            format!(
                "invalid rate `{}`: write calls per period, such as \"10/min\", \"5/s\" or \"100/h\"",
                lit.value()
            ),
        );
    }
    if let Some(lit) = concurrency
        && lit.base10_parse::<u32>().map_or(true, |n| n == 0)
    {
        cx.error(
            lit.span(),
            "`concurrency` is how many calls may run at once: a whole number of at least 1",
        );
    }
}

fn check_max_output(cx: &Ctxt, tool: &Tool) {
    if let Some(Parsed { lit, value: None }) = &tool.max_output {
        cx.error(
            lit.span(),
            format!(
                "invalid size `{}`: write a whole number with a unit, such as \"64KiB\", \"1MiB\" or \"500B\"",
                lit.value()
            ),
        );
    }
}

fn check_task(cx: &Ctxt, tool: &Tool) {
    if let Some(Parsed { lit, value: None }) = &tool.task {
        cx.error(
            lit.span(),
            format!(
                "unknown task mode `{}`: write `task = \"optional\"` (a task when the caller can follow one) or `task = \"required\"` (only as a task); without `task`, calls never run as tasks",
                lit.value()
            ),
        );
    }
    match (&tool.detach, tool.task.as_ref().and_then(|t| t.value)) {
        (Some(Parsed { lit, value: None }), _) => cx.error(
            lit.span(),
            format!(
                "unknown detach point `{}`: write `detach = \"explicit\"` (the call becomes a task where the tool calls `ctx.detach()`) or leave it out (a task from the start)",
                lit.value()
            ),
        ),
        (Some(Parsed { lit, .. }), None | Some("Forbidden")) => cx.error(
            lit.span(),
            "`detach` is where a task begins, and this tool's calls never run as tasks: add `task = \"optional\"` or `task = \"required\"`",
        ),
        _ => {}
    }
}

/// `confirm = "..."`: for a destructive tool only, each `{name}` naming one of its parameters.
fn check_confirm(cx: &Ctxt, tool: &Tool) {
    let Some(lit) = &tool.confirm else {
        return;
    };
    if tool.annotations.destructive != Some(true) || tool.annotations.read_only == Some(true) {
        cx.error(
            lit.span(),
            "`confirm` is the question a destructive tool asks before it runs; add \
             `annotations(destructive)`, or remove `confirm`",
        );
    }
    let names: Vec<String> = tool
        .inputs()
        .map(|p| syn::ext::IdentExt::unraw(&p.ident).to_string())
        .collect();
    let text = lit.value();
    for piece in tool_grammar::question_pieces(&text) {
        match piece {
            QuestionPiece::Unclosed(_) => cx.error(
                lit.span(),
                "an unclosed `{` in `confirm`: write `{name}` to show a parameter's value",
            ),
            QuestionPiece::Param(name) if !names.iter().any(|n| n == name) => cx.error(
                lit.span(),
                format!(
                    "`{{{name}}}` in `confirm` names no parameter of the tool; its parameters are {}",
                    if names.is_empty() {
                        "none".to_owned()
                    } else {
                        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    }
                ),
            ),
            QuestionPiece::Text(_) | QuestionPiece::Param(_) => {}
        }
    }
}

/// Each `#[arg(header = ...)]` names a header of its own, compared as HTTP compares names,
/// case aside.
fn check_headers(cx: &Ctxt, tool: &Tool) {
    let mut headers = std::collections::HashSet::new();
    for header in tool.params.iter().filter_map(|p| p.args.header.get()) {
        if !headers.insert(header.value().to_ascii_lowercase()) {
            cx.error(
                header.span(),
                format!(
                    "another parameter is sent in the header `Mcp-Param-{}` already (header names ignore case): give each `header` a name of its own",
                    header.value()
                ),
            );
        }
    }
}

fn check_params(cx: &Ctxt, tool: &Tool) {
    check_headers(cx, tool);
    for p in &tool.params {
        let a = &p.args;
        check_item_options(cx, a);
        if p.kind != ParamKind::Input {
            for span in [
                a.default.span(),
                a.range.span(),
                a.length.span(),
                a.pattern.span(),
                a.header.span(),
            ]
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
        check_param_name(cx, &p.ident);
        if let Type::Reference(r) = &p.ty {
            let hint = if last_segment_is(&r.elem, "str") {
                "use `String` instead of `&str`"
            } else {
                "take the value by value, such as `Vec<T>` instead of `&[T]`"
            };
            cx.error_spanned(
                &p.ty,
                format!("tool parameters are deserialized from the call's arguments and must be owned: {hint}"),
            );
        }
        if matches!(p.ty, Type::ImplTrait(_)) {
            cx.error_spanned(
                &p.ty,
                "tool parameters cannot be `impl Trait`: write a concrete type",
            );
        }
        if let Some(span) = a.range.span() {
            let inner = option_inner(&p.ty).unwrap_or(&p.ty);
            if !NUMBERS.iter().any(|n| last_segment_is(inner, n)) {
                cx.error(
                    span,
                    format!(
                        "`range` applies to numbers, but `{}` is not one; use `length(min, max)` for strings and lists, or change the type to an integer or float",
                        p.ident
                    ),
                );
            }
        }
        if let Some(span) = a.default.span()
            && option_inner(&p.ty).is_some()
        {
            cx.error(
                span,
                format!(
                    "`{}` has a default and is an `Option`: pick one; with a default, write the plain type",
                    p.ident
                ),
            );
        }
        if let Some(c) = a.short.get() {
            let ch = c.value();
            if !ch.is_ascii_alphanumeric() || ch == 'h' || ch == 'V' {
                cx.error(
                    c.span(),
                    format!(
                        "`short = '{ch}'` cannot be a flag: pick an ASCII letter or digit other than 'h' and 'V' (help and version)"
                    ),
                );
            }
            if a.positional.get().is_some() {
                cx.error(
                    c.span(),
                    "a positional argument has no flag: drop `short` or `positional`",
                );
            }
        }
        if let Some(span) = a.positional.span()
            && last_segment_is(option_inner(&p.ty).unwrap_or(&p.ty), "bool")
        {
            cx.error(span, format!("`{}` is a `bool`, which is a flag (`--{}`), not a positional argument; remove `positional`", p.ident, p.ident.to_string().replace('_', "-")));
        }
        check_required(cx, p);
        if tool.require_docs && p.doc.is_none() {
            cx.error(
                p.ident.span(),
                format!(
                    "parameter `{}` has no description; add a `/// ...` doc comment above it (required by `require_docs`)",
                    p.ident
                ),
            );
        }
    }
}

/// The `#[arg]` options of resources and prompts, which a tool's parameters do not take.
fn check_item_options(cx: &Ctxt, a: &crate::attr::ArgAttrs) {
    for span in [a.complete.span(), a.unscreened.span()]
        .into_iter()
        .flatten()
    {
        cx.error(
            span,
            "`complete` and `unscreened` apply to #[prompt] arguments and #[resource] template variables; remove it from this tool parameter",
        );
    }
}

/// `#[arg(required)]` only where it changes something: a `bool` or a `Vec<T>` without a default.
fn check_required(cx: &Ctxt, p: &crate::model::Param) {
    let a = &p.args;
    if let Some(span) = a.required.span() {
        if a.default.get().is_some() {
            cx.error(
                span,
                "`required` and `default` contradict each other: keep one",
            );
        } else if implicit_default(&p.ty).is_none() {
            cx.error(
                span,
                format!(
                    "`required` applies to `bool` and `Vec<T>` parameters, which otherwise default to `false` and empty; `{}` is required already (make it an `Option` or give it a `default` to make it optional)",
                    p.ident
                ),
            );
        }
    }
}
