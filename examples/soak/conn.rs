//! One keep-alive connection, by hand: HTTP/1.1 written and read with `Content-Length` (or
//! chunks), so a reconnect cannot hide.

use super::*;

pub(crate) struct Conn {
    pub(crate) port: u16,
    pub(crate) stream: Option<BufReader<tokio::net::TcpStream>>,
    pub(crate) opened: u64,
}

pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) body: Vec<u8>,
    pub(crate) keep_alive: bool,
}

impl Conn {
    pub(crate) async fn open(&mut self) -> std::io::Result<()> {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", self.port)).await?;
        stream.set_nodelay(true)?;
        self.stream = Some(BufReader::with_capacity(64 * 1024, stream));
        self.opened += 1;
        Ok(())
    }

    /// Sends one request and reads its answer. The caller drops the connection on `Err`.
    pub(crate) async fn exchange(&mut self, request: &[u8]) -> Result<Answer, String> {
        if self.stream.is_none() {
            self.open().await.map_err(|e| format!("connect: {e}"))?;
        }
        let Some(stream) = self.stream.as_mut() else { return Err("no connection".into()) };
        stream.get_mut().write_all(request).await.map_err(|e| format!("write: {e}"))?;
        let mut line = Vec::with_capacity(256);
        read_line(stream, &mut line, "status line").await?;
        let status_line = String::from_utf8_lossy(&line).into_owned();
        let status: u16 = status_line
            .strip_prefix("HTTP/1.1 ")
            .and_then(|s| s.get(..3))
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("not an HTTP/1.1 status line: {:?}", status_line.trim_end()))?;
        let (mut length, mut chunked, mut keep_alive) = (None, false, true);
        loop {
            line.clear();
            read_line(stream, &mut line, "header").await?;
            if line == b"\r\n" || line == b"\n" {
                break;
            }
            let header = String::from_utf8_lossy(&line).to_ascii_lowercase();
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            match name.trim() {
                "content-length" => length = Some(value.parse::<usize>().map_err(|_| "bad Content-Length")?),
                "transfer-encoding" => chunked = value.contains("chunked"),
                "connection" => keep_alive = !value.contains("close"),
                _ => {}
            }
        }
        let mut body = Vec::new();
        if chunked {
            loop {
                line.clear();
                read_line(stream, &mut line, "chunk size").await?;
                let size = String::from_utf8_lossy(&line);
                let size = size.trim().split(';').next().unwrap_or("");
                let size = usize::from_str_radix(size, 16).map_err(|_| format!("bad chunk size {size:?}"))?;
                if size == 0 {
                    // Trailers, up to the empty line.
                    loop {
                        line.clear();
                        read_line(stream, &mut line, "trailer").await?;
                        if line == b"\r\n" || line == b"\n" {
                            break;
                        }
                    }
                    break;
                }
                let start = body.len();
                body.resize(start + size, 0);
                stream.read_exact(&mut body[start..]).await.map_err(|e| format!("chunk: {e}"))?;
                let mut crlf = [0u8; 2];
                stream.read_exact(&mut crlf).await.map_err(|e| format!("chunk end: {e}"))?;
            }
        } else if let Some(n) = length {
            body.resize(n, 0);
            stream.read_exact(&mut body).await.map_err(|e| format!("body ({n} bytes): {e}"))?;
        } else if !(status == 204 || status == 304 || (100..200).contains(&status)) {
            // No length: the body runs to the end of the connection.
            stream.read_to_end(&mut body).await.map_err(|e| format!("body: {e}"))?;
            keep_alive = false;
        }
        Ok(Answer { status, body, keep_alive })
    }
}

/// Reads one line (with its `\n`); the end of the stream before one is an error.
pub(crate) async fn read_line(
    stream: &mut BufReader<tokio::net::TcpStream>,
    line: &mut Vec<u8>,
    what: &str,
) -> Result<(), String> {
    match stream.read_until(b'\n', line).await {
        Ok(0) => Err(format!("the server closed the connection before the {what}")),
        Ok(_) if line.ends_with(b"\n") => Ok(()),
        Ok(_) => Err(format!("the server closed the connection within the {what}")),
        Err(e) => Err(format!("reading the {what}: {e}")),
    }
}
