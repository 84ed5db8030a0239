//! The live credential checks (`orderbridge::platforms`) against stand-ins on 127.0.0.1: every
//! outcome of every platform, and no credential in any message.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use orderbridge::platforms::{PingError, Settings, check_store, check_warehouse};
use serde_json::{Map, Value, json};
use tokio::io::AsyncWriteExt;

use crate::standins::ftp::{self as ftp_standin, FtpStandIn};
use crate::standins::http::{self as http_standin, HttpStandIn};
use crate::standins::sftp::{self as sftp_standin, Login};
use crate::standins::{StandIn, closed_port, connection_string};

/// Deadline for checks expected to finish; generous so a busy machine does not flake.
const PATIENT: Duration = Duration::from_secs(10);
/// Deadline for checks against servers that never answer.
const SHORT: Duration = Duration::from_secs(1);

/// Every credential the tests send; none may appear in a message.
const SECRETS: [&str; 7] = [
    http_standin::BIGCOMMERCE_TOKEN,
    http_standin::BIGCOMMERCE_SCOPELESS_TOKEN,
    http_standin::SELLBRITE_AUTH_TOKEN,
    http_standin::SELLBRITE_SECRET_KEY,
    sftp_standin::PASSWORD,
    ftp_standin::PASSWORD,
    "pw-WRONG-0000",
];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Refused,
    Unreachable,
}

fn settings(timeout: Duration, base: &str) -> Settings {
    Settings {
        timeout,
        bigcommerce_api_base: base.to_owned(),
        sellbrite_api_base: base.to_owned(),
        shopify_api_base: format!("{base}/{{shop}}"),
        ..Settings::default()
    }
}

fn adapter(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("adapter must be an object, got {other}"),
    }
}

fn bigcommerce(token: &str, store_hash: &str) -> Map<String, Value> {
    adapter(json!({"access_token": token, "store_hash": store_hash, "client_id": "client-1"}))
}

fn sellbrite(auth_token: &str, secret_key: &str) -> Map<String, Value> {
    adapter(json!({"auth_token": auth_token, "secret_key": secret_key}))
}

/// A warehouse adapter whose `connection_string` names `addr`.
fn connection(scheme: &str, user: &str, password: &str, addr: SocketAddr, path: &str) -> Map<String, Value> {
    adapter(json!({"connection_string": connection_string(scheme, user, password, addr, path)}))
}

/// Asserts the error's variant, that its message names each fragment, and that it holds no
/// credential. Returns the message.
fn assert_error(result: Result<(), PingError>, expected: Outcome, fragments: &[&str]) -> String {
    let (outcome, message) = match result {
        Err(PingError::AuthenticationFailed(message)) => (Outcome::Refused, message),
        Err(PingError::Unreachable(message)) => (Outcome::Unreachable, message),
        other => panic!("expected {expected:?} naming {fragments:?}, got {other:?}"),
    };
    assert_eq!(outcome, expected, "message: {message}");
    for fragment in fragments {
        assert!(message.contains(fragment), "{message:?} should name {fragment:?}");
    }
    for secret in SECRETS {
        assert!(!message.contains(secret), "{message:?} leaks {secret:?}");
    }
    message
}

fn assert_ok(result: Result<(), PingError>) {
    if let Err(error) = result {
        panic!("expected the credentials to be accepted, got {error:?}");
    }
}

// ---- BigCommerce ----

#[tokio::test]
async fn bigcommerce_with_a_valid_token_is_ok_and_sends_token_and_accept_headers() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);

    assert_ok(check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await);

    let requests = platform.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert_eq!((request.method.as_str(), request.path.as_str()), ("GET", "/stores/abc123/v2/store"));
    assert_eq!(request.header("x-auth-token"), Some(http_standin::BIGCOMMERCE_TOKEN));
    assert_eq!(request.header("accept"), Some("application/json"));
}

#[tokio::test]
async fn bigcommerce_with_a_wrong_token_is_refused_with_status_and_platform_text_but_no_token() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    // The stand-in echoes the token it was sent in its error text.
    let adapter = bigcommerce("pw-WRONG-0000", http_standin::STORE_HASH);

    let result = check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await;

    assert_error(result, Outcome::Refused, &["BigCommerce", "401", "is not valid", "[redacted]"]);
}

#[tokio::test]
async fn bigcommerce_403_is_refused_with_the_message_from_its_array_body() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_SCOPELESS_TOKEN, http_standin::STORE_HASH);

    let result = check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await;

    assert_error(result, Outcome::Refused, &["403", "required scope"]);
}

#[tokio::test]
async fn bigcommerce_unknown_store_hash_is_refused_naming_the_store() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, "zzz999");

    let result = check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await;

    assert_error(result, Outcome::Refused, &["no store with hash 'zzz999'", "404"]);
}

#[tokio::test]
async fn bigcommerce_store_hash_that_would_change_the_url_is_refused_without_a_request() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    for hash in ["../../v3/catalog", "abc123?x=1", "a%2Fb", "abc 123"] {
        let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, hash);

        let result = check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await;

        assert_error(result, Outcome::Refused, &["no store with hash"]);
    }
    assert!(platform.requests().is_empty(), "{:?}", platform.requests());
}

#[tokio::test]
async fn bigcommerce_server_error_is_unreachable_with_the_status() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, http_standin::FAILING_STORE_HASH);

    let result = check_store(&settings(PATIENT, &platform.base()), "bigcommerce", &adapter).await;

    assert_error(result, Outcome::Unreachable, &["503", "Upstream overloaded"]);
}

#[tokio::test]
async fn bigcommerce_that_never_answers_is_unreachable_at_the_timeout() {
    let platform = HttpStandIn::start(http_standin::bigcommerce).await;
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, http_standin::SLOW_STORE_HASH);
    let started = Instant::now();

    let result = check_store(&settings(SHORT, &platform.base()), "bigcommerce", &adapter).await;

    assert_error(result, Outcome::Unreachable, &["BigCommerce did not answer within 1 s"]);
    assert!(started.elapsed() < SHORT * 3, "took {:?}", started.elapsed());
}

#[tokio::test]
async fn bigcommerce_over_https_to_a_server_without_tls_is_unreachable_with_the_tls_error() {
    // Exercises the TLS stack (crypto provider, platform verifier) without leaving the machine.
    // Answers a TLS hello the way a plain HTTP server does.
    let platform = StandIn::start(|mut stream| async move {
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n").await;
    })
    .await;
    let base = format!("https://{}", platform.addr);
    let adapter = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);

    let result = check_store(&settings(PATIENT, &base), "bigcommerce", &adapter).await;

    let message =
        assert_error(result, Outcome::Unreachable, &["BigCommerce could not be reached at 127.0.0.1:"]);
    assert!(!message.contains("within"), "TLS failure should not wait for the timeout: {message}");
}

// ---- Sellbrite ----

#[tokio::test]
async fn sellbrite_with_valid_credentials_is_ok_and_sends_them_as_http_basic() {
    let platform = HttpStandIn::start(http_standin::sellbrite).await;
    let adapter = sellbrite(http_standin::SELLBRITE_AUTH_TOKEN, http_standin::SELLBRITE_SECRET_KEY);

    assert_ok(check_store(&settings(PATIENT, &platform.base()), "sellbrite", &adapter).await);

    let requests = platform.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert_eq!((requests[0].method.as_str(), requests[0].path.as_str()), ("GET", "/v1/warehouses"));
    assert_eq!(requests[0].header("authorization"), Some(http_standin::sellbrite_basic_header().as_str()));
}

#[tokio::test]
async fn sellbrite_with_a_wrong_secret_is_refused_with_status_and_platform_text() {
    let platform = HttpStandIn::start(http_standin::sellbrite).await;
    let adapter = sellbrite(http_standin::SELLBRITE_AUTH_TOKEN, "pw-WRONG-0000");

    let result = check_store(&settings(PATIENT, &platform.base()), "sellbrite", &adapter).await;

    assert_error(result, Outcome::Refused, &["Sellbrite", "401", "HTTP Basic: Access denied."]);
}

#[tokio::test]
async fn sellbrite_that_never_answers_is_unreachable_at_the_timeout() {
    let platform = HttpStandIn::start(http_standin::never).await;
    let adapter = sellbrite(http_standin::SELLBRITE_AUTH_TOKEN, http_standin::SELLBRITE_SECRET_KEY);

    let result = check_store(&settings(SHORT, &platform.base()), "sellbrite", &adapter).await;

    assert_error(result, Outcome::Unreachable, &["Sellbrite did not answer within 1 s"]);
}

// ---- Nothing listening, any platform ----

#[tokio::test]
async fn every_platform_with_nothing_listening_is_unreachable_without_waiting() {
    let addr = closed_port().await;
    let base = format!("http://{addr}");
    let settings = settings(PATIENT, &base);
    let sftp = connection("sftp", sftp_standin::USER, sftp_standin::PASSWORD, addr, "/x");
    let ftp = connection("ftp", ftp_standin::USER, ftp_standin::PASSWORD, addr, "/x");
    let bigcommerce = bigcommerce(http_standin::BIGCOMMERCE_TOKEN, http_standin::STORE_HASH);
    let sellbrite = sellbrite(http_standin::SELLBRITE_AUTH_TOKEN, http_standin::SELLBRITE_SECRET_KEY);
    let cases = [
        ("store", "bigcommerce", &bigcommerce, "BigCommerce could not be reached at 127.0.0.1"),
        ("store", "sellbrite", &sellbrite, "Sellbrite could not be reached at 127.0.0.1"),
        ("warehouse", "sftp", &sftp, "Could not connect to the SFTP server at 127.0.0.1"),
        ("warehouse", "ftp", &ftp, "Could not connect to the FTP server at 127.0.0.1"),
    ];
    for (kind, platform, adapter, expected) in cases {
        let started = Instant::now();

        let result = if kind == "store" {
            check_store(&settings, platform, adapter).await
        } else {
            check_warehouse(&settings, platform, adapter).await
        };

        let message = assert_error(result, Outcome::Unreachable, &[expected, "refused"]);
        assert!(started.elapsed() < PATIENT / 2, "{platform} took {:?}: {message}", started.elapsed());
    }
}

// ---- Platforms without a check ----

#[tokio::test]
async fn platforms_without_a_live_check_are_unsupported() {
    let settings = settings(PATIENT, "http://127.0.0.1:9");
    let any_adapter = adapter(json!({"api_key": "k"}));
    for (kind, result) in [
        ("store etsy", check_store(&settings, "etsy", &any_adapter).await),
        ("store sftp", check_store(&settings, "sftp", &any_adapter).await),
        ("warehouse shiphero", check_warehouse(&settings, "shiphero", &any_adapter).await),
        ("warehouse bigcommerce", check_warehouse(&settings, "bigcommerce", &any_adapter).await),
    ] {
        assert!(matches!(result, Err(PingError::UnsupportedPlatform)), "{kind}: {result:?}");
    }
}

// ---- SFTP ----

async fn check_sftp(
    server: SocketAddr,
    password: &str,
    path: &str,
    timeout: Duration,
) -> Result<(), PingError> {
    let adapter = connection("sftp", sftp_standin::USER, password, server, path);
    check_warehouse(&settings(timeout, "http://unused"), "sftp", &adapter).await
}

#[tokio::test]
async fn sftp_with_a_good_login_and_an_existing_path_is_ok() {
    let server = sftp_standin::start(Login::Password).await;

    assert_ok(check_sftp(server.addr, sftp_standin::PASSWORD, sftp_standin::EXISTING_PATH, PATIENT).await);
}

#[tokio::test]
async fn sftp_with_a_wrong_password_is_refused_without_the_password() {
    let server = sftp_standin::start(Login::Password).await;

    let result = check_sftp(server.addr, "pw-WRONG-0000", sftp_standin::EXISTING_PATH, PATIENT).await;

    assert_error(result, Outcome::Refused, &["refused the user name and password"]);
}

#[tokio::test]
async fn sftp_with_a_missing_path_is_refused_naming_the_path() {
    let server = sftp_standin::start(Login::Password).await;

    let result = check_sftp(server.addr, sftp_standin::PASSWORD, "/no/such/dir", PATIENT).await;

    assert_error(result, Outcome::Refused, &["Logged in", "the path /no/such/dir does not exist"]);
}

#[tokio::test]
async fn sftp_server_offering_only_keyboard_interactive_takes_the_password_that_way() {
    let server = sftp_standin::start(Login::KeyboardInteractive).await;

    assert_ok(check_sftp(server.addr, sftp_standin::PASSWORD, sftp_standin::EXISTING_PATH, PATIENT).await);
    let result = check_sftp(server.addr, "pw-WRONG-0000", sftp_standin::EXISTING_PATH, PATIENT).await;
    assert_error(result, Outcome::Refused, &["refused the user name and password"]);
}

#[tokio::test]
async fn sftp_server_that_never_speaks_is_unreachable_at_the_timeout() {
    let server = StandIn::silent().await;
    let started = Instant::now();

    let result = check_sftp(server.addr, sftp_standin::PASSWORD, sftp_standin::EXISTING_PATH, SHORT).await;

    assert_error(result, Outcome::Unreachable, &["The SFTP server did not answer within 1 s"]);
    assert!(started.elapsed() < SHORT * 3, "took {:?}", started.elapsed());
}

// ---- FTP ----

async fn check_ftp(
    server: SocketAddr,
    password: &str,
    path: &str,
    timeout: Duration,
) -> Result<(), PingError> {
    let adapter = connection("ftp", ftp_standin::USER, password, server, path);
    check_warehouse(&settings(timeout, "http://unused"), "ftp", &adapter).await
}

#[tokio::test]
async fn ftp_with_a_good_login_and_an_existing_directory_is_ok_and_says_goodbye() {
    let server = FtpStandIn::start().await;

    assert_ok(check_ftp(server.server.addr, ftp_standin::PASSWORD, ftp_standin::EXISTING_DIR, PATIENT).await);

    // Percent-decoded user and password, the path as given, then QUIT.
    let expected = [
        format!("USER {}", ftp_standin::USER),
        format!("PASS {}", ftp_standin::PASSWORD),
        format!("CWD {}", ftp_standin::EXISTING_DIR),
        "QUIT".to_owned(),
    ];
    // QUIT is sent without waiting for the reply; give the stand-in a moment to read it.
    for _ in 0..50 {
        if server.commands().len() >= expected.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(server.commands(), expected);
}

#[tokio::test]
async fn ftp_with_a_wrong_password_is_refused_with_the_server_reply() {
    let server = FtpStandIn::start().await;

    let result = check_ftp(server.server.addr, "pw-WRONG-0000", ftp_standin::EXISTING_DIR, PATIENT).await;

    assert_error(result, Outcome::Refused, &["refused the login", "530 Login incorrect."]);
}

#[tokio::test]
async fn ftp_with_a_missing_directory_is_refused_naming_the_path() {
    let server = FtpStandIn::start().await;

    let result = check_ftp(server.server.addr, ftp_standin::PASSWORD, "/no/such/dir", PATIENT).await;

    assert_error(result, Outcome::Refused, &["cannot change into the path /no/such/dir", "550"]);
}

#[tokio::test]
async fn ftp_server_that_never_speaks_is_unreachable_at_the_timeout() {
    let server = StandIn::silent().await;
    let started = Instant::now();

    let result = check_ftp(server.addr, ftp_standin::PASSWORD, ftp_standin::EXISTING_DIR, SHORT).await;

    assert_error(result, Outcome::Unreachable, &["The FTP server did not answer within 1 s"]);
    assert!(started.elapsed() < SHORT * 3, "took {:?}", started.elapsed());
}

#[tokio::test]
async fn ftp_speaking_another_protocol_is_unreachable() {
    // An SSH server where an FTP server was expected: its banner is not an FTP reply.
    let server = sftp_standin::start(Login::Password).await;

    let result = check_ftp(server.addr, ftp_standin::PASSWORD, ftp_standin::EXISTING_DIR, PATIENT).await;

    assert_error(result, Outcome::Unreachable, &["not FTP"]);
}

/// The HTTP handlers await these futures inside Rocket, so they must be `Send`.
#[allow(dead_code)]
fn checks_are_send(settings: &Settings, adapter: &Map<String, Value>) {
    fn assert_send<T: Send>(_: T) {}
    assert_send(check_store(settings, "bigcommerce", adapter));
    assert_send(check_warehouse(settings, "sftp", adapter));
}
