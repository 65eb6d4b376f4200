//! The module structure of `tool-runtime`, read from its source and held to the layers
//! ARCHITECTURE.md draws. The drawing's line (`app -> agent, cli, http, mcp -> ... -> tool`) is
//! the one table of layers: every top-level module sits in exactly one of them, and imports
//! only modules of the layers below its own, so no two modules of a layer (no two front ends)
//! import each other and no circle can form. Above the registry, the catalogue and the
//! pipeline are reached only through the registry's face (`crate::registry::...`), save for the
//! exceptions named below, each with its reason.

use std::collections::BTreeSet;
use std::path::Path;

use tool_test_support::modules::{File, circles_in, edges, files, folders};

/// The document that draws the layers.
const DOCUMENT: &str = "ARCHITECTURE.md";

/// How the drawing's line starts: the top layer, then an arrow.
const DRAWING_STARTS: &str = "app -> ";

/// The module every module above it goes through to reach the ones in `BEHIND_REGISTRY`.
const REGISTRY: &str = "registry";

/// What only the registry and the modules below it import.
const BEHIND_REGISTRY: [&str; 2] = ["catalog", "pipeline"];

/// Imports allowed against the rules: the importing module, the start of the imported path
/// (after `crate::`), and why.
const EXCEPTIONS: &[(&str, &str, &str)] = &[];

/// One `crate::` path in a module's source.
#[derive(Debug)]
struct Import {
    /// The top-level module whose file has it.
    from: String,
    /// The top-level module it names (for a name `lib.rs` re-exports, the module it comes from).
    to: String,
    /// The path after `crate::`, in full (`tool::context::Caller`, `toolset::Toolset`).
    path: String,
    /// `file:line`, relative to `tool-runtime/src`.
    at: String,
}

/// The layers of the drawing, top first: the modules of each.
fn drawn_layers() -> Vec<Vec<String>> {
    let doc_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(DOCUMENT);
    let doc = std::fs::read_to_string(&doc_path).unwrap();
    let line = doc
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with(DRAWING_STARTS))
        .unwrap_or_else(|| panic!("{DOCUMENT} has no line starting `{DRAWING_STARTS}`"));
    line.split("->")
        .map(|layer| {
            layer
                .split(',')
                .map(|m| m.trim().trim_matches('`').to_owned())
                .filter(|m| !m.is_empty())
                .collect()
        })
        .collect()
}

/// The source files of `tool-runtime`.
fn source() -> Vec<File> {
    files(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src"))
}

/// Its top-level modules: its directories and files, `lib.rs` aside.
fn top_modules(files: &[File]) -> BTreeSet<String> {
    files
        .iter()
        .filter_map(|f| f.module().first().cloned())
        .collect()
}

/// Every path from one top-level module into another (unit tests left out), as the imports
/// between the children of the crate's root.
fn imports() -> Vec<Import> {
    let mut found = Vec::new();
    for (from, targets) in edges(&source(), &[]) {
        for (to, places) in targets {
            for place in places {
                let (at, path) = place.split_once(" crate::").unwrap();
                found.push(Import {
                    from: from.clone(),
                    to: to.clone(),
                    path: path.to_owned(),
                    at: at.to_owned(),
                });
            }
        }
    }
    found
}

/// The exception that allows `import`, if one does.
fn exception(import: &Import) -> Option<&'static (&'static str, &'static str, &'static str)> {
    EXCEPTIONS.iter().find(|(from, path, _)| {
        import.from == *from
            && import
                .path
                .strip_prefix(path)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
    })
}

#[test]
fn the_drawing_places_every_module_once() {
    let layers = drawn_layers();
    let modules = top_modules(&source());
    let drawn: Vec<&String> = layers.iter().flatten().collect();
    let unique: BTreeSet<String> = drawn.iter().map(|m| (*m).clone()).collect();
    assert_eq!(
        drawn.len(),
        unique.len(),
        "{DOCUMENT}'s drawing names a module twice: {layers:?}"
    );
    let missing: Vec<&String> = modules.difference(&unique).collect();
    let unknown: Vec<&String> = unique.difference(&modules).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "{DOCUMENT}'s drawing `{DRAWING_STARTS}...` must name every top-level module of \
         tool-runtime/src once: not drawn {missing:?}, not a module {unknown:?}"
    );
    assert!(
        layers.iter().any(|l| l.iter().any(|m| m == REGISTRY)),
        "the drawing has the `{REGISTRY}` layer: {layers:?}"
    );
}

#[test]
fn every_module_imports_only_from_the_layers_below_its_own() {
    let layers = drawn_layers();
    let layer_of = |module: &str| layers.iter().position(|l| l.iter().any(|m| m == module));
    let found = imports();
    assert!(
        found
            .iter()
            .any(|i| i.from == "pipeline" && i.to == "catalog"),
        "the scan finds imports: {found:#?}"
    );
    let registry = layer_of(REGISTRY).expect("the drawing has the registry");
    let mut broken = Vec::new();
    let mut used = BTreeSet::new();
    for import in &found {
        let (Some(from), Some(to)) = (layer_of(&import.from), layer_of(&import.to)) else {
            // A module the drawing misses: `the_drawing_places_every_module_once` names it.
            continue;
        };
        let rule = if to <= from {
            let place = if to == from {
                "in the same layer"
            } else {
                "above it"
            };
            Some(format!(
                "a module imports only from the layers below its own, and `{}` is {place} \
                 (`{}`)",
                import.to,
                layers[to].join(", ")
            ))
        } else if from < registry && BEHIND_REGISTRY.contains(&import.to.as_str()) {
            Some(format!(
                "above the {REGISTRY}, `{}` is reached only through the {REGISTRY} \
                 (`crate::{REGISTRY}::...` re-exports what is shared)",
                import.to
            ))
        } else {
            None
        };
        let Some(rule) = rule else { continue };
        match exception(import) {
            Some(allowed) => {
                used.insert(*allowed);
            }
            None => broken.push(format!(
                "{}: `crate::{}` ({} -> {}): {rule}",
                import.at, import.path, import.from, import.to
            )),
        }
    }
    assert!(
        broken.is_empty(),
        "imports against the layers of {DOCUMENT} (`{}`):\n  {}",
        layers
            .iter()
            .map(|l| l.join(", "))
            .collect::<Vec<_>>()
            .join(" -> "),
        broken.join("\n  ")
    );
    let stale: Vec<_> = EXCEPTIONS.iter().filter(|e| !used.contains(*e)).collect();
    assert!(
        stale.is_empty(),
        "exceptions no import needs any more (remove them): {stale:#?}"
    );
}

/// The core: the modules below the front ends that every build compiles, whatever front ends
/// it has.
const CORE: [&str; 9] = [
    "catalog", "layers", "pipeline", "prompt", "registry", "resource", "schema", "task", "tool",
];

/// The front ends' features, which the core never tests: what a front end needs from below is
/// a type it is given.
const FRONT_END_FEATURES: [&str; 5] = ["cli", "http", "mcp", "agent", "mcp-client"];

#[test]
fn the_core_tests_no_front_end_feature() {
    let mut found = Vec::new();
    let mut outside = 0;
    for file in &source() {
        for (n, line) in file.code().lines().enumerate() {
            let gates = FRONT_END_FEATURES.iter().any(|f| {
                let quoted = format!("\"{f}\"");
                line.match_indices(&quoted).any(|(i, _)| {
                    line[..i].trim_end().ends_with('=')
                        && line[..i]
                            .trim_end()
                            .trim_end_matches('=')
                            .trim_end()
                            .ends_with("feature")
                })
            });
            if !gates {
                continue;
            }
            if (file.module().first()).is_some_and(|top| CORE.contains(&top.as_str())) {
                found.push(format!("{}:{}: {}", file.name(), n + 1, line.trim()));
            } else {
                outside += 1;
            }
        }
    }
    // The front ends and their shared floor (`front/`) do gate: the scan sees gates.
    assert!(
        outside > 20,
        "the scan finds the front ends' gates: {outside}"
    );
    assert!(
        found.is_empty(),
        "the core ({CORE:?}) tests a front end's feature; give it a type instead, or move the \
         code to the front end or their shared floor (`front/`):\n  {}",
        found.join("\n  ")
    );
}

#[test]
fn the_files_of_each_folder_import_one_another_without_a_circle() {
    let files = source();
    let mcp = edges(&files, &["mcp".to_owned()]);
    assert!(
        mcp.get("mcp/client_items")
            .is_some_and(|to| to.contains_key("mcp/client")),
        "the scan finds the imports between the files of a folder: {mcp:#?}"
    );
    // The top-level modules are held to the drawing's layers above.
    let folders = folders(&files).into_iter().filter(|f| !f.is_empty());
    let found = circles_in(&files, folders);
    assert!(
        found.is_empty(),
        "files of one folder of tool-runtime import one another in a circle; move what one \
         imports from the other to the file that owns it, or to a file both import:\n  {}",
        found.join("\n  ")
    );
}
