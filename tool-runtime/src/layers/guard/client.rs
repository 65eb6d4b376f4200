//! [`GuardedClient`]: HTTP requests under a [`UrlPolicy`], with the response read up to its
//! size limit.

use std::sync::Arc;

use reqwest::Url;
use reqwest::header::CONTENT_TYPE;
use serde::Serialize;

use reqwest::redirect;

use super::refuse;
use super::url::{Checked, Refused, UrlPolicy};
use crate::tool::error::{ErrorKind, ToolError};

impl UrlPolicy {
    /// A client that makes every request under this policy.
    pub fn client(&self) -> Result<GuardedClient, ToolError> {
        let policy = Arc::new(self.clone());
        let hops = policy.clone();
        let redirects = redirect::Policy::custom(move |attempt| {
            if attempt.previous().len() > hops.max_redirects {
                return attempt.error(Refused(refuse(
                    "redirect_limit",
                    format!("more than {} redirects", hops.max_redirects),
                    None,
                )));
            }
            match hops.check_url(attempt.url()) {
                Ok(()) => attempt.follow(),
                Err(e) => attempt.error(Refused(e)),
            }
        });
        let client = reqwest::Client::builder()
            .no_proxy()
            .redirect(redirects)
            .timeout(self.timeout)
            .dns_resolver(Arc::new(Checked(policy.clone())))
            .user_agent(concat!("tool-runtime/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| ToolError::internal(format_args!("HTTP client: {e}")))?;
        Ok(GuardedClient::new(client, policy))
    }
}

/// Makes requests under a [`UrlPolicy`]: made by [`UrlPolicy::client`], cheap to clone, one
/// per application (it keeps connections open for reuse).
#[derive(Debug, Clone)]
pub struct GuardedClient {
    client: reqwest::Client,
    policy: Arc<UrlPolicy>,
}

impl GuardedClient {
    pub(super) fn new(client: reqwest::Client, policy: Arc<UrlPolicy>) -> Self {
        Self { client, policy }
    }

    /// The policy every request is checked against.
    #[must_use]
    pub fn policy(&self) -> &UrlPolicy {
        &self.policy
    }

    /// A `GET` request.
    pub fn get(&self, url: impl Into<String>) -> WebRequest<'_> {
        self.request(reqwest::Method::GET, url.into())
    }

    /// A `POST` request.
    pub fn post(&self, url: impl Into<String>) -> WebRequest<'_> {
        self.request(reqwest::Method::POST, url.into())
    }

    fn request(&self, method: reqwest::Method, url: String) -> WebRequest<'_> {
        WebRequest {
            client: self,
            method,
            url,
            query: Vec::new(),
            headers: Vec::new(),
            body: None,
        }
    }
}

/// A request being built: [`GuardedClient::get`], [`GuardedClient::post`].
#[derive(Debug)]
#[must_use = "a request does nothing until it is sent"]
pub struct WebRequest<'a> {
    client: &'a GuardedClient,
    method: reqwest::Method,
    url: String,
    query: Vec<(String, String)>,
    headers: Vec<(String, String)>,
    body: Option<(String, Vec<u8>)>,
}

impl WebRequest<'_> {
    /// Adds a query parameter, encoded.
    pub fn query(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.query.push((name.into(), value.into()));
        self
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body and its media type.
    pub fn body(mut self, content_type: impl Into<String>, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some((content_type.into(), body.into()));
        self
    }

    /// Sets a JSON body.
    pub fn json<T: Serialize + ?Sized>(self, value: &T) -> Self {
        let body = serde_json::to_vec(value).unwrap_or_default();
        self.body("application/json", body)
    }

    /// Sends the request: the URL is checked first, the host's addresses when it is resolved,
    /// each redirect before it is followed. A status other than 2xx is not an error: read
    /// [`WebResponse::status`].
    pub async fn send(self) -> Result<WebResponse, ToolError> {
        let client = self.client;
        let policy = &client.policy;
        let mut url = policy.check(&self.url)?;
        if !self.query.is_empty() {
            url.query_pairs_mut().extend_pairs(&self.query);
        }
        let mut request = client.client.request(self.method, url);
        for (name, value) in &self.headers {
            request = request.header(name, value);
        }
        if let Some((content_type, body)) = self.body {
            request = request.header(CONTENT_TYPE, content_type).body(body);
        }
        let mut response = request.send().await.map_err(|e| failure(&e, policy))?;
        let limit = policy.byte_limit();
        if response.content_length().is_some_and(|n| n > limit as u64) {
            return Err(too_large(limit));
        }
        let final_url = response.url().clone();
        let status = response.status().as_u16();
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| failure(&e, policy))? {
            if body.len() + chunk.len() > limit {
                return Err(too_large(limit));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(WebResponse {
            url: final_url,
            status,
            content_type,
            body,
        })
    }
}

fn too_large(limit: usize) -> ToolError {
    ToolError::new(
        ErrorKind::PAYLOAD_TOO_LARGE,
        format!("the response is larger than {limit} bytes"),
    )
    .with_details(serde_json::json!({"rule": "max_bytes", "limit": limit}))
}

/// The tool error for a failed request: the policy's refusal when one stopped it.
fn failure(e: &reqwest::Error, policy: &UrlPolicy) -> ToolError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(cause) = source {
        if let Some(Refused(refusal)) = cause.downcast_ref::<Refused>() {
            return refusal.clone();
        }
        source = cause.source();
    }
    let host = e
        .url()
        .and_then(Url::host_str)
        .unwrap_or("the host")
        .to_owned();
    if e.is_timeout() {
        ToolError::new(
            ErrorKind::TIMEOUT,
            format!("{host} did not answer within {:?}", policy.time_limit()),
        )
    } else if e.is_connect() {
        ToolError::new(ErrorKind::UNAVAILABLE, format!("cannot connect to {host}"))
    } else {
        let mut message = format!("the request to {host} failed: {e}");
        let mut cause = std::error::Error::source(e);
        while let Some(c) = cause {
            message = format!("{message}: {c}");
            cause = c.source();
        }
        ToolError::new(ErrorKind::UNAVAILABLE, message)
    }
}

/// A response read whole (up to the policy's size limit).
#[derive(Debug, Clone)]
pub struct WebResponse {
    url: Url,
    status: u16,
    content_type: Option<String>,
    body: Vec<u8>,
}

impl WebResponse {
    /// The URL that answered, after redirects.
    #[must_use]
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The HTTP status.
    #[must_use]
    pub fn status(&self) -> u16 {
        self.status
    }

    /// Whether the status is 2xx.
    #[must_use]
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The media type, without parameters, in lower case (`text/html`).
    #[must_use]
    pub fn media_type(&self) -> Option<String> {
        let raw = self.content_type.as_deref()?;
        let media = raw.split(';').next().unwrap_or(raw).trim();
        Some(media.to_ascii_lowercase())
    }

    /// The `Content-Type` header as sent.
    #[must_use]
    pub fn content_type(&self) -> Option<&str> {
        self.content_type.as_deref()
    }

    /// The body.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.body
    }

    /// The body as text, invalid UTF-8 replaced.
    #[must_use]
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, ToolError> {
        serde_json::from_slice(&self.body).map_err(|e| {
            ToolError::new(
                ErrorKind::UNAVAILABLE,
                format!("{} answered with JSON that does not fit: {e}", self.url),
            )
        })
    }
}
