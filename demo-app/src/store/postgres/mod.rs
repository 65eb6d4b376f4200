//! The engine on PostgreSQL, which several replicas share: the schema's migrations
//! (`migrations`, component `demo-app` of `Postgres::migrate`), pairing codes and devices
//! ([`PostgresDevices`]), channels ([`PostgresChannels`]), the key-value stores of
//! `[[stores]]` with `kind = "postgres"` ([`PostgresKv`]) and scheduled tasks
//! ([`PostgresTasks`], whose tables are the migrations of their own component,
//! `demo-app/scheduler`).
//!
//! What two replicas could race on is decided in one SQL statement or under a lock of the
//! database, never by reading and then writing from Rust; times are Unix seconds from the
//! database's clock, which every replica reads alike (the replicas' own clocks may disagree).

/// The database's clock in whole Unix seconds, as SQL text for `concat!`: the transaction's
/// start, rounded down as the SQLite engine's clock is. Defined before the modules that use it.
macro_rules! unix_now {
    () => {
        "floor(extract(epoch FROM now()))::bigint"
    };
}

mod channels;
mod devices;
mod kv;
mod migrations;
mod tasks;

pub use channels::PostgresChannels;
pub use devices::PostgresDevices;
pub use kv::PostgresKv;
pub(super) use migrations::migrate;
pub use tasks::PostgresTasks;
