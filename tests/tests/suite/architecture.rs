//! The module structure of `tool-runtime`, read from its source: the top-level modules import
//! each other one way, with no circle; no front end imports another; only `app`, which composes
//! them, imports several, and nothing imports `app`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Front ends: adapters over the core.
const FRONT_ENDS: [&str; 4] = ["agent", "cli", "http", "mcp"];

/// What composes the front ends: the command line with `serve`, `mcp`, `agent` and `chat`, and
/// the router that mounts `/mcp` and `/agent` beside the tool routes.
const COMPOSITION: &str = "app";

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
/// (`Caller` → `tool`), so `crate::Caller` counts as an import of `tool`.
fn root_names(lib: &str, modules: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let text = lib.replace('\n', " ");
    for statement in text.split(';') {
        let Some(path) = statement.trim().strip_prefix("pub use ") else {
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
                names.insert(name.to_owned(), top.to_owned());
            }
        }
    }
    names
}

/// The top-level modules each top-level module imports (`crate::x`, `crate::{x, y}` and root
/// re-exports), with one place each import is made; unit tests are left out.
fn imports() -> BTreeMap<String, BTreeMap<String, String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tool-runtime/src");
    let mut files = Vec::new();
    source_files(&src, &mut files);
    let top_of = |file: &Path| {
        let rel = file.strip_prefix(&src).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        first.trim_end_matches(".rs").to_owned()
    };
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_of(f))
        .filter(|m| m != "lib")
        .collect();
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let roots = root_names(&lib, &modules);
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for file in &files {
        let from = top_of(file);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        let code = text
            .split("\n#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        for (n, line) in code.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (i, _) in line.match_indices("crate::") {
                let rest = &line[i + "crate::".len()..];
                let named: Vec<&str> = match rest.strip_prefix('{') {
                    Some(group) => group
                        .split('}')
                        .next()
                        .unwrap_or_default()
                        .split(',')
                        .map(|p| p.trim().split("::").next().unwrap_or_default())
                        .collect(),
                    None => vec![
                        rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                            .next()
                            .unwrap_or_default(),
                    ],
                };
                for name in named {
                    let to = if modules.contains(name) {
                        name.to_owned()
                    } else if let Some(top) = roots.get(name) {
                        top.clone()
                    } else {
                        continue;
                    };
                    if to != from {
                        let at =
                            format!("{}:{}", file.strip_prefix(&src).unwrap().display(), n + 1);
                        graph
                            .entry(from.clone())
                            .or_default()
                            .entry(to)
                            .or_insert(at);
                    }
                }
            }
        }
    }
    graph
}

/// A circle through `start`, if there is one: the modules in order.
fn circle(
    graph: &BTreeMap<String, BTreeMap<String, String>>,
    start: &str,
    at: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    for next in graph.get(at).into_iter().flat_map(BTreeMap::keys) {
        if next == start {
            let mut found = path.clone();
            found.push(next.clone());
            return Some(found);
        }
        if !path.contains(next) {
            path.push(next.clone());
            if let Some(found) = circle(graph, start, next, path) {
                return Some(found);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn top_level_modules_import_each_other_one_way() {
    let graph = imports();
    assert!(
        graph
            .get("pipeline")
            .is_some_and(|m| m.contains_key("catalog")),
        "the scan finds imports: {graph:#?}"
    );
    for module in graph.keys() {
        if let Some(found) = circle(&graph, module, module, &mut vec![module.clone()]) {
            let steps: Vec<String> = found
                .windows(2)
                .map(|w| format!("{} -> {} ({})", w[0], w[1], graph[&w[0]][&w[1]]))
                .collect();
            panic!("a circle of imports:\n  {}", steps.join("\n  "));
        }
    }
}

#[test]
fn no_front_end_imports_another_and_only_the_application_composes_them() {
    let graph = imports();
    assert!(
        graph
            .get(COMPOSITION)
            .is_some_and(|m| FRONT_ENDS.iter().all(|f| m.contains_key(*f))),
        "`{COMPOSITION}` composes every front end: {graph:#?}"
    );
    let mut crossing = Vec::new();
    for (from, imported) in &graph {
        for (to, at) in imported {
            let front_to_front =
                FRONT_ENDS.contains(&from.as_str()) && FRONT_ENDS.contains(&to.as_str());
            let core_to_front = !FRONT_ENDS.contains(&from.as_str())
                && from != COMPOSITION
                && FRONT_ENDS.contains(&to.as_str());
            if front_to_front || core_to_front || to == COMPOSITION {
                crossing.push(format!("{from} -> {to} ({at})"));
            }
        }
    }
    assert!(
        crossing.is_empty(),
        "imports against the layering: {crossing:#?}"
    );
}
