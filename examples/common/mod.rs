//! What the examples share: the server binary beside them, a server process that dies with
//! them, a free loopback port, one plain HTTP request, and what `/proc` says of a process.

// Each example uses a part of this.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Lines, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when dropped, so no path out of an example leaves it behind.
pub struct Guard(pub Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The `orderbridge` binary built beside the running example
/// (`target/release/examples/x` -> `target/release/orderbridge`). `cargo run --example`
/// rebuilds the library but not the binary, so an older binary is warned about.
pub fn server_binary() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
    let dir = exe.parent().and_then(Path::parent).ok_or("no target directory")?;
    let bin = dir.join("orderbridge");
    if !bin.exists() {
        return Err("build the server first: cargo build --release".into());
    }
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    if let (Some(bin_time), Some(lib_time)) = (modified(&bin), modified(&dir.join("liborderbridge.rlib")))
        && lib_time > bin_time
    {
        eprintln!("warning: {} is older than the library; run `cargo build --release` first", bin.display());
    }
    Ok(bin)
}

pub fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).map_err(|e| e.to_string())
}

/// A `kB` field of `/proc/{pid}/status` (`VmRSS:`, `VmHWM:`) of a pid or `self`; 0 if unread.
pub fn proc_status_kib(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// User + system CPU seconds of a process (a pid or `self`), from clock ticks of 1/100 s.
pub fn cpu_secs(pid: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// A platform simulator in a child process: this example started again with `flag`, so the
/// CPU time and memory a benchmark reads from `/proc/self` are orderbridge's alone. The child
/// prints its address, then answers each command line on its stdin with one line, until its
/// stdin closes (when this is dropped).
pub struct SimulatorChild {
    child: Child,
    lines: Lines<BufReader<ChildStdout>>,
    /// The address the simulator printed.
    pub address: String,
}

impl SimulatorChild {
    pub fn start(flag: &str, orders: usize) -> Result<SimulatorChild, String> {
        let exe = std::env::current_exe().map_err(|e| format!("current exe: {e}"))?;
        let mut child = Command::new(exe)
            .args([flag, "--orders", &orders.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the simulator: {e}"))?;
        let stdout = child.stdout.take().ok_or("the simulator's stdout")?;
        let mut lines = BufReader::new(stdout).lines();
        let loading = Instant::now();
        let address = lines.next().and_then(Result::ok).ok_or("the simulator did not start")?;
        eprintln!("simulator with {orders} orders at {address} ({:.1} s)", loading.elapsed().as_secs_f64());
        Ok(SimulatorChild { child, lines, address })
    }

    /// Sends one command; its one-line answer.
    pub fn ask(&mut self, command: &str) -> String {
        let stdin = self.child.stdin.as_mut().expect("simulator stdin");
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        self.lines.next().and_then(Result::ok).unwrap_or_default()
    }
}

impl Drop for SimulatorChild {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// One HTTP/1.1 request on a fresh loopback connection: (status, body), a chunked body put
/// back together. For setting up and reading answers, not for load.
pub fn http(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Result<(u16, String), String> {
    let io = |e: std::io::Error| format!("{method} {path}: {e}");
    let mut stream = TcpStream::connect(("127.0.0.1", port)).map_err(io)?;
    stream.set_read_timeout(Some(timeout)).map_err(io)?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).map_err(io)?;
    stream.write_all(body).map_err(io)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).map_err(io)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
        dechunk(body)
    } else {
        body.to_string()
    };
    Ok((status, body))
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}
