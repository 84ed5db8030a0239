//! An FTP warehouse (`ftp`, RFC 959 with the passive data connections of RFC 2428 and the
//! listings and facts of RFC 3659): one control connection, binary transfers, and every
//! exchange bounded by a timeout. The ping is this session opened (greeting, `USER`/`PASS`,
//! `CWD` into the URL's path) and closed with `QUIT`. The commands are spoken here rather
//! than through an FTP crate: the one we looked at logs every command it sends at trace
//! level, `PASS <password>` included.
//!
//! Replies: a 4xx is passing ("try again later"), so it is `Unreachable`; a 5xx to the login
//! or to `CWD` into the root is `Refused`: the credentials cannot do the job.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::Receiver;

use super::target::Target;
use super::{Entry, Facts, parts};
use crate::platforms::{PlatformError, end_sentence, quote_platform_text};

/// Bounds on what a server may send: bytes in one reply line, lines in one reply.
const MAX_LINE_BYTES: u64 = 4096;
const MAX_REPLY_LINES: usize = 100;

struct Reply {
    code: u16,
    text: String,
}

pub struct Session {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    peer: SocketAddr,
    address: String,
    secrets: [String; 2],
    timeout: Duration,
    /// Whether `TYPE I` was sent: before the first transfer, so the ping never needs it.
    binary: bool,
}

impl Session {
    pub async fn open(target: &Target, timeout: Duration) -> Result<Session, PlatformError> {
        let address = target.address();
        let opened = async {
            let stream = target.connect("FTP").await?;
            let peer = stream
                .peer_addr()
                .map_err(|e| PlatformError::unreachable(format!("The FTP server at {address}: {e}.")))?;
            let (read, writer) = stream.into_split();
            let mut session = Session {
                reader: BufReader::new(read),
                writer,
                peer,
                address: address.clone(),
                secrets: [target.password.clone(), target.user.clone()],
                timeout,
                binary: false,
            };
            session.log_in(target).await?;
            Ok(session)
        };
        tokio::time::timeout(timeout, opened).await.map_err(|_| {
            PlatformError::unreachable(format!("The FTP server at {address} did not answer in time."))
        })?
    }

    /// The greeting, the login and the change into the URL's path.
    async fn log_in(&mut self, target: &Target) -> Result<(), PlatformError> {
        let mut greeting = self.reply().await?;
        // 120: "ready in a few minutes"; the 220 follows on the same connection.
        for _ in 0..2 {
            if greeting.code != 120 {
                break;
            }
            greeting = self.reply().await?;
        }
        if greeting.code != 220 {
            return Err(self.no_verdict("is not ready", &greeting));
        }
        let mut reply = self.command("USER", &target.user).await?;
        if reply.code == 331 {
            reply = self.command("PASS", &target.password).await?;
        }
        match reply.code {
            // 202: the password was superfluous.
            230 | 202 => {}
            400..=499 => return Err(self.no_verdict("could not log in now", &reply)),
            _ => return Err(self.refused("refused the login", &reply)),
        }
        if !target.path.is_empty() {
            let reply = self.command("CWD", &target.path).await?;
            match reply.code {
                200..=299 => {}
                400..=499 => {
                    return Err(
                        self.no_verdict(&format!("could not change into {} now", target.path), &reply)
                    );
                }
                _ => {
                    return Err(PlatformError::Refused(end_sentence(format!(
                        "Logged in to the FTP server at {}, but cannot change into the path {}: {}",
                        self.address,
                        target.path,
                        self.quote(&reply)
                    ))));
                }
            }
        }
        Ok(())
    }

    fn refused(&self, what: &str, reply: &Reply) -> PlatformError {
        PlatformError::Refused(end_sentence(format!(
            "The FTP server at {} {what}: {}",
            self.address,
            self.quote(reply)
        )))
    }

    fn no_verdict(&self, what: &str, reply: &Reply) -> PlatformError {
        PlatformError::unreachable(end_sentence(format!(
            "The FTP server at {} {what}: {}",
            self.address,
            self.quote(reply)
        )))
    }

    fn quote(&self, reply: &Reply) -> String {
        let text = quote_platform_text(&reply.text, &[&self.secrets[0], &self.secrets[1]]);
        if text.is_empty() { reply.code.to_string() } else { format!("{} {text}", reply.code) }
    }

    /// A reply that ended an operation: 4xx is passing ("try again later"), 5xx a refusal.
    fn failed(&self, doing: &str, path: &str, reply: &Reply) -> PlatformError {
        let on = if path.is_empty() { String::new() } else { format!(" {path:?}") };
        let message =
            format!("The FTP server at {} could not {doing}{on}: {}.", self.address, self.quote(reply));
        if (400..500).contains(&reply.code) {
            PlatformError::unreachable(message)
        } else {
            PlatformError::Rejected { status: 0, message }
        }
    }

    fn broke_off(&self, e: &std::io::Error) -> PlatformError {
        PlatformError::unreachable(format!("The FTP server at {} broke off: {e}.", self.address))
    }

    async fn line(&mut self) -> Result<String, PlatformError> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader).take(MAX_LINE_BYTES).read_until(b'\n', &mut bytes).await;
        match read {
            Err(e) => Err(self.broke_off(&e)),
            Ok(0) => Err(PlatformError::unreachable(format!(
                "The FTP server at {} closed the connection.",
                self.address
            ))),
            Ok(_) if bytes.last() != Some(&b'\n') => Err(self.malformed()),
            Ok(_) => Ok(String::from_utf8_lossy(&bytes).trim_end().to_string()),
        }
    }

    fn malformed(&self) -> PlatformError {
        PlatformError::unreachable(format!(
            "The FTP server at {} sent a reply that is not FTP.",
            self.address
        ))
    }

    async fn reply(&mut self) -> Result<Reply, PlatformError> {
        let first = self.line().await?;
        let code = reply_code(&first).ok_or_else(|| self.malformed())?;
        let mut text = vec![first.get(4..).unwrap_or_default().trim().to_string()];
        if first.as_bytes().get(3) == Some(&b'-') {
            let last = format!("{code} ");
            loop {
                if text.len() >= MAX_REPLY_LINES {
                    return Err(self.malformed());
                }
                let line = self.line().await?;
                let done = line.starts_with(&last) || line == code.to_string();
                text.push(line.get(4..).unwrap_or(&line).trim().to_string());
                if done {
                    break;
                }
            }
        }
        Ok(Reply { code, text: text.join(" ") })
    }

    async fn command(&mut self, verb: &str, argument: &str) -> Result<Reply, PlatformError> {
        if argument.contains(['\r', '\n']) {
            return Err(PlatformError::Rejected {
                status: 0,
                message: format!("The path {argument:?} has a line break."),
            });
        }
        let line = if argument.is_empty() { format!("{verb}\r\n") } else { format!("{verb} {argument}\r\n") };
        self.writer.write_all(line.as_bytes()).await.map_err(|e| self.broke_off(&e))?;
        self.reply().await
    }

    async fn expect(
        &mut self,
        verb: &str,
        argument: &str,
        doing: &str,
        codes: &[u16],
    ) -> Result<Reply, PlatformError> {
        let reply = self.command(verb, argument).await?;
        if codes.contains(&reply.code) { Ok(reply) } else { Err(self.failed(doing, argument, &reply)) }
    }

    async fn binary_mode(&mut self) -> Result<(), PlatformError> {
        if !self.binary {
            self.expect("TYPE", "I", "switch to binary transfers", &[200]).await?;
            self.binary = true;
        }
        Ok(())
    }

    /// A passive data connection (EPSV, or PASV for older servers), always to the control
    /// connection's own host, in binary mode.
    async fn data(&mut self) -> Result<TcpStream, PlatformError> {
        self.binary_mode().await?;
        let reply = self.command("EPSV", "").await?;
        let port = if reply.code == 229 {
            epsv_port(&reply.text)
        } else {
            let reply = self.expect("PASV", "", "open a data connection", &[227]).await?;
            pasv_port(&reply.text)
        };
        let port = port.ok_or_else(|| self.malformed())?;
        TcpStream::connect((self.peer.ip(), port)).await.map_err(|e| self.broke_off(&e))
    }

    /// A command that answers over a data connection; returns what came over it, at most
    /// `max` bytes.
    async fn fetch(
        &mut self,
        verb: &str,
        path: &str,
        doing: &str,
        max: usize,
    ) -> Result<Option<Vec<u8>>, PlatformError> {
        let data = self.data().await?;
        let reply = self.command(verb, path).await?;
        if reply.code == 550 || reply.code == 450 && verb != "RETR" {
            return Ok(None);
        }
        if !matches!(reply.code, 125 | 150) {
            return Err(self.failed(doing, path, &reply));
        }
        let bytes = self.transfer(data, doing, path, max).await?;
        let done = self.reply().await?;
        if !(200..300).contains(&done.code) {
            return Err(self.failed(doing, path, &done));
        }
        Ok(Some(bytes))
    }

    /// What a data connection carries, at most `max` bytes: past that the connection is
    /// dropped (the session is then of no further use, and the pass ends).
    async fn transfer(
        &self,
        data: TcpStream,
        doing: &str,
        path: &str,
        max: usize,
    ) -> Result<Vec<u8>, PlatformError> {
        let what = if doing == "list" { "a listing of" } else { "a file" };
        let server = format!("The FTP server at {}", self.address);
        super::read_at_most(data, max)
            .await
            .map_err(|e| self.broke_off(&e))?
            .ok_or_else(|| super::too_large(&server, what, path, max))
    }

    async fn bounded<T>(
        &mut self,
        work: impl AsyncFnOnce(&mut Session) -> Result<T, PlatformError>,
    ) -> Result<T, PlatformError> {
        let (timeout, address) = (self.timeout, self.address.clone());
        tokio::time::timeout(timeout, work(self)).await.map_err(|_| {
            PlatformError::unreachable(format!("The FTP server at {address} did not answer in time."))
        })?
    }

    /// The files in `dir`. MLSD says which entries are files and gives their `size` and
    /// `modify` facts; NLST, for servers without it, gives names only (directories too), so
    /// the caller's own filter (`*.csv`) decides there and asks [`Session::facts`] after.
    pub async fn list(&mut self, dir: &str, max: usize) -> Result<Vec<Entry>, PlatformError> {
        let dir = parts(dir)?.join("/");
        self.bounded(async |s| {
            let target = if dir.is_empty() { "." } else { dir.as_str() };
            let data = s.data().await?;
            let reply = s.command("MLSD", target).await?;
            if matches!(reply.code, 125 | 150) {
                let bytes = s.transfer(data, "list", target, max).await?;
                let done = s.reply().await?;
                if !(200..300).contains(&done.code) {
                    return Err(s.failed("list", &dir, &done));
                }
                return Ok(mlsd_files(&String::from_utf8_lossy(&bytes)));
            }
            drop(data);
            if reply.code == 550 {
                return Ok(Vec::new());
            }
            let listing = s.fetch("NLST", target, "list", max).await?.unwrap_or_default();
            Ok(String::from_utf8_lossy(&listing)
                .lines()
                .filter_map(|line| line.trim().rsplit('/').next().map(str::to_string))
                .filter(|name| !name.is_empty() && name != "." && name != "..")
                .map(|name| Entry { name, facts: Facts::default() })
                .collect())
        })
        .await
    }

    /// A file's size and modification time from `SIZE` and `MDTM` (RFC 3659), for servers
    /// whose listing gave none; either is absent when the server does not know the command.
    pub async fn facts(&mut self, path: &str) -> Result<Facts, PlatformError> {
        let path = parts(path)?.join("/");
        self.bounded(async |s| {
            // SIZE answers in the current type's bytes: binary, like the transfers.
            s.binary_mode().await?;
            let size = s.command("SIZE", &path).await?;
            let size = (size.code == 213).then(|| size.text.trim().parse().ok()).flatten();
            let modified = s.command("MDTM", &path).await?;
            let modified = (modified.code == 213).then(|| modified.text.trim().to_string());
            Ok(Facts { size, modified })
        })
        .await
    }

    pub async fn read(&mut self, path: &str, max: usize) -> Result<Vec<u8>, PlatformError> {
        let path = parts(path)?.join("/");
        self.bounded(async |s| {
            s.fetch("RETR", &path, "read", max).await?.ok_or_else(|| PlatformError::Rejected {
                status: 0,
                message: format!("The FTP server at {} has no file {path:?}.", s.address),
            })
        })
        .await
    }

    /// Stores what `chunks` delivers as `path`. Any failure on the way (the server refusing
    /// the file, the data connection breaking, no final 2xx) is passing: the file's fate is
    /// unknown and the same file is sent again later.
    pub async fn write_from(
        &mut self,
        path: &str,
        mut chunks: Receiver<Vec<u8>>,
    ) -> Result<(), PlatformError> {
        let path = parts(path)?.join("/");
        let mut data = self
            .bounded(async |s| {
                let data = s.data().await?;
                let reply = s.command("STOR", &path).await?;
                if matches!(reply.code, 125 | 150) {
                    Ok(data)
                } else {
                    Err(s.not_taken(&path, &s.quote(&reply)))
                }
            })
            .await?;
        while let Some(chunk) = chunks.recv().await {
            match tokio::time::timeout(self.timeout, data.write_all(&chunk)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    drop(data);
                    return Err(self.broken_transfer(&path, &e).await);
                }
                Err(_) => return Err(self.not_taken(&path, "it stopped reading the data")),
            }
        }
        self.bounded(async |s| {
            data.shutdown().await.map_err(|e| s.not_taken(&path, &e.to_string()))?;
            drop(data);
            let done = s.reply().await?;
            if (200..300).contains(&done.code) { Ok(()) } else { Err(s.not_taken(&path, &s.quote(&done))) }
        })
        .await
    }

    /// Why a transfer broke off: the reply the server sends at once (426, 451, 552), or else
    /// what the connection said.
    async fn broken_transfer(&mut self, path: &str, error: &std::io::Error) -> PlatformError {
        let wait = self.timeout.min(Duration::from_secs(2));
        match tokio::time::timeout(wait, self.reply()).await {
            Ok(Ok(reply)) => self.not_taken(path, &self.quote(&reply)),
            _ => self.not_taken(path, &error.to_string()),
        }
    }

    fn not_taken(&self, path: &str, why: &str) -> PlatformError {
        PlatformError::unreachable(end_sentence(format!(
            "The FTP server at {} did not take the file {path:?}: {why}",
            self.address
        )))
    }

    /// RNFR/RNTO; a server that will not rename over an existing file has it removed first.
    pub async fn rename(&mut self, from: &str, to: &str) -> Result<(), PlatformError> {
        let (from, to) = (parts(from)?.join("/"), parts(to)?.join("/"));
        self.bounded(async |s| {
            s.expect("RNFR", &from, "rename", &[350]).await?;
            let reply = s.command("RNTO", &to).await?;
            if (200..300).contains(&reply.code) {
                return Ok(());
            }
            let gone = s.command("DELE", &to).await?;
            if !(200..300).contains(&gone.code) {
                return Err(s.failed("rename to", &to, &reply));
            }
            s.expect("RNFR", &from, "rename", &[350]).await?;
            s.expect("RNTO", &to, "rename to", &[250]).await.map(|_| ())
        })
        .await
    }

    pub async fn remove(&mut self, path: &str) -> Result<(), PlatformError> {
        let path = parts(path)?.join("/");
        self.bounded(async |s| {
            let reply = s.command("DELE", &path).await?;
            // 550: no such file, which is what removing wants.
            if (200..300).contains(&reply.code) || reply.code == 550 {
                Ok(())
            } else {
                Err(s.failed("remove", &path, &reply))
            }
        })
        .await
    }

    pub async fn make_dir_all(&mut self, dir: &str) -> Result<(), PlatformError> {
        let parts: Vec<String> = parts(dir)?.into_iter().map(str::to_string).collect();
        self.bounded(async |s| {
            let mut so_far = String::new();
            for part in &parts {
                so_far = if so_far.is_empty() { part.clone() } else { format!("{so_far}/{part}") };
                let reply = s.command("MKD", &so_far).await?;
                // 550/521: it exists already (servers say so differently).
                if !(200..300).contains(&reply.code) && !matches!(reply.code, 550 | 521) {
                    return Err(s.failed("create", &so_far, &reply));
                }
            }
            Ok(())
        })
        .await
    }

    pub async fn close(mut self) {
        let _ = tokio::time::timeout(self.timeout, self.writer.write_all(b"QUIT\r\n")).await;
        let _ = self.writer.shutdown().await;
    }
}

/// The three-digit code that starts a reply line, followed by a space, `-` or nothing.
fn reply_code(line: &str) -> Option<u16> {
    let digits = line.get(..3)?;
    let separator_ok = matches!(line.as_bytes().get(3), None | Some(b' ') | Some(b'-'));
    (digits.bytes().all(|b| b.is_ascii_digit()) && separator_ok).then(|| digits.parse().ok()).flatten()
}

/// `Entering Extended Passive Mode (|||6446|)`.
fn epsv_port(text: &str) -> Option<u16> {
    let inside = text.split_once('(')?.1.split_once(')')?.0;
    inside.trim_matches('|').parse().ok()
}

/// `Entering Passive Mode (127,0,0,1,25,46)`: the last two numbers are the port.
fn pasv_port(text: &str) -> Option<u16> {
    let inside = text.split_once('(')?.1.split_once(')')?.0;
    let numbers: Vec<u16> = inside.split(',').map(|n| n.trim().parse().ok()).collect::<Option<_>>()?;
    match numbers.as_slice() {
        [_, _, _, _, high, low] if *high < 256 && *low < 256 => Some(high * 256 + low),
        _ => None,
    }
}

/// The plain files of an MLSD listing (`type=file;size=3;modify=20260101120000.5; name`)
/// with their size and modification time; fact names are case-insensitive.
fn mlsd_files(listing: &str) -> Vec<Entry> {
    listing
        .lines()
        .filter_map(|line| {
            let (facts, name) = line.split_once(' ')?;
            let mut entry = Entry { name: name.trim_end().to_string(), facts: Facts::default() };
            let mut is_file = false;
            for fact in facts.split(';') {
                let Some((key, value)) = fact.split_once('=') else { continue };
                match key.to_ascii_lowercase().as_str() {
                    "type" => is_file = value.eq_ignore_ascii_case("file"),
                    "size" => entry.facts.size = value.parse().ok(),
                    "modify" => entry.facts.modified = Some(value.to_string()),
                    _ => {}
                }
            }
            is_file.then_some(entry)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passive_ports_are_read_from_both_reply_forms() {
        assert_eq!(epsv_port("Entering Extended Passive Mode (|||6446|)"), Some(6446));
        assert_eq!(pasv_port("Entering Passive Mode (127,0,0,1,25,46)"), Some(25 * 256 + 46));
        assert_eq!(pasv_port("Entering Passive Mode (127,0,0,1,300,46)"), None);
        assert_eq!(epsv_port("no port"), None);
    }

    #[test]
    fn mlsd_names_only_plain_files_with_their_size_and_time() {
        let listing = "type=dir;modify=1; processed\r\ntype=file;size=3;modify=20260101120000.25; a b.csv\r\n\
                       Type=File;Size=1; c.csv\r\nsize=9; no-type.csv\r\n";
        let entries = mlsd_files(listing);
        let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a b.csv", "c.csv"]);
        assert_eq!(entries[0].facts, Facts { size: Some(3), modified: Some("20260101120000.25".into()) });
        assert_eq!(entries[1].facts, Facts { size: Some(1), modified: None });
    }

    #[test]
    fn reply_codes_are_three_digits_then_a_separator() {
        assert_eq!(reply_code("220 ready"), Some(220));
        assert_eq!(reply_code("230-welcome"), Some(230));
        assert_eq!(reply_code("2200 x"), None);
    }
}
