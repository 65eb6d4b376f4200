//! The token a command line's user signed in for, kept in a file only they can read (mode
//! `0600`), one per authorization server, so that the next command need not sign in again.

use std::path::{Path, PathBuf};

use rmcp::transport::AuthError;
use rmcp::transport::auth::{CredentialStore, StoredCredentials};

/// The file of the tokens of the authorization server `issuer` in `dir`: its name is the
/// issuer with every character but letters and digits written `_`.
pub(super) fn file_for(dir: &Path, issuer: &str) -> PathBuf {
    let name: String = issuer
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    dir.join(format!("{name}.json"))
}

/// A token file, as the SDK's credential store.
pub(super) struct TokenFile {
    pub(super) path: PathBuf,
}

fn failed(what: &str, path: &Path, e: &dyn std::fmt::Display) -> AuthError {
    AuthError::CredentialStoreError(format!("{what} {}: {e}", path.display()))
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        match tokio::fs::read(&self.path).await {
            // A file that does not read as credentials is as good as none: sign in again.
            Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(failed("cannot read", &self.path, &e)),
        }
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let bytes = serde_json::to_vec_pretty(&credentials)
            .map_err(|e| failed("cannot write", &self.path, &e))?;
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || write_private(&path, &bytes))
            .await
            .map_err(|e| failed("cannot write", &self.path, &e))?
            .map_err(|e| failed("cannot write", &self.path, &e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match tokio::fs::remove_file(&self.path).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(failed("cannot remove", &self.path, &e)),
        }
    }
}

/// Writes `bytes` to `path` readable and writable by its owner only: to a new file beside it,
/// created with that mode (never widened by the umask), then renamed over it, so that a reader
/// sees the old file or the new one whole.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&temporary)?;
    #[cfg(unix)]
    std::fs::set_permissions(
        &temporary,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_token_file_is_its_owners_alone_and_reads_back() {
        let dir = std::env::temp_dir().join(format!("token-file-{}", std::process::id()));
        let path = file_for(&dir, "https://idp.example/realms/a");
        assert_eq!(path, dir.join("https___idp_example_realms_a.json"));
        let file = TokenFile { path: path.clone() };
        assert!(file.load().await.unwrap().is_none());
        file.save(StoredCredentials::new(
            "client".into(),
            None,
            vec!["a".into()],
            Some(1),
        ))
        .await
        .unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert_eq!(file.load().await.unwrap().unwrap().client_id, "client");
        file.clear().await.unwrap();
        assert!(file.load().await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(dir);
    }
}
