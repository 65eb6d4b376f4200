use tool_runtime::prelude::*;

/// Read a note: nothing to confirm.
#[tool(confirm = "Read note {id}?")]
async fn read_note(id: u32) -> u32 {
    id
}

/// Delete a note.
#[tool(annotations(destructive), confirm = "Delete note {note_id} for good?")]
async fn delete_note(id: u32) -> u32 {
    id
}

fn main() {}
