//! File warehouses (`sftp`, `dropstream`, `ftp`, `folder`) as one platform: what their
//! adapters hold, the ping's credential check (CONTRACT §8), a session per transport that
//! lists, reads, writes, renames and removes files, the CSV formats (`csv`) and each
//! warehouse's layouts of them (`layout`), and the [`Warehouse`] a sync pass drives (CONTRACT
//! §11, "File warehouses"). Paths are relative to the warehouse's root; every operation is
//! bounded by a timeout, and no message carries the connection string's password.
//!
//! The ping and the sync use the same sessions: a ping is a session opened (and, for SFTP, its
//! root looked at; for a folder, a file written and removed), then closed.

mod client;
pub mod csv;
pub mod folder;
pub mod format;
mod ftp;
pub mod layout;
mod platform;
mod settle;
mod sftp;
mod ssh;
pub mod target;
mod warehouse;
pub mod x12;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::mpsc::Receiver;

use super::PlatformError;
use crate::fields::Fields;
use crate::platforms::reach::Reach;
use target::Target;

pub use platform::{FOLDER, FTP, FileWarehouse, SFTP};
pub use settle::Sightings;
pub use warehouse::{FileSettings, Incoming, Sent, Warehouse};

/// How a file warehouse exchanges its files; the registry says which tokens name which.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `sftp`, and `dropstream` (the hosted service's own SFTP file drop).
    Sftp,
    Ftp,
    /// A folder on the server's own disk.
    Folder,
}

impl Kind {
    /// The subject of a sentence about this warehouse's server.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::Sftp => "The SFTP server",
            Kind::Ftp => "The FTP server",
            Kind::Folder => "The folder",
        }
    }
}

/// Checks the adapter's shape; problems are named under `adapter` (`adapter[key]`).
/// `connection_string` is required: a URL of the transport (`sftp://user:password@host…`,
/// `ftp://…`, `file:///absolute/path`); for SFTP, `host_key` is a fingerprint or null (none
/// pinned yet).
pub fn validate(adapter: &mut Fields, kind: Kind) {
    validate_folders(adapter);
    // What the files say (files-csv-layouts.md §8, files-x12.md §1.2), whatever carries them.
    layout::validate(adapter);
    x12::validate(adapter);
    let (scheme, port) = match kind {
        Kind::Folder => return folder::validate(adapter),
        Kind::Sftp => ("sftp", 22),
        Kind::Ftp => ("ftp", 21),
    };
    if let Some(url) = adapter.required("connection_string", Fields::text)
        && let Err(problem) = Target::parse(&url, scheme, port)
    {
        adapter.error("connection_string", problem);
    }
    if kind == Kind::Sftp
        && let Some(key) = adapter.text("host_key").value()
        && !ssh::is_fingerprint(&key)
    {
        adapter.error(
            "host_key",
            "must be an SSH host key fingerprint as ssh-keygen -l prints it: SHA256: and 43 base64 characters",
        );
    }
}

/// `orders_dir`, `shipments_dir` and `inventory_dir` are text (or null: the default) and name
/// three different folders as the warehouse uses them (CONTRACT §11): orderbridge's own order
/// files must never be read back as shipments or stock. A clash names the key given, the
/// later one when both are.
fn validate_folders(adapter: &mut Fields) {
    let mut seen: Vec<(&str, String, bool)> = Vec::new();
    for (key, default) in warehouse::FOLDER_KEYS {
        let given = adapter.text(key).value();
        let folder = warehouse::folder(given.as_deref(), default);
        if let Some((other, _, other_given)) = seen.iter().find(|(_, seen, _)| *seen == folder) {
            let (named, other) = if given.is_some() || !other_given { (key, *other) } else { (*other, key) };
            let place = if folder.is_empty() { "the root".to_string() } else { format!("{folder:?}") };
            adapter.error(
                named,
                format!("names the same folder as {other} ({place}); orders, shipments and stock each need a folder of their own"),
            );
        }
        seen.push((key, folder, given.is_some()));
    }
}

/// Where a file warehouse's files are.
pub enum Location {
    /// An SFTP server; the root is the URL's path or the login directory.
    Sftp(Target),
    /// An FTP server; the root is the URL's path or the login directory.
    Ftp(Target),
    /// A folder on this machine, already checked to lie inside `folder_warehouse_root` when
    /// the warehouse was saved.
    Folder(PathBuf),
}

impl Location {
    /// Where a warehouse's files are, from its adapter: the `connection_string`, and for SFTP
    /// the `host_key` it pins. The problem is a phrase that never repeats the string.
    pub fn of(kind: Kind, adapter: &Map<String, Value>) -> Result<Location, String> {
        let url = adapter.get("connection_string").and_then(Value::as_str).unwrap_or_default();
        match kind {
            Kind::Sftp => Ok(Location::Sftp(Target::parse(url, "sftp", 22)?.pinned_by(adapter))),
            Kind::Ftp => Target::parse(url, "ftp", 21).map(Location::Ftp),
            Kind::Folder => folder::parse(url).map(Location::Folder),
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
    /// The files' place without the password, to tell warehouses' files apart.
    fn place(&self) -> String {
        match self {
            Location::Sftp(target) => format!("sftp://{}", target.place()),
            Location::Ftp(target) => format!("ftp://{}", target.place()),
            Location::Folder(path) => format!("file://{}", path.display()),
        }
    }
}

/// The credential check of a file warehouse (CONTRACT §8): the server can be reached and
/// logged in to, and its root used (SFTP: the path is there; FTP: `CWD` into it); a folder
/// exists and takes a file. A refusal is `Refused`; no verdict is `Unreachable`.
///
/// The caller bounds the whole check with `timeout` and names that limit when it is hit; the
/// session's own bound on each exchange is twice as long, so it never fires first.
pub async fn check(
    kind: Kind,
    adapter: &Map<String, Value>,
    timeout: Duration,
    reach: Reach,
) -> Result<(), PlatformError> {
    let location = Location::of(kind, adapter)
        .map_err(|problem| PlatformError::Refused(format!("The warehouse's connection_string {problem}.")))?
        .reached_under(reach);
    let session = open(&location, timeout.saturating_mul(2)).await?;
    let outcome = match &session {
        FileSession::Sftp(s) => s.check_root().await,
        // Logging in changed into the path.
        FileSession::Ftp(_) => Ok(()),
        FileSession::Folder(s) => s.check_writable().await,
    };
    session.close().await;
    outcome
}

/// A plain file in a listing, with what the server said of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub facts: Facts,
}

/// A file's size and modification time as the server reports them, either absent when the
/// server does not say. The time keeps each transport's own notation (nanoseconds since the
/// epoch, SFTP's whole seconds, FTP's `YYYYMMDDHHMMSS[.sss]`): it is only ever compared with
/// itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Facts {
    pub size: Option<u64>,
    pub modified: Option<String>,
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

impl FileSession {
    /// The plain files directly in `dir`, sorted by name; a missing folder has none. An FTP
    /// listing longer than `max` bytes is `BadData`.
    pub async fn list(&mut self, dir: &str, max: usize) -> Result<Vec<Entry>, PlatformError> {
        let mut entries = match self {
            FileSession::Sftp(s) => s.list(dir).await?,
            FileSession::Ftp(s) => s.list(dir, max).await?,
            FileSession::Folder(s) => s.list(dir).await?,
        };
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(entries)
    }

    /// What the server says of one file, asked on its own (for a listing that said nothing).
    pub async fn facts(&mut self, path: &str) -> Result<Facts, PlatformError> {
        match self {
            FileSession::Sftp(s) => s.facts(path).await,
            FileSession::Ftp(s) => s.facts(path).await,
            FileSession::Folder(s) => s.facts(path).await,
        }
    }

    /// The file's bytes, at most `max` of them: a larger file is `BadData`, and reading
    /// stops there.
    pub async fn read(&mut self, path: &str, max: usize) -> Result<Vec<u8>, PlatformError> {
        match self {
            FileSession::Sftp(s) => s.read(path, max).await,
            FileSession::Ftp(s) => s.read(path, max).await,
            FileSession::Folder(s) => s.read(path, max).await,
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

/// What `reader` sends until it ends, if that is at most `max` bytes; `None` (having read
/// one byte more, no further) when it is more.
async fn read_at_most(
    reader: impl tokio::io::AsyncRead + Unpin,
    max: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    use tokio::io::AsyncReadExt;
    let mut bytes = Vec::new();
    reader.take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1)).read_to_end(&mut bytes).await?;
    Ok((bytes.len() <= max).then_some(bytes))
}

/// The failure of a file or listing past `max` bytes; `server` is the subject of the
/// sentence (`The FTP server at host:21`).
fn too_large(server: &str, what: &str, path: &str, max: usize) -> PlatformError {
    PlatformError::BadData(format!(
        "{server} has {what} {path:?} larger than {} (max_warehouse_file_mib); orderbridge stopped reading it.",
        crate::platforms::http::describe_bytes(max)
    ))
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

/// `dir/name`, where an empty `dir` is the root.
fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() { name.to_string() } else { format!("{dir}/{name}") }
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
            Location::of(Kind::Sftp, &url("sftp://wh1:s%40cret@ftp.example.com")),
            Ok(Location::Sftp(_))
        ));
        let Ok(Location::Sftp(t)) = Location::of(Kind::Sftp, &url("sftp://u:p%2Fw@[::1]:2022/in%20box"))
        else {
            panic!()
        };
        assert_eq!(
            (t.user.as_str(), t.password.as_str(), t.path.as_str(), t.port),
            ("u", "p/w", "/in box", 2022)
        );
        let e = Location::of(Kind::Sftp, &url("ftp://u:pw-SECRET@host/x")).err().unwrap();
        assert!(!e.contains("pw-SECRET"), "{e}");
        let place = Location::of(Kind::Ftp, &url("ftp://u:pw-SECRET@host/x")).ok().unwrap().place();
        assert_eq!(place, "ftp://u@host:21/x");
        assert!(matches!(
            Location::of(Kind::Folder, &url("file://localhost/srv/x")),
            Ok(Location::Folder(_))
        ));
    }
}
