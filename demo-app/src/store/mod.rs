//! The demo app's data, one trait per concern ([`DeviceStore`], [`ChannelStore`],
//! [`TaskStore`]), each with an engine on SQLite ([`sqlite`], embedded, the default) and one on
//! PostgreSQL ([`postgres`], which several replicas share). [`Stores`] is the one handle an
//! application builds, on either database, and hands out.

mod channels;
mod devices;
pub mod postgres;
pub mod sqlite;
mod tasks;

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tool_runtime::ToolError;
use tool_runtime::postgres::Postgres;

pub use channels::{Channel, ChannelStore, Delivery, LOG, StoredChannels};
pub use devices::{
    CodeRow, DeviceListing, DeviceRow, DeviceStore, Devices, new_device_id, random_digits,
};
pub use postgres::{PostgresChannels, PostgresDevices, PostgresKv, PostgresTasks};
pub use sqlite::{SqliteChannels, SqliteDevices, SqliteKv, SqliteTasks, Store};
pub(crate) use tasks::invalid_schedule;
pub use tasks::{Claim, Schedule, ScheduleType, Task, TaskStore, Tasks};

/// The demo's data on one database: the device tools take [`devices`](Self::devices), the
/// channels [`channels`](Self::channels), the scheduler [`tasks`](Self::tasks). Cheap to clone.
#[derive(Debug, Clone)]
pub struct Stores {
    /// Pairing codes and devices.
    pub devices: Devices,
    /// Channels and their deliveries.
    pub channels: StoredChannels,
    database: Database,
}

/// The database a [`Stores`] keeps its data in.
#[derive(Debug, Clone)]
pub enum Database {
    /// An embedded SQLite file (or, for tests, memory): one process's.
    Sqlite(Store),
    /// PostgreSQL, which several replicas share.
    Postgres(Postgres),
}

impl Stores {
    /// The data in the SQLite file at `path`, created and migrated if needed.
    pub fn sqlite(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Store::open(path).map(Self::from)
    }

    /// The data in an in-memory SQLite database, for tests.
    pub fn in_memory() -> Result<Self, StoreError> {
        Store::in_memory().map(Self::from)
    }

    /// The data in PostgreSQL, its schema migrated first (once, however many replicas start at
    /// the same time).
    pub async fn postgres(postgres: &Postgres) -> Result<Self, ToolError> {
        postgres::migrate(postgres).await?;
        PostgresTasks::migrate(postgres).await?;
        Ok(Self {
            devices: Devices(Arc::new(PostgresDevices(postgres.clone()))),
            channels: StoredChannels(Arc::new(PostgresChannels(postgres.clone()))),
            database: Database::Postgres(postgres.clone()),
        })
    }

    /// The database the data is in.
    #[must_use]
    pub fn database(&self) -> &Database {
        &self.database
    }

    /// The scheduler's tasks, in the same database.
    #[must_use]
    pub fn tasks(&self) -> Tasks {
        match &self.database {
            Database::Sqlite(store) => Tasks(Arc::new(SqliteTasks(store.clone()))),
            Database::Postgres(postgres) => Tasks(Arc::new(PostgresTasks(postgres.clone()))),
        }
    }
}

/// The data in an open SQLite database.
impl From<Store> for Stores {
    fn from(store: Store) -> Self {
        Self {
            devices: Devices(Arc::new(SqliteDevices(store.clone()))),
            channels: StoredChannels(Arc::new(SqliteChannels(store.clone()))),
            database: Database::Sqlite(store),
        }
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

/// The value of `key` in the key-value store `store` from its stored JSON text. Text that is not
/// JSON (written to the database by other hands) is an internal error naming the store and the
/// key, not a missing value.
pub(crate) fn parse_stored(
    store: &str,
    key: &str,
    text: &str,
) -> Result<serde_json::Value, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::internal(format!(
            "the value of `{key}` in the key-value store `{store}` is not JSON: {e}"
        ))
    })
}

/// Unix seconds as RFC 3339 in UTC: `2026-12-24T18:00:00Z`.
#[must_use]
pub fn rfc3339(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default()
}
