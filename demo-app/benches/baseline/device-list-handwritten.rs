//! The baseline of the start-up benchmark (`benches/startup.rs`, `tests/startup_instructions.sh`):
//! `device-list --json` written by hand with clap and rusqlite, no tool framework. Same
//! database, same queries, same JSON shape of the result. A binary of the demo's package so that
//! the bench finds it as `CARGO_BIN_EXE_device-list-handwritten`.

use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, params};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let matches = tool_runtime::app::cli::clap::Command::new("device-list-handwritten")
        .version(env!("CARGO_PKG_VERSION"))
        .arg(
            tool_runtime::app::cli::clap::Arg::new("db")
                .long("db")
                .default_value("./demo-app.db"),
        )
        .arg(
            tool_runtime::app::cli::clap::Arg::new("json")
                .long("json")
                .action(tool_runtime::app::cli::clap::ArgAction::SetTrue),
        )
        .get_matches();
    let conn = Connection::open(matches.get_one::<String>("db").expect("has a default"))?;
    let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs())?;
    let mut stmt = conn.prepare(
        "SELECT device_id, name, workspace, paired_at, revoked_at FROM devices ORDER BY paired_at, device_id",
    )?;
    let devices = stmt
        .query_map([], |r| {
            Ok(
                json!({"device_id": r.get::<_, String>(0)?, "name": r.get::<_, String>(1)?,
                      "workspace": r.get::<_, Option<String>>(2)?, "paired_at": r.get::<_, i64>(3)?,
                      "revoked_at": r.get::<_, Option<i64>>(4)?}),
            )
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut stmt = conn.prepare(
        "SELECT code, workspace, expires_at FROM pairing_codes WHERE redeemed_at IS NULL AND expires_at > ?1 ORDER BY expires_at, id",
    )?;
    let codes = stmt
        .query_map(params![now], |r| {
            Ok(json!({"code_hint": r.get::<_, String>(0)?, "workspace": r.get::<_, Option<String>>(1)?,
                      "expires_at": r.get::<_, i64>(2)?}))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    println!("{}", json!({"devices": devices, "pending_codes": codes}));
    Ok(())
}
