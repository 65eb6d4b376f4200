//! A few SQLite connections, opened on demand and lent one call at a time.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

use rusqlite::Connection;

use super::StoreError;

/// How long a connection waits for another's write lock before `database is locked`.
pub(super) const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// Opens another connection to the same database.
pub(super) type OpenFn = dyn Fn() -> rusqlite::Result<Connection> + Send + Sync;

/// A few connections, opened on demand. Small enough not to need a pool crate (the ones for
/// rusqlite pin an older rusqlite, and would open connections and a reaper thread at start-up,
/// which a one-shot command pays for).
pub(super) struct Pool {
    open: Box<OpenFn>,
    max: usize,
    slots: Mutex<Slots>,
    returned: Condvar,
}

pub(super) struct Slots {
    idle: Vec<Connection>,
    pub(super) opened: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("max", &self.max)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// A pool of at most `max` connections, `first` among them, more made by `open`.
    pub(super) fn new(first: Connection, max: usize, open: Box<OpenFn>) -> Self {
        Self {
            open,
            max,
            slots: Mutex::new(Slots {
                idle: vec![first],
                opened: 1,
            }),
            returned: Condvar::new(),
        }
    }

    /// An idle connection, a new one while fewer than `max` are open, or the next returned.
    pub(super) fn get(&self) -> Result<Pooled<'_>, StoreError> {
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

    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A connection lent by the pool; back to it when dropped.
pub(super) struct Pooled<'a> {
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
