//! The schema, as the versioned migrations of component `demo-app`, applied by
//! `Postgres::migrate` (once, however many replicas start at the same time). The tasks'
//! tables are their own component's (`tasks`).

use tool_runtime::ToolError;
use tool_runtime::postgres::Postgres;

/// The component whose migrations these are, in `tool_schema_migrations`.
const COMPONENT: &str = "demo-app";

/// Versioned schema migrations: never edit one that shipped; append.
const MIGRATIONS: &[&str] = &[
    // 1: codes and devices.
    "CREATE TABLE pairing_codes (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        code text NOT NULL,
        workspace text,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL,
        redeemed_at bigint,
        device_id text
    );
    CREATE INDEX pairing_codes_code ON pairing_codes (code);
    CREATE TABLE devices (
        device_id text PRIMARY KEY,
        name text NOT NULL,
        workspace text,
        paired_at bigint NOT NULL,
        revoked_at bigint
    );",
    // 2: the key-value stores of `[[stores]]` with `kind = \"postgres\"`. The value is the JSON
    // text as written (jsonb would reorder an object's keys).
    "CREATE TABLE kv (
        store text NOT NULL,
        key text NOT NULL,
        value text NOT NULL,
        PRIMARY KEY (store, key)
    );",
    // 3: the assistant's channels and the messages delivered through them.
    "CREATE TABLE channels (
        name text PRIMARY KEY,
        command text NOT NULL,
        enabled boolean NOT NULL,
        workspace text,
        created_at bigint NOT NULL
    );
    CREATE TABLE deliveries (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        channel text NOT NULL,
        chat_id text,
        message text NOT NULL,
        outcome text NOT NULL,
        delivered_at bigint NOT NULL
    );
    CREATE INDEX deliveries_channel ON deliveries (channel, id);",
];

/// Applies the migrations `postgres` has not recorded yet.
pub(in crate::store) async fn migrate(postgres: &Postgres) -> Result<(), ToolError> {
    postgres.migrate(COMPONENT, MIGRATIONS).await
}
