//! What a client is told when its token is missing, invalid or lacks a scope (RFC 6750's
//! `WWW-Authenticate: Bearer` challenge), and, with OAuth, where to get one: the protected
//! resource metadata (RFC 9728) of the server's base URL and of its MCP URL.

/// The path of the base URL's protected resource metadata; the MCP URL's is this followed by
/// the MCP URL's path (`/.well-known/oauth-protected-resource/mcp`).
pub(crate) const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// The `WWW-Authenticate` value of a 401: `Bearer`, with `resource_metadata` when the server
/// has OAuth, and `error="invalid_token"` with its description when a token was given.
pub(crate) fn unauthorized(metadata: Option<&str>, invalid: Option<&str>) -> String {
    let mut value = String::from("Bearer");
    let mut params = Vec::new();
    match metadata {
        Some(url) => params.push(format!("resource_metadata=\"{}\"", quoted(url))),
        None => params.push("realm=\"tools\"".to_owned()),
    }
    if let Some(description) = invalid {
        params.push("error=\"invalid_token\"".to_owned());
        params.push(format!("error_description=\"{}\"", quoted(description)));
    }
    value.push(' ');
    value.push_str(&params.join(", "));
    value
}

/// The `WWW-Authenticate` value of a 403 for a token without the scopes a call needs: every
/// scope the call needs, so that the client can ask for them all at once.
pub(crate) fn insufficient_scope(scopes: &str, metadata: Option<&str>) -> String {
    let mut value = format!(
        "Bearer error=\"insufficient_scope\", scope=\"{}\"",
        quoted(scopes)
    );
    if let Some(url) = metadata {
        value.push_str(", resource_metadata=\"");
        value.push_str(&quoted(url));
        value.push('"');
    }
    value.push_str(", error_description=\"the token lacks a scope this call needs\"");
    value
}

/// `text` fit for a quoted string of a header: no `"` or `\`, visible ASCII and spaces only
/// (scopes are scope-tokens and URLs are configured; this only guards the rule).
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| (c.is_ascii_graphic() || *c == ' ') && *c != '"' && *c != '\\')
        .collect()
}

/// The scopes a refused call needs (space-separated), left on its 403 for the HTTP front layer,
/// which adds the `WWW-Authenticate` challenge naming them and where to get a token.
#[derive(Debug, Clone)]
pub(crate) struct ScopeChallenge(pub(crate) String);

/// The scopes an `insufficient_scope` error's details name, space-separated.
pub(crate) fn scopes_of(error: &crate::tool::error::ToolError) -> Option<String> {
    let scopes = error.details()?.get("scopes")?.as_array()?;
    Some(
        scopes
            .iter()
            .filter_map(serde_json::Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
    )
}

#[cfg(feature = "oauth")]
mod documents {
    use serde_json::{Value, json};

    use super::METADATA_PATH;
    use crate::front::auth::oauth::OAuth;

    impl OAuth {
        /// The path of the MCP URL's metadata, on this server.
        pub(crate) fn mcp_metadata_path(&self) -> String {
            let path = url::Url::parse(self.resource())
                .map(|u| u.path().trim_end_matches('/').to_owned())
                .unwrap_or_default();
            format!("{METADATA_PATH}{path}")
        }

        /// The URL of the metadata a 401 on `mcp` (the MCP endpoint) or another route names.
        pub(crate) fn metadata_url(&self, mcp: bool) -> String {
            if mcp {
                format!("{}{}", self.base(), self.mcp_metadata_path())
            } else {
                format!("{}{METADATA_PATH}", self.base())
            }
        }

        /// The metadata document of the MCP URL (`mcp`) or the base URL: its `resource` is the
        /// URL it describes (RFC 9728, section 3.3).
        pub(crate) fn metadata_document(&self, mcp: bool, name: &str) -> Value {
            let mut document = json!({
                "resource": if mcp { self.resource() } else { self.base() },
                "authorization_servers": self.authorization_servers(),
                "bearer_methods_supported": ["header"],
                "resource_name": name,
            });
            if !self.scopes_supported().is_empty() {
                document["scopes_supported"] = json!(self.scopes_supported());
            }
            document
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_quote_what_they_name() {
        assert_eq!(unauthorized(None, None), "Bearer realm=\"tools\"");
        assert_eq!(
            unauthorized(
                Some("https://t.example/.well-known/oauth-protected-resource/mcp"),
                Some("the token has expired")
            ),
            "Bearer resource_metadata=\"https://t.example/.well-known/oauth-protected-resource/mcp\", error=\"invalid_token\", error_description=\"the token has expired\""
        );
        assert_eq!(
            insufficient_scope("a:b c", None),
            "Bearer error=\"insufficient_scope\", scope=\"a:b c\", error_description=\"the token lacks a scope this call needs\""
        );
        assert_eq!(quoted("x\"y\\z\n"), "xyz");
    }
}
