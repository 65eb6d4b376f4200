//! OAuth 2.1 on HTTP and `/mcp`: tokens of a real authorization server (oidc-provider) as JWTs
//! and as opaque tokens by introspection, the protected resource metadata and challenges, the
//! scopes decided in the pipeline, tokens that must be refused (minted by oauth2-mock-server),
//! which front ends refuse a token (a rotated key is tested with replicas, in the demo), and a
//! gateway that mounts such a server as the application (client credentials).
#![allow(clippy::too_many_lines)] // Reason: each test walks one issuer's tokens through HTTP and MCP, in order.

use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tool_runtime::Registry;
use tool_runtime::http::{Auth, OAuth, ServerOptions};
use tool_runtime::prelude::*;
use tool_test_support::oauth::AuthServers;

/// Who calls.
#[tool]
async fn whoami(ctx: &CallContext) -> String {
    ctx.principal().unwrap_or("nobody").to_owned()
}

/// List the devices.
#[tool(scopes("devices:read"), annotations(read_only))]
async fn device_list() -> Vec<String> {
    vec!["d1".into()]
}

/// Revoke a device.
#[tool(scopes("devices:admin"))]
async fn device_revoke(id: String) -> String {
    id
}

/// A device's notes.
#[prompt(scopes("devices:admin"))]
async fn device_notes(id: String) -> String {
    format!("notes of {id}")
}

pub(crate) fn registry() -> Arc<Registry> {
    Arc::new(
        Registry::builder()
            .without_inventory()
            .tool(whoami::descriptor())
            .tool(device_list::descriptor())
            .tool(device_revoke::descriptor())
            .prompt(device_notes::descriptor())
            .scope_implies("devices:admin", ["devices:read"])
            .build()
            .unwrap(),
    )
}

/// A server on a port chosen first, so that its URL can be the audience its authorization
/// server issues tokens for: `(base, listener)`.
pub(crate) async fn listener() -> (String, tokio::net::TcpListener) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    (
        format!("http://{}", listener.local_addr().unwrap()),
        listener,
    )
}

pub(crate) fn serve(listener: tokio::net::TcpListener, options: ServerOptions) {
    serve_registry(listener, registry(), options);
}

/// Serves `registry` on `listener` with `options`.
pub(crate) fn serve_registry(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    options: ServerOptions,
) {
    let app = tool_runtime::app::router(registry, options);
    tokio::spawn(tool_runtime::http::serve(
        listener,
        app,
        std::future::pending(),
        &ServerOptions::default().grace(Duration::from_secs(1)),
    ));
}

struct Client {
    base: String,
    http: reqwest::Client,
}

impl Client {
    fn new(base: &str) -> Self {
        Self {
            base: base.to_owned(),
            http: reqwest::Client::new(),
        }
    }

    async fn call(&self, token: Option<&str>, tool: &str, args: Value) -> reqwest::Response {
        let mut request = self
            .http
            .post(format!("{}/tools/{tool}", self.base))
            .json(&args);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send().await.unwrap()
    }

    async fn mcp(
        &self,
        token: Option<&str>,
        session: Option<&str>,
        body: Value,
    ) -> reqwest::Response {
        let mut request = self
            .http
            .post(format!("{}/mcp", self.base))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        request.send().await.unwrap()
    }

    /// A session opened with `token`.
    async fn session(&self, token: &str) -> String {
        let init = self
            .mcp(
                Some(token),
                None,
                tool_test_support::mcp_initialize("2025-11-25"),
            )
            .await;
        assert_eq!(init.status(), StatusCode::OK);
        let session = init.headers()["mcp-session-id"]
            .to_str()
            .unwrap()
            .to_owned();
        let _ = self
            .mcp(
                Some(token),
                Some(&session),
                json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            )
            .await;
        session
    }
}

fn challenge(response: &reqwest::Response) -> String {
    response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_of_a_real_authorization_server_reach_tools_by_their_scopes_on_http_and_mcp() {
    let (base, listener) = listener().await;
    let resource = format!("{base}/mcp");
    let servers = AuthServers::start(&resource, "devices:read devices:admin");
    let oauth = OAuth::builder(&servers.oidc, &resource)
        .introspection(None, "resource-server", "rs-secret")
        .scopes_supported(["devices:read", "devices:admin"])
        .build()
        .unwrap();
    serve(listener, ServerOptions::default().oauth(oauth));
    let client = Client::new(&base);

    // Where to get a token: the metadata of the MCP URL and of the base URL, public.
    for (path, described) in [
        (
            "/.well-known/oauth-protected-resource/mcp",
            resource.as_str(),
        ),
        ("/.well-known/oauth-protected-resource", base.as_str()),
    ] {
        let document: Value = client
            .http
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(document["resource"], described, "{path}");
        assert_eq!(
            document["authorization_servers"],
            json!([servers.oidc]),
            "{path}"
        );
        assert_eq!(
            document["scopes_supported"],
            json!(["devices:read", "devices:admin"])
        );
    }
    // `/openapi.json` declares the issuer's tokens and each call's scopes, and is valid.
    let reader = servers
        .client_credentials("jwt-client", &resource, "devices:read")
        .await;
    let document: Value = client
        .http
        .get(format!("{base}/openapi.json"))
        .bearer_auth(&reader)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        document["components"]["securitySchemes"]["oauth"]["openIdConnectUrl"],
        format!("{}/.well-known/openid-configuration", servers.oidc)
    );
    assert_eq!(
        document["paths"]["/tools/device_revoke"]["post"]["security"],
        json!([{"bearer": ["devices:admin"]}, {"oauth": ["devices:admin"]}])
    );
    assert!(document["paths"]["/tools/device_revoke"]["post"]["responses"]["403"].is_object());
    assert!(
        document["paths"]["/tools/whoami"]["post"]
            .get("security")
            .is_none()
    );
    let dir = tool_test_support::TempDir::new("oauth-openapi");
    let path = dir.join("openapi.json");
    std::fs::write(&path, document.to_string()).unwrap();
    let python = tool_test_support::python_with("openapi_spec_validator");
    let checked = std::process::Command::new(python)
        .args(["-m", "openapi_spec_validator"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );

    // Without a token: 401 naming the metadata, on HTTP and on MCP.
    let refused = client.call(None, "whoami", json!({})).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge(&refused),
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource\"")
    );
    let refused = client
        .mcp(None, None, tool_test_support::mcp_initialize("2025-11-25"))
        .await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        challenge(&refused),
        format!("Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"")
    );

    // A JWT granting `devices:read`: the caller is issuer#client, its scope reaches the list.
    let reader = servers
        .client_credentials("jwt-client", &resource, "devices:read")
        .await;
    assert_eq!(reader.split('.').count(), 3, "a JWT");
    let who = client.call(Some(&reader), "whoami", json!({})).await;
    assert_eq!(who.status(), StatusCode::OK);
    let who: Value = who.json().await.unwrap();
    assert_eq!(who["result"], format!("{}#jwt-client", servers.oidc));
    assert_eq!(
        client
            .call(Some(&reader), "device_list", json!({}))
            .await
            .status(),
        StatusCode::OK
    );
    // Not the revocation: 403 with the challenge to step up.
    let refused = client
        .call(Some(&reader), "device_revoke", json!({"id": "d1"}))
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let header = challenge(&refused);
    assert!(
        header.starts_with(
            "Bearer error=\"insufficient_scope\", scope=\"devices:admin\", resource_metadata=\""
        ),
        "{header}"
    );
    let body: Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["type"], "insufficient_scope");

    // Over MCP: listed, but refused with an HTTP 403 before any stream opens.
    let session = client.session(&reader).await;
    let listed = client
        .mcp(
            Some(&reader),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    let listed = tool_test_support::sse_message(&listed.text().await.unwrap());
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"device_revoke"), "{names:?}");
    let call = |id: u32, name: &str, args: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let refused = client
        .mcp(
            Some(&reader),
            Some(&session),
            call(2, "device_revoke", json!({"id": "d1"})),
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    assert!(
        challenge(&refused).contains(&format!(
            "scope=\"devices:admin\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        )),
        "{}",
        challenge(&refused)
    );
    let error: Value = refused.json().await.unwrap();
    assert_eq!(error["id"], 2);
    assert_eq!(error["error"]["data"]["scopes"], json!(["devices:admin"]));
    let refused = client
        .mcp(
            Some(&reader),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 3, "method": "prompts/get", "params": {"name": "device_notes", "arguments": {"id": "d1"}}}),
        )
        .await;
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let listed = client
        .mcp(
            Some(&reader),
            Some(&session),
            call(4, "device_list", json!({})),
        )
        .await;
    assert_eq!(listed.status(), StatusCode::OK);
    let listed = tool_test_support::sse_message(&listed.text().await.unwrap());
    assert_eq!(listed["result"]["isError"], false, "{listed}");

    // An opaque token granting `devices:admin`, checked by introspection: the revocation, and
    // the list through the implication admin → read.
    let admin = servers
        .client_credentials("opaque-client", &resource, "devices:admin")
        .await;
    assert_ne!(admin.split('.').count(), 3, "an opaque token");
    assert_eq!(
        client
            .call(Some(&admin), "device_revoke", json!({"id": "d1"}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        client
            .call(Some(&admin), "device_list", json!({}))
            .await
            .status(),
        StatusCode::OK
    );
    let who: Value = client
        .call(Some(&admin), "whoami", json!({}))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(who["result"], format!("{}#opaque-client", servers.oidc));
    let session = client.session(&admin).await;
    let revoked = client
        .mcp(
            Some(&admin),
            Some(&session),
            call(5, "device_revoke", json!({"id": "d1"})),
        )
        .await;
    assert_eq!(revoked.status(), StatusCode::OK);

    // A session opened with one principal's token is not another's.
    let other = client
        .mcp(
            Some(&reader),
            Some(&session),
            call(6, "device_list", json!({})),
        )
        .await;
    assert_eq!(other.status(), StatusCode::NOT_FOUND);

    // A token for another resource is refused.
    let elsewhere = servers
        .client_credentials(
            "jwt-client",
            "https://elsewhere.example/mcp",
            "devices:read",
        )
        .await;
    let refused = client.call(Some(&elsewhere), "whoami", json!({})).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    assert!(challenge(&refused).contains(
        "error=\"invalid_token\", error_description=\"the token was issued for another audience\""
    ));
    let elsewhere = servers
        .client_credentials(
            "opaque-client",
            "https://elsewhere.example/mcp",
            "devices:read",
        )
        .await;
    assert_eq!(
        client
            .call(Some(&elsewhere), "whoami", json!({}))
            .await
            .status(),
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_that_must_be_refused_are_refused_on_http_and_mcp() {
    let (base, listener) = listener().await;
    let resource = format!("{base}/mcp");
    let mut servers = AuthServers::start(&resource, "devices:read devices:admin");
    let oauth = OAuth::builder(&servers.mock, &resource)
        .leeway(Duration::from_secs(5))
        .build()
        .unwrap();
    // Static tokens stay beside the issuer's.
    let auth = Auth::from_toml(
        "[[tokens]]\ntoken = \"ops-token\"\nprincipal = \"olga\"\nscopes = [\"devices:read\"]\n",
    )
    .unwrap();
    serve(listener, ServerOptions::default().oauth(oauth).auth(auth));
    let client = Client::new(&base);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = |extra: Value| {
        let mut claims =
            json!({"sub": "ada", "aud": resource, "exp": now + 600, "scope": "devices:read"});
        claims
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        claims
    };

    for alg in ["RS256", "ES256", "EdDSA"] {
        let token = servers.mint(&json!({"alg": alg, "claims": claims(json!({}))}));
        let who = client.call(Some(&token), "whoami", json!({})).await;
        assert_eq!(who.status(), StatusCode::OK, "{alg}");
        let who: Value = who.json().await.unwrap();
        assert_eq!(who["result"], format!("{}#ada", servers.mock));
        assert_eq!(
            client
                .mcp(
                    Some(&token),
                    None,
                    tool_test_support::mcp_initialize("2025-11-25")
                )
                .await
                .status(),
            StatusCode::OK,
            "{alg}"
        );
    }
    // The base URL is an audience too (RFC 8707 lets a client name either).
    let token = servers.mint(&json!({"claims": claims(json!({"aud": base}))}));
    assert_eq!(
        client
            .call(Some(&token), "whoami", json!({}))
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        client
            .call(Some("ops-token"), "device_list", json!({}))
            .await
            .status(),
        StatusCode::OK
    );

    let valid = servers.mint(&json!({"claims": claims(json!({}))}));
    let tampered = {
        let (rest, signature) = valid.rsplit_once('.').unwrap();
        let flipped = if signature.starts_with('A') { "B" } else { "A" };
        format!("{rest}.{flipped}{}", &signature[1..])
    };
    let refusals = [
        (
            "another audience",
            servers
                .mint(&json!({"claims": claims(json!({"aud": "https://elsewhere.example/mcp"}))})),
            "the token was issued for another audience",
        ),
        (
            "no audience",
            servers.mint(&json!({"claims": {"sub": "ada", "exp": now + 600}})),
            "the token lacks a claim it needs (exp, iss or aud)",
        ),
        (
            "expired",
            servers.mint(&json!({"claims": claims(json!({"exp": now - 60}))})),
            "the token has expired",
        ),
        (
            "not yet valid",
            servers.mint(&json!({"claims": claims(json!({"nbf": now + 600}))})),
            "the token is not valid yet",
        ),
        (
            "another issuer",
            servers.mint(&json!({"claims": claims(json!({"iss": servers.oidc}))})),
            "the token was issued by another issuer",
        ),
        (
            "alg none",
            servers.mint(&json!({"unsigned": true, "claims": claims(json!({}))})),
            "the token is not a JWT this server can read",
        ),
        (
            "HS256 keyed by the public key",
            servers.mint(&json!({"hs256_with_public_key": true, "claims": claims(json!({}))})),
            "the token's signing algorithm is not accepted",
        ),
        (
            "an unknown kid",
            servers.mint(&json!({"unknown_key": true, "claims": claims(json!({}))})),
            "the token is signed with a key the issuer does not publish",
        ),
        (
            "a changed signature",
            tampered,
            "the token's signature is not valid",
        ),
        (
            "a static token mistyped",
            "ops-tokem".into(),
            "the token is not a JWT this server can read",
        ),
    ];
    for (what, token, reason) in &refusals {
        let refused = client.call(Some(token), "whoami", json!({})).await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{what}");
        let header = challenge(&refused);
        assert!(
            header.contains(&format!(
                "error=\"invalid_token\", error_description=\"{reason}\""
            )),
            "{what}: {header}"
        );
        assert!(header.contains("resource_metadata=\""), "{what}: {header}");
        let refused = client
            .mcp(
                Some(token),
                None,
                tool_test_support::mcp_initialize("2025-11-25"),
            )
            .await;
        assert_eq!(refused.status(), StatusCode::UNAUTHORIZED, "{what} on MCP");
        assert!(challenge(&refused).contains(reason), "{what} on MCP");
    }
    // The public routes answer without a token, and with a bad one.
    let bad = &refusals[0].1;
    for path in ["/healthz", "/.well-known/oauth-protected-resource/mcp"] {
        let answered = client
            .http
            .get(format!("{base}{path}"))
            .bearer_auth(bad)
            .send()
            .await
            .unwrap();
        assert_eq!(answered.status(), StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn scopes_limit_only_callers_given_them() {
    use tool_runtime::registry::CallTool;
    let registry = registry();
    let call = |caller: Caller| {
        let registry = registry.clone();
        async move {
            registry
                .handle(CallTool::new("device_revoke", json!({"id": "d1"})), caller)
                .await
                .envelope
                .outcome
        }
    };
    // The command line and Rust code carry no scopes: not limited.
    assert!(call(Caller::new(Source::Cli)).await.is_ok());
    // A token's caller is, whatever the front end.
    let refused = call(Caller::new(Source::Agent).scopes(["devices:read"]))
        .await
        .unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::INSUFFICIENT_SCOPE);
    assert_eq!(
        refused.details().unwrap()["scopes"],
        json!(["devices:admin"])
    );
    assert!(
        refused
            .message()
            .contains("needs the scope devices:admin; the token grants devices:read"),
        "{}",
        refused.message()
    );
    assert!(
        call(Caller::new(Source::Http).scopes(["devices:admin"]))
            .await
            .is_ok()
    );
    // Listed all the same: a scope hides nothing.
    let listed = registry.visible(&Caller::new(Source::Mcp).scopes(Vec::<String>::new()));
    assert!(listed.iter().any(|t| t.name() == "device_revoke"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_and_both_typescript_clients_log_in_and_step_up_by_themselves() {
    let (base, listener) = listener().await;
    let resource = format!("{base}/mcp");
    let servers = AuthServers::start(&resource, "devices:read devices:admin");
    // Advertised: the read scope only, so that the first token lacks the admin scope and the
    // revocation makes the client step up.
    let oauth = OAuth::builder(&servers.oidc, &resource)
        .scopes_supported(["devices:read"])
        .build()
        .unwrap();
    serve(listener, ServerOptions::default().oauth(oauth));
    let checks = [
        "logged in",
        "listed",
        "principal",
        "scoped call",
        "stepped up",
    ];
    let python = tool_test_support::python_with("mcp");
    client_logs_in(
        python.as_os_str(),
        &["python/oauth_client.py"],
        &resource,
        &checks,
    )
    .await;
    // The 2025-11-25 TypeScript client, then the 2026-07-28 one.
    for sdk in ["1", "2"] {
        let script = ["node/oauth_client.mjs", "--sdk", sdk];
        client_logs_in("node".as_ref(), &script, &resource, &checks).await;
    }
    drop(servers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_reaches_a_server_behind_a_real_authorization_server_as_the_application() {
    use tool_runtime::Secret;
    use tool_runtime::mcp::{ClientCredentials, RemoteServer};
    let (base, listener) = listener().await;
    let resource = format!("{base}/mcp");
    let servers = AuthServers::start(&resource, "devices:read devices:admin");
    let oauth = OAuth::builder(&servers.oidc, &resource)
        .scopes_supported(["devices:read", "devices:admin"])
        .build()
        .unwrap();
    serve(listener, ServerOptions::default().oauth(oauth));
    let gateway = || Registry::builder().without_inventory().build().unwrap();
    // Without credentials the server is not reached.
    let refused = gateway()
        .mount(RemoteServer::http("up", &resource))
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("Auth required"), "{refused}");
    // Wrong credentials: no token, and the mount says so.
    let wrong = ClientCredentials::secret("jwt-client", Secret::new("not-the-secret".into()));
    let refused = gateway()
        .mount(RemoteServer::http("up", &resource).as_application(wrong))
        .await
        .unwrap_err();
    let refused = refused.to_string();
    assert!(refused.contains("no token"), "{refused}");
    // As the application, with the read scope: every caller of the gateway is the application
    // upstream, whoever they are here.
    let credentials = ClientCredentials::secret("jwt-client", Secret::new("jwt-secret".into()))
        .scopes(["devices:read"]);
    let registry = gateway();
    registry
        .mount(RemoteServer::http("up", &resource).as_application(credentials))
        .await
        .unwrap();
    for principal in ["alice", "bob"] {
        let caller = Caller::new(Source::Http).principal(principal).confirm(true);
        let who = registry.call("up-whoami", json!({}), caller.clone()).await;
        assert_eq!(
            who.outcome.unwrap(),
            json!({"result": format!("{}#jwt-client", servers.oidc)})
        );
        let listed = registry.call("up-device_list", json!({}), caller).await;
        assert_eq!(listed.outcome.unwrap(), json!({"result": ["d1"]}));
    }
    drop(servers);
}

/// Runs the checker `script[0]` (under `tests/`, with the rest of `script` as its arguments) with
/// `program` against the MCP URL `url`, and asserts that it passed `checks`.
async fn client_logs_in(program: &std::ffi::OsStr, script: &[&str], url: &str, checks: &[&str]) {
    let mut command = std::process::Command::new(program);
    command
        .arg(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(script[0]))
        .args(&script[1..])
        .args(["--url", url]);
    let out = tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    tool_test_support::expect_checks(&out, checks);
}
