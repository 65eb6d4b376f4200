//! A mount reached as a workload (workload identity federation, the MCP extension
//! `io.modelcontextprotocol/auth/wif`): the JWT its platform issued it (a Kubernetes service
//! account token, a CI job's OIDC token) is presented to the server's authorization server as a
//! JWT bearer grant (RFC 7523) for an access token. No secret is kept here; a failed grant is
//! reported as the authorization server said it, never retried nor traded for another grant.

use std::path::PathBuf;

use serde_json::Value;

use super::client::authorization_server;
use crate::tool::secret::Secret;

/// The grant type of RFC 7523.
const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// How a mount proves it is a workload, for
/// [`RemoteServer::as_workload`](crate::mcp::RemoteServer::as_workload): its client id at the
/// server's authorization server, and the JWT its platform issued it, given as it is or read
/// from a file each time a token is asked for (platforms rotate the file).
#[derive(Clone)]
pub struct WorkloadIdentity {
    client_id: String,
    assertion: Assertion,
    scopes: Vec<String>,
}

#[derive(Clone)]
enum Assertion {
    Token(Secret<String>),
    File(PathBuf),
}

impl WorkloadIdentity {
    /// The workload `client_id` with the platform's JWT `token`.
    #[must_use]
    pub fn new(client_id: impl Into<String>, token: Secret<String>) -> Self {
        Self {
            client_id: client_id.into(),
            assertion: Assertion::Token(token),
            scopes: Vec::new(),
        }
    }

    /// The workload `client_id` with the JWT in the file `path`, read each time.
    #[must_use]
    pub fn from_file(client_id: impl Into<String>, path: impl Into<PathBuf>) -> Self {
        Self {
            client_id: client_id.into(),
            assertion: Assertion::File(path.into()),
            scopes: Vec::new(),
        }
    }

    /// The scopes to ask for (none by default: the authorization server's choice).
    #[must_use]
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// An access token for the server at `url`, from the authorization server its metadata
    /// names.
    pub(super) async fn token(&self, url: &str) -> Result<String, String> {
        let failed = |e: &dyn std::fmt::Display| format!("no token for {url}: {e}");
        let assertion = match &self.assertion {
            Assertion::Token(token) => token.expose().clone(),
            Assertion::File(path) => tokio::fs::read_to_string(path)
                .await
                .map_err(|e| failed(&format!("cannot read {}: {e}", path.display())))?
                .trim()
                .to_owned(),
        };
        let endpoint = authorization_server(url).await?.token_endpoint;
        let mut form = vec![
            ("grant_type", JWT_BEARER.to_owned()),
            ("assertion", assertion),
            ("client_id", self.client_id.clone()),
            ("resource", url.to_owned()),
        ];
        if !self.scopes.is_empty() {
            form.push(("scope", self.scopes.join(" ")));
        }
        let body = form
            .iter()
            .map(|(k, v)| format!("{k}={}", urlencoding(v)))
            .collect::<Vec<_>>()
            .join("&");
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| failed(&e))?;
        let answer = http
            .post(&endpoint)
            .header("content-type", "application/x-www-form-urlencoded")
            .header("accept", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| failed(&e))?;
        let status = answer.status();
        let answer: Value = answer.json().await.map_err(|e| failed(&e))?;
        if let Some(token) = answer["access_token"]
            .as_str()
            .filter(|_| status.is_success())
        {
            return Ok(token.to_owned());
        }
        let error = answer["error"].as_str().unwrap_or("no access token");
        Err(failed(&match answer["error_description"].as_str() {
            Some(description) => {
                format!("the authorization server answered `{error}`: {description}")
            }
            None => format!("the authorization server answered `{error}` ({status})"),
        }))
    }
}

/// `text` percent-encoded for a form.
fn urlencoding(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

impl std::fmt::Debug for WorkloadIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let assertion = match &self.assertion {
            Assertion::Token(_) => "token".to_owned(),
            Assertion::File(path) => path.display().to_string(),
        };
        f.debug_struct("WorkloadIdentity")
            .field("client_id", &self.client_id)
            .field("assertion", &assertion)
            .field("scopes", &self.scopes)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_never_shows_its_token_and_names_its_file() {
        let given = WorkloadIdentity::new("ci", Secret::new("eyJ.secret.jwt".into())).scopes(["a"]);
        let shown = format!("{given:?}");
        assert!(
            !shown.contains("eyJ") && shown.contains("\"ci\""),
            "{shown}"
        );
        let file = WorkloadIdentity::from_file("pod", "/var/run/secrets/token");
        assert!(format!("{file:?}").contains("/var/run/secrets/token"));
        assert_eq!(urlencoding("a b&c=d/é"), "a+b%26c%3Dd%2F%C3%A9");
    }
}
