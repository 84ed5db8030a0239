//! The operator's commands through the real binary: `backup` while the server takes writes,
//! and progress output that reads line by line when it goes to a file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::process::{http, run_cli, start, token};

const PASSWORD: &str = "backup-admin-password";

#[test]
fn a_backup_taken_under_writes_is_consistent_and_never_overwrites_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("live.db");
    let (server, _) = start(&db, &[("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD)]);
    let bearer = format!("Bearer {}", token(server.port, "admin", PASSWORD));
    let (stop, written) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicUsize::new(0)));
    let writer = {
        let (stop, written, bearer, port) =
            (Arc::clone(&stop), Arc::clone(&written), bearer.clone(), server.port);
        std::thread::spawn(move || {
            for n in 0..100_000 {
                if stop.load(Ordering::SeqCst) {
                    break;
                }
                let body = format!(r#"{{"company_name":"Writer {n}"}}"#);
                let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
                if let Ok((201, _, _)) = http(port, "POST", "/customers", &headers, &body) {
                    written.fetch_add(1, Ordering::SeqCst);
                }
            }
        })
    };
    while written.load(Ordering::SeqCst) < 50 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let copy = dir.path().join("copy.db");
    let (ok, out, err) = run_cli(&db, &["backup", copy.to_str().unwrap()], "");
    let during = written.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    writer.join().unwrap();
    assert!(ok, "{out}{err}");
    assert!(out.contains("checked"), "{out}");

    let conn = rusqlite::Connection::open(&copy).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let customers: i64 = conn.query_row("SELECT count(*) FROM customers", [], |r| r.get(0)).unwrap();
    assert!(customers >= 50 && customers as usize <= during + 1, "{customers} of {during} written");
    // The copy is a database orderbridge serves.
    drop(conn);
    let (copy_server, _) = start(&copy, &[]);
    let bearer = format!("Bearer {}", token(copy_server.port, "admin", PASSWORD));
    let (status, _, body) =
        http(copy_server.port, "GET", "/customers?page=1&limit=1", &[("Authorization", &bearer)], "")
            .unwrap();
    assert_eq!(status, 200, "{body}");
    copy_server.stop();

    let (ok, _, err) = run_cli(&db, &["backup", copy.to_str().unwrap()], "");
    assert!(!ok && err.contains("already exists"), "{err}");
    server.stop();
}

#[test]
fn progress_into_a_file_is_whole_lines() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("seeded.db");
    let (ok, out, err) = run_cli(&db, &["seed", "--demo", "--orders", "3000"], "");
    assert!(ok, "{out}{err}");
    assert!(!err.contains('\r'), "no carriage returns when stderr is not a terminal: {err:?}");
    let lines: Vec<&str> = err.lines().collect();
    assert!(lines.iter().any(|l| l.starts_with("orderbridge: 3000/3000 orders written (")), "{err}");
    assert!(lines.iter().any(|l| l.starts_with("orderbridge: wrote 3000 orders and ")), "{err}");
    assert!(lines.iter().all(|l| l.starts_with("orderbridge: ")), "one message a line: {err}");
}
