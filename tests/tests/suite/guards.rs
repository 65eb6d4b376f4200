//! The guards for tools that reach the network, the disk and the host: tables of inputs, each
//! with the outcome asserted, and real requests, files and processes behind them.

use std::io;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Path as UrlPath;
use axum::response::{IntoResponse, Redirect};
use axum::routing::get;
use tool_runtime::ToolError;
use tool_runtime::layers::guard::{CommandPolicy, PathPolicy, UrlPolicy};
use tool_test_support::TempDir;

/// The rule a refusal names, or "ok".
fn outcome<T>(result: &Result<T, ToolError>) -> String {
    match result {
        Ok(_) => "ok".to_owned(),
        Err(e) => e
            .details()
            .and_then(|d| d["rule"].as_str())
            .map_or_else(|| format!("{}: {}", e.kind(), e.message()), str::to_owned),
    }
}

fn assert_table<T>(table: &[(&str, &str)], run: impl Fn(&str) -> Result<T, ToolError>) {
    let mut wrong = Vec::new();
    for (input, expected) in table {
        let got = outcome(&run(input));
        if got != *expected {
            wrong.push(format!("{input:?}: expected {expected}, got {got}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} cases wrong:\n{}",
        wrong.len(),
        table.len(),
        wrong.join("\n")
    );
}

#[test]
fn urls_are_refused_in_every_spelling_of_a_non_public_address() {
    let table = [
        ("https://example.com/page?q=1", "ok"),
        ("http://93.184.215.14/", "ok"),
        ("http://[2606:4700:4700::1111]/", "ok"),
        ("HTTPS://EXAMPLE.COM./", "ok"),
        ("http://127.0.0.1/", "loopback"),
        ("http://127.0.0.1:22/", "loopback"),
        ("http://localhost:8080/", "loopback"),
        ("http://LOCALHOST./", "loopback"),
        ("http://api.localhost/", "loopback"),
        ("http://2130706433/", "loopback"),
        ("http://017700000001/", "loopback"),
        ("http://0x7f000001/", "loopback"),
        ("http://0x7f.0.0.1/", "loopback"),
        ("http://0177.0.0.1/", "loopback"),
        ("http://127.1/", "loopback"),
        ("http://127.0.0.1./", "loopback"),
        ("http://%31%32%37.0.0.1/", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[0:0:0:0:0:0:0:1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "ipv4_mapped"),
        ("http://[::ffff:7f00:1]/", "ipv4_mapped"),
        ("http://[::ffff:8.8.8.8]/", "ipv4_mapped"),
        ("http://[::127.0.0.1]/", "ipv4_compatible"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://10.0.0.1/", "private"),
        ("http://172.16.5.4/", "private"),
        ("http://172.31.255.255/", "private"),
        ("http://192.168.1.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud_metadata"),
        ("http://0xa9fea9fe/", "cloud_metadata"),
        ("http://2852039166/", "cloud_metadata"),
        ("http://169.254.170.2/v2/credentials", "cloud_metadata"),
        (
            "http://metadata.google.internal/computeMetadata/v1/",
            "cloud_metadata",
        ),
        ("http://100.100.100.200/", "cloud_metadata"),
        ("http://[fd00:ec2::254]/", "cloud_metadata"),
        ("http://169.254.1.1/", "link_local"),
        ("http://100.64.0.1/", "shared_address_space"),
        ("http://100.127.255.254/", "shared_address_space"),
        ("http://[fc00::1]/", "unique_local"),
        ("http://[fd12:3456::1]/", "unique_local"),
        ("http://[fe80::1]/", "link_local"),
        ("http://[fec0::1]/", "site_local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://[ff02::1]/", "multicast"),
        ("http://255.255.255.255/", "broadcast"),
        ("http://240.0.0.1/", "reserved"),
        ("http://192.0.2.1/", "documentation"),
        ("http://198.18.0.1/", "benchmarking"),
        ("http://[64:ff9b::a00:1]/", "private"),
        ("http://[2002:7f00:1::]/", "loopback"),
        ("http://[2001:0:4136:e378::1]/", "teredo"),
        ("http://evil.example@127.0.0.1/", "credentials"),
        ("http://user:pass@example.com/", "credentials"),
        ("http://example.com@10.0.0.1/", "credentials"),
        ("ftp://example.com/file", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("gopher://127.0.0.1:6379/_INFO", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("not a url", "invalid_url"),
        ("http://", "invalid_url"),
        ("http://ads.example/", "denied_host"),
        ("http://cdn.ads.example./x", "denied_host"),
        ("http://notads.example/", "ok"),
    ];
    let policy = UrlPolicy::new().deny_hosts(["ads.example"]);
    assert_table(&table, |url| policy.check(url));
}

#[test]
fn allowed_domains_and_exempt_hosts_narrow_and_widen_the_rules() {
    let policy = UrlPolicy::new()
        .allow_domains(["example.com"])
        .allow_hosts(["10.1.2.3", "wiki.intranet"]);
    let table = [
        ("https://example.com/", "ok"),
        ("https://docs.example.com/a", "ok"),
        ("https://notexample.com/", "domain_not_allowed"),
        ("https://example.com.evil.net/", "domain_not_allowed"),
        ("http://1.1.1.1/", "domain_not_allowed"),
        ("http://10.1.2.3/", "ok"),
        ("http://10.1.2.4/", "domain_not_allowed"),
        ("http://wiki.intranet/page", "ok"),
    ];
    assert_table(&table, |url| policy.check(url));
}

/// A server on loopback that records which paths it was asked for.
struct Site {
    port: u16,
    hits: Arc<std::sync::Mutex<Vec<String>>>,
}

async fn site() -> Site {
    let hits = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = hits.clone();
    let app = Router::new()
        .route("/ok", get(|| async { "fine" }))
        .route("/big", get(|| async { "x".repeat(4096) }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "late"
            }),
        )
        .route(
            "/to/{target}",
            get(move |UrlPath(target): UrlPath<String>| async move {
                let url = match target.as_str() {
                    "loopback" => format!("http://127.0.0.1:{port}/secret"),
                    "mapped" => format!("http://[::ffff:127.0.0.1]:{port}/secret"),
                    "private-name" => format!("http://internal.test:{port}/secret"),
                    "metadata" => "http://169.254.169.254/latest/meta-data/".to_owned(),
                    "scheme" => "file:///etc/passwd".to_owned(),
                    "exempt" => format!("http://other.test:{port}/ok"),
                    _ => "/ok".to_owned(),
                };
                Redirect::temporary(&url)
            }),
        )
        .route(
            "/loop/{n}",
            get(|UrlPath(n): UrlPath<u32>| async move {
                Redirect::temporary(&format!("/loop/{}", n + 1)).into_response()
            }),
        )
        .route("/secret", get(|| async { "the secret" }))
        .layer(axum::middleware::from_fn(
            move |req: axum::extract::Request, next: axum::middleware::Next| {
                seen.lock().unwrap().push(req.uri().path().to_owned());
                next.run(req)
            },
        ));
    tokio::spawn(async move { axum::serve(listener, app).await });
    Site { port, hits }
}

/// Names for the tests, without a DNS server: `start.test` and `other.test` are the local
/// site (exempt by name), the others what their names say.
fn resolver(calls: Arc<AtomicUsize>) -> impl Fn(&str) -> io::Result<Vec<IpAddr>> + Send + Sync {
    move |host: &str| {
        calls.fetch_add(1, Ordering::SeqCst);
        let ips: &[&str] = match host {
            "start.test" | "other.test" | "rebind.test" => &["127.0.0.1"],
            "internal.test" => &["10.0.0.7"],
            "mixed.test" => &["93.184.215.14", "192.168.0.10"],
            "meta.test" => &["169.254.169.254"],
            "v6local.test" => &["fe80::1"],
            _ => return Err(io::Error::new(io::ErrorKind::NotFound, "unknown host")),
        };
        Ok(ips.iter().map(|ip| ip.parse().unwrap()).collect())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_check_resolved_addresses_and_every_redirect_hop() {
    let site = site().await;
    let port = site.port;
    let calls = Arc::new(AtomicUsize::new(0));
    let client = UrlPolicy::new()
        .allow_hosts(["start.test", "other.test"])
        .max_redirects(3)
        .max_bytes(1024)
        .timeout(Duration::from_millis(800))
        .resolver(resolver(calls.clone()))
        .client()
        .unwrap();
    let fetched = client
        .get(format!("http://start.test:{port}/ok"))
        .send()
        .await
        .unwrap();
    assert_eq!((fetched.status(), fetched.text().as_str()), (200, "fine"));
    let table = [
        ("rebind.test/ok", "loopback"),
        ("internal.test/ok", "private"),
        ("mixed.test/ok", "private"),
        ("meta.test/ok", "cloud_metadata"),
        ("v6local.test/ok", "link_local"),
        ("nowhere.test/ok", "unavailable"),
        ("start.test/to/loopback", "loopback"),
        ("start.test/to/mapped", "ipv4_mapped"),
        ("start.test/to/private-name", "private"),
        ("start.test/to/metadata", "cloud_metadata"),
        ("start.test/to/exempt", "ok"),
        ("start.test/loop/0", "redirect_limit"),
        ("start.test/big", "max_bytes"),
        ("start.test/slow", "timeout"),
    ];
    let mut wrong = Vec::new();
    for (path, expected) in table {
        let (host, rest) = path.split_once('/').unwrap();
        let got = client
            .get(format!("http://{host}:{port}/{rest}"))
            .send()
            .await;
        let got = match &got {
            Err(e) if e.details().is_none() => e.kind().to_string(),
            other => outcome(other),
        };
        if got != expected {
            wrong.push(format!("{path}: expected {expected}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A redirect to another scheme is never followed: the redirect itself is the answer.
    let kept = client
        .get(format!("http://start.test:{port}/to/scheme"))
        .send()
        .await
        .unwrap();
    assert_eq!(kept.status(), 307);
    // No refused request reached the server: the redirect targets were never asked for.
    let hits = site.hits.lock().unwrap().clone();
    assert!(!hits.contains(&"/secret".to_owned()), "{hits:?}");
    assert_eq!(
        hits.iter().filter(|p| p.starts_with("/loop/")).count(),
        4,
        "{hits:?}"
    );
    assert!(calls.load(Ordering::SeqCst) > 0);
}

#[test]
fn paths_stay_under_their_roots() {
    let dir = TempDir::new("guard-paths");
    let root = dir.join("root");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), "a").unwrap();
    std::fs::write(root.join("sub/b.txt"), "b").unwrap();
    std::fs::write(root.join("big.bin"), vec![0u8; 64]).unwrap();
    std::fs::write(dir.join("outside.txt"), "outside").unwrap();
    std::os::unix::fs::symlink(dir.path(), root.join("link_out")).unwrap();
    std::os::unix::fs::symlink(dir.join("outside.txt"), root.join("file_out")).unwrap();
    std::os::unix::fs::symlink(root.join("sub"), root.join("link_in")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(root.join("fifo"))
        .status()
        .unwrap();
    assert!(fifo.success());
    let policy = PathPolicy::new([&root]).max_read(32);
    let inside = root.join("a.txt");
    let inside = inside.to_str().unwrap();
    let table = [
        ("a.txt", "ok"),
        ("sub/b.txt", "ok"),
        ("./sub/../a.txt", "ok"),
        ("sub/..", "ok"),
        (inside, "ok"),
        ("link_in/b.txt", "ok"),
        ("../outside.txt", "parent_escape"),
        ("sub/../../outside.txt", "parent_escape"),
        ("sub/../../root/a.txt", "parent_escape"),
        ("/etc/passwd", "outside_roots"),
        ("/", "outside_roots"),
        ("link_out/outside.txt", "symlink_escape"),
        ("file_out", "symlink_escape"),
        ("a.txt\0.png", "nul_byte"),
        ("", "empty"),
        ("fifo", "special_file"),
        ("missing.txt", "not_found: `missing.txt` does not exist"),
    ];
    let table: Vec<(&str, String)> = table
        .iter()
        .map(|(p, e)| {
            let e = if e.starts_with("not_found") {
                format!(
                    "not_found: `{}` does not exist",
                    root.join("missing.txt").display()
                )
            } else {
                (*e).to_owned()
            };
            (*p, e)
        })
        .collect();
    let table: Vec<(&str, &str)> = table.iter().map(|(p, e)| (*p, e.as_str())).collect();
    assert_table(&table, |p| policy.check(p));
    let reads = [
        ("a.txt", "ok"),
        ("big.bin", "max_read"),
        ("sub", "not_a_file"),
        ("file_out", "symlink_escape"),
    ];
    assert_table(&reads, |p| policy.read(p));
    assert_eq!(policy.read("link_in/b.txt").unwrap(), b"b");
    let new = [
        ("new.txt", "ok"),
        ("sub/new.txt", "ok"),
        ("link_out/new.txt", "symlink_escape"),
        ("../new.txt", "parent_escape"),
    ];
    assert_table(&new, |p| policy.check_new(p));
}

#[test]
fn command_lines_are_split_without_a_shell_and_checked() {
    let policy = CommandPolicy::new(["echo", "printf", "cat"]);
    let parsed = [
        ("echo hello", "ok"),
        ("echo 'a b'  c", "ok"),
        ("echo \"$HOME\"", "ok"),
        ("echo *.txt ~", "ok"),
        ("echo 'a;b|c&d>e'", "ok"),
        ("echo \\; ls", "ok"),
        ("echo hi; rm -rf /", "shell_operator"),
        ("echo a && echo b", "shell_operator"),
        ("echo a || echo b", "shell_operator"),
        ("echo a | cat", "shell_operator"),
        ("echo a > /tmp/x", "shell_operator"),
        ("cat < /etc/shadow", "shell_operator"),
        ("echo a &", "shell_operator"),
        ("echo $(whoami)", "command_substitution"),
        ("echo `whoami`", "command_substitution"),
        ("echo \"$(whoami)\"", "command_substitution"),
        ("echo a\nrm -rf /", "control_character"),
        ("echo a\rrm", "control_character"),
        ("FOO=bar echo hi", "env_assignment"),
        ("/bin/echo hi", "program_path"),
        ("./echo hi", "program_path"),
        ("rm -rf /", "program_not_allowed"),
        ("bash -c 'echo hi'", "program_not_allowed"),
        ("", "empty"),
        ("   ", "empty"),
        ("# only a comment", "empty"),
        ("echo 'unclosed", "bad_quoting"),
        ("echo trailing\\", "bad_quoting"),
    ];
    assert_table(&parsed, |line| policy.parse(line));
    let argv = |line: &str| policy.parse(line).unwrap();
    assert_eq!(argv("echo 'a b'  c"), ["echo", "a b", "c"]);
    assert_eq!(argv("echo \"$HOME\""), ["echo", "$HOME"]);
    assert_eq!(argv("echo *.txt ~"), ["echo", "*.txt", "~"]);
    assert_eq!(argv("echo 'a;b|c&d>e'"), ["echo", "a;b|c&d>e"]);
    assert_eq!(argv("echo \\; ls"), ["echo", ";", "ls"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_scrubbed_capped_and_killed_whole() {
    let dir = TempDir::new("guard-commands");
    let policy = CommandPolicy::new(["echo", "cat", "env", "pwd", "head", "sh"])
        .working_dir(dir.path())
        .max_output(1000);
    let out = policy.run("echo '*' $HOME").await.unwrap();
    assert_eq!(out.stdout, "* $HOME\n");
    assert!(out.success());
    let out = policy
        .run_with_input("cat", b"through stdin")
        .await
        .unwrap();
    assert_eq!(out.stdout, "through stdin");
    let out = policy.run("pwd").await.unwrap();
    assert_eq!(
        out.stdout.trim(),
        dir.path().canonicalize().unwrap().to_str().unwrap()
    );
    let out = policy.run("env").await.unwrap();
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter_map(|l| l.split('=').next())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| ["PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ"].contains(n)),
        "{names:?}"
    );
    let out = policy.run("head -c 100000 /dev/zero").await.unwrap();
    assert_eq!((out.stdout.len(), out.truncated), (1000, true));
    let out = policy.run("cat /nonexistent/file").await.unwrap();
    assert_eq!(out.code, Some(1));
    assert!(out.stderr.contains("No such file"), "{}", out.stderr);

    // The time limit kills the program and what it started.
    let pid_file = dir.join("child.pid");
    let line = format!("sh -c 'sleep 30 & echo $! > {}; wait'", pid_file.display());
    let started = std::time::Instant::now();
    let err = policy
        .clone()
        .timeout(Duration::from_millis(500))
        .run(&line)
        .await
        .unwrap_err();
    assert_eq!(err.kind(), "timeout");
    assert!(started.elapsed() < Duration::from_secs(10));
    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let mut gone = false;
    for _ in 0..50 {
        match std::fs::read_to_string(&stat) {
            Err(_) => gone = true,
            Ok(s) => {
                gone = s
                    .split(") ")
                    .nth(1)
                    .is_some_and(|rest| rest.starts_with('Z'));
            }
        }
        if gone {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the grandchild `sleep` outlived the time limit");
}
