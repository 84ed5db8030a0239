//! The real binary: started on a loopback port with a temporary database, spoken to over
//! HTTP as a client would, and stopped by the test. Also the `user` subcommands.

use serde_json::{Value, json};

use std::time::Duration;

use crate::process::{http, run_cli, start, token};

#[test]
fn first_run_prints_a_working_admin_password_and_a_restart_keeps_data_and_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ob.db");
    let (server, printed) = start(&db, &[]);
    let password = printed
        .lines()
        .find_map(|l| l.split("with password ").nth(1))
        .unwrap_or_else(|| panic!("no password printed: {printed}"))
        .trim()
        .to_string();
    let admin = token(server.port, "admin", &password);
    let bearer = format!("Bearer {admin}");
    let (status, head, body) = http(
        server.port,
        "POST",
        "/customers",
        &[("Authorization", &bearer), ("Content-Type", "application/json")],
        &json!({"company_name": "Over the wire"}).to_string(),
    )
    .unwrap();
    assert_eq!(status, 201, "{head}\n{body}");
    drop(server);

    let (server, printed) = start(&db, &[]);
    assert!(!printed.contains(&password), "the password is printed only once");
    let (status, _, body) =
        http(server.port, "GET", "/customers", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 200, "the token survives a restart: {body}");
    let list: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(list[0]["company_name"], "Over the wire");
}

#[test]
fn errors_over_real_http_use_the_envelope() {
    let dir = tempfile::tempdir().unwrap();
    let (server, _) =
        start(&dir.path().join("ob.db"), &[("ORDERBRIDGE_ADMIN_PASSWORD", "configured-password")]);
    let (status, head, body) = http(server.port, "GET", "/customers", &[], "").unwrap();
    assert_eq!(status, 401);
    assert!(head.to_ascii_lowercase().contains("www-authenticate: bearer realm=\"orderbridge\""), "{head}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["error"]["code"], "unauthorized");
    let (status, _, body) = http(server.port, "GET", "/nowhere", &[], "").unwrap();
    assert_eq!(status, 404);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["error"]["code"], "not_found");
    token(server.port, "admin", "configured-password");
}

#[test]
fn user_subcommands_add_list_change_and_disable_users() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ob.db");
    // The first command on a fresh file creates it; the admin's password is printed by serve only.
    let (ok, _, err) = run_cli(&db, &["user", "add", "ops", "--role", "admin"], "ops-password-1\n");
    assert!(ok, "{err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "ops", "--role", "admin"], "ops-password-1\n");
    assert!(!ok && err.contains("taken"), "duplicate name refused: {err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "shop", "--customer-id", "42"], "shop-password\n");
    assert!(!ok && err.contains("customer"), "unknown customer refused: {err}");
    let (ok, _, err) = run_cli(&db, &["user", "add", "weak", "--role", "admin"], "short\n");
    assert!(!ok && err.contains("8 characters"), "{err}");

    let (server, _) = start(&db, &[]);
    let first = token(server.port, "ops", "ops-password-1");
    let (ok, _, err) = run_cli(&db, &["user", "passwd", "ops"], "ops-password-2\n");
    assert!(ok, "{err}");
    token(server.port, "ops", "ops-password-2");
    let (ok, out, _) = run_cli(&db, &["user", "list"], "");
    assert!(ok && out.contains("ops") && out.contains("admin") && out.contains("enabled"), "{out}");
    assert!(!out.contains("ops-password"), "no password in listings");
    let (ok, _, err) = run_cli(&db, &["user", "disable", "ops"], "");
    assert!(ok, "{err}");
    let (ok, out, _) = run_cli(&db, &["user", "list"], "");
    assert!(ok && out.contains("disabled"), "{out}");
    let bearer = format!("Bearer {first}");
    let (status, _, _) = http(server.port, "GET", "/customers", &[("Authorization", &bearer)], "").unwrap();
    assert_eq!(status, 401, "a disabled user's token stops working");
}

#[test]
fn live_pings_at_debug_log_level_print_no_credential() {
    use crate::standins::connection_string;
    use crate::standins::ftp::{self as ftp_standin, FtpStandIn};
    use crate::standins::http::{self as http_standin, HttpStandIn};
    use crate::standins::sftp::{self as sftp_standin, Login};

    const BIGCOMMERCE_TOKEN: &str = "bc-LOGCHECK-token-8101";
    const SELLBRITE_AUTH_TOKEN: &str = "sb-LOGCHECK-acct-8102";
    const SELLBRITE_SECRET_KEY: &str = "sb-LOGCHECK-key-8103";
    const SSH_PASSWORD: &str = "ssh-LOGCHECK-pw/@:8104";
    const FTP_PASSWORD: &str = "ftp-LOGCHECK-pw/@:8105";
    const ADMIN_PASSWORD: &str = "admin-LOGCHECK-pw-8106";

    // The stand-ins run on their own runtime while this thread speaks HTTP to the binary.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let bigcommerce = runtime.block_on(HttpStandIn::start(http_standin::bigcommerce));
    let sellbrite = runtime.block_on(HttpStandIn::start(http_standin::sellbrite));
    let sftp = runtime.block_on(sftp_standin::start(Login::Password));
    let ftp = runtime.block_on(FtpStandIn::start());

    let dir = tempfile::tempdir().unwrap();
    let (server, _) = start(
        &dir.path().join("ob.db"),
        &[
            ("ROCKET_LOG_LEVEL", "debug"),
            ("ORDERBRIDGE_PING_MODE", "live"),
            ("ORDERBRIDGE_PING_TIMEOUT_SECS", "10"),
            ("ORDERBRIDGE_BIGCOMMERCE_API_BASE", &bigcommerce.base()),
            ("ORDERBRIDGE_SELLBRITE_API_BASE", &sellbrite.base()),
            ("ORDERBRIDGE_ADMIN_PASSWORD", ADMIN_PASSWORD),
        ],
    );
    let admin = token(server.port, "admin", ADMIN_PASSWORD);
    let bearer = format!("Bearer {admin}");
    let json_body = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    let form_body =
        [("Authorization", bearer.as_str()), ("Content-Type", "application/x-www-form-urlencoded")];
    let post = |path: &str, headers: &[(&str, &str)], body: &str| {
        let (status, head, body) = http(server.port, "POST", path, headers, body).unwrap();
        (status, format!("{head}\n{body}"))
    };

    let (status, text) = post("/customers", &json_body, &json!({"company_name": "Acme"}).to_string());
    assert_eq!(status, 201, "{text}");
    let store = json!({
        "customer_id": 1, "name": "Web shop", "platform": "bigcommerce",
        "adapter": {"access_token": BIGCOMMERCE_TOKEN, "store_hash": http_standin::STORE_HASH},
    });
    let (status, text) = post("/stores", &json_body, &store.to_string());
    assert_eq!(status, 201, "{text}");
    // The stand-in answers 401 and echoes the token it was sent.
    let (status, text) = post("/stores/ping", &json_body, &store.to_string());
    assert_eq!(status, 422, "{text}");
    let bigcommerce_form = crate::common::form(&[
        ("customer_id", "1"),
        ("name", "Web shop"),
        ("platform", "bigcommerce"),
        ("adapter[access_token]", BIGCOMMERCE_TOKEN),
        ("adapter[store_hash]", http_standin::STORE_HASH),
    ]);
    let (status, text) = post("/stores/ping", &form_body, &bigcommerce_form);
    assert_eq!(status, 422, "{text}");
    let sellbrite_form = crate::common::form(&[
        ("customer_id", "1"),
        ("name", "Marketplaces"),
        ("platform", "sellbrite"),
        ("adapter[auth_token]", SELLBRITE_AUTH_TOKEN),
        ("adapter[secret_key]", SELLBRITE_SECRET_KEY),
    ]);
    let (status, text) = post("/stores/ping", &form_body, &sellbrite_form);
    assert_eq!(status, 422, "{text}");
    let boundary = "LOGCHECK-BOUNDARY";
    let multipart = [
        ("customer_id", "1"),
        ("name", "Marketplaces"),
        ("platform", "sellbrite"),
        ("adapter[auth_token]", SELLBRITE_AUTH_TOKEN),
        ("adapter[secret_key]", SELLBRITE_SECRET_KEY),
    ]
    .iter()
    .map(|(name, value)| {
        format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
    })
    .collect::<String>()
        + &format!("--{boundary}--\r\n");
    let multipart_type = format!("multipart/form-data; boundary={boundary}");
    let (status, text) = post(
        "/stores/ping",
        &[("Authorization", bearer.as_str()), ("Content-Type", multipart_type.as_str())],
        &multipart,
    );
    assert_eq!(status, 422, "{text}");

    // File transfer: a refused password, then a good login with the stand-in's own password.
    let warehouses = [
        ("sftp", sftp.addr, sftp_standin::USER, SSH_PASSWORD, sftp_standin::EXISTING_PATH, 422),
        ("sftp", sftp.addr, sftp_standin::USER, sftp_standin::PASSWORD, sftp_standin::EXISTING_PATH, 204),
        ("ftp", ftp.server.addr, ftp_standin::USER, FTP_PASSWORD, ftp_standin::EXISTING_DIR, 422),
        ("ftp", ftp.server.addr, ftp_standin::USER, ftp_standin::PASSWORD, ftp_standin::EXISTING_DIR, 204),
    ];
    for (platform, addr, user, password, path, expected) in warehouses {
        let warehouse = json!({
            "customer_id": 1, "platform": platform,
            "adapter": {"connection_string": connection_string(platform, user, password, addr, path)},
        });
        let (status, text) = post("/warehouses", &json_body, &warehouse.to_string());
        assert_eq!(status, 201, "{text}");
        let (status, text) = post("/warehouses/ping", &json_body, &warehouse.to_string());
        assert_eq!(status, expected, "{platform} with {password}: {text}");
    }

    let (stdout, stderr) = server.stop();
    drop((bigcommerce, sellbrite, sftp, ftp));
    runtime.shutdown_timeout(Duration::from_secs(1));

    let logs = format!("{stdout}\n{stderr}");
    assert!(logs.contains("/stores/ping") && logs.contains("/warehouses/ping"), "debug logs: {logs}");
    use base64::Engine as _;
    let basic = |user: &str, password: &str| {
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    };
    let admin_basic = basic("admin", ADMIN_PASSWORD);
    let sellbrite_basic = basic(SELLBRITE_AUTH_TOKEN, SELLBRITE_SECRET_KEY);
    let secrets = [
        admin_basic.as_str(),
        sellbrite_basic.as_str(),
        BIGCOMMERCE_TOKEN,
        SELLBRITE_AUTH_TOKEN,
        SELLBRITE_SECRET_KEY,
        SSH_PASSWORD,
        FTP_PASSWORD,
        sftp_standin::PASSWORD,
        ftp_standin::PASSWORD,
        ADMIN_PASSWORD,
        admin.as_str(),
    ];
    for secret in secrets {
        let encoded =
            percent_encoding::utf8_percent_encode(secret, percent_encoding::NON_ALPHANUMERIC).to_string();
        for (stream, text) in [("stdout", &stdout), ("stderr", &stderr)] {
            for form in [secret, encoded.as_str()] {
                let at = text.find(form).map(|i| &text[i.saturating_sub(300)..(i + 300).min(text.len())]);
                assert!(at.is_none(), "{stream} shows {form:?}: ...{}...", at.unwrap_or_default());
            }
        }
    }
}
