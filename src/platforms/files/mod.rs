//! File warehouses (`sftp`, `dropstream`, `ftp`, `folder`): where a warehouse keeps its files
//! and a session that lists, reads, writes, renames and removes them, paths relative to the
//! warehouse's root. Every operation is bounded by the pass's timeout, and no message carries
//! the connection string's password.

mod folder;
mod ftp;
mod platform;
mod sftp;

pub use platform::{FileWarehouse, Kind, WarehousePlatform};

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::mpsc::Receiver;

use super::PlatformError;
use crate::platforms::reach::Reach;
use crate::platforms::target::Target;

/// Where a file warehouse's files are.
pub enum Location {
    /// An SFTP server (`sftp` and `dropstream`); the root is the URL's path or the login
    /// directory.
    Sftp(Target),
    /// An FTP server (`ftp`); the root is the URL's path or the login directory.
    Ftp(Target),
    /// A folder on this machine (`folder`), already checked to lie inside
    /// `folder_warehouse_root` when the warehouse was saved.
    Folder(PathBuf),
}

impl Location {
    /// Where a warehouse's files are, from its platform and adapter: the `connection_string`,
    /// and for SFTP the `host_key` it pins. The problem is a phrase that never repeats the
    /// string.
    pub fn of(platform: &str, adapter: &Map<String, Value>) -> Result<Location, String> {
        let url = adapter.get("connection_string").and_then(Value::as_str).unwrap_or_default();
        match platform {
            "sftp" | "dropstream" => Ok(Location::Sftp(Target::parse(url, "sftp", 22)?.pinned_by(adapter))),
            "ftp" => Target::parse(url, "ftp", 21).map(Location::Ftp),
            "folder" => folder::parse(url).map(Location::Folder),
            other => Err(format!("names platform '{other}', which has no file exchange orderbridge can use")),
        }
    }

    /// The location with its server's connections kept within `reach` (CONTRACT §6); a
    /// folder is on this machine and has no network address.
    pub fn reached_under(self, reach: Reach) -> Location {
        match self {
            Location::Sftp(target) => Location::Sftp(target.reached_under(reach)),
            Location::Ftp(target) => Location::Ftp(target.reached_under(reach)),
            folder @ Location::Folder(_) => folder,
        }
    }
}

/// An open connection to a warehouse's files.
pub enum FileSession {
    Sftp(Box<sftp::Session>),
    Ftp(Box<ftp::Session>),
    Folder(folder::Session),
}

/// Opens a session: connects and logs in where the warehouse is a server.
pub async fn open(location: &Location, timeout: Duration) -> Result<FileSession, PlatformError> {
    Ok(match location {
        Location::Sftp(target) => FileSession::Sftp(Box::new(sftp::Session::open(target, timeout).await?)),
        Location::Ftp(target) => FileSession::Ftp(Box::new(ftp::Session::open(target, timeout).await?)),
        Location::Folder(root) => FileSession::Folder(folder::Session::open(root.clone()).await?),
    })
}

/// The credential check of a file warehouse (CONTRACT §8): it can be reached and logged in
/// to, and for a `folder`, the folder exists and takes a file.
pub async fn check(location: &Location, timeout: Duration) -> Result<(), PlatformError> {
    match open(location, timeout).await? {
        FileSession::Folder(s) => s.check_writable().await,
        session => {
            session.close().await;
            Ok(())
        }
    }
}

impl FileSession {
    /// The names of the plain files directly in `dir`, sorted; a missing folder has none.
    pub async fn list(&mut self, dir: &str) -> Result<Vec<String>, PlatformError> {
        let mut names = match self {
            FileSession::Sftp(s) => s.list(dir).await?,
            FileSession::Ftp(s) => s.list(dir).await?,
            FileSession::Folder(s) => s.list(dir).await?,
        };
        names.sort();
        Ok(names)
    }

    pub async fn read(&mut self, path: &str) -> Result<Vec<u8>, PlatformError> {
        match self {
            FileSession::Sftp(s) => s.read(path).await,
            FileSession::Ftp(s) => s.read(path).await,
            FileSession::Folder(s) => s.read(path).await,
        }
    }

    /// Creates or replaces a file with `bytes`.
    pub async fn write(&mut self, path: &str, bytes: &[u8]) -> Result<(), PlatformError> {
        self.write_from(path, chunks(bytes.to_vec())).await
    }

    /// Creates or replaces a file with what `chunks` delivers until it closes, so a large file
    /// is never held whole.
    pub async fn write_from(&mut self, path: &str, chunks: Receiver<Vec<u8>>) -> Result<(), PlatformError> {
        match self {
            FileSession::Sftp(s) => s.write_from(path, chunks).await,
            FileSession::Ftp(s) => s.write_from(path, chunks).await,
            FileSession::Folder(s) => s.write_from(path, chunks).await,
        }
    }

    /// Renames a file, replacing `to` if it exists.
    pub async fn rename(&mut self, from: &str, to: &str) -> Result<(), PlatformError> {
        match self {
            FileSession::Sftp(s) => s.rename(from, to).await,
            FileSession::Ftp(s) => s.rename(from, to).await,
            FileSession::Folder(s) => s.rename(from, to).await,
        }
    }

    /// Removes a file; one that is not there is fine.
    pub async fn remove(&mut self, path: &str) -> Result<(), PlatformError> {
        match self {
            FileSession::Sftp(s) => s.remove(path).await,
            FileSession::Ftp(s) => s.remove(path).await,
            FileSession::Folder(s) => s.remove(path).await,
        }
    }

    /// Creates a folder and its parents as needed.
    pub async fn make_dir_all(&mut self, dir: &str) -> Result<(), PlatformError> {
        match self {
            FileSession::Sftp(s) => s.make_dir_all(dir).await,
            FileSession::Ftp(s) => s.make_dir_all(dir).await,
            FileSession::Folder(s) => s.make_dir_all(dir).await,
        }
    }

    /// The SSH host key fingerprint an SFTP server showed when the session opened.
    pub fn host_key(&self) -> Option<&str> {
        match self {
            FileSession::Sftp(s) => Some(s.host_key()),
            _ => None,
        }
    }

    /// Ends the session politely; errors here change nothing.
    pub async fn close(self) {
        match self {
            FileSession::Sftp(s) => s.close().await,
            FileSession::Ftp(s) => s.close().await,
            FileSession::Folder(_) => {}
        }
    }
}

/// A source of one chunk.
fn chunks(bytes: Vec<u8>) -> Receiver<Vec<u8>> {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    // The channel has room for the one chunk, so this never waits or fails.
    let _ = sender.try_send(bytes);
    receiver
}

/// A relative path's parts, refusing any that could leave the root.
fn parts(path: &str) -> Result<Vec<&str>, PlatformError> {
    let mut out = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                return Err(PlatformError::Rejected {
                    status: 0,
                    message: format!("The path {path:?} would leave the warehouse's folder."),
                });
            }
            part => out.push(part),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_cannot_leave_the_root() {
        assert_eq!(parts("orders/./x.csv").unwrap(), vec!["orders", "x.csv"]);
        assert_eq!(parts("").unwrap(), Vec::<&str>::new());
        assert!(parts("../etc/passwd").is_err());
        assert!(parts("a/../../b").is_err());
    }

    fn url(connection_string: &str) -> Map<String, Value> {
        Map::from_iter([("connection_string".to_string(), Value::from(connection_string))])
    }

    #[test]
    fn connection_strings_name_their_transport_and_hide_the_password() {
        assert!(matches!(
            Location::of("dropstream", &url("sftp://wh1:s%40cret@ftp.example.com")),
            Ok(Location::Sftp(_))
        ));
        let Ok(Location::Sftp(t)) = Location::of("sftp", &url("sftp://u:p%2Fw@[::1]:2022/in%20box")) else {
            panic!()
        };
        assert_eq!(
            (t.user.as_str(), t.password.as_str(), t.path.as_str(), t.port),
            ("u", "p/w", "/in box", 2022)
        );
        let e = Location::of("sftp", &url("ftp://u:pw-SECRET@host/x")).err().unwrap();
        assert!(!e.contains("pw-SECRET"), "{e}");
        assert!(Location::of("skubana", &url("x")).is_err());
    }
}
