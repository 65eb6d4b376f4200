//! Syntax: the options of `#[tool(...)]` and of `#[arg(...)]` on parameters.
//!
//! Every option is parsed into an [`Attr`], which rejects a second occurrence in one place.
//! Meaning (what a default is for, which types take a range) lives in `model.rs` and `check.rs`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, LitBool, LitStr, Token};

use crate::ctxt::Ctxt;

/// One option's value and where it was written; set at most once.
pub(crate) struct Attr<T> {
    name: &'static str,
    value: Option<(Span, T)>,
}

impl<T> Attr<T> {
    pub(crate) fn none(name: &'static str) -> Self {
        Self { name, value: None }
    }

    pub(crate) fn set(&mut self, cx: &Ctxt, span: Span, value: T) {
        if self.value.is_some() {
            cx.error(
                span,
                format!("duplicate option `{}`: give it once", self.name),
            );
        } else {
            self.value = Some((span, value));
        }
    }

    pub(crate) fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(_, v)| v)
    }

    pub(crate) fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(s, _)| *s)
    }
}

/// The options `#[tool]`, `#[resource]` and `#[prompt]` share: naming, and what the pipeline
/// enforces on every call.
pub(crate) struct CommonAttrs {
    pub(crate) name: Attr<LitStr>,
    pub(crate) title: Attr<LitStr>,
    pub(crate) roles: Attr<Vec<LitStr>>,
    pub(crate) scopes: Attr<Vec<LitStr>>,
    pub(crate) timeout: Attr<LitStr>,
    pub(crate) rate: Attr<LitStr>,
    pub(crate) concurrency: Attr<syn::LitInt>,
    pub(crate) krate: Attr<syn::Path>,
}

impl CommonAttrs {
    pub(crate) fn new() -> Self {
        CommonAttrs {
            name: Attr::none("name"),
            title: Attr::none("title"),
            roles: Attr::none("roles"),
            scopes: Attr::none("scopes"),
            timeout: Attr::none("timeout"),
            rate: Attr::none("rate"),
            concurrency: Attr::none("concurrency"),
            krate: Attr::none("crate"),
        }
    }

    /// Reads the option `key` if it is one of these; `None` if it is not.
    pub(crate) fn parse_one(
        &mut self,
        cx: &Ctxt,
        meta: &ParseNestedMeta<'_>,
        key: &str,
    ) -> Option<syn::Result<()>> {
        let span = meta.path.span();
        Some(match key {
            "name" => lit_str(meta).map(|v| self.name.set(cx, span, v)),
            "title" => lit_str(meta).map(|v| self.title.set(cx, span, v)),
            "timeout" => lit_str(meta).map(|v| self.timeout.set(cx, span, v)),
            "rate" => lit_str(meta).map(|v| self.rate.set(cx, span, v)),
            "concurrency" => meta
                .value()
                .and_then(syn::parse::ParseBuffer::parse::<syn::LitInt>)
                .map_err(|e| {
                    syn::Error::new(e.span(), "`concurrency` takes a number: `concurrency = 4`")
                })
                .map(|v| self.concurrency.set(cx, span, v)),
            "crate" => lit_str(meta)
                .and_then(|s| s.parse::<syn::Path>())
                .map(|v| self.krate.set(cx, span, v)),
            "roles" => string_list(meta, "roles").map(|v| self.roles.set(cx, span, v)),
            "scopes" => string_list(meta, "scopes")
                .and_then(|v| {
                    match v.iter().find(|s| !is_scope_token(&s.value())) {
                        Some(bad) => Err(syn::Error::new(
                            bad.span(),
                            "a scope is one word of visible ASCII, without spaces, `\"` or `\\` (OAuth's scope-token): `scopes(\"devices:write\", \"devices:admin\")`",
                        )),
                        None => Ok(v),
                    }
                })
                .map(|v| self.scopes.set(cx, span, v)),
            _ => return None,
        })
    }
}

/// `icon("https://...", mime = "image/png", sizes("48x48"))` of a resource or prompt.
pub(crate) struct IconAttr {
    pub(crate) src: LitStr,
    pub(crate) mime: Option<LitStr>,
    pub(crate) sizes: Vec<LitStr>,
}

const ICON_FORM: &str = "`icon(\"https://...\")`, optionally with `mime = \"image/png\"` and `sizes(\"48x48\")`: `icon(\"https://example.com/i.png\", mime = \"image/png\", sizes(\"48x48\"))`";

/// Reads `icon(...)`.
pub(crate) fn icon(meta: &ParseNestedMeta<'_>) -> syn::Result<IconAttr> {
    let content;
    syn::parenthesized!(content in meta.input);
    let src: LitStr = content
        .parse()
        .map_err(|e| syn::Error::new(e.span(), format!("an icon is {ICON_FORM}")))?;
    let mut icon = IconAttr {
        src,
        mime: None,
        sizes: Vec::new(),
    };
    while !content.is_empty() {
        content.parse::<Token![,]>()?;
        if content.is_empty() {
            break;
        }
        let key: syn::Ident = content.parse()?;
        if key == "mime" && icon.mime.is_none() {
            content.parse::<Token![=]>()?;
            icon.mime = Some(content.parse()?);
        } else if key == "sizes" && icon.sizes.is_empty() {
            let list;
            syn::parenthesized!(list in content);
            icon.sizes = syn::punctuated::Punctuated::<LitStr, Token![,]>::parse_terminated(&list)?
                .into_iter()
                .collect();
        } else {
            return Err(syn::Error::new(
                key.span(),
                format!("unknown or repeated `{key}` in an icon; an icon is {ICON_FORM}"),
            ));
        }
    }
    Ok(icon)
}

/// `#[tool(...)]`.
pub(crate) struct ToolAttrs {
    pub(crate) common: CommonAttrs,
    pub(crate) description: Attr<LitStr>,
    pub(crate) read_only: Attr<bool>,
    pub(crate) destructive: Attr<bool>,
    pub(crate) idempotent: Attr<bool>,
    pub(crate) open_world: Attr<bool>,
    pub(crate) tags: Attr<Vec<LitStr>>,
    /// `guard = path`, any number of times, run in order.
    pub(crate) guards: Vec<syn::Path>,
    pub(crate) max_output: Attr<LitStr>,
    pub(crate) truncate_output: Attr<()>,
    pub(crate) require_docs: Attr<()>,
    pub(crate) dry_run: Attr<()>,
    pub(crate) confirm: Attr<LitStr>,
    pub(crate) task: Attr<LitStr>,
    pub(crate) detach: Attr<LitStr>,
}

const TOOL_OPTIONS: &str = "`name = \"...\"`, `title = \"...\"`, `description = \"...\"`, `annotations(read_only, destructive, idempotent, open_world)`, `tags(\"...\")`, `roles(\"...\")`, `scopes(\"...\")`, `guard = path::to::fn`, `timeout = \"5s\"`, `rate = \"10/min\"`, `concurrency = 4`, `max_output = \"64KiB\"`, `truncate_output`, `dry_run`, `confirm = \"Delete note {id}?\"`, `task = \"optional\"`, `detach = \"explicit\"`, `require_docs`, `crate = \"...\"`";
const TOOL_OPTION_NAMES: &[&str] = &[
    "name",
    "title",
    "description",
    "annotations",
    "tags",
    "roles",
    "scopes",
    "guard",
    "timeout",
    "rate",
    "concurrency",
    "max_output",
    "truncate_output",
    "dry_run",
    "confirm",
    "task",
    "detach",
    "require_docs",
    "crate",
];
const ANNOTATIONS: &str = "`read_only`, `destructive`, `idempotent`, `open_world` (each optionally `= true` or `= false`)";

impl ToolAttrs {
    pub(crate) fn parse(cx: &Ctxt, tokens: TokenStream) -> Self {
        let mut attrs = ToolAttrs {
            common: CommonAttrs::new(),
            description: Attr::none("description"),
            read_only: Attr::none("read_only"),
            destructive: Attr::none("destructive"),
            idempotent: Attr::none("idempotent"),
            open_world: Attr::none("open_world"),
            tags: Attr::none("tags"),
            guards: Vec::new(),
            max_output: Attr::none("max_output"),
            truncate_output: Attr::none("truncate_output"),
            require_docs: Attr::none("require_docs"),
            dry_run: Attr::none("dry_run"),
            confirm: Attr::none("confirm"),
            task: Attr::none("task"),
            detach: Attr::none("detach"),
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

    /// `annotations(read_only, destructive = false, ...)`.
    fn parse_annotations(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        meta.parse_nested_meta(|inner| {
            let span = inner.path.span();
            let key = path_name(&inner.path);
            let value = optional_bool(&inner)?;
            match key.as_str() {
                "read_only" => self.read_only.set(cx, span, value),
                "destructive" => self.destructive.set(cx, span, value),
                "idempotent" => self.idempotent.set(cx, span, value),
                "open_world" => self.open_world.set(cx, span, value),
                other => cx.error(
                    span,
                    format!(
                        "unknown annotation `{other}`{}; the annotations are {ANNOTATIONS}",
                        did_you_mean(
                            other,
                            &["read_only", "destructive", "idempotent", "open_world"]
                        )
                    ),
                ),
            }
            Ok(())
        })
    }

    fn parse_one(&mut self, cx: &Ctxt, meta: &ParseNestedMeta<'_>) {
        let span = meta.path.span();
        let key = path_name(&meta.path);
        if let Some(result) = self.common.parse_one(cx, meta, &key) {
            if let Err(e) = result {
                cx.syn_error(e);
            }
            return;
        }
        let result = match key.as_str() {
            "description" => lit_str(meta).map(|v| self.description.set(cx, span, v)),
            "max_output" => lit_str(meta).map(|v| self.max_output.set(cx, span, v)),
            "truncate_output" => {
                self.truncate_output.set(cx, span, ());
                Ok(())
            }
            "require_docs" => {
                self.require_docs.set(cx, span, ());
                Ok(())
            }
            "dry_run" => {
                self.dry_run.set(cx, span, ());
                Ok(())
            }
            "confirm" => lit_str(meta).map(|v| self.confirm.set(cx, span, v)),
            "task" => lit_str(meta).map(|v| self.task.set(cx, span, v)),
            "detach" => lit_str(meta).map(|v| self.detach.set(cx, span, v)),
            "tags" => string_list(meta, "tags").map(|v| self.tags.set(cx, span, v)),
            "guard" => meta
                .value()
                .and_then(syn::parse::ParseBuffer::parse::<syn::Path>)
                .map_err(|e| {
                    syn::Error::new(e.span(), "`guard` takes a fn path: `guard = my_guard`")
                })
                .map(|p| self.guards.push(p)),
            "annotations" => self.parse_annotations(cx, meta),
            annotation @ ("read_only" | "destructive" | "idempotent" | "open_world") => {
                cx.error(
                    span,
                    format!(
                        "`{annotation}` is an annotation: write `#[tool(annotations({annotation}))]`"
                    ),
                );
                skip_value(meta)
            }
            other => {
                cx.error(
                    span,
                    format!(
                        "unknown option `{other}` in #[tool]{}; the options are {TOOL_OPTIONS}",
                        did_you_mean(other, TOOL_OPTION_NAMES)
                    ),
                );
                skip_value(meta)
            }
        };
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
}

/// `#[arg(...)]` on one parameter.
pub(crate) struct ArgAttrs {
    pub(crate) default: Attr<Expr>,
    pub(crate) range: Attr<Bounds>,
    pub(crate) length: Attr<Bounds>,
    pub(crate) pattern: Attr<LitStr>,
    pub(crate) inject: Attr<()>,
    pub(crate) positional: Attr<()>,
    pub(crate) short: Attr<syn::LitChar>,
    /// The HTTP header a Streamable HTTP client mirrors the value in (SEP-2243 `x-mcp-header`).
    pub(crate) header: Attr<LitStr>,
    /// A `bool` or `Vec<T>` the caller must give (they default to `false` and empty).
    pub(crate) required: Attr<()>,
    /// A resource template variable whose values are not screened for `..` and absolute paths.
    pub(crate) unscreened: Attr<()>,
    /// The completion fn of a prompt argument or resource template variable.
    pub(crate) complete: Attr<syn::Path>,
}

/// `min = ..., max = ...`, either optional.
pub(crate) struct Bounds {
    pub(crate) min: Option<Expr>,
    pub(crate) max: Option<Expr>,
}

/// The options of `#[arg]` a misspelling is matched against.
const ARG_NAMES: [&str; 9] = [
    "default",
    "header",
    "required",
    "range",
    "length",
    "pattern",
    "inject",
    "unscreened",
    "complete",
];

const ARG_OPTIONS: &str = "`default = <value>`, `required`, `range(min = .., max = ..)`, `length(min = .., max = ..)`, `pattern = \"...\"`, `positional`, `short = 'x'`, `header = \"Name\"`, `inject`, and on #[resource] and #[prompt] parameters `complete = path::to::fn` and `unscreened`";

impl ArgAttrs {
    pub(crate) fn empty() -> Self {
        ArgAttrs {
            default: Attr::none("default"),
            range: Attr::none("range"),
            length: Attr::none("length"),
            pattern: Attr::none("pattern"),
            inject: Attr::none("inject"),
            positional: Attr::none("positional"),
            required: Attr::none("required"),
            short: Attr::none("short"),
            header: Attr::none("header"),
            unscreened: Attr::none("unscreened"),
            complete: Attr::none("complete"),
        }
    }

    /// Adds the options of one `#[arg(...)]` attribute (a parameter may carry several).
    pub(crate) fn parse_into(&mut self, cx: &Ctxt, attr: &syn::Attribute) {
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            match path_name(&meta.path).as_str() {
                "default" => {
                    let expr: Expr = meta.value()?.parse()?;
                    self.default.set(cx, span, expr);
                }
                "range" => {
                    let b = bounds(&meta)?;
                    self.range.set(cx, span, b);
                }
                "length" => {
                    let b = bounds(&meta)?;
                    self.length.set(cx, span, b);
                }
                "pattern" => {
                    let s = lit_str(&meta)?;
                    self.pattern.set(cx, span, s);
                }
                "inject" => self.inject.set(cx, span, ()),
                "positional" => self.positional.set(cx, span, ()),
                "required" => self.required.set(cx, span, ()),
                "unscreened" => self.unscreened.set(cx, span, ()),
                "complete" => {
                    let path: syn::Path = meta.value()?.parse().map_err(|e| {
                        syn::Error::new(
                            e.span(),
                            "`complete` takes a fn path: `complete = my_completions`",
                        )
                    })?;
                    self.complete.set(cx, span, path);
                }
                "header" => {
                    let s = lit_str(&meta)?;
                    if !tool_grammar::is_header_name(&s.value()) {
                        return Err(syn::Error::new(
                            s.span(),
                            "`header` takes an HTTP header name, letters, digits and `-`: `header = \"Region\"` (clients send it as `Mcp-Param-Region`)",
                        ));
                    }
                    self.header.set(cx, span, s);
                }
                "short" => {
                    let c: syn::LitChar = meta.value()?.parse().map_err(|e| {
                        syn::Error::new(e.span(), "`short` takes a character: `short = 'n'`")
                    })?;
                    self.short.set(cx, span, c);
                }
                other => {
                    cx.error(
                        span,
                        format!(
                            "unknown option `{other}` in #[arg]{}; the options are {ARG_OPTIONS}",
                            did_you_mean(other, &ARG_NAMES)
                        ),
                    );
                    skip_value(&meta)?;
                }
            }
            Ok(())
        });
        if let Err(e) = result {
            cx.syn_error(e);
        }
    }
}

fn bounds(meta: &ParseNestedMeta<'_>) -> syn::Result<Bounds> {
    let mut b = Bounds {
        min: None,
        max: None,
    };
    meta.parse_nested_meta(|inner| {
        let key = path_name(&inner.path);
        let slot = match key.as_str() {
            "min" => &mut b.min,
            "max" => &mut b.max,
            other => {
                return Err(inner.error(format!(
                    "unknown bound `{other}`; write `min = ..` and/or `max = ..`"
                )));
            }
        };
        if slot.is_some() {
            return Err(inner.error(format!("duplicate bound `{key}`: give it once")));
        }
        *slot = Some(inner.value()?.parse()?);
        Ok(())
    })?;
    if b.min.is_none() && b.max.is_none() {
        return Err(meta.error("give at least one bound: `min = ..` and/or `max = ..`"));
    }
    Ok(b)
}

/// An OAuth 2 scope-token (RFC 6749, section 3.3): visible ASCII but `"` and `\`.
fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| matches!(b, 0x21 | 0x23..=0x5B | 0x5D..=0x7E))
}

pub(crate) fn string_list(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Vec<LitStr>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let list = syn::punctuated::Punctuated::<LitStr, Token![,]>::parse_terminated(&content)
        .map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{key}` takes strings: `{key}(\"a\", \"b\")`"),
            )
        })?;
    Ok(list.into_iter().collect())
}

pub(crate) fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let key = path_name(&meta.path);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` takes a string: `{key} = \"...\"`")))?;
    value.parse::<LitStr>().map_err(|e| {
        syn::Error::new(
            e.span(),
            format!("`{key}` takes a string: `{key} = \"...\"`"),
        )
    })
}

fn optional_bool(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        Ok(meta.value()?.parse::<LitBool>()?.value)
    } else {
        Ok(true)
    }
}

/// Consumes `= value` or `(...)` after an unknown key, so one mistake gives one error.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        let _: Expr = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
    }
    Ok(())
}

pub(crate) fn path_name(path: &syn::Path) -> String {
    path.get_ident().map_or_else(
        || quote::ToTokens::to_token_stream(path).to_string(),
        ToString::to_string,
    )
}

/// `" (did you mean `name`?)"` when `typed` is a typo of one of `known`, else `""`.
pub(crate) fn did_you_mean(typed: &str, known: &[&str]) -> String {
    known
        .iter()
        .map(|k| (edit_distance(typed, k), *k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 3))
        .min()
        .map(|(_, k)| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default()
}

/// Levenshtein distance; the macro crate keeps to syn, quote and proc-macro2.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(row[j]).min(cur)
            };
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{did_you_mean, edit_distance};

    #[test]
    fn suggestions_for_typos_only() {
        assert_eq!(edit_distance("nmae", "name"), 2);
        assert_eq!(
            did_you_mean("nmae", &["name", "title"]),
            " (did you mean `name`?)"
        );
        assert_eq!(did_you_mean("minimum", &["default", "range"]), "");
    }
}
