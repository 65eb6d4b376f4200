//! The demo app's state: pairing codes and devices in an embedded SQLite database.
//!
//! Every operation that reads and then writes runs in one `BEGIN IMMEDIATE` transaction, so two
//! processes (or two connections) redeeming one code pair exactly one device.

use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Versioned schema migrations; `PRAGMA user_version` records how many ran.
const MIGRATIONS: &[&str] = &[
    // 1: codes and devices.
    "CREATE TABLE pairing_codes (
        id INTEGER PRIMARY KEY,
        code TEXT NOT NULL,
        workspace TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        redeemed_at INTEGER,
        device_id TEXT
    );
    CREATE INDEX pairing_codes_code ON pairing_codes (code);
    CREATE TABLE devices (
        device_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        workspace TEXT,
        paired_at INTEGER NOT NULL,
        revoked_at INTEGER
    );",
    // 2: the key-value stores of `[[stores]]` with `kind = "sqlite"`.
    "CREATE TABLE kv (
        store TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (store, key)
    );",
    // 3: the assistant's channels, the messages delivered through them, and scheduled tasks.
    "CREATE TABLE channels (
        name TEXT PRIMARY KEY,
        command TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        workspace TEXT,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE deliveries (
        id INTEGER PRIMARY KEY,
        channel TEXT NOT NULL,
        chat_id TEXT,
        message TEXT NOT NULL,
        outcome TEXT NOT NULL,
        delivered_at INTEGER NOT NULL
    );
    CREATE TABLE tasks (
        task_id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        schedule_type TEXT NOT NULL,
        schedule_value TEXT NOT NULL,
        channel TEXT,
        chat_id TEXT,
        tier TEXT,
        status TEXT NOT NULL,
        next_run INTEGER,
        last_run INTEGER,
        last_outcome TEXT,
        runs INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX tasks_due ON tasks (status, next_run);
    CREATE TABLE task_runs (
        task_id TEXT NOT NULL,
        due INTEGER NOT NULL,
        started_at INTEGER NOT NULL,
        finished_at INTEGER,
        outcome TEXT,
        PRIMARY KEY (task_id, due)
    );",
];

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

/// A pending pairing code as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeRow {
    /// The digits.
    pub code: String,
    /// The workspace it pairs into.
    pub workspace: Option<String>,
    /// Unix seconds.
    pub expires_at: i64,
}

/// A device as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceRow {
    /// `dev_` and 16 hex digits.
    pub device_id: String,
    /// The name given at pairing.
    pub name: String,
    /// The workspace.
    pub workspace: Option<String>,
    /// Unix seconds.
    pub paired_at: i64,
    /// Unix seconds, when revoked.
    pub revoked_at: Option<i64>,
}

/// The database. Cheap to share: a small pool of connections (WAL mode, so readers never wait
/// for the writer; writers wait for each other up to a busy timeout), and queries run off the
/// async workers through [`Store::run`].
#[derive(Debug, Clone)]
pub struct Store {
    pool: Arc<Pool>,
}

/// How many connections a file-backed store opens at most.
const POOL_SIZE: usize = 4;

/// How long a connection waits for another's write lock before `database is locked`.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

impl Store {
    /// Opens (creating if needed) the database at `path` and runs pending migrations.
    /// Connections are opened as calls need them, up to a small pool.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref().to_owned();
        let mut first = Connection::open(&path)?;
        first.busy_timeout(BUSY_TIMEOUT)?;
        migrate(&mut first)?;
        Ok(Self::pooled(
            first,
            POOL_SIZE,
            Box::new(move || Connection::open(&path)),
        ))
    }

    /// An in-memory database, for tests: one connection (each would be its own database).
    pub fn in_memory() -> Result<Self, StoreError> {
        let mut conn = Connection::open_in_memory()?;
        migrate(&mut conn)?;
        Ok(Self::pooled(conn, 1, Box::new(Connection::open_in_memory)))
    }

    fn pooled(first: Connection, max: usize, open: Box<OpenFn>) -> Self {
        Self {
            pool: Arc::new(Pool {
                open,
                max,
                slots: Mutex::new(Slots {
                    idle: vec![first],
                    opened: 1,
                }),
                returned: Condvar::new(),
            }),
        }
    }

    /// The schema version (number of migrations applied).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let conn = self.pool.get()?;
        Ok(conn.pragma_query_value(None, "user_version", |r| r.get(0))?)
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

type OpenFn = dyn Fn() -> rusqlite::Result<Connection> + Send + Sync;

/// A few connections, opened on demand. Small enough not to need a pool crate (the ones for
/// rusqlite pin an older rusqlite, and would open connections and a reaper thread at start-up,
/// which a one-shot command pays for).
struct Pool {
    open: Box<OpenFn>,
    max: usize,
    slots: Mutex<Slots>,
    returned: Condvar,
}

struct Slots {
    idle: Vec<Connection>,
    opened: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// An idle connection, a new one while fewer than `max` are open, or the next returned.
    fn get(&self) -> Result<Pooled<'_>, StoreError> {
        let mut slots = self.lock();
        loop {
            if let Some(conn) = slots.idle.pop() {
                return Ok(Pooled {
                    pool: self,
                    conn: Some(conn),
                });
            }
            if slots.opened < self.max {
                slots.opened += 1;
                drop(slots);
                let opened = (self.open)().and_then(|c| {
                    c.busy_timeout(BUSY_TIMEOUT)?;
                    Ok(c)
                });
                return match opened {
                    Ok(conn) => Ok(Pooled {
                        pool: self,
                        conn: Some(conn),
                    }),
                    Err(e) => {
                        self.lock().opened -= 1;
                        self.returned.notify_one();
                        Err(e.into())
                    }
                };
            }
            slots = self
                .returned
                .wait(slots)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A connection lent by the pool; back to it when dropped.
struct Pooled<'a> {
    pool: &'a Pool,
    conn: Option<Connection>,
}

impl std::ops::Deref for Pooled<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn.as_ref().expect("present until dropped")
    }
}

impl std::ops::DerefMut for Pooled<'_> {
    fn deref_mut(&mut self) -> &mut Connection {
        self.conn.as_mut().expect("present until dropped")
    }
}

impl Drop for Pooled<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            self.pool.lock().idle.push(conn);
            self.pool.returned.notify_one();
        }
    }
}

fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    // The common case, an up-to-date database, takes no write lock.
    let current: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if usize::try_from(current).is_ok_and(|v| v >= MIGRATIONS.len()) {
        return Ok(());
    }
    // Write-ahead logging lets readers and a writer work at once; the mode is stored in the
    // file, so it is set once, with the first migration (it cannot change inside a transaction).
    if current == 0 {
        conn.pragma_update(None, "journal_mode", "WAL")?;
    }
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let applied: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    for (version, sql) in (1i64..)
        .zip(MIGRATIONS)
        .skip(usize::try_from(applied).unwrap_or(0))
    {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", version)?;
    }
    tx.commit()?;
    Ok(())
}

/// Seconds since the Unix epoch.
#[must_use]
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `length` decimal digits from the operating system's CSPRNG, without modulo bias.
pub fn random_digits(length: usize) -> Result<String, StoreError> {
    let mut out = String::with_capacity(length);
    let mut buf = [0u8; 32];
    while out.len() < length {
        getrandom::fill(&mut buf).map_err(StoreError::Random)?;
        // 250 is the largest multiple of 10 below 256: rejecting 250..=255 keeps digits uniform.
        for b in buf.iter().filter(|b| **b < 250) {
            if out.len() == length {
                break;
            }
            out.push(char::from(b'0' + b % 10));
        }
    }
    Ok(out)
}

/// A new device id: `dev_` and 16 random hex digits.
pub fn new_device_id() -> Result<String, StoreError> {
    new_id("dev")
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

/// Creates a pending code, unique among pending codes.
pub fn create_code(
    conn: &mut Connection,
    workspace: Option<&str>,
    ttl: Duration,
    length: usize,
) -> Result<CodeRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    let expires_at = now.saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
    let code = loop {
        let candidate = random_digits(length)?;
        let taken: bool = tx.query_row(
            "SELECT EXISTS (SELECT 1 FROM pairing_codes
               WHERE code = ?1 AND redeemed_at IS NULL AND expires_at > ?2)",
            params![candidate, now],
            |r| r.get(0),
        )?;
        if !taken {
            break candidate;
        }
    };
    tx.execute(
        "INSERT INTO pairing_codes (code, workspace, created_at, expires_at) VALUES (?1, ?2, ?3, ?4)",
        params![code, workspace, now, expires_at],
    )?;
    tx.commit()?;
    Ok(CodeRow {
        code,
        workspace: workspace.map(str::to_owned),
        expires_at,
    })
}

/// Redeems a pending, unexpired code once and creates the device.
pub fn redeem_code(conn: &mut Connection, code: &str, name: &str) -> Result<DeviceRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now();
    let pending: Option<(i64, Option<String>, i64)> = tx
        .query_row(
            "SELECT id, workspace, expires_at FROM pairing_codes
              WHERE code = ?1 AND redeemed_at IS NULL ORDER BY expires_at DESC LIMIT 1",
            params![code],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    let Some((id, workspace, expires_at)) = pending else {
        return Err(StoreError::InvalidCode);
    };
    if expires_at <= now {
        return Err(StoreError::CodeExpired);
    }
    let device_id = new_device_id()?;
    let changed = tx.execute(
        "UPDATE pairing_codes SET redeemed_at = ?1, device_id = ?2 WHERE id = ?3 AND redeemed_at IS NULL",
        params![now, device_id, id],
    )?;
    if changed != 1 {
        return Err(StoreError::InvalidCode);
    }
    tx.execute(
        "INSERT INTO devices (device_id, name, workspace, paired_at) VALUES (?1, ?2, ?3, ?4)",
        params![device_id, name, workspace, now],
    )?;
    tx.commit()?;
    Ok(DeviceRow {
        device_id,
        name: name.to_owned(),
        workspace,
        paired_at: now,
        revoked_at: None,
    })
}

/// Devices (revoked ones included) and pending codes, optionally of one workspace.
pub fn list(
    conn: &mut Connection,
    workspace: Option<&str>,
) -> Result<(Vec<DeviceRow>, Vec<CodeRow>), StoreError> {
    let now = now();
    let mut devices = conn.prepare(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices
          WHERE ?1 IS NULL OR workspace = ?1 ORDER BY paired_at, device_id",
    )?;
    let devices = devices
        .query_map(params![workspace], device_row)?
        .collect::<Result<Vec<_>, _>>()?;
    let mut codes = conn.prepare(
        "SELECT code, workspace, expires_at FROM pairing_codes
          WHERE redeemed_at IS NULL AND expires_at > ?2 AND (?1 IS NULL OR workspace = ?1)
          ORDER BY expires_at, id",
    )?;
    let codes = codes
        .query_map(params![workspace, now], |r| {
            Ok(CodeRow {
                code: r.get(0)?,
                workspace: r.get(1)?,
                expires_at: r.get(2)?,
            })
        })?
        .collect::<Result<Vec<_>, _>>()?;
    Ok((devices, codes))
}

/// Reads a row of `SELECT device_id, name, workspace, paired_at, revoked_at FROM devices`.
fn device_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeviceRow> {
    Ok(DeviceRow {
        device_id: r.get(0)?,
        name: r.get(1)?,
        workspace: r.get(2)?,
        paired_at: r.get(3)?,
        revoked_at: r.get(4)?,
    })
}

/// The device as it is, for a dry run of a revocation.
pub fn device(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
    conn.query_row(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices WHERE device_id = ?1",
        params![device_id],
        device_row,
    )
    .optional()?
    .ok_or_else(|| StoreError::NotFound(device_id.to_owned()))
}

/// Revokes a device; revoking a revoked device changes nothing and returns it.
pub fn revoke(conn: &mut Connection, device_id: &str) -> Result<DeviceRow, StoreError> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    tx.execute(
        "UPDATE devices SET revoked_at = ?1 WHERE device_id = ?2 AND revoked_at IS NULL",
        params![now(), device_id],
    )?;
    let row = tx
        .query_row(
            "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices WHERE device_id = ?1",
            params![device_id],
            device_row,
        )
        .optional()?
        .ok_or_else(|| StoreError::NotFound(device_id.to_owned()))?;
    tx.commit()?;
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_digits_of_the_right_length() {
        for len in [4, 6, 10] {
            let d = random_digits(len).unwrap();
            assert_eq!(d.len(), len);
            assert!(d.bytes().all(|b| b.is_ascii_digit()));
        }
    }

    #[test]
    fn migrations_are_versioned_and_rerunnable() {
        let dir = std::env::temp_dir().join(format!("demo-app-migrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.db");
        let _ = std::fs::remove_file(&path);
        let latest = u32::try_from(MIGRATIONS.len()).unwrap();
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), latest);
        drop(s);
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), latest);
        drop(s);
        // A database of the first version gets the later migrations only.
        let _ = std::fs::remove_file(&path);
        let old = Connection::open(&path).unwrap();
        old.execute_batch(MIGRATIONS[0]).unwrap();
        old.pragma_update(None, "user_version", 1).unwrap();
        old.execute(
            "INSERT INTO devices (device_id, name, paired_at) VALUES ('d1', 'phone', 0)",
            [],
        )
        .unwrap();
        drop(old);
        let s = Store::open(&path).unwrap();
        assert_eq!(s.schema_version().unwrap(), latest);
        drop(s);
        let kept = Connection::open(&path).unwrap();
        let devices: i64 = kept
            .query_row("SELECT count(*) FROM devices", [], |r| r.get(0))
            .unwrap();
        assert_eq!(devices, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_code_pairs_once_then_is_invalid() {
        let store = Store::in_memory().unwrap();
        let mut conn = store.pool.get().unwrap();
        let code = create_code(&mut conn, Some("home"), Duration::from_secs(60), 6).unwrap();
        let dev = redeem_code(&mut conn, &code.code, "phone").unwrap();
        assert!(dev.device_id.starts_with("dev_"));
        assert_eq!(dev.workspace.as_deref(), Some("home"));
        assert!(matches!(
            redeem_code(&mut conn, &code.code, "phone"),
            Err(StoreError::InvalidCode)
        ));
        let (devices, codes) = list(&mut conn, None).unwrap();
        assert_eq!(devices.len(), 1);
        assert!(codes.is_empty());
        let revoked = revoke(&mut conn, &dev.device_id).unwrap();
        assert!(revoked.revoked_at.is_some());
        assert!(matches!(
            revoke(&mut conn, "dev_x"),
            Err(StoreError::NotFound(_))
        ));
    }

    #[test]
    fn expired_codes_are_refused() {
        let store = Store::in_memory().unwrap();
        let mut conn = store.pool.get().unwrap();
        let code = create_code(&mut conn, None, Duration::ZERO, 6).unwrap();
        assert!(matches!(
            redeem_code(&mut conn, &code.code, "x"),
            Err(StoreError::CodeExpired)
        ));
    }

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

/// A `[[stores]]` entry of kind `sqlite`: its keys and values in the demo's database, kept
/// across restarts, each store apart from the others.
#[derive(Debug, Clone)]
pub struct SqliteKv {
    store: Store,
    name: String,
}

impl SqliteKv {
    /// The store `name` in `store`'s database.
    #[must_use]
    pub fn new(store: Store, name: impl Into<String>) -> Self {
        Self {
            store,
            name: name.into(),
        }
    }

    fn run<T, F>(
        &self,
        f: F,
    ) -> futures_util::future::BoxFuture<'_, Result<T, tool_runtime::ToolError>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> rusqlite::Result<T> + Send + 'static,
    {
        let name = self.name.clone();
        Box::pin(async move {
            self.store
                .run(move |c| f(c, &name).map_err(StoreError::Sqlite))
                .await
                .map_err(tool_runtime::ToolError::internal)
        })
    }
}

impl tool_runtime::toolset::KeyValue for SqliteKv {
    fn read<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<
        'a,
        Result<Option<serde_json::Value>, tool_runtime::ToolError>,
    > {
        let key = key.to_owned();
        let read = self.run(move |c, store| {
            c.query_row(
                "SELECT value FROM kv WHERE store = ?1 AND key = ?2",
                params![store, key],
                |r| r.get::<_, String>(0),
            )
            .optional()
        });
        Box::pin(async move {
            Ok(read
                .await?
                .and_then(|text| serde_json::from_str(&text).ok()))
        })
    }

    fn write<'a>(
        &'a self,
        key: &'a str,
        value: serde_json::Value,
    ) -> futures_util::future::BoxFuture<'a, Result<(), tool_runtime::ToolError>> {
        let (key, value) = (key.to_owned(), value.to_string());
        let written = self.run(move |c, store| {
            c.execute(
                "INSERT INTO kv (store, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
                params![store, key, value],
            )
        });
        Box::pin(async move { written.await.map(|_| ()) })
    }

    fn list<'a>(
        &'a self,
        prefix: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<Vec<String>, tool_runtime::ToolError>> {
        let prefix = prefix.to_owned();
        self.run(move |c, store| {
            // Compared as text, not with LIKE, whose `%` and `_` a prefix may contain.
            let mut statement = c.prepare(
                "SELECT key FROM kv WHERE store = ?1 AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
            )?;
            let keys = statement.query_map(params![store, prefix], |r| r.get(0))?;
            keys.collect()
        })
    }

    fn delete<'a>(
        &'a self,
        key: &'a str,
    ) -> futures_util::future::BoxFuture<'a, Result<bool, tool_runtime::ToolError>> {
        let key = key.to_owned();
        let deleted = self.run(move |c, store| {
            c.execute(
                "DELETE FROM kv WHERE store = ?1 AND key = ?2",
                params![store, key],
            )
        });
        Box::pin(async move { Ok(deleted.await? > 0) })
    }
}
