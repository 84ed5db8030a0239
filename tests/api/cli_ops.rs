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
    assert!(out.contains("checked") && out.contains("live.key"), "names the key to keep with it: {out}");

    let conn = rusqlite::Connection::open(&copy).unwrap();
    let check: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let customers: i64 = conn.query_row("SELECT count(*) FROM customers", [], |r| r.get(0)).unwrap();
    assert!(customers >= 50 && customers as usize <= during + 1, "{customers} of {during} written");
    // The copy is a database orderbridge serves.
    drop(conn);
    // It opens with the live database's key, which is not in the copy.
    let key = dir.path().join("live.key");
    let (copy_server, _) = start(&copy, &[("ORDERBRIDGE_SECRET_KEY_FILE", key.to_str().unwrap())]);
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

#[test]
fn credentials_are_sealed_in_the_file_and_need_their_key_which_can_be_rotated() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("sealed.db");
    let secret = "bc-token-THAT-MUST-NOT-LEAK-42";
    let (server, _) =
        start(&db, &[("ORDERBRIDGE_ADMIN_PASSWORD", PASSWORD), ("ORDERBRIDGE_PING_MODE", "offline")]);
    let bearer = format!("Bearer {}", token(server.port, "admin", PASSWORD));
    let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    let (status, _, body) =
        http(server.port, "POST", "/customers", &headers, r#"{"company_name":"Sealed"}"#).unwrap();
    assert_eq!(status, 201, "{body}");
    let store = format!(
        r#"{{"customer_id":1,"name":"S","platform":"big_commerce","adapter":{{"access_token":"{secret}","store_hash":"abc123"}}}}"#
    );
    let (status, _, body) = http(server.port, "POST", "/stores", &headers, &store).unwrap();
    assert_eq!(status, 201, "{body}");
    // A rotation while the server runs would leave it sealing with the old key: refused.
    let (ok, out, err) = run_cli(&db, &["rotate-key"], "");
    assert!(!ok && err.contains("in use by a running orderbridge"), "{out}{err}");
    server.stop();

    // The file alone, with its log folded in, holds no trace of the token.
    let conn = rusqlite::Connection::open(&db).unwrap();
    conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").unwrap();
    drop(conn);
    let raw = std::fs::read(&db).unwrap();
    assert!(!raw.windows(secret.len()).any(|w| w == secret.as_bytes()), "the token is in the database file");
    let key = dir.path().join("sealed.key");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600,
            "the key file is the owner's only"
        );
    }

    // Without its key, or with another, the database does not start, and says why.
    let kept = dir.path().join("kept.key");
    std::fs::rename(&key, &kept).unwrap();
    let (ok, _, err) = run_cli(&db, &["user", "list"], "");
    assert!(!ok && err.contains("missing") && err.contains("sealed.key"), "{err}");
    assert!(!key.exists(), "no new key was made in its place");
    let other = dir.path().join("other.db");
    run_cli(&other, &["user", "list"], "");
    std::fs::copy(dir.path().join("other.key"), &key).unwrap();
    let (ok, _, err) = run_cli(&db, &["user", "list"], "");
    assert!(!ok && err.contains("does not open"), "{err}");
    std::fs::copy(&kept, &key).unwrap();

    // Rotation: a new key opens everything, the old one nothing.
    let (ok, out, err) = run_cli(&db, &["rotate-key"], "");
    assert!(ok, "{out}{err}");
    assert_ne!(std::fs::read(&key).unwrap(), std::fs::read(&kept).unwrap(), "a new key");
    let (server, _) = start(&db, &[("ORDERBRIDGE_PING_MODE", "offline")]);
    let bearer = format!("Bearer {}", token(server.port, "admin", PASSWORD));
    let (status, _, body) = http(server.port, "GET", "/stores/1", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("********K-42"), "the token opens, masked: {body}");
    server.stop();
    std::fs::copy(&kept, &key).unwrap();
    let (ok, _, err) = run_cli(&db, &["user", "list"], "");
    assert!(!ok && err.contains("does not open"), "the old key opens nothing: {err}");
}
