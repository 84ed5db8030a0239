//! An FTP server that serves a temporary directory to one user, with passive data
//! connections (EPSV and PASV), MLSD (with `size` and `modify` facts), NLST, SIZE, MDTM, RETR,
//! STOR, RNFR/RNTO (refusing to rename over an existing file, as many servers do), DELE and
//! MKD: a warehouse's file drop on loopback. [`Quirks`] make it an older or a failing server.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub const USER: &str = "wh-user";
pub const PASSWORD: &str = "ftp-pw-SECRET-9";

/// Commands one session may send before it is cut off.
const MAX_COMMANDS: usize = 10_000;

/// How this server differs from a modern one.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quirks {
    /// No MLSD (RFC 959 only): listings are NLST, names only.
    pub no_mlsd: bool,
    /// No SIZE and MDTM either: nothing but the bytes tells a file's state.
    pub no_facts: bool,
    /// STOR starts the transfer, then the server drops the data connection and answers
    /// `426` (a disk full, a crash mid-upload).
    pub breaks_stor: bool,
    /// RETR sends zeros until the client stops reading (at most 1 GiB): a file that never
    /// ends.
    pub endless_retr: bool,
}

pub struct FtpFiles {
    pub port: u16,
    task: JoinHandle<()>,
    commands: Arc<Mutex<Vec<String>>>,
}

impl Drop for FtpFiles {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl FtpFiles {
    /// Serves `root` (which must exist) on 127.0.0.1.
    pub async fn start(root: &Path) -> FtpFiles {
        FtpFiles::start_with(root, Quirks::default()).await
    }

    pub async fn start_with(root: &Path, quirks: Quirks) -> FtpFiles {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let root = root.to_path_buf();
        let commands = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&commands);
        let task = tokio::spawn(async move {
            let mut sessions = tokio::task::JoinSet::new();
            for _ in 0..64 {
                let Ok((stream, _)) = listener.accept().await else { break };
                sessions.spawn(session(stream, root.clone(), Arc::clone(&seen), quirks));
            }
            while sessions.join_next().await.is_some() {}
        });
        FtpFiles { port, task, commands }
    }

    /// The command lines the server received.
    pub fn commands(&self) -> Vec<String> {
        self.commands.lock().unwrap().clone()
    }
}

fn resolve(root: &Path, cwd: &str, arg: &str) -> Option<PathBuf> {
    let joined = if arg.starts_with('/') { arg.to_string() } else { format!("{cwd}/{arg}") };
    let mut path = root.to_path_buf();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            part => path.push(part),
        }
    }
    Some(path)
}

/// A file's modification time as MLSD and MDTM write it (`YYYYMMDDHHMMSS`), with `.sss`
/// for MLSD.
fn ftp_time(path: &Path, fraction: bool) -> Option<String> {
    let modified = time::OffsetDateTime::from(std::fs::metadata(path).ok()?.modified().ok()?);
    let whole = format!(
        "{:04}{:02}{:02}{:02}{:02}{:02}",
        modified.year(),
        u8::from(modified.month()),
        modified.day(),
        modified.hour(),
        modified.minute(),
        modified.second()
    );
    Some(if fraction { format!("{whole}.{:03}", modified.millisecond()) } else { whole })
}

async fn session(stream: TcpStream, root: PathBuf, seen: Arc<Mutex<Vec<String>>>, quirks: Quirks) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read).lines();
    let _ = write.write_all(b"220 test warehouse FTP\r\n").await;
    let (mut user, mut logged_in, mut cwd) = (String::new(), false, String::new());
    let mut passive: Option<TcpListener> = None;
    let mut rename_from: Option<PathBuf> = None;
    for _ in 0..MAX_COMMANDS {
        let Ok(Some(line)) = lines.next_line().await else { return };
        seen.lock().unwrap().push(line.clone());
        let (verb, arg) = line.split_once(' ').unwrap_or((line.as_str(), ""));
        let verb = verb.to_ascii_uppercase();
        let reply: String = match verb.as_str() {
            "USER" => {
                user = arg.to_string();
                "331 Password required.".into()
            }
            "PASS" if user == USER && arg == PASSWORD => {
                logged_in = true;
                "230 Logged in.".into()
            }
            "PASS" => "530 Login incorrect.".into(),
            "QUIT" => {
                let _ = write.write_all(b"221 Bye.\r\n").await;
                return;
            }
            _ if !logged_in => "530 Please log in.".into(),
            "TYPE" => "200 Type set.".into(),
            "PWD" => format!("257 \"/{cwd}\""),
            "CWD" => match resolve(&root, &cwd, arg) {
                Some(p) if p.is_dir() => {
                    cwd = p.strip_prefix(&root).unwrap().to_string_lossy().into_owned();
                    "250 OK.".into()
                }
                _ => "550 No such directory.".into(),
            },
            "EPSV" | "PASV" => {
                let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
                let port = listener.local_addr().unwrap().port();
                passive = Some(listener);
                if verb == "EPSV" {
                    format!("229 Entering Extended Passive Mode (|||{port}|)")
                } else {
                    format!("227 Entering Passive Mode (127,0,0,1,{},{})", port / 256, port % 256)
                }
            }
            "MLSD" if quirks.no_mlsd => "500 Unknown command.".into(),
            "SIZE" | "MDTM" if quirks.no_facts => "502 Command not implemented.".into(),
            "SIZE" => match resolve(&root, &cwd, arg) {
                Some(p) if p.is_file() => format!("213 {}", std::fs::metadata(&p).unwrap().len()),
                _ => "550 No such file.".into(),
            },
            "MDTM" => {
                match resolve(&root, &cwd, arg).filter(|p| p.is_file()).and_then(|p| ftp_time(&p, false)) {
                    Some(at) => format!("213 {at}"),
                    None => "550 No such file.".into(),
                }
            }
            "MLSD" | "NLST" | "RETR" | "STOR" => {
                let Some(listener) = passive.take() else {
                    let _ = write.write_all(b"425 Use EPSV first.\r\n").await;
                    continue;
                };
                let Some(path) = resolve(&root, &cwd, if arg.is_empty() { "." } else { arg }) else {
                    let _ = write.write_all(b"550 Bad path.\r\n").await;
                    continue;
                };
                let ready = match verb.as_str() {
                    "RETR" => path.is_file(),
                    "STOR" => path.parent().is_some_and(Path::is_dir),
                    _ => path.is_dir(),
                };
                if !ready {
                    let _ = write.write_all(b"550 No such file or directory.\r\n").await;
                    continue;
                }
                let _ = write.write_all(b"150 Opening data connection.\r\n").await;
                let Ok((mut data, _)) = listener.accept().await else { return };
                match verb.as_str() {
                    "MLSD" | "NLST" => {
                        let mut entries: Vec<_> =
                            std::fs::read_dir(&path).unwrap().filter_map(Result::ok).collect();
                        entries.sort_by_key(|e| e.file_name());
                        let mut out = String::new();
                        for e in entries {
                            let name = e.file_name().to_string_lossy().into_owned();
                            if verb == "MLSD" {
                                let kind = if e.path().is_dir() { "dir" } else { "file" };
                                let size = e.metadata().map_or(0, |m| m.len());
                                let modify = ftp_time(&e.path(), true).unwrap_or_default();
                                out.push_str(&format!("type={kind};size={size};modify={modify}; {name}\r\n"));
                            } else {
                                out.push_str(&format!("{name}\r\n"));
                            }
                        }
                        let _ = data.write_all(out.as_bytes()).await;
                    }
                    "RETR" if quirks.endless_retr => {
                        let zeros = vec![b'0'; 64 * 1024];
                        for _ in 0..16 * 1024 {
                            if data.write_all(&zeros).await.is_err() {
                                break;
                            }
                        }
                    }
                    "RETR" => {
                        let _ = data.write_all(&std::fs::read(&path).unwrap()).await;
                    }
                    _ if quirks.breaks_stor => {
                        let mut first = [0; 1024];
                        let _ = data.read(&mut first).await;
                        drop(data);
                        let _ = write.write_all(b"426 Connection closed; transfer aborted.\r\n").await;
                        continue;
                    }
                    _ => {
                        let mut bytes = Vec::new();
                        let _ = data.read_to_end(&mut bytes).await;
                        std::fs::write(&path, bytes).unwrap();
                    }
                }
                let _ = data.shutdown().await;
                drop(data);
                "226 Transfer complete.".into()
            }
            "RNFR" => match resolve(&root, &cwd, arg) {
                Some(p) if p.exists() => {
                    rename_from = Some(p);
                    "350 Ready for RNTO.".into()
                }
                _ => "550 No such file.".into(),
            },
            "RNTO" => match (rename_from.take(), resolve(&root, &cwd, arg)) {
                (Some(_), Some(to)) if to.exists() => "553 Target exists.".into(),
                (Some(from), Some(to)) => {
                    std::fs::rename(from, to).unwrap();
                    "250 Renamed.".into()
                }
                _ => "503 RNFR first.".into(),
            },
            "DELE" => match resolve(&root, &cwd, arg) {
                Some(p) if p.is_file() => {
                    std::fs::remove_file(p).unwrap();
                    "250 Deleted.".into()
                }
                _ => "550 No such file.".into(),
            },
            "MKD" => match resolve(&root, &cwd, arg) {
                Some(p) if !p.exists() && p.parent().is_some_and(Path::is_dir) => {
                    std::fs::create_dir(&p).unwrap();
                    format!("257 \"{arg}\" created.")
                }
                _ => "550 Cannot create.".into(),
            },
            _ => "502 Not implemented.".into(),
        };
        if write.write_all(format!("{reply}\r\n").as_bytes()).await.is_err() {
            return;
        }
    }
}
