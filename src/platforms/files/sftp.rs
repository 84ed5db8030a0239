//! An SFTP warehouse (`sftp`, `dropstream`): one SSH session (handshake and login in
//! `ssh`), the SFTP subsystem over it, and every operation bounded by a timeout. The ping is
//! this session opened, then a `stat` of the root.
//!
//! A refused login, a root that is missing or forbidden, and a host key other than the one
//! the adapter pins are `Refused`: the credentials cannot do the job. A server that breaks
//! off the handshake or will not start SFTP is `Unreachable`: there was no verdict.

use std::future::Future;
use std::time::Duration;

use russh::Disconnect;
use russh::client;
use russh_sftp::client::SftpSession;
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::protocol::StatusCode;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc::Receiver;

use super::ssh::{Handshake, HostKeys, Login, handshake, log_in};
use super::target::Target;
use super::{Entry, Facts, parts};
use crate::platforms::PlatformError;
use crate::platforms::quote_platform_text;

pub struct Session {
    ssh: client::Handle<HostKeys>,
    /// The fingerprint of the key the server showed.
    host_key: String,
    sftp: SftpSession,
    /// The URL's path, or empty for the login directory.
    root: String,
    address: String,
    secrets: [String; 2],
    timeout: Duration,
}

impl Session {
    pub async fn open(target: &Target, timeout: Duration) -> Result<Session, PlatformError> {
        let address = target.address();
        let secrets = [target.password.clone(), target.user.clone()];
        let broke_off = |stage: &str, error: &dyn std::fmt::Display| {
            PlatformError::unreachable(format!(
                "The SFTP server at {address} failed during {stage}: {}.",
                quote_platform_text(&error.to_string(), &[&secrets[0], &secrets[1]])
            ))
        };
        let opened = async {
            let stream = target.connect("SFTP").await?;
            let config = client::Config {
                inactivity_timeout: Some(timeout.max(Duration::from_secs(1)) * 6),
                ..client::Config::default()
            };
            let (mut ssh, host_key) = handshake(config, stream, target).await.map_err(|e| match e {
                Handshake::OtherKey(message) => PlatformError::Refused(message),
                Handshake::Failed(e) => broke_off("the SSH handshake", &e),
            })?;
            if let Login::Refused(why) = log_in(&mut ssh, target).await.map_err(|e| broke_off("login", &e))? {
                return Err(PlatformError::Refused(format!("The SFTP server at {address} {why}.")));
            }
            let channel = ssh.channel_open_session().await.map_err(|e| broke_off("opening a session", &e))?;
            channel.request_subsystem(true, "sftp").await.map_err(|e| broke_off("starting SFTP", &e))?;
            let sftp =
                SftpSession::new(channel.into_stream()).await.map_err(|e| broke_off("starting SFTP", &e))?;
            Ok((ssh, sftp, host_key))
        };
        let (ssh, sftp, host_key) = tokio::time::timeout(timeout, opened).await.map_err(|_| {
            PlatformError::unreachable(format!("The SFTP server at {address} did not answer in time."))
        })??;
        let root = target.path.trim_end_matches('/').to_string();
        Ok(Session { ssh, sftp, host_key, root, address, secrets, timeout })
    }

    pub fn host_key(&self) -> &str {
        &self.host_key
    }

    /// The ping's last step (CONTRACT §8): the root (the URL's path, or the login directory)
    /// is there and the user may use it.
    pub async fn check_root(&self) -> Result<(), PlatformError> {
        let path = if self.root.is_empty() { "." } else { self.root.as_str() };
        let logged_in = format!("Logged in to the SFTP server at {}, but", self.address);
        match tokio::time::timeout(self.timeout, self.sftp.metadata(path)).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(SftpError::Status(status))) if status.status_code == StatusCode::NoSuchFile => {
                Err(PlatformError::Refused(format!("{logged_in} the path {path} does not exist.")))
            }
            Ok(Err(SftpError::Status(status))) if status.status_code == StatusCode::PermissionDenied => {
                Err(PlatformError::Refused(format!("{logged_in} the user may not access the path {path}.")))
            }
            Ok(Err(e)) => Err(PlatformError::unreachable(format!(
                "The SFTP server at {} failed during checking the path {path}: {}.",
                self.address,
                quote_platform_text(&e.to_string(), &[&self.secrets[0], &self.secrets[1]])
            ))),
            Err(_) => Err(self.late("check", path)),
        }
    }

    fn late(&self, doing: &str, path: &str) -> PlatformError {
        PlatformError::unreachable(format!(
            "The SFTP server at {} did not answer in time to {doing} {path:?}.",
            self.address
        ))
    }

    fn at(&self, path: &str) -> Result<String, PlatformError> {
        let rel = parts(path)?.join("/");
        Ok(match (self.root.is_empty(), rel.is_empty()) {
            (true, true) => ".".to_string(),
            (true, false) => rel,
            (false, true) => self.root.clone(),
            (false, false) => format!("{}/{rel}", self.root),
        })
    }

    /// Runs one operation under the timeout; a server error becomes a message naming `path`.
    async fn bounded<T>(
        &self,
        doing: &str,
        path: &str,
        op: impl Future<Output = Result<T, SftpError>>,
    ) -> Result<T, PlatformError> {
        match tokio::time::timeout(self.timeout, op).await {
            Err(_) => Err(self.late(doing, path)),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.failed(doing, path, &e)),
        }
    }

    fn failed(&self, doing: &str, path: &str, e: &SftpError) -> PlatformError {
        let said = quote_platform_text(&e.to_string(), &[&self.secrets[0], &self.secrets[1]]);
        let message = format!("The SFTP server at {} could not {doing} {path:?}: {said}.", self.address);
        match e {
            SftpError::Status(_) => PlatformError::Rejected { status: 0, message },
            _ => PlatformError::unreachable(message),
        }
    }

    /// The plain files in `dir` with the size and modification time (whole seconds, as SFTP
    /// v3 has it) their directory entry carries.
    pub async fn list(&self, dir: &str) -> Result<Vec<Entry>, PlatformError> {
        let full = self.at(dir)?;
        let entries = match tokio::time::timeout(self.timeout, self.sftp.read_dir(full)).await {
            Err(_) => return Err(self.late("list", dir)),
            Ok(Err(SftpError::Status(s))) if s.status_code == StatusCode::NoSuchFile => return Ok(Vec::new()),
            Ok(Err(e)) => return Err(self.failed("list", dir, &e)),
            Ok(Ok(entries)) => entries,
        };
        Ok(entries
            .filter(|e| e.file_type().is_file())
            .filter(|e| e.file_name() != "." && e.file_name() != "..")
            .map(|e| {
                let attributes = e.metadata();
                Entry { name: e.file_name(), facts: facts(&attributes) }
            })
            .collect())
    }

    /// What the server says of one file.
    pub async fn facts(&self, path: &str) -> Result<Facts, PlatformError> {
        let full = self.at(path)?;
        let attributes = self.bounded("look at", path, self.sftp.metadata(full)).await?;
        Ok(facts(&attributes))
    }

    /// The file's bytes, at most `max`: a larger file is `BadData`, and reading stops there.
    pub async fn read(&self, path: &str, max: usize) -> Result<Vec<u8>, PlatformError> {
        let full = self.at(path)?;
        let file = self.bounded("read", path, self.sftp.open(full)).await?;
        let io = |e: std::io::Error| SftpError::UnexpectedBehavior(e.to_string());
        let read =
            self.bounded("read", path, async { super::read_at_most(file, max).await.map_err(io) }).await?;
        let server = format!("The SFTP server at {}", self.address);
        read.ok_or_else(|| super::too_large(&server, "a file", path, max))
    }

    /// Creates or replaces `path` with what `chunks` delivers. Any failure on the way is
    /// passing: the file's fate is unknown, and the same file is sent again later.
    pub async fn write_from(&self, path: &str, mut chunks: Receiver<Vec<u8>>) -> Result<(), PlatformError> {
        let full = self.at(path)?;
        let written = async {
            // `create` opens with CREATE | TRUNCATE | WRITE.
            let mut file = self.bounded("write", path, self.sftp.create(full)).await?;
            let io = |e: std::io::Error| SftpError::UnexpectedBehavior(e.to_string());
            while let Some(chunk) = chunks.recv().await {
                self.bounded("write", path, async { file.write_all(&chunk).await.map_err(io) }).await?;
            }
            self.bounded("write", path, async { file.shutdown().await.map_err(io) }).await
        };
        written.await.map_err(|e| PlatformError::unreachable(e.message().to_string()))
    }

    /// SFTP v3 RENAME fails when the target exists, and russh-sftp has no posix-rename: an
    /// existing target is removed first (a file sent again after a crash replaces itself).
    pub async fn rename(&self, from: &str, to: &str) -> Result<(), PlatformError> {
        let (old, new) = (self.at(from)?, self.at(to)?);
        let exists = self.bounded("look for", to, self.sftp.try_exists(new.clone())).await?;
        if exists {
            self.bounded("replace", to, self.sftp.remove_file(new.clone())).await?;
        }
        self.bounded("rename", from, self.sftp.rename(old, new)).await
    }

    pub async fn remove(&self, path: &str) -> Result<(), PlatformError> {
        let full = self.at(path)?;
        match tokio::time::timeout(self.timeout, self.sftp.remove_file(full)).await {
            Ok(Err(SftpError::Status(s))) if s.status_code == StatusCode::NoSuchFile => Ok(()),
            Ok(Err(e)) => Err(self.failed("remove", path, &e)),
            Ok(Ok(())) => Ok(()),
            Err(_) => Err(self.late("remove", path)),
        }
    }

    pub async fn make_dir_all(&self, dir: &str) -> Result<(), PlatformError> {
        let mut so_far = String::new();
        for part in parts(dir)? {
            so_far = if so_far.is_empty() { part.to_string() } else { format!("{so_far}/{part}") };
            let full = self.at(&so_far)?;
            let exists = self.bounded("look for", &so_far, self.sftp.try_exists(full.clone())).await?;
            if !exists {
                self.bounded("create", &so_far, self.sftp.create_dir(full)).await?;
            }
        }
        Ok(())
    }

    pub async fn close(self) {
        let _ = tokio::time::timeout(self.timeout, self.sftp.close()).await;
        let _ = tokio::time::timeout(self.timeout, self.ssh.disconnect(Disconnect::ByApplication, "", "en"))
            .await;
    }
}

fn facts(attributes: &russh_sftp::protocol::FileAttributes) -> Facts {
    Facts { size: attributes.size, modified: attributes.mtime.map(|seconds| seconds.to_string()) }
}
