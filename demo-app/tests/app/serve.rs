//! `demo-app serve` as a process: the bound address on stdout, a log line per request,
//! SIGTERM ending it with exit code 0, and the refusal to serve a non-loopback address openly.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::Duration;

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

/// The address a `serve` child prints on its first line of stdout.
fn listening_address(child: &mut std::process::Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim()
        .strip_prefix("listening on http://")
        .expect(&line)
        .to_owned()
}

#[test]
fn serves_logs_and_stops_on_sigterm() {
    let dir = std::env::temp_dir().join(format!("demo-app-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = listening_address(&mut child);

    let health = get(&addr, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains("x-request-id"), "{health}");
    let tools = get(&addr, "/tools");
    assert!(tools.contains("device_add"), "{tools}");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(
        log.contains("path=\"/healthz\"") || log.contains("path=/healthz"),
        "{log}"
    );
    assert!(log.contains("status=200"), "{log}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refuses_a_public_address_without_auth() {
    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .args(["serve", "--addr", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("refusing to serve on 0.0.0.0:0 without authentication")
            && err.contains("--auth-file"),
        "{err}"
    );
    assert!(err.contains("--insecure"), "{err}");

    let out = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .args(["serve", "--auth-file", "/nonexistent/auth.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read auth file"));
}

/// `--operator-role` names the role that reads the operator endpoints (`/toolsets`, `/audit`);
/// `admin` then reads neither.
#[test]
fn the_operator_role_is_a_flag() {
    let dir = std::env::temp_dir().join(format!("demo-app-serve-operator-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("auth.toml");
    std::fs::write(
        &tokens,
        "[[tokens]]\ntoken = \"admin-token\"\nprincipal = \"ada\"\nroles = [\"admin\"]\n\n\
         [[tokens]]\ntoken = \"ops-token\"\nprincipal = \"olga\"\nroles = [\"ops\"]\n",
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "127.0.0.1:0", "--operator-role", "ops"])
        .arg("--auth-file")
        .arg(&tokens)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listening_address(&mut child);
    let status = |path: &str, token: &str| {
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out.split(' ').nth(1).unwrap_or_default().to_owned()
    };
    assert_eq!(status("/toolsets", "ops-token"), "200");
    assert_eq!(status("/toolsets", "admin-token"), "403");
    assert_eq!(status("/audit", "admin-token"), "403");
    assert_ne!(status("/audit", "ops-token"), "403");
    let _ = child.kill();
    let _ = child.wait();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The IPv4-mapped loopback address is loopback: served without tokens, with `/mcp` open to its
/// own `Host` and still closed to others (DNS rebinding).
#[test]
fn serves_on_the_ipv4_mapped_loopback_address() {
    let dir = std::env::temp_dir().join(format!("demo-app-serve-mapped-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "[::ffff:127.0.0.1]:0"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = listening_address(&mut child);
    assert!(get(&addr, "/healthz").starts_with("HTTP/1.1 200"));
    let initialize = |host: &str| {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
        let mut s = TcpStream::connect(&addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(
            s,
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    };
    let own = initialize(&addr);
    assert!(own.starts_with("HTTP/1.1 200"), "{own}");
    let other = initialize("evil.example");
    assert!(other.starts_with("HTTP/1.1 403"), "{other}");
    let _ = child.kill();
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&dir);
}

/// With its descriptor table full, the server logs the failed accepts and goes on: once the
/// idle clients leave, `/healthz` answers again.
#[test]
fn an_exhausted_descriptor_table_is_logged_and_outlived() {
    let dir = std::env::temp_dir().join(format!("demo-app-serve-fds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A small table (64 descriptors), so that a hundred idle clients fill it.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -n 64 && exec "$0" "$@""#)
        .arg(env!("CARGO_BIN_EXE_demo-app"))
        .arg("--db")
        .arg(dir.join("d.db"))
        .args(["serve", "--addr", "127.0.0.1:0"])
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = listening_address(&mut child);
    assert!(get(&addr, "/healthz").starts_with("HTTP/1.1 200"));
    let idle: Vec<TcpStream> = (0..100)
        .map(|_| TcpStream::connect(&addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    drop(idle);
    let health = get(&addr, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("accepting a connection failed"), "{log}");
    assert!(log.contains("Too many open files"), "{log}");
    let _ = std::fs::remove_dir_all(&dir);
}
