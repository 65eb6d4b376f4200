//! Compile-time behaviour of `#[tool]`, `#[resource]` and `#[prompt]` (trybuild): one mistake per
//! `ui/*.rs`, each with its reviewed `.stderr`, plus cases that must compile. They are built
//! against tool-runtime without its optional features, as few dependencies as the macros need.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
