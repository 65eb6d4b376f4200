//! Values that read from one text: the built-in ones, and one's own enums and newtypes that
//! say so.
use tool_runtime::tool::TextValue;
use tool_runtime::{prompt, resource};

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum Shelf {
    Fiction,
    Poetry,
}
impl TextValue for Shelf {}

#[derive(serde::Deserialize)]
struct NoteId(u32);
impl TextValue for NoteId {}

/// A note.
#[resource("notes://{shelf}/{id}{?limit,at}")]
async fn note(shelf: Shelf, id: NoteId, limit: Option<u8>, at: Option<std::net::IpAddr>) -> String {
    let shelf = match shelf {
        Shelf::Fiction => "fiction",
        Shelf::Poetry => "poetry",
    };
    format!("{shelf} {} {limit:?} {at:?}", id.0)
}

/// Recommend from a shelf.
#[prompt]
async fn recommend(shelf: Option<Shelf>, mood: String, initial: char) -> String {
    format!("{} {mood} {initial}", shelf.is_some())
}

fn main() {}
