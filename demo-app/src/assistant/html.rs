//! Reading HTML with the HTML5 parser htmd converts with: DuckDuckGo's result page, and text
//! out of markup.

use html5ever::tendril::TendrilSink;
use markup5ever_rcdom::{Handle, NodeData, RcDom};
use url::Url;

use schemars::JsonSchema;
use serde::Serialize;

/// One search result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// A short extract.
    pub snippet: String,
}

fn parse(html: &str) -> RcDom {
    html5ever::parse_document(RcDom::default(), html5ever::ParseOpts::default()).one(html)
}

/// The text in `html`, markup removed, entities decoded, white space collapsed.
pub(crate) fn text_of(html: &str) -> String {
    let mut out = String::new();
    collect_text(&parse(html).document, &mut out);
    collapse(&out)
}

fn collect_text(node: &Handle, out: &mut String) {
    if let NodeData::Text { contents } = &node.data {
        out.push_str(&contents.borrow());
    }
    for child in node.children.borrow().iter() {
        collect_text(child, out);
    }
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn attr(node: &Handle, name: &str) -> Option<String> {
    let NodeData::Element { attrs, .. } = &node.data else {
        return None;
    };
    attrs
        .borrow()
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| a.value.to_string())
}

fn has_class(node: &Handle, class: &str) -> bool {
    attr(node, "class").is_some_and(|c| c.split_whitespace().any(|c| c == class))
}

/// The results on DuckDuckGo's HTML page (`html.duckduckgo.com/html/`), ads left out: each
/// `a.result__a` is a title and link (DuckDuckGo's redirect, unwrapped), the next
/// `.result__snippet` its extract.
pub(crate) fn duckduckgo_results(html: &str) -> Vec<SearchResult> {
    let mut results = Vec::new();
    walk(&parse(html).document, false, &mut results);
    results
}

fn walk(node: &Handle, in_ad: bool, results: &mut Vec<SearchResult>) {
    let in_ad = in_ad || has_class(node, "result--ad");
    if !in_ad && has_class(node, "result__a") {
        let mut title = String::new();
        collect_text(node, &mut title);
        if let Some(url) = attr(node, "href").and_then(|h| unwrap_link(&h)) {
            results.push(SearchResult {
                title: collapse(&title),
                url,
                snippet: String::new(),
            });
        }
        return;
    }
    if !in_ad && has_class(node, "result__snippet") {
        if let Some(last) = results.last_mut()
            && last.snippet.is_empty()
        {
            let mut snippet = String::new();
            collect_text(node, &mut snippet);
            last.snippet = collapse(&snippet);
        }
        return;
    }
    for child in node.children.borrow().iter() {
        walk(child, in_ad, results);
    }
}

/// The target of DuckDuckGo's `//duckduckgo.com/l/?uddg=TARGET` links; other http(s) links as
/// they are.
fn unwrap_link(href: &str) -> Option<String> {
    let absolute = if href.starts_with("//") {
        format!("https:{href}")
    } else {
        href.to_owned()
    };
    let url = Url::parse(&absolute).ok()?;
    if let Some((_, target)) = url.query_pairs().find(|(k, _)| k == "uddg") {
        return Some(target.into_owned());
    }
    matches!(url.scheme(), "http" | "https").then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duckduckgo_results_are_read_and_ads_left_out() {
        let html = r#"<html><body>
          <div class="result results_links result--ad"><h2 class="result__title">
            <a class="result__a" href="https://duckduckgo.com/y.js?ad=1">Buy now</a></h2>
            <a class="result__snippet">An ad</a></div>
          <div class="result results_links"><h2 class="result__title">
            <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.rust-lang.org%2F&amp;rut=abc">Rust <b>Programming</b> Language</a></h2>
            <a class="result__snippet" href="x">A language empowering <b>everyone</b> &amp; more.</a></div>
          <div class="result results_links"><h2 class="result__title">
            <a class="result__a" href="https://doc.rust-lang.org/book/">The Book</a></h2></div>
        </body></html>"#;
        assert_eq!(
            duckduckgo_results(html),
            [
                SearchResult {
                    title: "Rust Programming Language".into(),
                    url: "https://www.rust-lang.org/".into(),
                    snippet: "A language empowering everyone & more.".into(),
                },
                SearchResult {
                    title: "The Book".into(),
                    url: "https://doc.rust-lang.org/book/".into(),
                    snippet: String::new(),
                },
            ]
        );
        assert_eq!(text_of("<strong>Rust</strong> &lt;3"), "Rust <3");
    }
}
