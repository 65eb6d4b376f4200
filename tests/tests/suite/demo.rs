//! The demo app's tools through the pipeline, on a real SQLite file.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::{Caller, Envelope, Registry, Source};
use tool_test_support::TempDir;

fn caller() -> Caller {
    Caller::new(Source::Internal)
}

async fn ok(r: &Registry, tool: &str, args: Value, c: Caller) -> Value {
    let env = r.call(tool, args, c).await;
    assert!(env.is_ok(), "{tool}: {}", env.to_json());
    env.result().unwrap().clone()
}

fn err(env: &Envelope) -> (&str, u16) {
    let e = env
        .error()
        .unwrap_or_else(|| panic!("expected an error: {}", env.to_json()));
    (e.kind().as_str(), e.status())
}

#[tokio::test]
async fn the_pairing_flow_works_end_to_end() {
    let db = TempDir::new("flow");
    let r = demo_app::registry(&demo_app::Stores::sqlite(db.join("demo.db")).unwrap()).unwrap();

    let code = ok(
        &r,
        "device_add",
        json!({"workspace": "home", "ttl_seconds": 120}),
        caller(),
    )
    .await;
    let digits = code["code"].as_str().unwrap();
    assert_eq!(digits.len(), 6);
    assert!(digits.bytes().all(|b| b.is_ascii_digit()));
    let expires = code["expires_at"].as_str().unwrap();
    assert!(humantime_like_rfc3339(expires), "{expires}");

    let listed = ok(&r, "device_list", json!({}), caller()).await;
    assert_eq!(listed["pending_codes"].as_array().unwrap().len(), 1);
    let hint = listed["pending_codes"][0]["code_hint"].as_str().unwrap();
    assert!(
        hint.starts_with("****") && !hint.contains(&digits[..4]),
        "code leaked: {hint}"
    );

    let device = ok(
        &r,
        "device_pair",
        json!({"code": digits, "device_name": "phone"}),
        caller(),
    )
    .await;
    let id = device["device_id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("dev_") && id.len() == 20, "{id}");
    assert_eq!(device["workspace"], "home");

    // A code works once.
    let again = r
        .call(
            "device_pair",
            json!({"code": digits, "device_name": "tablet"}),
            caller(),
        )
        .await;
    assert_eq!(err(&again), ("invalid_code", 400));

    let listed = ok(&r, "device_list", json!({"workspace": "home"}), caller()).await;
    assert_eq!(listed["devices"][0]["device_id"], id.as_str());
    assert!(listed["pending_codes"].as_array().unwrap().is_empty());
    let other = ok(&r, "device_list", json!({"workspace": "office"}), caller()).await;
    assert!(other["devices"].as_array().unwrap().is_empty());

    // Destructive: refused without confirmation, and nothing changes.
    let refused = r
        .call("device_revoke", json!({"device_id": id}), caller())
        .await;
    assert_eq!(err(&refused), ("confirmation_required", 409));
    let listed = ok(&r, "device_list", json!({}), caller()).await;
    assert!(listed["devices"][0]["revoked_at"].is_null());

    // A dry run shows the device and changes nothing, without confirmation.
    let preview = ok(
        &r,
        "device_revoke",
        json!({"device_id": id}),
        caller().dry_run(true),
    )
    .await;
    assert_eq!(preview["device_id"], id.as_str());
    assert!(preview["revoked_at"].is_null());
    let listed = ok(&r, "device_list", json!({}), caller()).await;
    assert!(listed["devices"][0]["revoked_at"].is_null());

    let revoked = ok(
        &r,
        "device_revoke",
        json!({"device_id": id}),
        caller().confirm(true),
    )
    .await;
    assert!(revoked["revoked_at"].is_string());
    let missing = r
        .call(
            "device_revoke",
            json!({"device_id": "dev_0000000000000000"}),
            caller().confirm(true),
        )
        .await;
    assert_eq!(err(&missing), ("not_found", 404));

    // State survives reopening the file.
    let r2 = demo_app::registry(&demo_app::Stores::sqlite(db.join("demo.db")).unwrap()).unwrap();
    let listed = ok(&r2, "device_list", json!({}), caller()).await;
    assert_eq!(listed["devices"].as_array().unwrap().len(), 1);
}

fn humantime_like_rfc3339(s: &str) -> bool {
    s.len() == 20 && s.ends_with('Z') && s.as_bytes()[10] == b'T'
}

#[tokio::test]
async fn expired_codes_and_bad_arguments_are_refused() {
    let db = TempDir::new("expired");
    let stores = demo_app::Stores::sqlite(db.join("demo.db")).unwrap();
    let expired = stores
        .devices
        .0
        .create_code(None, Duration::ZERO, 6)
        .await
        .unwrap();
    let r = demo_app::registry(&stores).unwrap();
    let env = r
        .call(
            "device_pair",
            json!({"code": expired.code, "device_name": "x"}),
            caller(),
        )
        .await;
    assert_eq!(err(&env), ("code_expired", 410));

    let env = r
        .call(
            "device_add",
            json!({"ttl_seconds": 5, "code_length": 11}),
            caller(),
        )
        .await;
    assert_eq!(err(&env), ("invalid_arguments", 422));
    let paths: Vec<String> = env
        .error()
        .unwrap()
        .violations()
        .iter()
        .map(|v| v.path.clone())
        .collect();
    assert!(
        paths.contains(&"/ttl_seconds".to_owned()) && paths.contains(&"/code_length".to_owned())
    );

    let env = r
        .call(
            "device_pair",
            json!({"code": "12ab", "device_name": ""}),
            caller(),
        )
        .await;
    assert_eq!(env.error().unwrap().violations().len(), 2);

    let env = r
        .call("device_add", json!({"code_length": 10}), caller())
        .await;
    assert_eq!(env.result().unwrap()["code"].as_str().unwrap().len(), 10);
}

#[test]
fn concurrent_redemption_on_separate_connections_pairs_exactly_one_device() {
    let db = TempDir::new("race");
    let first = demo_app::Stores::sqlite(db.join("demo.db")).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let code = rt
        .block_on(
            first
                .devices
                .0
                .create_code(None, Duration::from_secs(60), 6),
        )
        .unwrap()
        .code;
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|i| {
            let path = db.join("demo.db");
            let code = code.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                let stores = demo_app::Stores::sqlite(path).unwrap();
                let rt = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                barrier.wait();
                rt.block_on(stores.devices.0.redeem_code(code, format!("d{i}")))
                    .is_ok()
            })
        })
        .collect();
    let wins = handles
        .into_iter()
        .map(|h| h.join().unwrap())
        .filter(|w| *w)
        .count();
    assert_eq!(wins, 1);
    let devices = rt.block_on(first.devices.0.list(None)).unwrap().devices;
    assert_eq!(devices.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_calls_through_the_pipeline_pair_exactly_one_device() {
    let db = TempDir::new("race-pipeline");
    let r = Arc::new(
        demo_app::registry(&demo_app::Stores::sqlite(db.join("demo.db")).unwrap()).unwrap(),
    );
    let code = ok(&r, "device_add", json!({}), caller()).await["code"].clone();
    let calls: Vec<_> = (0..16)
        .map(|i| {
            let r = Arc::clone(&r);
            let code = code.clone();
            tokio::spawn(async move {
                r.call(
                    "device_pair",
                    json!({"code": code, "device_name": format!("d{i}")}),
                    caller(),
                )
                .await
            })
        })
        .collect();
    let mut wins = 0;
    for c in calls {
        let env = c.await.unwrap();
        match env.error() {
            None => wins += 1,
            Some(e) => assert_eq!(e.kind(), "invalid_code"),
        }
    }
    assert_eq!(wins, 1);
}

#[tokio::test]
async fn the_default_configuration_limits_and_guards_the_demo_tools() {
    let config = demo_app::config::Config::parse(demo_app::config::DEFAULT).unwrap();
    let r = config
        .enforce_roles(config.apply(demo_app::registry_builder()))
        .state(demo_app::Stores::in_memory().unwrap().devices)
        .build()
        .unwrap();
    let alice = || {
        Caller::new(Source::Http)
            .principal("alice")
            .roles(["admin"])
    };
    // device_add: 30 calls per minute per principal.
    for _ in 0..30 {
        assert!(r.call("device_add", json!({}), alice()).await.is_ok());
    }
    let env = r.call("device_add", json!({}), alice()).await;
    assert_eq!(err(&env), ("rate_limited", 429));
    assert!(
        r.call(
            "device_add",
            json!({}),
            Caller::new(Source::Http).principal("bob")
        )
        .await
        .is_ok()
    );
    // device_revoke: admin only, once roles are enforced.
    let id = json!({"device_id": "dev_0000000000000000"});
    let bob = Caller::new(Source::Http)
        .principal("bob")
        .roles(["viewer"])
        .confirm(true);
    assert_eq!(
        err(&r.call("device_revoke", id.clone(), bob).await),
        ("unknown_tool", 404)
    );
    assert_eq!(
        err(&r
            .call("device_revoke", id.clone(), alice().confirm(true))
            .await),
        ("not_found", 404)
    );
    // An agent may not call destructive tools at all: they are hidden from it.
    let agent = Caller::new(Source::Agent).roles(["admin"]).confirm(true);
    assert_eq!(
        err(&r.call("device_revoke", id.clone(), agent).await),
        ("unknown_tool", 404)
    );
    // Without authentication (the CLI), no roles are required.
    let open = config
        .apply(demo_app::registry_builder())
        .state(demo_app::Stores::in_memory().unwrap().devices)
        .build()
        .unwrap();
    assert_eq!(
        err(&open
            .call("device_revoke", id, Caller::new(Source::Cli).confirm(true))
            .await),
        ("not_found", 404)
    );
}
