use tool_runtime::prelude::*;

/// Send a message.
#[tool]
async fn send(
    /// Who gets it (a `String` without a default is required already)
    #[arg(required)]
    to: String,
    /// Copy to yourself
    #[arg(required, default = true)]
    copy: bool,
) -> String {
    format!("{to} {copy}")
}

fn main() {}
