//! The demo app's state in an embedded SQLite database: a small pool of connections
//! (`pool`), the schema's migrations (`migrations`), pairing codes and devices (`devices`), and
//! the key-value stores of `[[stores]]` ([`SqliteKv`]).

mod devices;
mod kv;
mod migrations;
mod pool;

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::Connection;
use tool_runtime::ToolError;

pub use devices::{CodeRow, DeviceRow, create_code, device, list, redeem_code, revoke};
pub use kv::SqliteKv;
use migrations::migrate;
use pool::{BUSY_TIMEOUT, OpenFn, Pool};

/// The database. Cheap to share: a small pool of connections (WAL mode, so readers never wait
/// for the writer; writers wait for each other up to a busy timeout), and queries run off the
/// async workers through [`Store::run`].
#[derive(Debug, Clone)]
pub struct Store {
    pool: Arc<Pool>,
}

/// How many connections a file-backed store opens at most.
const POOL_SIZE: usize = 4;

impl Store {
    /// Opens (creating if needed) the database at `path` and runs pending migrations.
    /// Connections are opened as calls need them, up to a small pool.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let mut first = Connection::open(&path)?;
        first.busy_timeout(BUSY_TIMEOUT)?;
        migrate(&mut first)?;
        let open: Box<OpenFn> = Box::new(move || Connection::open(&path));
        Ok(Self {
            pool: Arc::new(Pool::new(first, POOL_SIZE, open)),
        })
    }

    /// An in-memory database, for tests: one connection (each would be its own database).
    pub fn in_memory() -> Result<Self, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        migrate(&mut conn)?;
        Ok(Self {
            pool: Arc::new(Pool::new(conn, 1, Box::new(Connection::open_in_memory))),
        })
    }

    /// Runs `f` with a connection of the pool, off the async workers
    /// ([`tool_runtime::blocking`]: on tokio's blocking pool, or inline in a one-shot CLI
    /// process).
    pub async fn run<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        let pool = Arc::clone(&self.pool);
        tool_runtime::blocking(move || {
            let mut conn = pool.get()?;
            f(&mut conn)
        })
        .await
    }
}

/// An error of the store, before it becomes a tool error.
#[derive(Debug)]
pub enum StoreError {
    /// No unredeemed code with that value.
    InvalidCode,
    /// The code existed but expired.
    CodeExpired,
    /// No device with that id.
    NotFound(String),
    /// SQLite failed.
    Sqlite(rusqlite::Error),
    /// The operating system's random source failed.
    Random(getrandom::Error),
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::InvalidCode => f.write_str("no pending pairing code matches"),
            StoreError::CodeExpired => f.write_str("the pairing code has expired"),
            StoreError::NotFound(id) => write!(f, "no device `{id}`"),
            StoreError::Sqlite(e) => write!(f, "database error: {e}"),
            StoreError::Random(e) => write!(f, "random source error: {e}"),
        }
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Sqlite(e)
    }
}

/// The store's errors as the tools report them.
impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::InvalidCode => ToolError::new(
                "invalid_code",
                "no pending pairing code matches; check the digits or create a new code with device_add",
            )
            .with_status(400),
            StoreError::CodeExpired => ToolError::new(
                "code_expired",
                "the pairing code has expired; create a new one with device_add",
            )
            .with_status(410),
            StoreError::NotFound(id) => ToolError::not_found(format!("no device `{id}`")),
            other @ (StoreError::Sqlite(_) | StoreError::Random(_)) => ToolError::internal(other),
        }
    }
}

/// Seconds since the Unix epoch.
#[must_use]
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// A fresh id: `prefix`, `_` and 16 random hex digits.
pub fn new_id(prefix: &str) -> Result<String, StoreError> {
    let mut buf = [0u8; 8];
    getrandom::fill(&mut buf).map_err(StoreError::Random)?;
    Ok(format!("{prefix}_{}", hex(&buf)))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Unix seconds as RFC 3339 in UTC: `2026-12-24T18:00:00Z`.
#[must_use]
pub fn rfc3339(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// Writers on several connections wait for each other (busy timeout) instead of failing
    /// with `database is locked`; the pool never opens more than its size.
    #[test]
    fn writers_on_pooled_connections_wait_for_each_other() {
        let dir = std::env::temp_dir().join(format!("demo-store-pool-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("p.db");
        let _ = std::fs::remove_file(&path);
        let store = Store::open(&path).unwrap();
        let threads: Vec<_> = (0..16)
            .map(|i| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for _ in 0..25 {
                        let mut conn = store.pool.get().unwrap();
                        let code = create_code(
                            &mut conn,
                            Some(&format!("w{i}")),
                            Duration::from_secs(60),
                            8,
                        )
                        .unwrap();
                        assert!(matches!(
                            redeem_code(&mut conn, "0000", "x"),
                            Err(StoreError::InvalidCode)
                        ));
                        redeem_code(&mut conn, &code.code, "phone").unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert!(store.pool.lock().opened <= POOL_SIZE);
        let (devices, _) = list(&mut store.pool.get().unwrap(), None).unwrap();
        assert_eq!(devices.len(), 16 * 25);
        drop(store);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
