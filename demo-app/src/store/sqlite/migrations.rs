//! The schema, as versioned migrations: `PRAGMA user_version` records how many ran.

use rusqlite::{Connection, TransactionBehavior};

use super::StoreError;

/// Versioned schema migrations; `PRAGMA user_version` records how many ran.
pub(super) const MIGRATIONS: &[&str] = &[
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

pub(super) fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Store;

    fn version(store: &Store) -> u32 {
        let conn = store.pool.get().unwrap();
        conn.pragma_query_value(None, "user_version", |r| r.get(0))
            .unwrap()
    }

    #[test]
    fn migrations_are_versioned_and_rerunnable() {
        let dir = std::env::temp_dir().join(format!("demo-app-migrate-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.db");
        let _ = std::fs::remove_file(&path);
        let latest = u32::try_from(MIGRATIONS.len()).unwrap();
        let s = Store::open(&path).unwrap();
        assert_eq!(version(&s), latest);
        drop(s);
        let s = Store::open(&path).unwrap();
        assert_eq!(version(&s), latest);
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
        assert_eq!(version(&s), latest);
        drop(s);
        let kept = Connection::open(&path).unwrap();
        let devices: i64 = kept
            .query_row("SELECT count(*) FROM devices", [], |r| r.get(0))
            .unwrap();
        assert_eq!(devices, 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
