//! [`PathPolicy`]: which files a tool may touch.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use super::refuse;
use crate::tool::error::{ErrorKind, ToolError};

/// Which files a tool may read or write: those under its roots, reached without leaving them.
///
/// A path is taken relative to the first root unless absolute. It is refused when it is empty
/// or holds a NUL byte, when `..` climbs out of its root, when it lies under no root, when a
/// symbolic link along it leads out of every root (the path is resolved before it is judged),
/// and when it names a device, a FIFO or a socket. [`read`](Self::read) also refuses files
/// larger than [`max_read`](Self::max_read). Each refusal is a `forbidden` [`ToolError`] whose
/// details name the rule (`{"rule": "outside_roots"}`).
///
/// ```
/// use tool_runtime::layers::guard::PathPolicy;
///
/// let dir = std::env::temp_dir();
/// let policy = PathPolicy::new([&dir]);
/// let refused = policy.check("../../etc/passwd").unwrap_err();
/// assert_eq!(refused.details().unwrap()["rule"], "parent_escape");
/// ```
#[derive(Debug, Clone)]
pub struct PathPolicy {
    roots: Vec<PathBuf>,
    max_read: u64,
}

impl PathPolicy {
    /// Files under `roots` (resolved when a path is checked; a root that does not exist
    /// allows nothing); reads up to 10 MiB.
    pub fn new<I, P>(roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        Self {
            roots: roots.into_iter().map(|r| r.as_ref().to_owned()).collect(),
            max_read: 10 * 1024 * 1024,
        }
    }

    /// The largest file [`read`](Self::read) returns.
    #[must_use]
    pub fn max_read(mut self, bytes: u64) -> Self {
        self.max_read = bytes;
        self
    }

    /// The roots, as given.
    #[must_use]
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// The resolved path of an existing file or directory `path` may name.
    pub fn check(&self, path: impl AsRef<Path>) -> Result<PathBuf, ToolError> {
        self.check_in(path.as_ref(), &self.resolved_roots())
    }

    /// The roots that exist, resolved: once per check, whose steps all judge against them.
    fn resolved_roots(&self) -> Vec<PathBuf> {
        self.roots
            .iter()
            .filter_map(|r| r.canonicalize().ok())
            .collect()
    }

    /// [`check`](Self::check) against roots already resolved.
    fn check_in(&self, path: &Path, roots: &[PathBuf]) -> Result<PathBuf, ToolError> {
        let lexical = self.lexical(path, roots)?;
        let resolved = lexical.canonicalize().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                ToolError::not_found(format!("`{}` does not exist", lexical.display()))
            } else {
                ToolError::failed(format!("cannot open `{}`: {e}", lexical.display()))
            }
        })?;
        inside(&resolved, &lexical, roots)?;
        let meta = std::fs::metadata(&resolved)
            .map_err(|e| ToolError::failed(format!("cannot open `{}`: {e}", resolved.display())))?;
        if !meta.is_file() && !meta.is_dir() {
            return Err(refuse(
                "special_file",
                format!(
                    "`{}` is a device, FIFO or socket, not a file",
                    lexical.display()
                ),
                None,
            ));
        }
        Ok(resolved)
    }

    /// The path where a new file `path` names would be created: its directory must exist and
    /// resolve inside a root, and the name must not be an existing link leaving the roots.
    pub fn check_new(&self, path: impl AsRef<Path>) -> Result<PathBuf, ToolError> {
        let roots = self.resolved_roots();
        let lexical = self.lexical(path.as_ref(), &roots)?;
        if lexical.exists() {
            return self.check_in(&lexical, &roots);
        }
        let (Some(parent), Some(name)) = (lexical.parent(), lexical.file_name()) else {
            return Err(refuse("outside_roots", "a root itself is not a file", None));
        };
        let parent = self.check_in(parent, &roots)?;
        let resolved = parent.join(name);
        inside(&resolved, &lexical, &roots)?;
        Ok(resolved)
    }

    /// Reads a regular file under the roots, up to [`max_read`](Self::max_read) bytes.
    pub fn read(&self, path: impl AsRef<Path>) -> Result<Vec<u8>, ToolError> {
        let resolved = self.check(path)?;
        let file = std::fs::File::open(&resolved)
            .map_err(|e| ToolError::failed(format!("cannot open `{}`: {e}", resolved.display())))?;
        let meta = file
            .metadata()
            .map_err(|e| ToolError::failed(format!("cannot read `{}`: {e}", resolved.display())))?;
        if !meta.is_file() {
            return Err(refuse(
                "not_a_file",
                format!("`{}` is not a regular file", resolved.display()),
                None,
            ));
        }
        if meta.len() > self.max_read {
            return Err(too_large(&resolved, self.max_read));
        }
        let mut bytes = Vec::new();
        file.take(self.max_read + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| ToolError::failed(format!("cannot read `{}`: {e}", resolved.display())))?;
        if bytes.len() as u64 > self.max_read {
            return Err(too_large(&resolved, self.max_read));
        }
        Ok(bytes)
    }

    /// The path joined to its root and with `.` and `..` applied, before any link is followed.
    fn lexical(&self, path: &Path, roots: &[PathBuf]) -> Result<PathBuf, ToolError> {
        let raw = path.as_os_str().as_encoded_bytes();
        if raw.is_empty() {
            return Err(refuse("empty", "the path is empty", None));
        }
        if raw.contains(&0) {
            return Err(refuse("nul_byte", "the path holds a NUL byte", None));
        }
        let Some(first) = roots.first() else {
            return Err(refuse("outside_roots", "no root directory exists", None));
        };
        let joined = if path.is_absolute() {
            path.to_owned()
        } else {
            first.join(path)
        };
        let mut lexical = PathBuf::new();
        for part in joined.components() {
            match part {
                Component::ParentDir => {
                    let inside_before = roots.iter().any(|r| lexical.starts_with(r));
                    lexical.pop();
                    if inside_before && !roots.iter().any(|r| lexical.starts_with(r)) {
                        return Err(refuse(
                            "parent_escape",
                            format!("`{}` climbs out of its root with `..`", path.display()),
                            None,
                        ));
                    }
                }
                Component::CurDir => {}
                other => lexical.push(other),
            }
        }
        if !roots.iter().any(|r| lexical.starts_with(r)) {
            return Err(refuse(
                "outside_roots",
                format!(
                    "`{}` is outside the allowed directories ({})",
                    path.display(),
                    self.roots
                        .iter()
                        .map(|r| r.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                None,
            ));
        }
        Ok(lexical)
    }
}

/// Refuses a resolved path outside every root: a link along `lexical` led out.
fn inside(resolved: &Path, lexical: &Path, roots: &[PathBuf]) -> Result<(), ToolError> {
    if roots.iter().any(|r| resolved.starts_with(r)) {
        return Ok(());
    }
    Err(refuse(
        "symlink_escape",
        format!(
            "`{}` leads through a symbolic link to `{}`, outside the allowed directories",
            lexical.display(),
            resolved.display()
        ),
        None,
    ))
}

fn too_large(path: &Path, limit: u64) -> ToolError {
    ToolError::new(
        ErrorKind::PAYLOAD_TOO_LARGE,
        format!("`{}` is larger than {limit} bytes", path.display()),
    )
    .with_details(serde_json::json!({"rule": "max_read", "limit": limit}))
}
