//! `cargo bench -p demo-app --bench startup --profile dist` (how binaries ship: fat LTO), or
//! without `--profile dist` for the release profile.
//!
//! Start-up to first output: `demo-app --json device-list` against a hand-written clap +
//! rusqlite binary doing the same queries, on the same database, run alternately in one run.
//! Both binaries come from the same profile. Prints medians and the ratio; BENCHMARKS.md
//! records them.

use std::process::Command;
use std::time::{Duration, Instant};

const RUNS: usize = 200;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(bin: &str, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = Command::new(bin).args(args).output().expect("run");
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{bin}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.stdout.is_empty());
    elapsed
}

fn main() {
    let dir = std::env::temp_dir().join(format!("demo-app-startup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("bench.db");
    let db = db.to_str().unwrap();
    let ours = env!("CARGO_BIN_EXE_demo-app");
    let theirs = env!("CARGO_BIN_EXE_device-list-handwritten");

    // A realistic database: 20 devices and 5 pending codes.
    for i in 0..25 {
        let out = Command::new(ours)
            .args(["--db", db, "--json", "device-add"])
            .output()
            .unwrap();
        let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        if i < 20 {
            let code = env["result"]["code"].as_str().unwrap();
            let name = format!("device-{i}");
            let status = Command::new(ours)
                .args([
                    "--db",
                    db,
                    "device-pair",
                    "--code",
                    code,
                    "--device-name",
                    &name,
                ])
                .output()
                .unwrap()
                .status;
            assert!(status.success());
        }
    }

    let ours_args = ["--db", db, "--json", "device-list"];
    let theirs_args = ["--db", db, "--json"];
    for _ in 0..10 {
        time(ours, &ours_args);
        time(theirs, &theirs_args);
    }
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        a.push(time(ours, &ours_args));
        b.push(time(theirs, &theirs_args));
    }
    let (a, b) = (median(a), median(b));
    println!(
        "startup/demo-app --json device-list      median {:>8.3} ms",
        a.as_secs_f64() * 1e3
    );
    println!(
        "startup/hand-written clap + rusqlite     median {:>8.3} ms",
        b.as_secs_f64() * 1e3
    );
    println!(
        "startup/ratio                             {:.2}x (target <= 1.5x)",
        a.as_secs_f64() / b.as_secs_f64()
    );
    let profile = std::path::Path::new(ours)
        .parent()
        .and_then(std::path::Path::file_name)
        .map_or_else(|| "?".into(), |p| p.to_string_lossy());
    println!("(binaries of the `{profile}` profile, {RUNS} runs each, run alternately)");
    std::fs::remove_dir_all(&dir).unwrap();
}
