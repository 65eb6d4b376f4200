//! Generates 1,000 `#[tool]` fns for the registry-construction benchmark.

use std::fmt::Write;

fn main() {
    let mut src = String::new();
    for i in 0..1000 {
        let _ = write!(
            src,
            "/// Generated tool number {i}.\n#[tool_runtime::tool]\npub async fn generated_{i:04}(\n    /// A number\n    a: i64,\n) -> i64 {{\n    a + {i}\n}}\n\n"
        );
    }
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    std::fs::write(out.join("thousand_tools.rs"), src).expect("write generated tools");
    println!("cargo::rerun-if-changed=build.rs");
}
