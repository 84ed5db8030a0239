//! A `folder` warehouse: a folder on this machine (`file:///absolute/path`), for a warehouse
//! that mounts or syncs a shared folder, and for demos and tests.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use percent_encoding::percent_decode_str;
use tokio::sync::mpsc::Receiver;

use super::parts;
use crate::platforms::PlatformError;

/// The folder of a `file:///absolute/path` URL.
pub fn parse(connection_string: &str) -> Result<PathBuf, String> {
    let shape = "must be a URL of the form file:///absolute/path";
    let rest = connection_string.strip_prefix("file://").ok_or(shape)?;
    // `file:///x` and `file://localhost/x` name this machine; no other host can be reached.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return Err(shape.to_string());
    }
    let path =
        percent_decode_str(path).decode_utf8().map_err(|_| "has a path that is not UTF-8 once decoded")?;
    if path.contains('\0') {
        return Err("has a path with a NUL character".to_string());
    }
    Ok(PathBuf::from(path.as_ref()))
}

pub struct Session {
    root: PathBuf,
}

fn failed(path: &str, doing: &str, e: &std::io::Error) -> PlatformError {
    let message = format!("Could not {doing} {path:?} in the warehouse folder: {e}.");
    match e.kind() {
        ErrorKind::PermissionDenied
        | ErrorKind::NotFound
        | ErrorKind::AlreadyExists
        | ErrorKind::InvalidInput => PlatformError::Rejected { status: 0, message },
        _ => PlatformError::unreachable(message),
    }
}

impl Session {
    pub async fn open(root: PathBuf) -> Result<Session, PlatformError> {
        match tokio::fs::metadata(&root).await {
            Ok(m) if m.is_dir() => Ok(Session { root }),
            Ok(_) => Err(PlatformError::Refused(format!(
                "The warehouse folder {} is not a folder.",
                root.display()
            ))),
            Err(e) => Err(PlatformError::Refused(format!(
                "The warehouse folder {} cannot be opened: {e}.",
                root.display()
            ))),
        }
    }

    fn at(&self, path: &str) -> Result<PathBuf, PlatformError> {
        let mut full = self.root.clone();
        for part in parts(path)? {
            full.push(part);
        }
        Ok(full)
    }

    pub async fn list(&self, dir: &str) -> Result<Vec<String>, PlatformError> {
        let full = self.at(dir)?;
        let mut entries = match tokio::fs::read_dir(&full).await {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(failed(dir, "list", &e)),
        };
        let mut names = Vec::new();
        while let Some(entry) = entries.next_entry().await.map_err(|e| failed(dir, "list", &e))? {
            if entry.file_type().await.is_ok_and(|t| t.is_file())
                && let Some(name) = entry.file_name().to_str()
            {
                names.push(name.to_string());
            }
        }
        Ok(names)
    }

    pub async fn read(&self, path: &str) -> Result<Vec<u8>, PlatformError> {
        tokio::fs::read(self.at(path)?).await.map_err(|e| failed(path, "read", &e))
    }

    pub async fn write_from(&self, path: &str, mut chunks: Receiver<Vec<u8>>) -> Result<(), PlatformError> {
        let full = self.at(path)?;
        let write = async {
            let mut file = tokio::fs::File::create(&full).await?;
            while let Some(chunk) = chunks.recv().await {
                tokio::io::AsyncWriteExt::write_all(&mut file, &chunk).await?;
            }
            // On disk before it is renamed into view, so a crash never shows a short file.
            file.sync_all().await
        };
        write.await.map_err(|e| failed(path, "write", &e))
    }

    pub async fn rename(&self, from: &str, to: &str) -> Result<(), PlatformError> {
        tokio::fs::rename(self.at(from)?, self.at(to)?).await.map_err(|e| failed(from, "rename", &e))
    }

    pub async fn remove(&self, path: &str) -> Result<(), PlatformError> {
        match tokio::fs::remove_file(self.at(path)?).await {
            Err(e) if e.kind() != ErrorKind::NotFound => Err(failed(path, "remove", &e)),
            _ => Ok(()),
        }
    }

    pub async fn make_dir_all(&self, dir: &str) -> Result<(), PlatformError> {
        tokio::fs::create_dir_all(self.at(dir)?).await.map_err(|e| failed(dir, "create", &e))
    }

    /// The folder exists and a file can be written in it (the `folder` credential check).
    pub async fn check_writable(&self) -> Result<(), PlatformError> {
        let probe = format!(".orderbridge-check-{}", std::process::id());
        self.write_from(&probe, super::chunks(b"orderbridge".to_vec()))
            .await
            .map_err(|e| PlatformError::Refused(e.message().to_string()))?;
        self.remove(&probe).await
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_name_an_absolute_folder_on_this_machine() {
        assert_eq!(parse("file:///srv/wh%201").unwrap(), PathBuf::from("/srv/wh 1"));
        assert_eq!(parse("file://localhost/srv/wh").unwrap(), PathBuf::from("/srv/wh"));
        for bad in ["/srv/wh", "file://other/srv", "file://relative", "sftp://x/y"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_session_writes_renames_over_lists_reads_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::open(dir.path().to_path_buf()).await.unwrap();
        s.make_dir_all("orders/sub").await.unwrap();
        s.write_from("orders/.a.csv", super::super::chunks(b"new".to_vec())).await.unwrap();
        s.write_from("orders/a.csv", super::super::chunks(b"old".to_vec())).await.unwrap();
        s.rename("orders/.a.csv", "orders/a.csv").await.unwrap();
        assert_eq!(s.list("orders").await.unwrap(), vec!["a.csv".to_string()], "files only");
        assert_eq!(s.read("orders/a.csv").await.unwrap(), b"new");
        assert!(s.list("missing").await.unwrap().is_empty());
        s.remove("orders/a.csv").await.unwrap();
        s.remove("orders/a.csv").await.unwrap();
        assert!(s.read("../x").await.is_err());
        s.check_writable().await.unwrap();
        assert!(Session::open(dir.path().join("nope")).await.is_err());
    }
}
