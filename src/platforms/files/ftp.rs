//! An FTP warehouse (`ftp`, RFC 959 with the passive data connections of RFC 2428): one
//! control connection per pass, binary transfers, and every exchange bounded by the pass's
//! timeout. The commands are spoken here rather than through an FTP crate: the one we
//! looked at logs every command it sends at trace level, `PASS <password>` included.

use std::net::SocketAddr;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::mpsc::Receiver;

use super::parts;
use crate::platforms::PlatformError;
use crate::platforms::quote_platform_text;
use crate::platforms::target::Target;

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
}

impl Session {
    pub async fn open(target: &Target, timeout: Duration) -> Result<Session, PlatformError> {
        let address = target.address();
        let opened = async {
            let stream = target.connect("FTP").await.map_err(PlatformError::from)?;
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
            };
            let mut greeting = session.reply().await?;
            if greeting.code == 120 {
                greeting = session.reply().await?;
            }
            if greeting.code != 220 {
                return Err(session.failed("greet", "", &greeting));
            }
            let mut reply = session.command("USER", &target.user).await?;
            if reply.code == 331 {
                reply = session.command("PASS", &target.password).await?;
            }
            match reply.code {
                230 | 202 => {}
                400..=499 => return Err(session.failed("log in", "", &reply)),
                _ => {
                    return Err(PlatformError::Refused(format!(
                        "The FTP server at {address} refused the login: {}.",
                        session.quote(&reply)
                    )));
                }
            }
            session.expect("TYPE", "I", "switch to binary transfers", &[200]).await?;
            if !target.path.is_empty() {
                let reply = session.command("CWD", &target.path).await?;
                if !(200..300).contains(&reply.code) {
                    return Err(PlatformError::Refused(format!(
                        "Logged in to the FTP server at {address}, but cannot change into {}: {}.",
                        target.path,
                        session.quote(&reply)
                    )));
                }
            }
            Ok(session)
        };
        tokio::time::timeout(timeout, opened).await.map_err(|_| {
            PlatformError::unreachable(format!("The FTP server at {address} did not answer in time."))
        })?
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

    /// A passive data connection (EPSV, or PASV for older servers), always to the control
    /// connection's own host.
    async fn data(&mut self) -> Result<TcpStream, PlatformError> {
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

    /// A command that answers over a data connection; returns what came over it.
    async fn fetch(&mut self, verb: &str, path: &str, doing: &str) -> Result<Option<Vec<u8>>, PlatformError> {
        let mut data = self.data().await?;
        let reply = self.command(verb, path).await?;
        if reply.code == 550 || reply.code == 450 && verb != "RETR" {
            return Ok(None);
        }
        if !matches!(reply.code, 125 | 150) {
            return Err(self.failed(doing, path, &reply));
        }
        let mut bytes = Vec::new();
        data.read_to_end(&mut bytes).await.map_err(|e| self.broke_off(&e))?;
        drop(data);
        let done = self.reply().await?;
        if !(200..300).contains(&done.code) {
            return Err(self.failed(doing, path, &done));
        }
        Ok(Some(bytes))
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

    pub async fn list(&mut self, dir: &str) -> Result<Vec<String>, PlatformError> {
        let dir = parts(dir)?.join("/");
        self.bounded(async |s| {
            // MLSD says which entries are files; NLST, for servers without it, does not, so
            // the caller's own filter (`*.csv`) decides there.
            let target = if dir.is_empty() { "." } else { dir.as_str() };
            let mut data = s.data().await?;
            let reply = s.command("MLSD", target).await?;
            if matches!(reply.code, 125 | 150) {
                let mut bytes = Vec::new();
                data.read_to_end(&mut bytes).await.map_err(|e| s.broke_off(&e))?;
                drop(data);
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
            let listing = s.fetch("NLST", target, "list").await?.unwrap_or_default();
            Ok(String::from_utf8_lossy(&listing)
                .lines()
                .filter_map(|line| line.trim().rsplit('/').next().map(str::to_string))
                .filter(|name| !name.is_empty() && name != "." && name != "..")
                .collect())
        })
        .await
    }

    pub async fn read(&mut self, path: &str) -> Result<Vec<u8>, PlatformError> {
        let path = parts(path)?.join("/");
        self.bounded(async |s| {
            s.fetch("RETR", &path, "read").await?.ok_or_else(|| PlatformError::Rejected {
                status: 0,
                message: format!("The FTP server at {} has no file {path:?}.", s.address),
            })
        })
        .await
    }

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
                if matches!(reply.code, 125 | 150) { Ok(data) } else { Err(s.failed("write", &path, &reply)) }
            })
            .await?;
        while let Some(chunk) = chunks.recv().await {
            match tokio::time::timeout(self.timeout, data.write_all(&chunk)).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => return Err(self.broke_off(&e)),
                Err(_) => {
                    return Err(PlatformError::unreachable(format!(
                        "The FTP server at {} stopped taking the file {path:?}.",
                        self.address
                    )));
                }
            }
        }
        self.bounded(async |s| {
            data.shutdown().await.map_err(|e| s.broke_off(&e))?;
            drop(data);
            let done = s.reply().await?;
            if (200..300).contains(&done.code) { Ok(()) } else { Err(s.failed("write", &path, &done)) }
        })
        .await
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

/// The plain files of an MLSD listing (`type=file;size=3; name`).
fn mlsd_files(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter_map(|line| {
            let (facts, name) = line.split_once(' ')?;
            let is_file = facts.split(';').any(|fact| fact.eq_ignore_ascii_case("type=file"));
            is_file.then(|| name.trim_end().to_string())
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
    fn mlsd_names_only_plain_files() {
        let listing =
            "type=dir;modify=1; processed\r\ntype=file;size=3; a b.csv\r\nType=File;size=1; c.csv\r\n";
        assert_eq!(mlsd_files(listing), vec!["a b.csv".to_string(), "c.csv".to_string()]);
    }

    #[test]
    fn reply_codes_are_three_digits_then_a_separator() {
        assert_eq!(reply_code("220 ready"), Some(220));
        assert_eq!(reply_code("230-welcome"), Some(230));
        assert_eq!(reply_code("2200 x"), None);
    }
}
