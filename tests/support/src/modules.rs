//! The imports between a crate's modules, read from its source, and the circles they form:
//! the `crate::` and `super::` paths from one module into another, between the top-level
//! modules or between the files of one folder. The roots that declare the modules (`lib.rs`, a
//! folder's `mod.rs`) are left out, a name they re-export counting as the module it comes from;
//! a top-level `main.rs` is the binary, which may import anything. Unit tests are left out.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A source file of a crate.
#[derive(Debug)]
pub struct File {
    /// Its module's path: `["assistant", "web"]` for `assistant/web.rs`, `["store"]` for
    /// `store/mod.rs`, none for `lib.rs`.
    module: Vec<String>,
    /// Its path under `src`, as errors name it.
    name: String,
    /// Its code, comments blanked line for line and unit tests left off.
    code: String,
}

impl File {
    /// Its module's path: `["assistant", "web"]` for `assistant/web.rs`, `["store"]` for
    /// `store/mod.rs`, none for `lib.rs`.
    #[must_use]
    pub fn module(&self) -> &[String] {
        &self.module
    }

    /// Its path under `src`.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its code, comments blanked line for line and unit tests left off.
    #[must_use]
    pub fn code(&self) -> &str {
        &self.code
    }
}

/// The imports between the modules of one folder: importing module, imported module, and
/// where (`assistant/web.rs:12 crate::config::WebConfig`).
pub type Edges = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// The source files of the crate whose `src` folder is `src` (a top-level `main.rs`, the
/// binary, aside).
///
/// # Panics
///
/// When a file cannot be read.
#[must_use]
pub fn files(src: &Path) -> Vec<File> {
    let mut paths = Vec::new();
    source_files(src, &mut paths);
    paths.sort();
    paths
        .iter()
        .filter_map(|path| {
            let rel = path.strip_prefix(src).unwrap();
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            match module.last().map(String::as_str) {
                Some("main") if module.len() == 1 => return None,
                Some("lib") if module.len() == 1 => module.clear(),
                Some("mod") => {
                    module.pop();
                }
                _ => {}
            }
            Some(File {
                module,
                name: rel.display().to_string(),
                code: code_of(&std::fs::read_to_string(path).unwrap()),
            })
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

/// The source with comments blanked out, line for line, and the unit tests (a file's last
/// item) left off.
fn code_of(text: &str) -> String {
    let text = text
        .split("\n#[cfg(test)]\nmod ")
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

/// The path at the start of `text`: `a::b::C` of `a::b::C;`, `a::b::` of `a::b::{C, D}`.
fn path_at(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(text.len());
    &text[..end]
}

/// The paths of the use tree at the start of `text`, each in full after `prefix`:
/// `a::{b, c::{d, e}}` names `a::b`, `a::c::d` and `a::c::e`. Returns the text after the tree.
fn use_tree<'a>(text: &'a str, prefix: &str, out: &mut Vec<String>) -> &'a str {
    let head = path_at(text);
    let rest = &text[head.len()..];
    let path = match head.trim_end_matches(':') {
        "" => prefix.to_owned(),
        head if prefix.is_empty() => head.to_owned(),
        head => format!("{prefix}::{head}"),
    };
    let Some(mut group) = rest.strip_prefix('{') else {
        out.push(path);
        return rest;
    };
    loop {
        group = group.trim_start();
        if let Some(after) = group.strip_prefix('}') {
            return after;
        }
        if group.is_empty() {
            return group;
        }
        group = use_tree(group, &path, out);
        // Past what ends the branch (` as Name`), to the next one.
        let next = group.find([',', '}']).unwrap_or(group.len());
        group = &group[next..];
        group = group.strip_prefix(',').unwrap_or(group);
    }
}

/// Whether what is at `at` in `code` starts a word (is not the end of a longer name or path).
fn starts_word(code: &str, at: usize) -> bool {
    code[..at]
        .chars()
        .next_back()
        .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == ':'))
}

/// Every `crate::` and `super::` path in `file`, as the module path it names from the crate's
/// root (`self` left off), with its line.
fn imports(file: &File) -> Vec<(Vec<String>, usize)> {
    let code = &file.code;
    let mut found = Vec::new();
    for keyword in ["crate::", "super::"] {
        for (i, _) in code.match_indices(keyword) {
            if !starts_word(code, i) {
                continue;
            }
            let mut rest = &code[i + keyword.len()..];
            let mut base: &[String] = &[];
            if keyword == "super::" {
                let mut up = 1;
                while let Some(after) = rest.strip_prefix("super::") {
                    rest = after;
                    up += 1;
                }
                base = &file.module[..file.module.len().saturating_sub(up)];
            }
            let line = code[..i].matches('\n').count() + 1;
            let mut paths = Vec::new();
            use_tree(rest, "", &mut paths);
            for path in paths {
                let mut module = base.to_vec();
                module.extend(
                    path.split("::")
                        .filter(|s| !s.is_empty() && *s != "self")
                        .map(str::to_owned),
                );
                found.push((module, line));
            }
        }
    }
    found
}

/// The names a root (`lib.rs`, a `mod.rs`) takes from its child modules with `use`, by the
/// child they come from (`Stores` → `store`).
fn reexports(root: &File, children: &BTreeSet<String>) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    let text = root.code.replace('\n', " ");
    for statement in text.split(';') {
        let Some((at, _)) =
            (statement.match_indices("use ")).find(|(i, _)| starts_word(statement, *i))
        else {
            continue;
        };
        let mut paths = Vec::new();
        use_tree(statement[at + "use ".len()..].trim_start(), "", &mut paths);
        for path in paths {
            let (Some(child), Some(name)) = (path.split("::").next(), path.rsplit("::").next())
            else {
                continue;
            };
            if children.contains(child) && child != name {
                names.insert(name.to_owned(), child.to_owned());
            }
        }
    }
    names
}

/// The folders, by module path: the crate's root (none) and each directory of modules.
#[must_use]
pub fn folders(files: &[File]) -> BTreeSet<Vec<String>> {
    files
        .iter()
        .filter(|f| !f.module.is_empty())
        .map(|f| f.module[..f.module.len() - 1].to_vec())
        .collect()
}

/// The imports between the child modules of `folder` (its files and directories): from a file
/// in one child, a path into another, directly or through a name the folder's root
/// re-exports. Paths into the root's own items are left out, as the root is.
#[must_use]
pub fn edges(files: &[File], folder: &[String]) -> Edges {
    let depth = folder.len();
    let inside = |module: &[String]| module.len() > depth && module.starts_with(folder);
    let children: BTreeSet<String> = (files.iter())
        .filter(|f| inside(&f.module))
        .map(|f| f.module[depth].clone())
        .collect();
    let names = (files.iter())
        .find(|f| f.module == folder)
        .map(|root| reexports(root, &children))
        .unwrap_or_default();
    let label = |child: &str| {
        let mut path = folder.to_vec();
        path.push(child.to_owned());
        path.join("/")
    };
    let mut edges = Edges::new();
    for file in files.iter().filter(|f| inside(&f.module)) {
        let from = &file.module[depth];
        for (target, line) in imports(file) {
            if !inside(&target) {
                continue;
            }
            let name = &target[depth];
            let Some(to) = (children.get(name)).or_else(|| names.get(name)) else {
                continue;
            };
            if to != from {
                edges
                    .entry(label(from))
                    .or_default()
                    .entry(label(to))
                    .or_default()
                    .push(format!("{}:{line} crate::{}", file.name, target.join("::")));
            }
        }
    }
    edges
}

/// Every circle among `edges` once, as its modules in order from the least of them.
fn circles(edges: &Edges) -> Vec<Vec<String>> {
    fn walk(path: &mut Vec<String>, edges: &Edges, found: &mut Vec<Vec<String>>) {
        let last = &path[path.len() - 1];
        for next in edges.get(last).into_iter().flat_map(BTreeMap::keys) {
            if *next == path[0] {
                found.push(path.clone());
            } else if *next > path[0] && !path.contains(next) {
                path.push(next.clone());
                walk(path, edges, found);
                path.pop();
            }
        }
    }
    let mut found = Vec::new();
    for module in edges.keys() {
        walk(&mut vec![module.clone()], edges, &mut found);
    }
    found
}

/// A circle as `a -> b -> a`, and below it the imports that close it.
fn describe(circle: &[String], edges: &Edges) -> String {
    let mut text = format!("{} -> {}", circle.join(" -> "), circle[0]);
    for (i, from) in circle.iter().enumerate() {
        let to = &circle[(i + 1) % circle.len()];
        for at in &edges[from][to] {
            let _ = write!(text, "\n    {from} -> {to}: {at}");
        }
    }
    text
}

/// The circles of every folder in `folders`, described.
#[must_use]
pub fn circles_in(files: &[File], folders: impl IntoIterator<Item = Vec<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for folder in folders {
        let edges = edges(files, &folder);
        found.extend(circles(&edges).iter().map(|c| describe(c, &edges)));
    }
    found
}
