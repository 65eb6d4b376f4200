use tool_runtime::{prompt, resource};

#[derive(serde::Deserialize)]
struct Range {
    from: u32,
    to: u32,
}

/// Lines of a file.
#[resource("files://{path}/{range}")]
async fn lines(path: String, range: Range) -> String {
    format!("{path} {} {}", range.from, range.to)
}

/// Summarize a range.
#[prompt]
async fn summarize(range: Option<Range>) -> String {
    range.map(|r| format!("{} {}", r.from, r.to)).unwrap_or_default()
}

fn main() {}
