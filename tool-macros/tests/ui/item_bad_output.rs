use tool_runtime::prompt;

/// Count.
#[prompt]
async fn count(n: u32) -> u32 {
    n
}

fn main() {}

/// A report.
#[tool_runtime::resource("reports://latest")]
async fn report() -> std::time::Instant {
    std::time::Instant::now()
}

/// Reports by day.
#[tool_runtime::resource("reports://{day}", list = days)]
async fn by_day(day: String) -> String {
    day
}

fn days(_: u32) -> Vec<String> {
    Vec::new()
}
