//! The test harness: the real application over a fresh temporary database per test, and
//! typed helpers for calling it in-process.

use orderbridge::db::Pool;
use orderbridge::http::users::{self, Role};
use rocket::figment::Figment;
use rocket::figment::providers::Serialized;
use rocket::http::{ContentType, Header, Status};
use rocket::local::asynchronous::{Client, LocalResponse};
use serde_json::Value;
use tempfile::TempDir;

pub const ADMIN_PASSWORD: &str = "admin-password-for-tests";

pub struct TestApp {
    pub client: Client,
    pub admin: String,
    _dir: Option<TempDir>,
}

/// What a call answered.
#[derive(Debug)]
pub struct Reply {
    pub status: Status,
    pub body: Value,
    pub text: String,
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The `error.code` of an error envelope.
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }

    pub fn id(&self) -> i64 {
        assert_eq!(self.status, Status::Created, "expected 201, got {self:?}");
        self.body["id"].as_i64().expect("an integer id")
    }
}

pub async fn reply(response: LocalResponse<'_>) -> Reply {
    let status = response.status();
    let headers = response.headers().iter().map(|h| (h.name().to_string(), h.value().to_string())).collect();
    let text = response.into_string().await.unwrap_or_default();
    let body = serde_json::from_str(&text).unwrap_or(Value::Null);
    Reply { status, body, text, headers }
}

/// The figment a test app runs on: Rocket's debug defaults, quiet, over `dir`.
pub fn figment(dir: &TempDir) -> Figment {
    Figment::from(rocket::Config::debug_default())
        .merge(Serialized::defaults(orderbridge::config::Config::default()))
        .merge(("log_level", "off"))
        .merge(("database", dir.path().join("test.db")))
        .merge(("admin_password", ADMIN_PASSWORD))
        .merge(("ping_mode", "offline"))
        // CONTRACT §11: tests wait one second for a warehouse file to settle, not ten.
        .merge(("file_settle_secs", 1))
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|f| f).await
}

/// An app whose figment the test may change first.
pub async fn spawn_app_with(adjust: impl FnOnce(Figment) -> Figment) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let app = orderbridge::build(adjust(figment(&dir))).expect("app builds");
    let client = Client::tracked(app.rocket).await.expect("valid rocket");
    let mut app = TestApp { client, admin: String::new(), _dir: Some(dir) };
    app.admin = app.token("admin", ADMIN_PASSWORD).await;
    app
}

pub fn basic(user: &str, password: &str) -> Header<'static> {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    Header::new("Authorization", format!("Basic {encoded}"))
}

fn bearer(token: &str) -> Header<'static> {
    Header::new("Authorization", format!("Bearer {token}"))
}

impl TestApp {
    /// Wraps a client whose database directory the caller keeps.
    pub fn from_client(client: Client) -> TestApp {
        TestApp { client, admin: String::new(), _dir: None }
    }

    pub fn pool(&self) -> Pool {
        self.client.rocket().state::<Pool>().expect("pool").clone()
    }

    /// Calls the token endpoint with a JSON body.
    pub async fn token_reply(&self, user: &str, password: &str) -> Reply {
        reply(
            self.client
                .post("/auth/token")
                .header(basic(user, password))
                .header(ContentType::JSON)
                .body(r#"{"grant_type":"client_credentials"}"#)
                .dispatch()
                .await,
        )
        .await
    }

    pub async fn token(&self, user: &str, password: &str) -> String {
        let r = self.token_reply(user, password).await;
        assert_eq!(r.status, Status::Ok, "token for {user}: {r:?}");
        r.body["access_token"].as_str().expect("access_token").to_string()
    }

    /// Adds a user straight into the database and returns a token for it.
    pub async fn user_token(&self, name: &str, role: Role, customer_id: Option<i64>) -> String {
        let conn = self.pool().get().unwrap();
        users::add(&conn, name, "password-of-user", role, customer_id).expect("user added");
        drop(conn);
        self.token(name, "password-of-user").await
    }

    /// Creates a customer as admin and a customer user for it; returns (customer id, token).
    pub async fn tenant(&self, name: &str) -> (i64, String) {
        let id =
            self.post_json("/customers", &self.admin, serde_json::json!({"company_name": name})).await.id();
        let token = self.user_token(&format!("user-of-{id}"), Role::Customer, Some(id)).await;
        (id, token)
    }

    pub async fn get(&self, path: &str, token: &str) -> Reply {
        reply(self.client.get(path.to_string()).header(bearer(token)).dispatch().await).await
    }

    /// A GET that carries `If-None-Match: tag`.
    pub async fn get_if_none_match(&self, path: &str, token: &str, tag: &str) -> Reply {
        let request = self.client.get(path.to_string()).header(bearer(token));
        reply(request.header(Header::new("If-None-Match", tag.to_string())).dispatch().await).await
    }

    pub async fn get_anonymous(&self, path: &str) -> Reply {
        reply(self.client.get(path.to_string()).dispatch().await).await
    }

    pub async fn send(
        &self,
        method: &str,
        path: &str,
        token: &str,
        content_type: ContentType,
        body: String,
    ) -> Reply {
        let request = match method {
            "POST" => self.client.post(path.to_string()),
            "PATCH" => self.client.patch(path.to_string()),
            "GET" => self.client.get(path.to_string()),
            other => panic!("method {other}"),
        };
        reply(request.header(bearer(token)).header(content_type).body(body).dispatch().await).await
    }

    pub async fn post_json(&self, path: &str, token: &str, body: Value) -> Reply {
        self.send("POST", path, token, ContentType::JSON, body.to_string()).await
    }

    pub async fn post_form(&self, path: &str, token: &str, body: &str) -> Reply {
        self.send("POST", path, token, ContentType::Form, body.to_string()).await
    }

    pub async fn patch_json(&self, path: &str, token: &str, body: Value) -> Reply {
        self.send("PATCH", path, token, ContentType::JSON, body.to_string()).await
    }

    pub async fn patch_form(&self, path: &str, token: &str, body: &str) -> Reply {
        self.send("PATCH", path, token, ContentType::Form, body.to_string()).await
    }

    /// Sends `fields` as multipart/form-data text parts.
    pub async fn post_multipart(&self, path: &str, token: &str, fields: &[(&str, &str)]) -> Reply {
        let boundary = "X-ORDERBRIDGE-TEST-BOUNDARY";
        let mut body = String::new();
        for (name, value) in fields {
            body.push_str(&format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
            ));
        }
        body.push_str(&format!("--{boundary}--\r\n"));
        let ct = ContentType::new("multipart", "form-data").with_params(("boundary", boundary));
        self.send("POST", path, token, ct, body).await
    }
}

/// A urlencoded body of `pairs`: values percent-encoded, names kept in bracket notation.
pub fn form(pairs: &[(&str, &str)]) -> String {
    use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
    pairs
        .iter()
        .map(|(name, value)| format!("{name}={}", utf8_percent_encode(value, NON_ALPHANUMERIC)))
        .collect::<Vec<_>>()
        .join("&")
}

/// Asserts the contract's error envelope with `status` and `code`.
#[track_caller]
pub fn assert_error(r: &Reply, status: u16, code: &str) {
    assert_eq!(r.status.code, status, "status of {r:?}");
    assert_eq!(r.code(), code, "code of {r:?}");
    assert!(r.body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "message of {r:?}");
    assert_eq!(r.header("Content-Type"), Some("application/json"), "content type of {r:?}");
}

/// Every row of every table, sorted, to show that refused requests wrote nothing.
pub fn all_rows(app: &TestApp) -> Vec<String> {
    let conn = app.pool().get().unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut rows = Vec::new();
    for table in tables {
        let mut stmt = conn.prepare(&format!("SELECT * FROM \"{table}\"")).unwrap();
        let columns = stmt.column_count();
        let mut found = stmt.query([]).unwrap();
        while let Some(row) = found.next().unwrap() {
            let values: Vec<rusqlite::types::Value> = (0..columns).map(|i| row.get(i).unwrap()).collect();
            rows.push(format!("{table}: {values:?}"));
        }
    }
    rows.sort();
    rows
}
