//! The FTP check: connect, `USER`/`PASS`, `CWD` into the URL's path, `QUIT` (RFC 959).
//!
//! Only the control connection is used, so the few commands are spoken here directly rather
//! than through an FTP crate: the one we looked at (suppaftp) logs every command it sends at
//! trace level, `PASS <password>` included, and Rocket's debug log level prints such records.
//!
//! Replies: 530 (and other 5xx) to `USER`/`PASS` is a refusal, as is any 5xx to `CWD`, which
//! names the path. 4xx replies are transient ("try again later"), so they are `Unreachable`.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::reach::Reach;
use super::target::Target;
use super::{Adapter, PingError, end_sentence, quote_platform_text};

/// Bounds on what a server may send: bytes in one reply line, lines in one reply.
const MAX_LINE_BYTES: u64 = 4096;
const MAX_REPLY_LINES: usize = 100;

pub(super) async fn check(adapter: &Adapter, reach: Reach) -> Result<(), PingError> {
    let target = Target::from_adapter(adapter, "ftp", 21)?.reached_under(reach);
    let mut control = Control::new(target.connect("FTP").await?, &target);

    let mut greeting = control.read_reply().await?;
    // 120: "ready in a few minutes"; the 220 follows on the same connection.
    for _ in 0..2 {
        if greeting.code != 120 {
            break;
        }
        greeting = control.read_reply().await?;
    }
    if greeting.code != 220 {
        return Err(control.no_verdict("is not ready", &greeting));
    }

    let reply = control.command("USER", &target.user).await?;
    match reply.code {
        230 => {}
        331 => {
            let reply = control.command("PASS", &target.password).await?;
            match reply.code {
                230 | 202 => {}
                400..=499 => return Err(control.no_verdict("could not log in now", &reply)),
                _ => return Err(control.refused("refused the login", &reply)),
            }
        }
        400..=499 => return Err(control.no_verdict("could not log in now", &reply)),
        _ => return Err(control.refused("refused the login", &reply)),
    }

    if !target.path.is_empty() {
        let reply = control.command("CWD", &target.path).await?;
        match reply.code {
            200..=299 => {}
            400..=499 => {
                return Err(control.no_verdict(&format!("could not change into {} now", target.path), &reply));
            }
            _ => {
                return Err(PingError::AuthenticationFailed(end_sentence(format!(
                    "Logged in to the FTP server at {}, but cannot change into the path {}: {}",
                    target.address(),
                    target.path,
                    control.quote(&reply)
                ))));
            }
        }
    }
    // The verdict is in; the server's answer to QUIT changes nothing, so it is not awaited.
    control.quit().await;
    Ok(())
}

struct Reply {
    code: u16,
    /// The reply's text, all lines joined, without the code.
    text: String,
}

struct Control<'t> {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    target: &'t Target,
}

impl<'t> Control<'t> {
    fn new(stream: TcpStream, target: &'t Target) -> Self {
        let (read, writer) = stream.into_split();
        Self { reader: BufReader::new(read), writer, target }
    }

    /// Sends `VERB argument` and reads the reply.
    async fn command(&mut self, verb: &str, argument: &str) -> Result<Reply, PingError> {
        // Target rejected line breaks in every argument, so this is exactly one command.
        let line = format!("{verb} {argument}\r\n");
        self.writer
            .write_all(line.as_bytes())
            .await
            .map_err(|e| self.broke_off(&format!("sending {verb}"), &e))?;
        self.read_reply().await
    }

    async fn quit(mut self) {
        let _ = self.writer.write_all(b"QUIT\r\n").await;
        let _ = self.writer.shutdown().await;
    }

    /// One reply, single-line (`220 text`) or multi-line (`220-text` ... `220 text`).
    async fn read_reply(&mut self) -> Result<Reply, PingError> {
        let first = self.read_line().await?;
        let code = reply_code(&first).ok_or_else(|| self.malformed())?;
        let mut text = vec![first.get(4..).unwrap_or_default().trim().to_owned()];
        if first.as_bytes().get(3) == Some(&b'-') {
            let last_prefix = format!("{code} ");
            loop {
                if text.len() >= MAX_REPLY_LINES {
                    return Err(self.malformed());
                }
                let line = self.read_line().await?;
                let is_last = line.starts_with(&last_prefix) || line == code.to_string();
                text.push(line.get(4..).unwrap_or(&line).trim().to_owned());
                if is_last {
                    break;
                }
            }
        }
        Ok(Reply { code, text: text.join(" ") })
    }

    async fn read_line(&mut self) -> Result<String, PingError> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader).take(MAX_LINE_BYTES).read_until(b'\n', &mut bytes).await;
        let read = read.map_err(|e| self.broke_off("reading its reply", &e))?;
        if read == 0 {
            return Err(PingError::Unreachable(format!(
                "The FTP server at {} closed the connection.",
                self.target.address()
            )));
        }
        if bytes.last() != Some(&b'\n') {
            return Err(self.malformed());
        }
        Ok(String::from_utf8_lossy(&bytes).trim_end().to_owned())
    }

    fn quote(&self, reply: &Reply) -> String {
        let text = quote_platform_text(&reply.text, &self.target.secrets());
        if text.is_empty() { reply.code.to_string() } else { format!("{} {text}", reply.code) }
    }

    fn refused(&self, what: &str, reply: &Reply) -> PingError {
        PingError::AuthenticationFailed(end_sentence(format!(
            "The FTP server at {} {what}: {}",
            self.target.address(),
            self.quote(reply)
        )))
    }

    fn no_verdict(&self, what: &str, reply: &Reply) -> PingError {
        PingError::Unreachable(end_sentence(format!(
            "The FTP server at {} {what}: {}",
            self.target.address(),
            self.quote(reply)
        )))
    }

    fn broke_off(&self, stage: &str, error: &std::io::Error) -> PingError {
        PingError::Unreachable(format!(
            "The FTP server at {} failed while {stage}: {error}.",
            self.target.address()
        ))
    }

    fn malformed(&self) -> PingError {
        PingError::Unreachable(format!(
            "The FTP server at {} sent a reply that is not FTP.",
            self.target.address()
        ))
    }
}

/// The three-digit code that starts a reply line, followed by a space, `-` or nothing.
fn reply_code(line: &str) -> Option<u16> {
    let digits = line.get(..3)?;
    let separator_ok = matches!(line.as_bytes().get(3), None | Some(b' ') | Some(b'-'));
    (digits.bytes().all(|b| b.is_ascii_digit()) && separator_ok).then(|| digits.parse().ok()).flatten()
}

#[cfg(test)]
mod tests {
    use super::reply_code;

    #[test]
    fn reply_codes_are_three_digits_then_a_separator() {
        assert_eq!(reply_code("220 ready"), Some(220));
        assert_eq!(reply_code("230-welcome"), Some(230));
        assert_eq!(reply_code("250"), Some(250));
        for line in ["", "22", "2200 x", "abc ready", "SSH-2.0-OpenSSH"] {
            assert_eq!(reply_code(line), None, "{line}");
        }
    }
}
