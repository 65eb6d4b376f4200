//! Compile-time behaviour of `#[tool]`, `#[resource]` and `#[prompt]`: one mistake per
//! `ui/*.rs`, each with its reviewed `.stderr`, plus cases that must compile.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("ui/pass/*.rs");
}
