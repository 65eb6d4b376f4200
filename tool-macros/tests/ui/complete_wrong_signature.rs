use tool_runtime::prompt;

fn names(prefix: &str) -> Vec<String> {
    vec![prefix.to_owned()]
}

/// Greet someone.
#[prompt]
async fn greet(#[arg(complete = names)] name: String) -> String {
    format!("Greet {name}")
}

fn main() {}
