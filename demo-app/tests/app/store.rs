//! The demo's stores behave alike on SQLite and on PostgreSQL: one test body per trait, run
//! on each engine; and on PostgreSQL, what several replicas sharing one database could race on
//! (one code redeemed by many at once, codes created by many at once) is decided by the
//! database.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use demo_app::config::Config;
use demo_app::store::{Channel, Database, Delivery, PostgresKv, SqliteKv, StoredChannels};
use demo_app::{Stores, store::Devices};
use serde_json::json;
use tool_runtime::postgres::{Postgres, PostgresOptions};
use tool_runtime::toolset::KeyValue;
use tool_runtime::{Caller, Source, ToolError};
use tool_test_support::TempDir;
use tool_test_support::postgres::PostgresServer;

/// Seconds since the Unix epoch on this machine.
fn local_now() -> i64 {
    demo_app::store::now()
}

fn kind(result: Result<impl std::fmt::Debug, ToolError>) -> (String, u16) {
    let e = result.expect_err("an error");
    (e.kind().as_str().to_owned(), e.status())
}

/// Codes, pairing, listing, revocation and expiry.
async fn devices_behave(devices: &Devices) {
    let d = &devices.0;
    let before = local_now();
    let code = d
        .create_code(Some("home".into()), Duration::from_secs(120), 6)
        .await
        .unwrap();
    assert_eq!(code.code.len(), 6);
    assert!(code.code.bytes().all(|b| b.is_ascii_digit()), "{code:?}");
    assert_eq!(code.workspace.as_deref(), Some("home"));
    // The database's clock may be another machine's: a few seconds either way.
    assert!((code.expires_at - (before + 120)).abs() <= 5, "{code:?}");
    let office = d
        .create_code(Some("office".into()), Duration::from_secs(60), 8)
        .await
        .unwrap();

    let listed = d.list(None).await.unwrap();
    assert!(listed.devices.is_empty());
    // Soonest to expire first.
    assert_eq!(listed.codes, [office.clone(), code.clone()]);
    let home = d.list(Some("home".into())).await.unwrap();
    assert_eq!(home.codes, std::slice::from_ref(&code));

    let phone = d
        .redeem_code(code.code.clone(), "phone".into())
        .await
        .unwrap();
    assert!(
        phone.device_id.starts_with("dev_") && phone.device_id.len() == 20,
        "{phone:?}"
    );
    assert_eq!(
        (phone.name.as_str(), phone.workspace.as_deref()),
        ("phone", Some("home"))
    );
    assert!((phone.paired_at - local_now()).abs() <= 5, "{phone:?}");
    assert_eq!(phone.revoked_at, None);
    // A code pairs once; unknown digits pair nothing.
    assert_eq!(
        kind(d.redeem_code(code.code.clone(), "tablet".into()).await),
        ("invalid_code".into(), 400)
    );
    assert_eq!(
        kind(d.redeem_code("0".repeat(11), "x".into()).await),
        ("invalid_code".into(), 400)
    );

    let laptop = d
        .redeem_code(office.code.clone(), "laptop".into())
        .await
        .unwrap();
    let listed = d.list(None).await.unwrap();
    assert!(listed.codes.is_empty());
    // Oldest first (paired in the same second: by id).
    let mut expected = vec![phone.clone(), laptop.clone()];
    expected.sort_by(|a, b| (a.paired_at, &a.device_id).cmp(&(b.paired_at, &b.device_id)));
    assert_eq!(listed.devices, expected);
    assert_eq!(
        d.list(Some("office".into())).await.unwrap().devices,
        [laptop]
    );
    assert!(
        d.list(Some("garage".into()))
            .await
            .unwrap()
            .devices
            .is_empty()
    );

    assert_eq!(d.device(phone.device_id.clone()).await.unwrap(), phone);
    assert_eq!(
        kind(d.device("dev_0000000000000000".into()).await),
        ("not_found".into(), 404)
    );
    let revoked = d.revoke(phone.device_id.clone()).await.unwrap();
    let at = revoked.revoked_at.expect("revoked");
    assert!((at - local_now()).abs() <= 5, "{revoked:?}");
    assert_eq!(
        revoked,
        demo_app::store::DeviceRow {
            revoked_at: Some(at),
            ..phone.clone()
        }
    );
    // Revoking again changes nothing.
    assert_eq!(d.revoke(phone.device_id.clone()).await.unwrap(), revoked);
    assert_eq!(d.device(phone.device_id.clone()).await.unwrap(), revoked);
    assert_eq!(
        kind(d.revoke("dev_0000000000000000".into()).await),
        ("not_found".into(), 404)
    );

    // An expired code is said to be expired, and is no longer listed.
    let expired = d.create_code(None, Duration::ZERO, 6).await.unwrap();
    assert_eq!(
        kind(d.redeem_code(expired.code.clone(), "x".into()).await),
        ("code_expired".into(), 410)
    );
    assert!(d.list(None).await.unwrap().codes.is_empty());
}

/// No two pending codes share their digits: 300 codes of 4 digits (10,000 values) draw the
/// same digits several times, and each time draw again.
async fn pending_codes_are_unique(devices: &Devices) {
    for _ in 0..300 {
        devices
            .0
            .create_code(None, Duration::from_secs(600), 4)
            .await
            .unwrap();
    }
    let codes = devices.0.list(None).await.unwrap().codes;
    let distinct: BTreeSet<_> = codes.iter().map(|c| c.code.as_str()).collect();
    assert_eq!((codes.len(), distinct.len()), (300, 300));
}

/// Channels by name, and their deliveries.
async fn channels_behave(channels: &StoredChannels) {
    let c = &channels.0;
    let channel = |name: &str, workspace: Option<&str>| Channel {
        name: name.to_owned(),
        command: format!("tee /tmp/{name}"),
        enabled: true,
        workspace: workspace.map(str::to_owned),
    };
    assert!(c.list(None).await.unwrap().is_empty());
    for (name, workspace) in [
        ("ab", Some("home")),
        ("a_b", None),
        ("a-b", Some("home")),
        ("a0", None),
        ("B", None),
    ] {
        assert!(c.add(channel(name, workspace)).await.unwrap(), "{name}");
    }
    // A name is taken once: the second changes nothing.
    let other = Channel {
        enabled: false,
        ..channel("ab", None)
    };
    assert!(!c.add(other).await.unwrap());
    assert_eq!(
        c.get("ab".into()).await.unwrap(),
        Some(channel("ab", Some("home")))
    );
    assert_eq!(c.get("zz".into()).await.unwrap(), None);
    // By name, code point by code point, whatever the database's collation.
    let names = |list: Vec<Channel>| list.into_iter().map(|c| c.name).collect::<Vec<_>>();
    assert_eq!(
        names(c.list(None).await.unwrap()),
        ["B", "a-b", "a0", "a_b", "ab"]
    );
    assert_eq!(
        names(c.list(Some("home".into())).await.unwrap()),
        ["a-b", "ab"]
    );

    let off = Channel {
        enabled: false,
        ..channel("off", None)
    };
    assert!(c.add(off.clone()).await.unwrap());
    assert_eq!(c.get("off".into()).await.unwrap(), Some(off.clone()));
    assert_eq!(c.remove("off".into()).await.unwrap(), Some(off));
    assert_eq!(c.remove("off".into()).await.unwrap(), None);
    assert_eq!(c.get("off".into()).await.unwrap(), None);

    let delivery = |channel: &str, chat: Option<&str>, message: &str, outcome: &str| Delivery {
        channel: channel.to_owned(),
        chat_id: chat.map(str::to_owned),
        message: message.to_owned(),
        outcome: outcome.to_owned(),
    };
    let sent = [
        delivery("ab", Some("chat-1"), "first", "delivered"),
        delivery("a0", None, "elsewhere", "delivered"),
        delivery("ab", None, "second", "command_failed: exit 1"),
        delivery("ab", Some("chat-1"), "third", "delivered"),
    ];
    for d in &sent {
        c.record(d.clone()).await.unwrap();
    }
    // Oldest first, that channel's only.
    assert_eq!(
        c.deliveries("ab".into()).await.unwrap(),
        [sent[0].clone(), sent[2].clone(), sent[3].clone()]
    );
    assert!(c.deliveries("zz".into()).await.unwrap().is_empty());
}

/// Values read back as written, keys listed by prefix in order, each store apart.
async fn key_values_behave(notes: &dyn KeyValue, other: &dyn KeyValue) {
    assert_eq!(notes.read("k").await.unwrap(), None);
    // Keys in an order neither sorted nor insertion-sorted by jsonb: read back as written.
    let value = json!({"zeta": 1, "alpha": [1, 2.5, "x", null], "mid": {"b": true, "a": false}});
    notes.write("k", value.clone()).await.unwrap();
    let read = notes.read("k").await.unwrap().unwrap();
    assert_eq!(read, value);
    assert_eq!(read.to_string(), value.to_string());
    notes.write("k", json!("replaced")).await.unwrap();
    assert_eq!(notes.read("k").await.unwrap(), Some(json!("replaced")));

    for key in ["a%b", "a_c", "abc", "B", "b"] {
        notes.write(key, json!(key)).await.unwrap();
    }
    other.write("a%z", json!(0)).await.unwrap();
    // `%` and `_` are characters of the prefix, not patterns.
    assert_eq!(notes.list("a%").await.unwrap(), ["a%b"]);
    assert_eq!(notes.list("a_").await.unwrap(), ["a_c"]);
    assert_eq!(notes.list("a").await.unwrap(), ["a%b", "a_c", "abc"]);
    assert_eq!(
        notes.list("").await.unwrap(),
        ["B", "a%b", "a_c", "abc", "b", "k"]
    );
    assert_eq!(other.list("").await.unwrap(), ["a%z"]);
    assert_eq!(other.read("k").await.unwrap(), None);

    assert!(notes.delete("abc").await.unwrap());
    assert!(!notes.delete("abc").await.unwrap());
    assert_eq!(notes.read("abc").await.unwrap(), None);
    assert_eq!(other.list("").await.unwrap(), ["a%z"]);
}

/// `[[stores]]` of one `kind` named `name`.
fn store_of_kind(name: &str, kind: &str) -> Config {
    Config::parse(&format!(
        "[[stores]]\nname = \"{name}\"\nkind = \"{kind}\"\n"
    ))
    .unwrap()
}

/// Why `config`'s toolsets cannot be had on `db`.
fn refusal(config: &Config, db: Option<&Stores>) -> String {
    match config.toolsets(db, None, None) {
        Ok(_) => panic!("mounted"),
        Err(e) => e,
    }
}

/// A pool on `url`, with the default time limits.
async fn connect(url: &str) -> Postgres {
    Postgres::connect(PostgresOptions::new(url)).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_behave_on_sqlite() {
    let dir = TempDir::new("stores-sqlite");
    let stores = Stores::sqlite(dir.join("d.db")).unwrap();
    devices_behave(&stores.devices).await;
    channels_behave(&stores.channels).await;
    let Database::Sqlite(store) = stores.database() else {
        panic!("a SQLite database");
    };
    key_values_behave(
        &SqliteKv::new(store.clone(), "notes"),
        &SqliteKv::new(store.clone(), "other"),
    )
    .await;
    pending_codes_are_unique(&Stores::sqlite(dir.join("codes.db")).unwrap().devices).await;
    // A value that is not JSON (written by other hands) is an error, not a missing value.
    store
        .run(|c| {
            c.execute(
                "INSERT INTO kv (store, key, value) VALUES ('notes', 'bad', '{oops')",
                [],
            )?;
            Ok(())
        })
        .await
        .unwrap();
    let e = SqliteKv::new(store.clone(), "notes")
        .read("bad")
        .await
        .unwrap_err();
    assert_eq!(e.kind(), "internal", "{e:?}");

    assert_eq!(
        store_of_kind("notes", "sqlite")
            .toolsets(Some(&stores), None, None)
            .unwrap()
            .len(),
        1
    );
    let e = refusal(&store_of_kind("notes", "postgres"), Some(&stores));
    assert_eq!(
        e,
        "[[stores]] name = \"notes\": a postgres store needs the demo's data in PostgreSQL \
         (--postgres URL): write kind = \"sqlite\" to keep it in the SQLite database"
    );
    let e = refusal(&store_of_kind("notes", "postgres"), None);
    assert_eq!(
        e,
        "[[stores]] name = \"notes\": a postgres store needs the database"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stores_behave_alike_on_postgres() {
    let server = PostgresServer::start();
    // An English collation, under which `B` sorts after `a` and `-` or `_` barely count:
    // listings must still come by code point, as on SQLite.
    server.psql(
        "postgres",
        "CREATE DATABASE stores TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'",
    );
    let postgres = connect(&server.url_of("stores")).await;
    let stores = Stores::postgres(&postgres).await.unwrap();
    devices_behave(&stores.devices).await;
    channels_behave(&stores.channels).await;
    assert!(matches!(stores.database(), Database::Postgres(_)));
    key_values_behave(
        &PostgresKv::new(postgres.clone(), "notes"),
        &PostgresKv::new(postgres.clone(), "other"),
    )
    .await;
    // A value that is not JSON (written by other hands) is an error, not a missing value.
    server.psql(
        "stores",
        "INSERT INTO kv (store, key, value) VALUES ('notes', 'bad', '{oops')",
    );
    let e = PostgresKv::new(postgres.clone(), "notes")
        .read("bad")
        .await
        .unwrap_err();
    assert_eq!(e.kind(), "internal", "{e:?}");
    // `[[stores]] kind = "postgres"` keeps its values in the same database.
    let registry = Arc::new(demo_app::registry(&stores).unwrap());
    for toolset in store_of_kind("shared", "postgres")
        .toolsets(Some(&stores), None, None)
        .unwrap()
    {
        registry.mount(toolset).await.unwrap();
    }
    let written = registry
        .call(
            "shared-write",
            json!({"key": "k", "value": {"b": 1, "a": 2}}),
            Caller::new(Source::Internal),
        )
        .await;
    assert!(written.is_ok(), "{}", written.to_json());
    assert_eq!(
        server.psql(
            "stores",
            "SELECT value FROM kv WHERE store = 'shared' AND key = 'k'"
        ),
        r#"{"b":1,"a":2}"#
    );
    let e = refusal(&store_of_kind("local", "sqlite"), Some(&stores));
    assert!(
        e.contains(
            "a sqlite store needs the SQLite database, and the demo's data is in PostgreSQL"
        ),
        "{e}"
    );

    let codes = connect(&server.create_database("codes")).await;
    pending_codes_are_unique(&Stores::postgres(&codes).await.unwrap().devices).await;
    // The schema is migrated once, whoever opens the database.
    Stores::postgres(&postgres).await.unwrap();
    assert_eq!(
        server.psql(
            "stores",
            "SELECT string_agg(version::text, ',' ORDER BY version) FROM tool_schema_migrations \
             WHERE component = 'demo-app'"
        ),
        "1,2,3"
    );
}

/// Two replicas (two pools on one database), 20 redemptions of one code at once: one pairs a
/// device, the 19 others are told the code is no longer pending. Then 20 at once create codes
/// of 4 digits: no two pending share their digits.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_code_pairs_one_device_across_replicas_on_postgres() {
    let server = PostgresServer::start();
    let url = server.create_database("race");
    let replicas = [connect(&url).await, connect(&url).await];
    let mut stores = Vec::new();
    for postgres in &replicas {
        stores.push(Stores::postgres(postgres).await.unwrap());
    }
    for round in 0..5 {
        let code = stores[0]
            .devices
            .0
            .create_code(None, Duration::from_secs(60), 6)
            .await
            .unwrap()
            .code;
        let barrier = Arc::new(tokio::sync::Barrier::new(20));
        let calls: Vec<_> = (0..20)
            .map(|i| {
                let devices = stores[i % 2].devices.clone();
                let (code, barrier) = (code.clone(), Arc::clone(&barrier));
                tokio::spawn(async move {
                    barrier.wait().await;
                    devices.0.redeem_code(code, format!("d{i}")).await
                })
            })
            .collect();
        let mut paired = Vec::new();
        for call in calls {
            match call.await.unwrap() {
                Ok(device) => paired.push(device),
                Err(e) => assert_eq!(e.kind(), "invalid_code", "{e:?}"),
            }
        }
        assert_eq!(paired.len(), 1, "round {round}: {paired:?}");
        let devices = stores[1].devices.0.list(None).await.unwrap().devices;
        assert_eq!(devices.len(), round + 1);
        assert!(devices.contains(&paired[0]));
    }
    let pairs = server.psql(
        "race",
        "SELECT count(*) FROM pairing_codes WHERE device_id IS NOT NULL",
    );
    assert_eq!(pairs, "5");

    let creators: Vec<_> = (0..20)
        .map(|i| {
            let devices = stores[i % 2].devices.clone();
            tokio::spawn(async move {
                for _ in 0..15 {
                    devices
                        .0
                        .create_code(None, Duration::from_secs(600), 4)
                        .await
                        .unwrap();
                }
            })
        })
        .collect();
    for creator in creators {
        creator.await.unwrap();
    }
    let codes = stores[0].devices.0.list(None).await.unwrap().codes;
    let distinct: BTreeSet<_> = codes.iter().map(|c| c.code.as_str()).collect();
    assert_eq!((codes.len(), distinct.len()), (300, 300));
}
