//! The demo's modules import one another in one direction, read from `demo-app/src`: no
//! circle between its top-level modules (`config`, `store`, `assistant`, `tools`, ...), nor
//! between the files of one folder (`assistant/channels.rs`, `assistant/web.rs`, ...). The
//! reading is `tool_test_support::modules`, which the library's architecture test shares.

use std::path::Path;

use tool_test_support::modules::{circles_in, edges, files, folders};

fn source() -> Vec<tool_test_support::modules::File> {
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
}

#[test]
fn the_top_level_modules_import_one_another_without_a_circle() {
    let files = source();
    let top = edges(&files, &[]);
    assert!(
        top.get("resources")
            .is_some_and(|to| to.contains_key("tools")),
        "the scan finds the imports between the top-level modules: {top:#?}"
    );
    let found = circles_in(&files, [Vec::new()]);
    assert!(
        found.is_empty(),
        "demo-app's top-level modules import one another in a circle; move what one imports \
         from the other to the module that owns it:\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_files_of_each_folder_import_one_another_without_a_circle() {
    let files = source();
    let assistant = edges(&files, &["assistant".to_owned()]);
    assert!(
        (assistant.get("assistant/host")).is_some_and(|to| to.contains_key("assistant/web")),
        "the scan finds the imports between the files of a folder: {assistant:#?}"
    );
    let folders = folders(&files).into_iter().filter(|f| !f.is_empty());
    let found = circles_in(&files, folders);
    assert!(
        found.is_empty(),
        "files of one folder of demo-app import one another in a circle; move what one \
         imports from the other to the file that owns it:\n  {}",
        found.join("\n  ")
    );
}
