//! A gateway that mounts a server behind OAuth as each of its callers: the server (this
//! framework's, behind oidc-provider) and the gateway (behind the same provider, for its own
//! resource) on loopback; each caller is sent to connect their account, the link's page checks
//! who opened it, and each caller's calls go with their own token only.
#![allow(clippy::too_many_lines)] // Reason: each test walks one sign-in through the gateway and the provider, in order.

use std::collections::HashMap;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::json;
use tool_runtime::Registry;
use tool_runtime::Secret;
use tool_runtime::http::{OAuth, ServerOptions};
use tool_runtime::mcp::{ClientCredentials, ConnectedAccounts, RemoteServer, SignIn, TokenKeys};
use tool_runtime::prelude::*;
use tool_runtime::toolset::{MemoryTokens, TokenStore};
use tool_test_support::oauth::AuthServers;

use super::oauth::{listener, serve, serve_registry};

/// A user at a browser: follows redirects across the gateway and the provider, keeps cookies,
/// and signs in as `login` on the provider's own pages. Returns the last page's status and text.
async fn browse(url: &str, login: &str) -> (StatusCode, String) {
    browse_through(url, login, None).await
}

/// [`browse`], a redirect to an address that starts with `from` taken to `to` instead (another
/// replica behind the same public address).
async fn browse_through(
    url: &str,
    login: &str,
    rewrite: Option<(&str, &str)>,
) -> (StatusCode, String) {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let mut cookies: HashMap<String, String> = HashMap::new();
    let mut request = http.get(url);
    let mut at = reqwest::Url::parse(url).unwrap();
    for _ in 0..20 {
        let jar: Vec<String> = cookies.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let response = request
            .header("cookie", jar.join("; "))
            .send()
            .await
            .unwrap();
        for set in response.headers().get_all("set-cookie") {
            let pair = set.to_str().unwrap().split(';').next().unwrap();
            if let Some((name, value)) = pair.split_once('=') {
                cookies.insert(name.trim().to_owned(), value.to_owned());
            }
        }
        let status = response.status();
        if let Some(location) = response.headers().get("location") {
            at = at.join(location.to_str().unwrap()).unwrap();
            if let Some((from, to)) = rewrite
                && let Some(rest) = at.as_str().strip_prefix(from)
            {
                at = reqwest::Url::parse(&format!("{to}{rest}")).unwrap();
            }
            request = http.get(at.clone());
            continue;
        }
        let page = response.text().await.unwrap();
        let action = page
            .split("action=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next());
        let Some(action) = action.filter(|_| status == StatusCode::OK && page.contains("<form"))
        else {
            return (status, page);
        };
        let prompt = page
            .split("name=\"prompt\" value=\"")
            .nth(1)
            .and_then(|rest| rest.split('"').next())
            .unwrap_or("login")
            .to_owned();
        at = at.join(action).unwrap();
        request = http
            .post(at.clone())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(format!("prompt={prompt}&login={login}&password={login}"));
    }
    panic!("the sign-in did not end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gateway_calls_a_server_behind_oauth_with_each_callers_own_connected_account() {
    let (up_base, up_listener) = listener().await;
    let (gw_base, gw_listener) = listener().await;
    let up = format!("{up_base}/mcp");
    let servers = AuthServers::start(&up, "devices:read devices:admin");
    serve(
        up_listener,
        ServerOptions::default().oauth(oauth_for(&servers, &up)),
    );
    let registry = gateway(
        &servers,
        &gw_base,
        gw_listener,
        &up,
        MemoryTokens::default(),
    )
    .await;

    let principal = |user: &str| format!("{}#{user}", servers.oidc);
    let call = |user: &str| {
        let registry = Arc::clone(&registry);
        let caller = Caller::new(Source::Http)
            .principal(principal(user))
            .confirm(true);
        async move { registry.call("up-whoami", json!({}), caller).await }
    };
    // Without an account: the link to connect one, the same while it is good.
    let asked = call("alice").await.outcome.unwrap_err();
    assert_eq!(
        asked.kind(),
        &ErrorKind::AUTHORIZATION_REQUIRED,
        "{asked:?}"
    );
    let link = asked.details().unwrap()["url"].as_str().unwrap().to_owned();
    assert!(
        link.starts_with(&format!("{gw_base}/oauth/connect/")),
        "{link}"
    );
    let again = call("alice").await.outcome.unwrap_err();
    assert_eq!(again.details().unwrap()["url"], link.as_str());
    // Opened by someone else, the link stores nothing.
    let (status, page) = browse(&link, "bob").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("not yours"), "{page}");
    let still = call("alice").await.outcome.unwrap_err();
    assert_eq!(still.kind(), &ErrorKind::AUTHORIZATION_REQUIRED);
    // Opened by its user: connected, and the call goes through as them.
    let (status, page) = browse(&link, "alice").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert!(page.contains("connected"), "{page}");
    assert_eq!(
        call("alice").await.outcome.unwrap(),
        json!({"result": principal("alice")})
    );
    let (status, _) = browse(&link, "alice").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "a link is used once");
    // A tool that needs a scope her token lacks: the server's `insufficient_scope` gives a new
    // link whose sign-in asks for that scope too (a step-up), and the call then goes through.
    let revoke = || {
        let caller = Caller::new(Source::Http)
            .principal(principal("alice"))
            .confirm(true);
        registry.call("up-device_revoke", json!({"id": "d1"}), caller)
    };
    let narrow = revoke().await.outcome.unwrap_err();
    assert_eq!(
        narrow.kind(),
        &ErrorKind::AUTHORIZATION_REQUIRED,
        "{narrow:?}"
    );
    let wider = narrow.details().unwrap()["url"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_ne!(wider, link);
    let (status, page) = browse(&wider, "alice").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(revoke().await.outcome.unwrap(), json!({"result": "d1"}));
    assert_eq!(
        call("alice").await.outcome.unwrap(),
        json!({"result": principal("alice")})
    );
    // Bob connects his own.
    let bobs = call("bob").await.outcome.unwrap_err();
    let (status, page) = browse(bobs.details().unwrap()["url"].as_str().unwrap(), "bob").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    // Two callers, fifty calls each, at once: each call upstream is its caller's.
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..100 {
        let user = if n % 2 == 0 { "alice" } else { "bob" };
        let call = call(user);
        calls.spawn(async move { (user, call.await.outcome) });
    }
    let mut seen = 0;
    while let Some(done) = calls.join_next().await {
        let (user, outcome) = done.unwrap();
        assert_eq!(outcome.unwrap(), json!({"result": principal(user)}));
        seen += 1;
    }
    assert_eq!(seen, 100);
    // A caller with no principal is not sent anywhere.
    let anonymous = registry
        .call(
            "up-whoami",
            json!({}),
            Caller::new(Source::Http).confirm(true),
        )
        .await
        .outcome
        .unwrap_err();
    assert_eq!(
        anonymous.kind(),
        &ErrorKind::UNAUTHENTICATED,
        "{anonymous:?}"
    );
    drop(servers);
}

/// What every engine of [`TokenStore`] does alike: records read back, a lifetime that ends
/// them, a record taken once, a lock held by one holder at a time.
async fn a_store_keeps_takes_and_locks(store: Arc<dyn TokenStore>) {
    use std::time::Duration;
    store.put("a", "1".into(), None).await.unwrap();
    store.put("a", "2".into(), None).await.unwrap();
    assert_eq!(store.get("a").await.unwrap().as_deref(), Some("2"));
    store
        .put("brief", "x".into(), Some(Duration::from_millis(300)))
        .await
        .unwrap();
    assert_eq!(store.get("brief").await.unwrap().as_deref(), Some("x"));
    tokio::time::sleep(Duration::from_millis(1300)).await;
    assert_eq!(
        store.get("brief").await.unwrap(),
        None,
        "its lifetime ended"
    );
    assert_eq!(store.take("brief").await.unwrap(), None);
    let (first, second) = tokio::join!(store.take("a"), store.take("a"));
    let taken = [first.unwrap(), second.unwrap()];
    assert_eq!(
        taken.iter().flatten().collect::<Vec<_>>(),
        ["2"],
        "taken once: {taken:?}"
    );
    store.put("b", "3".into(), None).await.unwrap();
    store.delete("b").await.unwrap();
    assert_eq!(store.get("b").await.unwrap(), None);
    let held = store.lock("refresh", Duration::from_secs(5)).await.unwrap();
    let waiting = {
        let store = Arc::clone(&store);
        tokio::spawn(async move {
            store
                .lock("refresh", Duration::from_secs(5))
                .await
                .map(drop)
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!waiting.is_finished(), "a second holder waits");
    drop(held);
    tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the lock is released when dropped")
        .unwrap()
        .unwrap();
    // A request that gave up waiting fails `unavailable`, and neither it nor one its caller
    // dropped leaves anything behind: once the holder lets go, the next request gets the lock
    // at once, and the store serves as before.
    let held = store.lock("busy", Duration::from_secs(5)).await.unwrap();
    let gave_up = store.lock("busy", Duration::from_millis(300)).await;
    assert_eq!(
        gave_up.err().map(|e| e.kind().to_string()).as_deref(),
        Some("unavailable")
    );
    let abandoned = tokio::time::timeout(
        Duration::from_millis(300),
        store.lock("busy", Duration::from_secs(60)),
    )
    .await;
    assert!(abandoned.is_err(), "a request given up on by its caller");
    drop(held);
    let again = tokio::time::timeout(
        Duration::from_secs(5),
        store.lock("busy", Duration::from_secs(5)),
    )
    .await
    .expect("the lock was left to nobody");
    again.expect("the lock, once its holder let go");
    store.put("c", "4".into(), None).await.unwrap();
    assert_eq!(store.get("c").await.unwrap().as_deref(), Some("4"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_stores_in_memory_redis_and_postgresql_keep_take_and_lock_alike() {
    use std::time::Duration;
    use tool_runtime::postgres::{Postgres, PostgresOptions, PostgresTokenStore};
    use tool_runtime::redis::{Redis, RedisOptions};
    a_store_keeps_takes_and_locks(Arc::new(MemoryTokens::default())).await;
    let redis_server = tool_test_support::redis::RedisServer::start();
    let redis = Redis::connect(RedisOptions::new(redis_server.url()).prefix("t:"))
        .await
        .unwrap();
    a_store_keeps_takes_and_locks(Arc::new(redis.token_store())).await;
    let pg_server = tool_test_support::postgres::PostgresServer::start();
    let postgres = Postgres::connect(PostgresOptions::new(pg_server.url()))
        .await
        .unwrap();
    let store = Arc::new(PostgresTokenStore::start(&postgres).await.unwrap());
    a_store_keeps_takes_and_locks(store.clone()).await;
    // A lock dropped where no runtime runs cannot be released by a query: its connection closes.
    let held = store
        .lock("elsewhere", Duration::from_secs(5))
        .await
        .unwrap();
    std::thread::spawn(move || drop(held)).join().unwrap();
    // Every lock let go, the one a request gave up waiting for among them: a pooled connection
    // that kept one would keep it while the pool lives.
    crate::postgres::eventually(
        &pg_server,
        "postgres",
        "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'",
        "0",
        5,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_on_postgresql_share_each_callers_token_and_refresh_it_one_at_a_time() {
    use std::time::Duration;
    use tool_runtime::postgres::{Postgres, PostgresOptions, PostgresTokenStore};
    let pg_server = tool_test_support::postgres::PostgresServer::start();
    let postgres = Postgres::connect(PostgresOptions::new(pg_server.url()))
        .await
        .unwrap();
    let (up_base, up_listener) = listener().await;
    let (a_base, a_listener) = listener().await;
    let (b_base, b_listener) = listener().await;
    let up = format!("{up_base}/mcp");
    // Access tokens good for 33 s: the SDK refreshes one with less than 30 s left.
    let servers = AuthServers::start_with_token_lifetime(&up, "devices:read devices:admin", 33);
    serve(
        up_listener,
        ServerOptions::default().oauth(oauth_for(&servers, &up)),
    );
    // Both replicas answer at one public address (the first's here); the redirect back from
    // the upstream's authorization server is taken to the second.
    let mut replicas = Vec::new();
    for listener in [a_listener, b_listener] {
        let store = PostgresTokenStore::start(&postgres).await.unwrap();
        replicas.push(gateway(&servers, &a_base, listener, &up, store).await);
    }
    let alice = format!("{}#alice", servers.oidc);
    let call = |replica: usize| {
        let registry = Arc::clone(&replicas[replica]);
        let caller = Caller::new(Source::Http)
            .principal(alice.clone())
            .confirm(true);
        async move { registry.call("up-whoami", json!({}), caller).await.outcome }
    };
    // Asked through the second replica, signed in through the first, back at the second.
    let asked = call(1).await.unwrap_err();
    let link = asked.details().unwrap()["url"].as_str().unwrap().to_owned();
    let (status, page) = browse_through(
        &link,
        "alice",
        Some((
            &format!("{a_base}/oauth/connect/done"),
            &format!("{b_base}/oauth/connect/done"),
        )),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    // The token the second kept serves the first.
    assert_eq!(call(0).await.unwrap(), json!({"result": alice}));
    assert_eq!(call(1).await.unwrap(), json!({"result": alice}));
    // Past the refresh point, both replicas at once: one refresh at a time, each reading the
    // token the last saved, so the provider never sees a rotated refresh token again (it would
    // revoke the grant, and these calls would be sent to connect again).
    tokio::time::sleep(Duration::from_secs(4)).await;
    let mut calls = tokio::task::JoinSet::new();
    for n in 0..8 {
        calls.spawn(call(n % 2));
    }
    while let Some(done) = calls.join_next().await {
        assert_eq!(done.unwrap().unwrap(), json!({"result": alice}));
    }
    assert_eq!(call(0).await.unwrap(), json!({"result": alice}));
}

/// The OAuth of a server for `resource` behind `servers`' provider.
fn oauth_for(servers: &AuthServers, resource: &str) -> OAuth {
    OAuth::builder(&servers.oidc, resource)
        .scopes_supported(["devices:read", "devices:admin"])
        .build()
        .unwrap()
}

/// A gateway on `listener`, at the public address `base`, mounting `up` per user behind
/// `servers`' provider, its accounts in `store`: its registry.
async fn gateway(
    servers: &AuthServers,
    base: &str,
    listener: tokio::net::TcpListener,
    up: &str,
    store: impl TokenStore,
) -> Arc<Registry> {
    let accounts = ConnectedAccounts::new(base, TokenKeys::new("k1", &[7; 32]).unwrap(), store);
    let lister = ClientCredentials::secret("jwt-client", Secret::new("jwt-secret".into()))
        .scopes(["devices:read"]);
    let registry = Arc::new(Registry::builder().without_inventory().build().unwrap());
    registry
        .mount(
            RemoteServer::http("up", up)
                .per_user(
                    &accounts,
                    SignIn::new("", "tool-tests gateway").scopes(["devices:read"]),
                )
                .lists_as(lister),
        )
        .await
        .unwrap();
    serve_registry(
        listener,
        Arc::clone(&registry),
        ServerOptions::default()
            .oauth(oauth_for(servers, &format!("{base}/mcp")))
            .connected_accounts(accounts),
    );
    registry
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_official_python_and_typescript_clients_are_sent_to_connect_an_account_and_go_through()
{
    let python = tool_test_support::python_with("mcp");
    let node = tool_test_support::node22();
    let (up_base, up_listener) = listener().await;
    let up = format!("{up_base}/mcp");
    let servers = AuthServers::start(&up, "devices:read devices:admin");
    // The mounted server, with the bearer tokens it was sent written down.
    let seen = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let oauth = OAuth::builder(&servers.oidc, &up)
        .scopes_supported(["devices:read", "devices:admin"])
        .build()
        .unwrap();
    let app = tool_runtime::app::router(
        super::oauth::registry(),
        ServerOptions::default().oauth(oauth),
    )
    .layer(axum::middleware::from_fn({
        let seen = Arc::clone(&seen);
        move |request: axum::extract::Request, next: axum::middleware::Next| {
            if let Some(token) = request.headers().get("authorization") {
                seen.lock()
                    .unwrap()
                    .push(token.to_str().unwrap_or_default().to_owned());
            }
            next.run(request)
        }
    }));
    tokio::spawn(tool_runtime::http::serve(
        up_listener,
        app,
        std::future::pending(),
        &ServerOptions::default(),
    ));
    let tests = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let clients = [
        (&python, "python/oauth_connect.py", ["--mode", "legacy"]),
        (&python, "python/oauth_connect.py", ["--mode", "auto"]),
        (&node, "node/oauth_connect.mjs", ["--sdk", "1"]),
        (&node, "node/oauth_connect.mjs", ["--sdk", "2"]),
    ];
    for (program, script, mode) in clients {
        // A gateway of its own for each: its user has no account there yet.
        let (base, gw_listener) = listener().await;
        gateway(&servers, &base, gw_listener, &up, MemoryTokens::default()).await;
        let mut command = std::process::Command::new(program);
        command
            .arg(tests.join(script))
            .args(["--url", &format!("{base}/mcp")])
            .args(mode);
        let out = tokio::task::spawn_blocking(move || command.output().unwrap())
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        println!("{stdout}{}", String::from_utf8_lossy(&out.stderr));
        tool_test_support::expect_checks(
            &out,
            &["logged in", "sent to connect", "called as", "called again"],
        );
        let inbound = stdout
            .lines()
            .find_map(|line| line.strip_prefix("inbound "))
            .expect("the client's gateway token");
        let upstream = seen.lock().unwrap().clone();
        assert!(!upstream.is_empty());
        assert!(
            upstream.iter().all(|sent| !sent.contains(inbound)),
            "{script} {mode:?}: the caller's own token reached the mounted server"
        );
    }
    drop(servers);
}
