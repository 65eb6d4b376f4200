//! The `demo-app` binary: a call through the pipeline from the shell, with exit codes.

use std::process::Command;

fn demo(db: &std::path::Path, args: &[&str]) -> (i32, serde_json::Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(db)
        .args(args)
        .env_remove("DEMO_APP_DB")
        .output()
        .unwrap();
    let json = serde_json::from_slice(&out.stdout).unwrap_or(serde_json::Value::Null);
    (out.status.code().unwrap(), json)
}

#[test]
fn calls_tools_and_exits_with_documented_codes() {
    let dir = std::env::temp_dir().join(format!("demo-app-bin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("d.db");

    let (code, env) = demo(&db, &["device_add", r#"{"ttl_seconds": 60}"#]);
    assert_eq!(code, 0, "{env}");
    assert_eq!(env["status"], "ok");
    let digits = env["result"]["code"].as_str().unwrap().to_owned();
    assert!(db.exists(), "the database is created on first use");

    let (code, env) = demo(
        &db,
        &[
            "device_pair",
            &format!(r#"{{"code":"{digits}","device_name":"phone"}}"#),
        ],
    );
    assert_eq!(code, 0, "{env}");
    let id = env["result"]["device_id"].as_str().unwrap().to_owned();

    let (code, env) = demo(
        &db,
        &["device_revoke", &format!(r#"{{"device_id":"{id}"}}"#)],
    );
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (3, Some("confirmation_required"))
    );
    let (code, _) = demo(
        &db,
        &[
            "--yes",
            "device_revoke",
            &format!(r#"{{"device_id":"{id}"}}"#),
        ],
    );
    assert_eq!(code, 0);

    let (code, env) = demo(&db, &["device_add", r#"{"ttl_seconds": 1}"#]);
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (2, Some("invalid_arguments"))
    );
    let (code, _) = demo(&db, &["device_add", "{not json"]);
    assert_eq!(code, 2);
    let (code, env) = demo(&db, &["no_such_tool"]);
    assert_eq!(
        (code, env["error"]["type"].as_str()),
        (2, Some("unknown_tool"))
    );

    std::fs::remove_dir_all(&dir).unwrap();
}
