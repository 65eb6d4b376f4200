use tool_runtime::prelude::*;

#[derive(Debug)]
struct DbError;

/// Fetch a row.
#[tool]
async fn fetch() -> Result<i64, DbError> {
    Err(DbError)
}

/// Format a greeting (`fmt::Result` is `Result<(), fmt::Error>`).
#[tool]
async fn greet() -> std::fmt::Result {
    Ok(())
}

fn main() {}
