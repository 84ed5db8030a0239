//! A `folder` warehouse: a folder on this machine, `connection_string` `file:///absolute/path`
//! (or `file://localhost/absolute/path`, the same URL by RFC 8089), for a warehouse that
//! mounts or syncs a shared folder, and for demos and tests. The folder must lie inside the
//! configured `folder_warehouse_root` (CONTRACT §6, §10); only admins create or change one,
//! which the resource module enforces.

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};
use std::time::UNIX_EPOCH;

use percent_encoding::percent_decode_str;
use tokio::sync::mpsc::Receiver;

use super::{Entry, Facts, parts};
use crate::config::Config;
use crate::fields::Fields;
use crate::platforms::PlatformError;

/// `connection_string` required, a `file:///absolute/path` URL. Whether the path lies inside
/// the root is [`check_inside_root`]'s question, which needs the configuration.
pub fn validate(adapter: &mut Fields) {
    if let Some(url) = adapter.required("connection_string", Fields::text)
        && let Err(problem) = parse(&url)
    {
        adapter.error("connection_string", problem);
    }
}

/// The absolute folder a `file:` URL names, percent-decoded: the one reader of a folder
/// warehouse's `connection_string`, for validation and for use.
pub fn parse(connection_string: &str) -> Result<PathBuf, String> {
    const SHAPE: &str = "must be a URL of the form file:///absolute/path";
    let rest = connection_string.strip_prefix("file://").ok_or(SHAPE)?;
    // An empty host and `localhost` both name this machine (RFC 8089 §2, §3); no other host
    // can be reached.
    let path = match rest.find('/') {
        Some(at) if rest[..at].is_empty() || rest[..at].eq_ignore_ascii_case("localhost") => &rest[at..],
        _ => return Err(format!("{SHAPE} (no host but localhost, an absolute path)")),
    };
    let path = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| "has a path that is not valid UTF-8 once decoded".to_string())?;
    if path.contains('\0') {
        return Err("has a path containing a NUL character".to_string());
    }
    Ok(PathBuf::from(path.into_owned()))
}

/// Where `folder` warehouses may live: `folder_warehouse_root`, a relative one taken from the
/// database file's directory (default `warehouses` beside the database).
pub fn root(config: &Config) -> PathBuf {
    let root = &config.folder_warehouse_root;
    if root.is_absolute() {
        return root.clone();
    }
    let database_dir = config.database.parent().unwrap_or(Path::new(""));
    let base = if database_dir.as_os_str().is_empty() { Path::new(".") } else { database_dir };
    base.join(root)
}

/// Problem text when the `file://` URL's folder is not inside `root`; compares resolved
/// paths, so neither `..` nor a symbolic link that exists can lead outside.
pub fn check_inside_root(url: &str, root: &Path) -> Result<(), String> {
    let path = parse(url)?;
    let (path, root) = (resolve(&path), resolve(root));
    if path.starts_with(&root) {
        Ok(())
    } else {
        Err("must name a folder inside the server's folder_warehouse_root".to_string())
    }
}

/// An absolute, normalized path: the longest existing ancestor canonicalized (symbolic links
/// followed), the rest with `.` and `..` applied by hand.
fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut lexical = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return rest.iter().rev().fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
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

    /// The plain files in `dir` with their size and modification time (to the nanosecond
    /// where the file system keeps it).
    pub async fn list(&self, dir: &str) -> Result<Vec<Entry>, PlatformError> {
        let full = self.at(dir)?;
        let mut entries = match tokio::fs::read_dir(&full).await {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(failed(dir, "list", &e)),
        };
        let mut files = Vec::new();
        while let Some(entry) = entries.next_entry().await.map_err(|e| failed(dir, "list", &e))? {
            // A file removed between the listing and this look is simply not listed.
            if let (Ok(metadata), Some(name)) = (entry.metadata().await, entry.file_name().to_str())
                && metadata.is_file()
            {
                files.push(Entry { name: name.to_string(), facts: facts(&metadata) });
            }
        }
        Ok(files)
    }

    pub async fn facts(&self, path: &str) -> Result<Facts, PlatformError> {
        let metadata = tokio::fs::metadata(self.at(path)?).await.map_err(|e| failed(path, "look at", &e))?;
        Ok(facts(&metadata))
    }

    pub async fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, PlatformError> {
        let file = tokio::fs::File::open(self.at(path)?).await.map_err(|e| failed(path, "read", &e))?;
        super::read_at_most(file, max)
            .await
            .map_err(|e| failed(path, "read", &e))?
            .ok_or_else(|| super::too_large("The folder", "a file", path, max))
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
        self.remove(&probe).await.map_err(|e| PlatformError::Refused(e.message().to_string()))
    }
}

fn facts(metadata: &std::fs::Metadata) -> Facts {
    let modified = metadata.modified().ok().and_then(|at| at.duration_since(UNIX_EPOCH).ok());
    Facts { size: Some(metadata.len()), modified: modified.map(|since| since.as_nanos().to_string()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_urls_name_an_absolute_folder_on_this_machine() {
        assert_eq!(parse("file:///srv/wh%201"), Ok(PathBuf::from("/srv/wh 1")));
        assert_eq!(parse("file://localhost/srv/wh"), Ok(PathBuf::from("/srv/wh")), "RFC 8089: the same");
        assert_eq!(parse("file://LOCALHOST/srv/wh"), Ok(PathBuf::from("/srv/wh")));
        for bad in [
            "/srv/wh",
            "file://other/srv",
            "file://localhostile/srv",
            "file://relative",
            "file:relative",
            "file://",
            "sftp://u:p@h/x",
            "file:///a%00b",
            "file:///a%FF",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_must_stay_inside_the_root_even_through_dot_dot() {
        let root = std::env::temp_dir().join(format!("ob-folder-root-{}", std::process::id()));
        std::fs::create_dir_all(root.join("a")).unwrap();
        let url = |p: &Path| format!("file://{}", p.display());
        assert!(check_inside_root(&url(&root.join("a")), &root).is_ok());
        assert!(check_inside_root(&url(&root.join("new/deeper")), &root).is_ok());
        assert!(check_inside_root(&url(&root.join("a/../../escape")), &root).is_err());
        assert!(check_inside_root("file:///etc", &root).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_relative_root_lies_beside_the_database() {
        let config = Config { database: PathBuf::from("/var/lib/ob/orderbridge.db"), ..Config::default() };
        assert_eq!(root(&config), PathBuf::from("/var/lib/ob/warehouses"));
        let config = Config { folder_warehouse_root: PathBuf::from("/srv/wh"), ..config };
        assert_eq!(root(&config), PathBuf::from("/srv/wh"));
    }

    #[tokio::test]
    async fn a_session_writes_renames_over_lists_reads_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let s = Session::open(dir.path().to_path_buf()).await.unwrap();
        s.make_dir_all("orders/sub").await.unwrap();
        s.write_from("orders/.a.csv", super::super::chunks(b"new".to_vec())).await.unwrap();
        s.write_from("orders/a.csv", super::super::chunks(b"old".to_vec())).await.unwrap();
        s.rename("orders/.a.csv", "orders/a.csv").await.unwrap();
        let listed = s.list("orders").await.unwrap();
        assert_eq!(listed.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["a.csv"], "files only");
        assert_eq!(listed[0].facts.size, Some(3));
        assert!(listed[0].facts.modified.is_some());
        assert_eq!(s.read("orders/a.csv", 3).await.unwrap(), b"new");
        let e = s.read("orders/a.csv", 2).await.unwrap_err();
        assert!(matches!(&e, PlatformError::BadData(m) if m.contains("larger than 2 bytes")), "{e:?}");
        assert!(s.list("missing").await.unwrap().is_empty());
        s.remove("orders/a.csv").await.unwrap();
        s.remove("orders/a.csv").await.unwrap();
        assert!(s.read("../x", 3).await.is_err());
        s.check_writable().await.unwrap();
        assert!(Session::open(dir.path().join("nope")).await.is_err());
    }
}
