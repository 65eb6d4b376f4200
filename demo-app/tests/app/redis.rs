//! `--redis URL` (and `DEMO_APP_REDIS`, `[redis]`): every command that calls a tool shares its
//! rate limits through Redis; a Redis named but unreachable stops the command, naming it
//! without its password; `memory` stores are said to stay in each replica.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use tool_test_support::TempDir;
use tool_test_support::nginx::free_port;
use tool_test_support::redis::RedisServer;

/// `demo-app --db DIR/d.db ARGS` in `dir` (whose `demo-app.toml`, if any, is read).
fn run(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .current_dir(dir)
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(args)
        .env_remove("DEMO_APP_DB")
        .env_remove("DEMO_APP_CONFIG")
        .env_remove("DEMO_APP_REDIS")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unreachable_redis_stops_the_command_naming_it_without_its_password() {
    let dir = TempDir::new("redis-unreachable");
    let port = free_port();
    let url = format!("redis://:hunter2@127.0.0.1:{port}/0");
    let named = format!("127.0.0.1:{port}/0");
    for (args, env) in [
        (vec!["--redis", url.as_str(), "device_list"], vec![]),
        (vec!["device_list"], vec![("DEMO_APP_REDIS", url.as_str())]),
        (
            vec!["--redis", url.as_str(), "serve", "--addr", "127.0.0.1:0"],
            vec![],
        ),
    ] {
        let out = run(dir.path(), &args, &env);
        let e = stderr(&out);
        // As every other setup failure (a database that does not open) exits.
        assert_eq!(out.status.code(), Some(1), "{args:?}: {e}");
        assert!(
            e.contains(&format!("cannot connect to Redis at {named}")),
            "{args:?}: {e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing served");
    }
    // Nor does --help show the variable's value.
    let out = run(dir.path(), &["--help"], &[("DEMO_APP_REDIS", url.as_str())]);
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(
        help.contains("--redis <URL>") && !help.contains("hunter2"),
        "{help}"
    );
}

#[test]
fn the_configuration_may_name_the_variable_that_holds_the_url() {
    let redis = RedisServer::start();
    let dir = TempDir::new("redis-url-env");
    std::fs::write(
        dir.join("demo-app.toml"),
        "[limits.device_add]\nrate = \"1/h\"\n[redis]\nurl_env = \"CACHE_URL\"\n",
    )
    .unwrap();
    let add = ["--json", "device_add", "--workspace", "w"];
    let out = run(dir.path(), &add, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("`CACHE_URL` is unset"),
        "{}",
        stderr(&out)
    );
    let url = redis.url();
    let first = run(dir.path(), &add, &[("CACHE_URL", url.as_str())]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    // The count is in Redis: a new database does not reset it.
    std::fs::remove_file(dir.join("d.db")).unwrap();
    let second = run(dir.path(), &add, &[("CACHE_URL", url.as_str())]);
    let refused: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(refused["error"]["type"], "rate_limited", "{refused}");
}

/// One-shot calls from two working directories, each with its own database, charge one count.
#[test]
fn one_shot_calls_on_two_machines_share_the_rate_limit() {
    let redis = RedisServer::start();
    let url = redis.url();
    let dirs = [TempDir::new("redis-cli-a"), TempDir::new("redis-cli-b")];
    for dir in &dirs {
        std::fs::write(
            dir.join("demo-app.toml"),
            "[limits.device_add]\nrate = \"3/h\"\n",
        )
        .unwrap();
    }
    let mut kinds = Vec::new();
    for i in 0..5 {
        let out = run(
            dirs[i % 2].path(),
            &["--redis", &url, "--json", "device_add", "--workspace", "w"],
            &[],
        );
        let v: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", stderr(&out)));
        kinds.push(v["error"]["type"].as_str().unwrap_or("ok").to_owned());
    }
    assert_eq!(kinds, ["ok", "ok", "ok", "rate_limited", "rate_limited"]);
    // Without Redis each directory counts its own.
    let out = run(
        dirs[0].path(),
        &["--json", "device_add", "--workspace", "w"],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn memory_stores_are_said_to_stay_in_each_replica_only_with_redis() {
    let redis = RedisServer::start();
    let dir = TempDir::new("redis-memory-store");
    std::fs::write(
        dir.join("demo-app.toml"),
        "[[stores]]\nname = \"notes\"\nkind = \"memory\"\n",
    )
    .unwrap();
    let warning =
        "the memory stores notes are not shared through Redis: each replica keeps its own copy";
    let with = run(dir.path(), &["--redis", &redis.url(), "toolsets"], &[]);
    assert_eq!(with.status.code(), Some(0), "{}", stderr(&with));
    assert!(stderr(&with).contains(warning), "{}", stderr(&with));
    let without = run(dir.path(), &["toolsets"], &[]);
    assert_eq!(without.status.code(), Some(0), "{}", stderr(&without));
    assert!(stderr(&without).is_empty(), "{}", stderr(&without));
}
