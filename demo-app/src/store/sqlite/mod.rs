//! The engine on an embedded SQLite database: a small pool of connections (`pool`), the
//! schema's migrations (`migrations`), pairing codes and devices ([`SqliteDevices`]), channels
//! ([`SqliteChannels`]), scheduled tasks ([`SqliteTasks`]) and the key-value stores of
//! `[[stores]]` ([`SqliteKv`]).

mod channels;
mod devices;
mod kv;
mod migrations;
mod pool;
mod tasks;

use std::path::Path;
use std::sync::Arc;

use rusqlite::Connection;

pub use channels::SqliteChannels;
pub use devices::SqliteDevices;
pub use kv::SqliteKv;
use migrations::migrate;
use pool::{BUSY_TIMEOUT, OpenFn, Pool};
pub use tasks::SqliteTasks;

use super::StoreError;

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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::devices::{create_code, list, redeem_code};
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
