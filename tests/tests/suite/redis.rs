//! The Redis engine (`tool_runtime::redis`) against a real `redis-server` of each test's own:
//! the rate limiter decides as the in-memory one (governor's GCRA) and is shared by every
//! handle, confirmation tokens are redeemed once from any handle, MCP sessions round-trip,
//! an outage is `unavailable` naming Redis (never its password) until Redis is back, and
//! `rediss://` verifies the server against a test CA given by the options.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use governor::clock::{Clock, DefaultClock};
use governor::{Quota, RateLimiter as Governor};
use rmcp::transport::streamable_http_server::session::store::{SessionState, SessionStore};
use serde_json::json;
use tool_runtime::ErrorKind;
use tool_runtime::layers::confirm::{ConfirmationStore, TokenBinding};
use tool_runtime::layers::limits::{Charge, RateLimiter};
use tool_runtime::redis::{Redis, RedisOptions};
use tool_runtime::tool::Rate;
use tool_test_support::TempDir;
use tool_test_support::redis::RedisServer;
use tool_test_support::tls::TestCa;

async fn connect(server: &RedisServer, prefix: &str) -> Redis {
    Redis::connect(RedisOptions::new(server.url()).prefix(prefix))
        .await
        .expect("connect to the test's redis-server")
}

fn rate(text: &str) -> Rate {
    Rate::parse(text).unwrap()
}

fn binding(tool: &str, principal: Option<&str>) -> TokenBinding {
    serde_json::from_value(json!({"tool": tool, "arguments": "ab12", "principal": principal}))
        .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .unwrap()
        .port()
}

#[tokio::test]
async fn thirty_an_hour_allows_thirty_then_retry_after_two_minutes_as_governor_does() {
    let server = RedisServer::start();
    let limiter = connect(&server, "app:").await.rate_limiter();
    // The in-memory limiter's quota for 30/hour (tool-runtime/src/layers/limits.rs).
    let quota = Quota::with_period(Duration::from_secs(3600) / 30)
        .unwrap()
        .allow_burst(NonZeroU32::new(30).unwrap());
    let governor = Governor::direct(quota);
    let clock = DefaultClock::default();
    for n in 1..=31 {
        let ours = limiter
            .charge("device_add", Some("alice"), rate("30/hour"))
            .await
            .unwrap();
        let theirs = governor.check().map_err(|e| e.wait_time_from(clock.now()));
        match (ours, theirs) {
            (Charge::Allowed, Ok(())) => assert!(n <= 30, "call {n} allowed"),
            (Charge::RetryAfter(ours), Err(theirs)) => {
                assert_eq!(n, 31, "call {n} refused");
                let (ours, theirs) = (ours.as_secs_f64(), theirs.as_secs_f64());
                assert!((119.0..=120.0).contains(&ours), "retry after {ours}s");
                assert!((ours - theirs).abs() < 1.0, "{ours}s against {theirs}s");
            }
            (ours, theirs) => panic!("call {n}: Redis {ours:?}, governor {theirs:?}"),
        }
    }
    // Refused calls are not counted: the wait does not grow.
    let Charge::RetryAfter(again) = limiter
        .charge("device_add", Some("alice"), rate("30/hour"))
        .await
        .unwrap()
    else {
        panic!("the 32nd call was allowed")
    };
    assert!(again <= Duration::from_secs(120), "{again:?}");
}

#[tokio::test]
async fn replicas_share_counts_apps_and_principals_do_not() {
    let server = RedisServer::start();
    let (one, two) = (
        connect(&server, "app:").await,
        connect(&server, "app:").await,
    );
    let other_app = connect(&server, "other:").await;
    let (one, two, other_app) = (
        one.rate_limiter(),
        two.rate_limiter(),
        other_app.rate_limiter(),
    );
    let three = rate("3/min");
    for limiter in [&one, &two, &one] {
        assert_eq!(
            limiter.charge("t", None, three).await.unwrap(),
            Charge::Allowed
        );
    }
    // The fourth anonymous call, on either replica, is over the shared limit.
    for limiter in [&two, &one] {
        assert!(matches!(
            limiter.charge("t", None, three).await.unwrap(),
            Charge::RetryAfter(_)
        ));
    }
    // Another app's prefix, another tool, and every principal have counts of their own; a
    // principal that would not be written into a key as it is still gets one of its own.
    let long = "x".repeat(300);
    for (limiter, tool, principal) in [
        (&other_app, "t", None),
        (&one, "u", None),
        (&one, "t", Some("alice")),
        (&two, "t", Some("alice:t")),
        (&two, "t", Some(long.as_str())),
    ] {
        assert_eq!(
            limiter.charge(tool, principal, three).await.unwrap(),
            Charge::Allowed,
            "{tool} {principal:?}"
        );
    }
    // An empty principal is the anonymous one, as in memory.
    assert!(matches!(
        one.charge("t", Some(""), three).await.unwrap(),
        Charge::RetryAfter(_)
    ));
}

#[tokio::test]
async fn a_token_is_redeemed_once_from_any_replica_and_expires() {
    let server = RedisServer::start();
    let one = connect(&server, "app:").await.confirmation_store();
    let two = connect(&server, "app:").await.confirmation_store();
    let other_app = connect(&server, "other:").await.confirmation_store();
    let bound = binding("device_revoke", Some("alice"));
    one.put("c1-abc", &bound, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(other_app.take("c1-abc").await.unwrap(), None);
    assert_eq!(two.take("c1-abc").await.unwrap(), Some(bound));
    assert_eq!(one.take("c1-abc").await.unwrap(), None);
    assert_eq!(two.take("c1-never-issued").await.unwrap(), None);

    let anonymous = binding("device_revoke", None);
    one.put("c1-short", &anonymous, Duration::from_millis(50))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(two.take("c1-short").await.unwrap(), None);
}

#[tokio::test]
async fn an_outage_is_unavailable_without_the_password_and_passes_by_itself() {
    let mut server = RedisServer::with_password("hunter2-secret");
    let redis = Redis::connect(RedisOptions::new(server.url()))
        .await
        .unwrap();
    let (limiter, tokens) = (redis.rate_limiter(), redis.confirmation_store());
    let many = rate("1000/s");
    assert_eq!(
        limiter.charge("t", None, many).await.unwrap(),
        Charge::Allowed
    );

    server.stop();
    let location = format!("127.0.0.1:{}/0", server.port());
    let charged = limiter.charge("t", None, many).await.unwrap_err();
    let put = tokens
        .put("c1-x", &binding("t", None), Duration::from_secs(5))
        .await
        .unwrap_err();
    let taken = tokens.take("c1-x").await.unwrap_err();
    let pinged = redis.ping().await.unwrap_err();
    for error in [charged, put, taken, pinged] {
        assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{error:?}");
        assert_eq!(error.status(), 503);
        // Which engine and what was being done; where it is goes to the log.
        let message = error.message();
        assert!(message.starts_with("Redis is unavailable ("), "{message}");
        let shown = format!("{message} {:?}", error.details());
        assert!(
            !shown.contains(&location) && !shown.contains("hunter2"),
            "{shown}"
        );
    }

    server.restart();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match limiter.charge("t", None, many).await {
            Ok(charge) => break assert_eq!(charge, Charge::Allowed),
            Err(e) => assert!(
                Instant::now() < deadline,
                "still failing 10 s after Redis came back: {e:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokens
        .put("c1-y", &binding("t", None), Duration::from_secs(5))
        .await
        .unwrap();
    assert!(tokens.take("c1-y").await.unwrap().is_some());
}

#[tokio::test]
async fn connecting_to_nothing_fails_at_once_naming_the_host_and_not_the_password() {
    let port = free_port();
    for url in [
        format!("redis://:pw-secret@127.0.0.1:{port}/3"),
        format!("rediss://:pw-secret@127.0.0.1:{port}/3"),
    ] {
        let options = RedisOptions::new(&url).connect_timeout(Duration::from_secs(2));
        assert_eq!(options.location().unwrap(), format!("127.0.0.1:{port}/3"));
        assert!(!format!("{options:?}").contains("pw-secret"));
        let started = Instant::now();
        let error = Redis::connect(options).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{url}");
        assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE);
        let message = error.message();
        assert!(
            message.starts_with(&format!("cannot connect to Redis at 127.0.0.1:{port}/3: ")),
            "{message}"
        );
        assert!(!message.contains("pw-secret"), "{message}");
    }
    let error = RedisOptions::new("http://example.com")
        .location()
        .unwrap_err();
    assert!(error.message().contains("redis://"), "{}", error.message());
}

#[tokio::test]
async fn mcp_sessions_round_trip_between_replicas_and_expire_when_idle() {
    let server = RedisServer::start();
    let one = connect(&server, "app:")
        .await
        .session_store(Duration::from_secs(60));
    let two = connect(&server, "app:")
        .await
        .session_store(Duration::from_secs(60));
    let (one, two): (&dyn SessionStore, &dyn SessionStore) = (&one, &two);
    let state: SessionState = serde_json::from_value(json!({"initialize_params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "tool-tests", "version": "1"}}}))
    .unwrap();
    one.store("s-1", &state).await.unwrap();
    let loaded = two.load("s-1").await.unwrap().expect("the session");
    assert_eq!(
        serde_json::to_value(&loaded).unwrap(),
        serde_json::to_value(&state).unwrap()
    );
    assert!(two.load("s-unknown").await.unwrap().is_none());
    two.delete("s-1").await.unwrap();
    assert!(one.load("s-1").await.unwrap().is_none());

    let brief = connect(&server, "app:")
        .await
        .session_store(Duration::from_secs(2));
    brief.store("s-2", &state).await.unwrap();
    // Loading renews the idle time: loaded every half second (well within it), it stays for
    // longer than the idle time.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(brief.load("s-2").await.unwrap().is_some());
    }
    // Left alone for longer than it, it is gone (however slowly this runs).
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(brief.load("s-2").await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_session_in_use_on_its_replica_outlives_its_idle_time_in_redis() {
    use crate::replicas::{ANN, auth, open_session, registry, tools_list};
    let server = RedisServer::start();
    let idle = Duration::from_secs(2);
    let replica = |id: &str, redis: &Redis| {
        tool_runtime::http::ServerOptions::default()
            .replica_id(id)
            .auth(auth())
            .session_idle_timeout(idle)
            .redis(redis)
    };
    let (one, two) = (
        connect(&server, "app:").await,
        connect(&server, "app:").await,
    );
    let a = tool_test_support::serve_on_loopback(tool_runtime::app::router(
        registry(),
        replica("a", &one),
    ))
    .await;
    let b = tool_test_support::serve_on_loopback(tool_runtime::app::router(
        registry(),
        replica("b", &two),
    ))
    .await;
    let session = open_session(&a, ANN).await;
    // Used on its own replica (as affinity keeps it) for three idle times...
    let until = std::time::Instant::now() + idle * 3;
    while std::time::Instant::now() < until {
        assert_eq!(tools_list(&a, ANN, &session).await.0, 200);
        tokio::time::sleep(idle / 5).await;
    }
    // ... its entry in Redis lives on: another replica takes the session up.
    let (status, body) = tools_list(&b, ANN, &session).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_answer_reaching_another_replica_is_relayed_through_redis() {
    let server = RedisServer::start();
    let replica = |id: &str, redis: &Redis| {
        tool_runtime::http::ServerOptions::default()
            .replica_id(id)
            .auth(crate::replicas::auth())
            .redis(redis)
    };
    let (one, two) = (
        connect(&server, "app:").await,
        connect(&server, "app:").await,
    );
    crate::replicas::an_answer_reaching_another_replica_is_taken_by_the_one_that_asked(
        replica("a", &one),
        replica("b", &two),
    )
    .await;
}

/// Publishes `change` on `from` until `to` hears it (listeners subscribe in the background),
/// for at most a few seconds; what `to` heard before it is dropped.
async fn heard_through_redis(
    from: &tool_runtime::redis::RedisNotifier,
    to: &mut tokio::sync::broadcast::Receiver<tool_runtime::tool::notify::Change>,
    change: &tool_runtime::tool::notify::Change,
) {
    use tool_runtime::tool::notify::Notifier as _;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        from.publish(change.clone());
        match tokio::time::timeout(Duration::from_millis(200), to.recv()).await {
            Ok(Ok(heard)) if heard == *change => return,
            Ok(Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(closed)) => panic!("the listener is gone: {closed}"),
            Err(_) => assert!(Instant::now() < deadline, "{change:?} never heard"),
        }
    }
}

/// Receives the next change within a few seconds.
async fn next_change(
    rx: &mut tokio::sync::broadcast::Receiver<tool_runtime::tool::notify::Change>,
) -> tool_runtime::tool::notify::Change {
    tokio::time::timeout(Duration::from_secs(5), rx.recv())
        .await
        .expect("a change within 5 s")
        .expect("the notifier is open")
}

#[tokio::test]
async fn a_change_published_on_one_replica_reaches_every_replica_and_survives_a_restart() {
    use tool_runtime::tool::notify::{Change, Notifier};
    let mut server = RedisServer::start();
    let (a, b) = (
        connect(&server, "app:").await,
        connect(&server, "app:").await,
    );
    let (on_a, on_b) = (a.notifier(), b.notifier());
    let (mut heard_a, mut heard_b) = (on_a.subscribe(), on_b.subscribe());
    // Another application on the same Redis: its listener is known to be subscribed once it
    // hears, through Redis, what a second replica of it publishes.
    let other = connect(&server, "other:").await.notifier();
    let listening = connect(&server, "other:").await.notifier();
    let mut heard_other = listening.subscribe();
    let marker = Change::ResourceUpdated("other://marker".into());
    heard_through_redis(&other, &mut heard_other, &marker).await;
    // Published on `a`, heard on both (through Redis)...
    let published = Change::ResourceUpdated("devices://d1".into());
    heard_through_redis(&on_a, &mut heard_b, &published).await;
    assert_eq!(next_change(&mut heard_a).await, published);
    // ... and not by the other application: its next change is its own marker.
    let marker = Change::ResourceUpdated("other://after".into());
    other.publish(marker.clone());
    loop {
        let change = next_change(&mut heard_other).await;
        assert_ne!(change, published, "another prefix heard it");
        if change == marker {
            break;
        }
    }

    // Redis restarts: the listeners subscribe again by themselves.
    server.stop();
    server.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        on_b.publish(Change::PromptsChanged);
        match tokio::time::timeout(Duration::from_millis(300), heard_a.recv()).await {
            Ok(Ok(Change::PromptsChanged)) => break,
            Ok(Ok(_) | Err(_)) => {}
            Err(_) => assert!(Instant::now() < deadline, "not heard after a restart"),
        }
    }
}

/// The certificates of one TLS test, made for it: a CA and the file of its certificate, and
/// another CA's file, in the test's own directory.
struct Certificates {
    ca: TestCa,
    ca_file: PathBuf,
    other_ca: TestCa,
    other_ca_file: PathBuf,
    _dir: TempDir,
}

fn certificates(test: &str) -> Certificates {
    let dir = TempDir::new(test);
    let (ca, other_ca) = (TestCa::new("tool-tests CA"), TestCa::new("another CA"));
    Certificates {
        ca_file: ca.write(dir.join("ca.pem")),
        other_ca_file: other_ca.write(dir.join("other-ca.pem")),
        ca,
        other_ca,
        _dir: dir,
    }
}

/// The error of connecting to `url` over TLS with `ca` as the CA option: unavailable, naming
/// Redis and where it is (as every failure at start does), never the password.
async fn refused(url: &str, ca: Option<&PathBuf>) -> String {
    let mut options = RedisOptions::new(url).connect_timeout(Duration::from_secs(2));
    if let Some(ca) = ca {
        options = options.ca_certificate(ca);
    }
    let location = options.location().unwrap();
    let error = Redis::connect(options).await.unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE);
    let message = error.message().to_owned();
    assert!(
        message.starts_with(&format!("cannot connect to Redis at {location}: ")),
        "{message}"
    );
    assert!(!message.contains("pw-secret"), "{message}");
    message
}

#[tokio::test]
async fn rediss_with_the_ca_option_verifies_the_server_and_serves_tokens_and_rates() {
    let pki = certificates("redis-tls-ok");
    let server = RedisServer::with_tls(&pki.ca.server(&["localhost", "127.0.0.1"]));
    for host in ["localhost", "127.0.0.1"] {
        let options = RedisOptions::new(server.tls_url(host))
            .ca_certificate(&pki.ca_file)
            .prefix(format!("{host}:"));
        assert!(format!("{options:?}").contains("ca.pem"), "{options:?}");
        let redis = Redis::connect(options).await.unwrap();
        redis.ping().await.unwrap();
        let tokens = redis.confirmation_store();
        tokens
            .put("c1-tls", &binding("t", None), Duration::from_secs(5))
            .await
            .unwrap();
        assert!(tokens.take("c1-tls").await.unwrap().is_some(), "{host}");
        assert_eq!(tokens.take("c1-tls").await.unwrap(), None, "{host}");
        assert_eq!(
            redis
                .rate_limiter()
                .charge("t", None, rate("1/hour"))
                .await
                .unwrap(),
            Charge::Allowed
        );
    }
}

#[tokio::test]
async fn rediss_refuses_a_certificate_of_another_ca_or_for_another_host() {
    let pki = certificates("redis-tls-refused");
    let server = RedisServer::with_tls(&pki.ca.server(&["localhost", "127.0.0.1"]));
    let url = format!("rediss://:pw-secret@localhost:{}/0", server.port());
    // Neither the system's roots nor another CA know the test's CA.
    for ca in [None, Some(&pki.other_ca_file)] {
        let message = refused(&url, ca).await;
        assert!(
            message.contains("certificate") && message.contains("UnknownIssuer"),
            "{message}"
        );
    }
    // Signed by the trusted CA, but for another host.
    let misnamed = RedisServer::with_tls(&pki.ca.server(&["other.example"]));
    let url = format!("rediss://:pw-secret@localhost:{}/0", misnamed.port());
    let message = refused(&url, Some(&pki.ca_file)).await;
    assert!(
        message.contains("not valid for name") && message.contains("localhost"),
        "{message}"
    );
    // A server of the other CA is trusted with the other CA.
    let other = RedisServer::with_tls(&pki.other_ca.server(&["localhost"]));
    Redis::connect(
        RedisOptions::new(other.tls_url("localhost")).ca_certificate(&pki.other_ca_file),
    )
    .await
    .unwrap();
}

#[tokio::test]
async fn a_certificate_refused_once_serving_is_unavailable_without_the_address() {
    let pki = certificates("redis-tls-later");
    let mut server = RedisServer::with_tls(&pki.ca.server(&["localhost"]));
    let redis = Redis::connect(
        RedisOptions::new(server.tls_url("localhost"))
            .ca_certificate(&pki.ca_file)
            .pool_wait(Duration::from_millis(500)),
    )
    .await
    .unwrap();
    let tokens = redis.confirmation_store();
    tokens
        .put("c1-a", &binding("t", None), Duration::from_secs(5))
        .await
        .unwrap();
    // Back on the same port with a certificate of a CA the client does not trust.
    server.restart_with_tls(&pki.other_ca.server(&["localhost"]));
    let port = server.port().to_string();
    for _ in 0..3 {
        let error = tokens
            .put("c1-b", &binding("t", None), Duration::from_secs(5))
            .await
            .unwrap_err();
        assert_eq!(error.kind(), &ErrorKind::UNAVAILABLE, "{error:?}");
        let message = error.message();
        assert!(message.starts_with("Redis is unavailable ("), "{message}");
        let shown = format!("{message} {:?}", error.details());
        assert!(
            !shown.contains(&port) && !shown.contains("localhost"),
            "{shown}"
        );
    }
    // Its own CA's certificate again: served again on the same handle.
    server.restart_with_tls(&pki.ca.server(&["localhost"]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = redis.ping().await {
        assert!(Instant::now() < deadline, "still failing: {e:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn an_unusable_ca_option_fails_at_start_naming_it_and_not_the_password() {
    let pki = certificates("redis-tls-bad-ca");
    let dir = TempDir::new("redis-tls-bad-ca-files");
    let missing = dir.join("missing.pem");
    let empty = dir.join("empty.pem");
    std::fs::write(&empty, "no certificate here\n").unwrap();
    let key_only = dir.join("key.pem");
    std::fs::write(&key_only, pki.ca.server(&["localhost"]).key).unwrap();
    let url = "rediss://:pw-secret@localhost:1/0";
    for (path, why) in [
        (&missing, "cannot read it"),
        (&empty, "holds no PEM certificate"),
        (&key_only, "holds no PEM certificate"),
    ] {
        let error = Redis::connect(RedisOptions::new(url).ca_certificate(path))
            .await
            .unwrap_err();
        let message = error.message();
        assert!(
            message.starts_with(&format!(
                "the Redis option ca_certificate ({}): {why}",
                path.display()
            )),
            "{message}"
        );
        assert!(!message.contains("pw-secret"), "{message}");
    }
    // Without TLS the option has nothing to apply to.
    let error = Redis::connect(
        RedisOptions::new("redis://:pw-secret@127.0.0.1:1/0").ca_certificate(&pki.ca_file),
    )
    .await
    .unwrap_err();
    let message = error.message();
    assert!(
        message.contains("ca_certificate") && message.contains("not rediss://"),
        "{message}"
    );
    assert!(!message.contains("pw-secret"), "{message}");
}
