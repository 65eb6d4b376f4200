//! Integration tests of tool-runtime, the macro and the demo app; see `tests/` and `ui/`.
