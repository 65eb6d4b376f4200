//! The module structure of `tool-runtime`, read from its source and held to the layers
//! ARCHITECTURE.md draws. The drawing's line (`app -> agent, cli, http, mcp -> ... -> tool`) is
//! the one table of layers: every top-level module sits in exactly one of them, and imports
//! only modules of the layers below its own, so no two modules of a layer (no two front ends)
//! import each other and no circle can form. Above the registry, the catalogue and the
//! pipeline are reached only through the registry's face (`crate::registry::...`), save for the
//! exceptions named below, each with its reason.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

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
    /// The path after `crate::`, as written (`tool::context::Caller`, `toolset::Toolset`).
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

fn source_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            source_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The names `lib.rs` re-exports at the crate's root, by the module they come from
/// (`Caller` → `tool`, `toolset` → `catalog`), so `crate::Caller` counts as an import of
/// `tool`.
fn root_names(lib: &str, modules: &BTreeSet<String>) -> Vec<(String, String)> {
    let mut names = Vec::new();
    let text = code_of(lib).replace('\n', " ");
    for statement in text.split(';') {
        // After any attribute (`#[cfg(...)]`) before it.
        let Some((_, path)) = statement.split_once("pub use ") else {
            continue;
        };
        let top = path.split("::").next().unwrap_or_default().trim();
        if !modules.contains(top) {
            continue;
        }
        let list = path.rsplit_once("::").map_or(path, |(_, last)| last);
        for name in list
            .trim_matches(|c| c == '{' || c == '}' || c == ' ')
            .split(',')
        {
            let name = name.trim();
            if !name.is_empty() {
                names.push((name.to_owned(), top.to_owned()));
            }
        }
    }
    names
}

/// The path at the start of `text`: `a::b::C` of `a::b::C;`, `a::b` of `a::b::{C, D}`.
fn path_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    text[..end].trim_end_matches(':')
}

/// The paths named right after one `crate::`: one, or one per branch of a `{...}` group
/// (nested groups and groups over several lines included).
fn branches(rest: &str) -> Vec<&str> {
    let Some(group) = rest.strip_prefix('{') else {
        return vec![path_at(rest)];
    };
    let mut found = Vec::new();
    let (mut depth, mut start) = (0usize, 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                found.push(path_at(group[start..i].trim()));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                found.push(path_at(group[start..i].trim()));
                start = i + 1;
            }
            _ => {}
        }
    }
    found.retain(|p| !p.is_empty());
    found
}

/// The source with comments blanked out, line for line, and the unit tests left off.
fn code_of(text: &str) -> String {
    let text = text
        .split("\n#[cfg(test)]\nmod tests")
        .next()
        .unwrap_or_default();
    text.lines()
        .map(|line| {
            if line.trim_start().starts_with("//") {
                ""
            } else {
                line.split(" // ").next().unwrap_or_default()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::` path from one top-level module into another (unit tests left out).
fn imports() -> Vec<Import> {
    let (src, files, modules) = source();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let roots = root_names(&lib, &modules);
    let mut found = Vec::new();
    for file in &files {
        let from = top_of(&src, file);
        if from == "lib" {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for (i, _) in code.match_indices("crate::") {
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let line = code[..i].matches('\n').count() + 1;
            for path in branches(&code[i + "crate::".len()..]) {
                let name = path.split("::").next().unwrap_or_default();
                let to = if modules.contains(name) {
                    name.to_owned()
                } else if let Some((_, top)) = roots.iter().find(|(n, _)| n == name) {
                    top.clone()
                } else {
                    continue;
                };
                if to != from {
                    found.push(Import {
                        from: from.clone(),
                        to,
                        path: path.to_owned(),
                        at: format!("{}:{line}", file.strip_prefix(&src).unwrap().display()),
                    });
                }
            }
        }
    }
    found
}

/// `tool-runtime/src`, its source files in order, and its top-level modules (its directories
/// and files, `lib.rs` aside).
fn source() -> (PathBuf, Vec<PathBuf>, BTreeSet<String>) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    files.sort();
    let modules = files
        .iter()
        .map(|f| top_of(&src, f))
        .filter(|m| m != "lib")
        .collect();
    (src, files, modules)
}

/// The top-level module `file` of `src` belongs to (`lib` for `lib.rs`).
fn top_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_owned()
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
    let (_, _, modules) = source();
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
const CORE: [&str; 8] = [
    "catalog", "layers", "pipeline", "prompt", "registry", "resource", "schema", "tool",
];

/// The front ends' features, which the core never tests: what a front end needs from below is
/// a type it is given.
const FRONT_END_FEATURES: [&str; 5] = ["cli", "http", "mcp", "agent", "mcp-client"];

#[test]
fn the_core_tests_no_front_end_feature() {
    let (src, files, _) = source();
    let mut found = Vec::new();
    let mut outside = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap().display().to_string();
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        for (n, line) in code.lines().enumerate() {
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
            if CORE.contains(&top_of(&src, file).as_str()) {
                found.push(format!("{rel}:{}: {}", n + 1, line.trim()));
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
    use tool_test_support::modules::{circles_in, edges, files, folders};
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let files = files(&src);
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
