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

    /// A device's status, with the prelude's names shadowed too.
    #[tool_runtime::resource("devices://{id}/status{?verbose}", mime = "text/plain")]
    pub async fn status(
        #[arg(complete = ids)] id: u32,
        verbose: ::std::option::Option<bool>,
        ctx: &CallContext,
    ) -> ::std::result::Result<::std::string::String, ToolError> {
        let _ = ctx;
        ::std::result::Result::Ok(::std::format!("{id} {verbose:?}"))
    }

    fn ids(_: tool_runtime::tool::Completing) -> ::std::vec::Vec<::std::string::String> {
        ::std::vec::Vec::new()
    }

    /// Greet someone.
    #[tool_runtime::prompt]
    pub fn greet(name: ::std::string::String) -> ::std::string::String {
        ::std::format!("Greet {name}")
    }
}

fn main() {
    assert_eq!(tools::add::NAME, "add");
    let _ = tools::add::descriptor();
    let _ = tools::status::descriptor();
    let _ = tools::greet::descriptor();
}
