//! `cargo bench -p demo-app --bench startup --profile dist` (how binaries ship: fat LTO), or
//! without `--profile dist` for the release profile.
//!
//! Start-up to first output: `demo-app --json device-list` against a hand-written clap +
//! rusqlite binary doing the same queries, on the same database, run alternately in one run;
//! then `--help`, `tools` and `--version` beside the hand-written binary's help, call and
//! version.
//! Both binaries come from the same profile. Each run is timed twice: until the first byte of
//! standard output reaches this process, and until the process has exited. Prints medians and
//! their ratios, and the ratio of each block of 20 consecutive pairs (min, median, max): a host
//! that slows down for a while shows in the worst block. BENCHMARKS.md records them.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BLOCKS: usize = 10;
const PER_BLOCK: usize = 20;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Time to the first byte on standard output, and to exit.
fn time(bin: &str, args: &[&str]) -> (Duration, Duration) {
    let start = Instant::now();
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // Nothing on success; a failure's message goes straight to the bench's own stderr.
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run");
    let mut stdout = child.stdout.take().expect("piped");
    let mut out = vec![0; 64 * 1024];
    let n = stdout.read(&mut out).expect("read");
    let first = start.elapsed();
    out.truncate(n);
    stdout.read_to_end(&mut out).expect("read");
    let status = child.wait().expect("wait");
    let exit = start.elapsed();
    assert!(status.success(), "{bin} failed: {status}");
    assert!(n > 0, "{bin}: no output");
    (first, exit)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The ratio of the medians, and (min, median, max) of the blocks' ratios.
fn ratios(ours: &[Duration], theirs: &[Duration]) -> (f64, [f64; 3]) {
    let r = |a: &[Duration], b: &[Duration]| ms(median(a.to_vec())) / ms(median(b.to_vec()));
    let mut blocks: Vec<f64> = ours
        .chunks(PER_BLOCK)
        .zip(theirs.chunks(PER_BLOCK))
        .map(|(a, b)| r(a, b))
        .collect();
    blocks.sort_by(f64::total_cmp);
    (
        r(ours, theirs),
        [
            blocks[0],
            blocks[blocks.len() / 2],
            blocks[blocks.len() - 1],
        ],
    )
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

    // The one-shot call, the figure of record, with every block; then, a quarter as many
    // runs each, what answers without calling: help (every tool's name and summary), the tool
    // listing and the version, each paired with the hand-written binary's nearest (its own
    // help and version; the listing against its call).
    let (call, others) = (BLOCKS * PER_BLOCK, BLOCKS * PER_BLOCK / 4);
    let pairs: [(&str, usize, Vec<&str>, Vec<&str>); 4] = [
        (
            "--json device-list",
            call,
            vec!["--db", db, "--json", "device-list"],
            vec!["--db", db, "--json"],
        ),
        ("--help", others, vec!["--help"], vec!["--help"]),
        ("tools", others, vec!["tools"], vec!["--db", db, "--json"]),
        ("--version", others, vec!["--version"], vec!["--version"]),
    ];
    for (name, runs, ours_args, theirs_args) in pairs {
        for _ in 0..10 {
            time(ours, &ours_args);
            time(theirs, &theirs_args);
        }
        let (mut first, mut exit) = ((Vec::new(), Vec::new()), (Vec::new(), Vec::new()));
        for _ in 0..runs {
            let (f, e) = time(ours, &ours_args);
            first.0.push(f);
            exit.0.push(e);
            let (f, e) = time(theirs, &theirs_args);
            first.1.push(f);
            exit.1.push(e);
        }
        for (what, (a, b)) in [("first output", first), ("exit", exit)] {
            println!(
                "startup/{name:<18} to {what:<12} demo-app {:>7.3} ms, hand-written {:>7.3} ms",
                ms(median(a.clone())),
                ms(median(b.clone()))
            );
            let (ratio, [lo, mid, hi]) = ratios(&a, &b);
            println!(
                "startup/{name:<18} to {what:<12} ratio {ratio:.2}x (target <= 1.3x); blocks of {PER_BLOCK}: {lo:.2}x, {mid:.2}x, {hi:.2}x (min, median, max)"
            );
        }
    }
    let profile = std::path::Path::new(ours)
        .parent()
        .and_then(std::path::Path::file_name)
        .map_or_else(|| "?".into(), |p| p.to_string_lossy());
    println!(
        "(binaries of the `{profile}` profile, {call} runs of the call, {others} of the others, alternately)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
