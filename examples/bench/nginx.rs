//! nginx serving the exact bytes orderbridge answered, measured with the same `wrk` load: the
//! yardstick every throughput figure is divided by.

use std::io::Read;
use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::client::wrk;
use super::common::Guard;
use super::{Options, fail};

/// Requests per second of nginx serving `w1` and `w4` as static files.
pub fn serve_same_bytes(work: &Path, w1: &str, w4: &str, o: &Options) -> (f64, f64) {
    let n1 = work.join("w1.json");
    let n4 = work.join("w4.json");
    std::fs::write(&n1, w1).expect("write w1");
    std::fs::write(&n4, w4).expect("write w4");
    let nport = super::free_port();
    let conf = work.join("nginx.conf");
    std::fs::write(
        &conf,
        format!(
            "daemon off; worker_processes auto; pid {pid}; error_log stderr crit;\n\
             events {{ worker_connections 1024; }}\n\
             http {{ access_log off; server {{ listen 127.0.0.1:{nport};\n\
               location = /w1 {{ default_type application/json; alias {w1}; }}\n\
               location = /w4 {{ default_type application/json; alias {w4}; }} }} }}\n",
            pid = work.join("nginx.pid").display(),
            w1 = n1.display(),
            w4 = n4.display()
        ),
    )
    .expect("nginx conf");
    let mut nginx = Guard(
        Command::new("nginx")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(work)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| fail(&format!("nginx: {e} (apt-get install -y nginx-light)"))),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", nport)).is_err() {
        if Instant::now() > deadline {
            let mut err = String::new();
            if let Some(mut e) = nginx.0.stderr.take() {
                let _ = e.read_to_string(&mut err);
            }
            fail(&format!("nginx did not start: {err}"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("bench: nginx ...");
    let g1 = wrk(nport, "/w1", None, None, o);
    let g4 = wrk(nport, "/w4", None, None, o);
    // A killed master leaves its workers behind; ask it to stop them and wait for it.
    let _ = Command::new("nginx").arg("-c").arg(&conf).arg("-p").arg(work).args(["-s", "quit"]).status();
    let _ = nginx.0.wait();
    (g1, g4)
}
