//! The generated code names everything by absolute path: shadowing the prelude changes nothing.
//! (`Some` is not shadowed here: schemars' derive names it bare when a field has a default.)
#![allow(dead_code)]

struct Option;
struct Result;
struct Box;

mod tools {
    // Brings the shadowing `Option`, `Result`, `Box`, ... into this module, over the prelude's.
    #[allow(unused_imports)]
    use super::*;
    use tool_runtime::prelude::*;

    struct Store;

    /// Add, with every prelude name shadowed in the enclosing module.
    #[tool(annotations(read_only), tags("math"), timeout = "1s")]
    pub async fn add(
        /// First
        #[arg(range(min = 0, max = 10))]
        a: i64,
        /// Second
        #[arg(default = 2)]
        b: i64,
        /// Optional note
        note: ::std::option::Option<::std::string::String>,
        ctx: &CallContext,
    ) -> ::std::result::Result<i64, ToolError> {
        let _ = (note, ctx);
        ::std::result::Result::Ok(a + b)
    }

}

fn main() {
    assert_eq!(tools::add::NAME, "add");
    let _ = tools::add::descriptor();
}
