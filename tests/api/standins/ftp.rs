//! A small FTP server speaking the control protocol (RFC 959) for one user and one directory:
//! 220 greeting (multi-line), USER→331, PASS→230/530, CWD→250/550, QUIT→221, others 502.

use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use super::StandIn;

pub const USER: &str = "ftp-user";
pub const PASSWORD: &str = "pw-SECRET-ftp/@:77";
pub const EXISTING_DIR: &str = "/incoming/orders";

/// More commands than a check sends; the session ends after this many.
const MAX_COMMANDS: usize = 16;

pub struct FtpStandIn {
    pub server: StandIn,
    seen: Arc<Mutex<Vec<String>>>,
}

impl FtpStandIn {
    pub async fn start() -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let server = StandIn::start(move |stream| serve(stream, Arc::clone(&record))).await;
        Self { server, seen }
    }

    /// The command lines received, in order, across connections.
    pub fn commands(&self) -> Vec<String> {
        self.seen.lock().expect("commands lock").clone()
    }
}

async fn serve(stream: TcpStream, seen: Arc<Mutex<Vec<String>>>) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    if write.write_all(b"220-orderbridge test FTP\r\n220 Ready.\r\n").await.is_err() {
        return;
    }
    let mut user = None;
    let mut logged_in = false;
    for _ in 0..MAX_COMMANDS {
        let Ok(Some(line)) = lines.next_line().await else {
            return;
        };
        seen.lock().expect("commands lock").push(line.clone());
        let (verb, argument) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        let reply = match verb.to_ascii_uppercase().as_str() {
            "USER" => {
                user = Some(argument.to_owned());
                "331 Password required.".to_owned()
            }
            "PASS" if user.as_deref() == Some(USER) && argument == PASSWORD => {
                logged_in = true;
                "230 Logged in.".to_owned()
            }
            "PASS" => "530 Login incorrect.".to_owned(),
            "CWD" if !logged_in => "530 Please log in first.".to_owned(),
            "CWD" if argument == EXISTING_DIR => "250 Directory changed.".to_owned(),
            "CWD" => format!("550 {argument}: No such file or directory."),
            "QUIT" => {
                let _ = write.write_all(b"221 Goodbye.\r\n").await;
                return;
            }
            _ => "502 Command not implemented.".to_owned(),
        };
        if write.write_all(format!("{reply}\r\n").as_bytes()).await.is_err() {
            return;
        }
    }
}
