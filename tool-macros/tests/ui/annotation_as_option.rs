use tool_runtime::prelude::*;

/// Delete a note.
#[tool(destructive)]
async fn delete_note(id: u32) -> u32 {
    id
}

fn main() {}
