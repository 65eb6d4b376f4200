//! `web_fetch` and `web_search`: pages and search results, every request under the URL guard.

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Serialize;
use tool_runtime::Secret;
use tool_runtime::layers::guard::{GuardedClient, UrlPolicy, WebResponse};
use tool_runtime::prelude::*;

pub use super::html::SearchResult;
use crate::config::WebConfig;

/// The most characters of a page `web_fetch` returns.
pub const MAX_CHARS: usize = 15_000;

/// The marker after a cut page.
pub const TRUNCATED: &str = "\n\n... (truncated)";

/// Elements left out of a page before it becomes Markdown: code, styling and navigation.
const SKIPPED: [&str; 8] = [
    "script", "style", "nav", "footer", "noscript", "template", "iframe", "head",
];

/// Where the web tools send requests, and how search is done. The HTTP client (and its TLS
/// set-up) is made on first use, so commands that never reach the web do not pay for it.
#[derive(Debug, Clone)]
pub struct Web {
    policy: UrlPolicy,
    client: Arc<OnceLock<GuardedClient>>,
    brave_key: Option<Secret<String>>,
    brave_url: String,
    duckduckgo_url: String,
}

impl Web {
    /// From `[web]`; the Brave key read through `env`.
    pub fn from_config(config: &WebConfig, env: impl Fn(&str) -> Option<String>) -> Self {
        let policy = UrlPolicy::new()
            .allow_hosts(&config.allow_hosts)
            .deny_hosts(&config.deny_hosts)
            .max_bytes(config.max_bytes)
            .timeout(config.timeout);
        Self::new(
            policy,
            env(&config.brave_api_key_env).map(Secret::new),
            config.brave_url.clone(),
            config.duckduckgo_url.clone(),
        )
    }

    /// Requests under `policy`, searching Brave with `brave_key` if given, else DuckDuckGo.
    #[must_use]
    pub fn new(
        policy: UrlPolicy,
        brave_key: Option<Secret<String>>,
        brave_url: String,
        duckduckgo_url: String,
    ) -> Self {
        Self {
            policy,
            client: Arc::default(),
            brave_key,
            brave_url,
            duckduckgo_url,
        }
    }

    /// The policy every request passes.
    #[must_use]
    pub fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// The guarded client, which channels' webhooks share; made on first use.
    pub fn client(&self) -> Result<&GuardedClient, ToolError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let made = self.policy.client()?;
        Ok(self.client.get_or_init(|| made))
    }
}

/// A fetched page.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Page {
    /// The URL that answered, after redirects.
    pub url: String,
    /// Its media type, such as `text/html`.
    pub content_type: String,
    /// The page as Markdown (HTML) or text, at most 15,000 characters.
    pub content: String,
    /// The content's length in characters before it was cut.
    pub length: usize,
    /// Whether the content was cut (it then ends with `... (truncated)`).
    pub truncated: bool,
}

/// Fetch a web page as Markdown or text.
///
/// HTML becomes Markdown without scripts, styles, navigation and footers; other text is
/// returned as is. Only public http(s) addresses are reached. At most 15,000 characters are returned; a longer
/// page ends with "... (truncated)" and `length` tells the full size. Binary content (images,
/// PDFs, archives) is refused with `unsupported_media_type`.
#[tool(annotations(read_only, open_world), tags("web"))]
pub async fn web_fetch(
    web: State<Web>,
    /// The page's URL, http:// or https://
    #[arg(positional, length(min = 1, max = 2048))]
    url: String,
) -> Result<Page, ToolError> {
    let response = web.client()?.get(url).send().await?;
    page(&response)
}

fn page(response: &WebResponse) -> Result<Page, ToolError> {
    if !response.is_success() {
        return Err(ToolError::failed(format!(
            "{} answered with HTTP {}",
            response.url(),
            response.status()
        ))
        .with_details(serde_json::json!({"status": response.status()})));
    }
    let media = response
        .media_type()
        .unwrap_or_else(|| "text/plain".to_owned());
    let text = if media == "text/html" || media == "application/xhtml+xml" {
        markdown(&response.text())?
    } else if is_text(&media) {
        response.text()
    } else {
        return Err(ToolError::new(
            tool_runtime::ErrorKind::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "{} is `{media}`, which is not text; web_fetch reads HTML and text",
                response.url()
            ),
        ));
    };
    let length = text.chars().count();
    let truncated = length > MAX_CHARS;
    let content = if truncated {
        let mut cut: String = text.chars().take(MAX_CHARS).collect();
        cut.push_str(TRUNCATED);
        cut
    } else {
        text
    };
    Ok(Page {
        url: response.url().to_string(),
        content_type: media,
        content,
        length,
        truncated,
    })
}

fn is_text(media: &str) -> bool {
    media.starts_with("text/")
        || media.ends_with("+json")
        || media.ends_with("+xml")
        || matches!(
            media,
            "application/json"
                | "application/xml"
                | "application/javascript"
                | "application/x-yaml"
                | "application/yaml"
        )
}

/// HTML as Markdown, without the elements in [`SKIPPED`].
fn markdown(html: &str) -> Result<String, ToolError> {
    let converter = htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build();
    let text = converter
        .convert(html)
        .map_err(|e| ToolError::failed(format!("the page's HTML could not be read: {e}")))?;
    Ok(text.trim().to_owned())
}

/// Search results.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResults {
    /// `brave` or `duckduckgo`.
    pub engine: String,
    /// The results, best first.
    pub results: Vec<SearchResult>,
}

/// Search the web and return titles, URLs and snippets.
///
/// Uses Brave Search when an API key is configured, DuckDuckGo otherwise.
#[tool(annotations(read_only, open_world), tags("web"))]
pub async fn web_search(
    web: State<Web>,
    /// What to search for
    #[arg(positional, length(min = 1, max = 400))]
    query: String,
    /// How many results to return
    #[arg(default = 5, range(min = 1, max = 20))]
    max_results: u8,
) -> Result<SearchResults, ToolError> {
    let count = usize::from(max_results);
    let (engine, mut results) = match &web.brave_key {
        Some(key) => ("brave", brave(&web, key.expose(), &query, count).await?),
        None => ("duckduckgo", duckduckgo(&web, &query).await?),
    };
    results.truncate(count);
    Ok(SearchResults {
        engine: engine.to_owned(),
        results,
    })
}

async fn brave(
    web: &Web,
    key: &str,
    query: &str,
    count: usize,
) -> Result<Vec<SearchResult>, ToolError> {
    #[derive(serde::Deserialize)]
    struct Answer {
        #[serde(default)]
        web: Option<Section>,
    }
    #[derive(serde::Deserialize)]
    struct Section {
        #[serde(default)]
        results: Vec<Hit>,
    }
    #[derive(serde::Deserialize)]
    struct Hit {
        title: String,
        url: String,
        #[serde(default)]
        description: String,
    }
    let response = web
        .client()?
        .get(&web.brave_url)
        .query("q", query)
        .query("count", count.to_string())
        .header("accept", "application/json")
        .header("x-subscription-token", key)
        .send()
        .await?;
    if !response.is_success() {
        return Err(search_failed("Brave Search", &response));
    }
    let answer: Answer = response.json()?;
    Ok(answer
        .web
        .map(|w| w.results)
        .unwrap_or_default()
        .into_iter()
        .map(|h| SearchResult {
            title: strip_tags(&h.title),
            url: h.url,
            snippet: strip_tags(&h.description),
        })
        .collect())
}

async fn duckduckgo(web: &Web, query: &str) -> Result<Vec<SearchResult>, ToolError> {
    let response = web
        .client()?
        .get(&web.duckduckgo_url)
        .query("q", query)
        .send()
        .await?;
    if !response.is_success() {
        return Err(search_failed("DuckDuckGo", &response));
    }
    Ok(super::html::duckduckgo_results(&response.text()))
}

fn search_failed(engine: &str, response: &WebResponse) -> ToolError {
    ToolError::new(
        tool_runtime::ErrorKind::UNAVAILABLE,
        format!("{engine} answered with HTTP {}", response.status()),
    )
    .with_details(serde_json::json!({"status": response.status()}))
}

/// Text without the markup Brave puts in titles and descriptions (`<strong>`), entities decoded.
fn strip_tags(text: &str) -> String {
    super::html::text_of(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_markdown_without_code_styling_or_navigation() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
            <nav><a href='/'>Home</a></nav><h1>Hello</h1><p>Some <b>bold</b> text.</p>\
            <script>alert(1)</script><footer>© footer</footer></body></html>";
        let md = markdown(html).unwrap();
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("**bold**"), "{md}");
        for gone in ["alert", "p{}", "Home", "footer"] {
            assert!(!md.contains(gone), "{gone} in {md}");
        }
    }
}
