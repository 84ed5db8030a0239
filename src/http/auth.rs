//! Who is calling (CONTRACT §1–§2): the OAuth 2.0 client-credentials token endpoint, HS256
//! JWTs, and the request guards `AuthUser` (a validly signed bearer token) and `AdminUser`
//! (the same, claiming the admin role). The guards never touch the database: whether the
//! token's user is still enabled, unchanged and not revoked is checked by `AuthUser::run`,
//! at the start of the one blocking trip a request makes, which is the only way a handler
//! reaches the database on a user's behalf.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation};
use rocket::http::{ContentType, Header as HttpHeader, Status};
use rocket::request::{FromRequest, Outcome, Request};
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use rocket::{State, post};
use rusqlite::{Connection, OptionalExtension};
use serde::{Deserialize, Deserializer, Serialize};

use crate::config::Config;
use crate::db::{self, Pool};
use crate::http::body::Body;
use crate::http::error::{ApiError, ApiResult, stash};
use crate::http::users::{self, Role, User, random_token};

/// Signing material and lifetime of access tokens, kept in Rocket's state.
pub struct TokenKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    ttl_secs: u64,
}

impl TokenKeys {
    pub fn new(secret: &[u8], ttl_secs: u64) -> Self {
        TokenKeys {
            encoding: EncodingKey::from_secret(secret),
            decoding: DecodingKey::from_secret(secret),
            ttl_secs,
        }
    }

    /// The configured secret, or the one generated on first start and kept in the database.
    pub fn load(pool: &Pool, config: &Config) -> Result<TokenKeys, String> {
        if let Some(secret) = &config.jwt_secret {
            return Ok(TokenKeys::new(secret.expose().as_bytes(), config.token_ttl_secs));
        }
        let conn = pool.get().map_err(|e| format!("database: {e}"))?;
        // Kept sealed with the credentials' key (db::secrets), opened here.
        let stored: Option<String> = conn
            .query_row("SELECT ob_open_text(value) FROM settings WHERE key = 'jwt_secret'", [], |r| r.get(0))
            .optional()
            .map_err(|e| format!("database: {e}"))?;
        let secret = match stored {
            Some(secret) => secret,
            None => {
                let secret = random_token(48);
                conn.execute(
                    "INSERT INTO settings (key, value) VALUES ('jwt_secret', ob_seal_text(?1))",
                    [&secret],
                )
                .map_err(|e| format!("database: {e}"))?;
                secret
            }
        };
        Ok(TokenKeys::new(secret.as_bytes(), config.token_ttl_secs))
    }

    /// A token for `user`, carrying its role and customer so the guards need no database.
    pub fn issue(&self, user: &User) -> Result<String, ApiError> {
        let now = unix_secs();
        let claims = Claims {
            sub: user.id.to_string(),
            iat: now,
            exp: now + self.ttl_secs,
            jti: random_token(16),
            role: user.role,
            cid: user.customer_id,
        };
        jsonwebtoken::encode(&Header::new(Algorithm::HS256), &claims, &self.encoding)
            .map_err(|e| ApiError::internal(format_args!("signing a token: {e}")))
    }

    fn verify(&self, token: &str) -> Option<Claims> {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "sub", "iat"]);
        jsonwebtoken::decode::<Claims>(token, &self.decoding, &validation).ok().map(|data| data.claims)
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct Claims {
    sub: String,
    iat: u64,
    exp: u64,
    jti: String,
    role: Role,
    /// The customer of a customer user, `null` for admins; required either way.
    #[serde(deserialize_with = "present_or_null")]
    cid: Option<i64>,
}

/// An `Option` field that must be present (serde lets a plain `Option` be missing).
fn present_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    Option::deserialize(d)
}

fn unix_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// An RFC 6749 §5.2 error of the token endpoint.
#[derive(Debug)]
pub struct OAuthError {
    status: Status,
    error: &'static str,
    description: String,
    /// Seconds to wait, sent as `Retry-After` (a throttled login).
    retry_after: Option<u64>,
}

impl OAuthError {
    fn invalid_request(description: &str) -> Self {
        OAuthError {
            status: Status::BadRequest,
            error: "invalid_request",
            description: description.into(),
            retry_after: None,
        }
    }

    fn invalid_client() -> Self {
        OAuthError {
            status: Status::Unauthorized,
            error: "invalid_client",
            description: "The username or password is wrong, or the user is disabled.".into(),
            retry_after: None,
        }
    }

    /// A username or an address that must wait (CONTRACT §1).
    fn throttled(wait: std::time::Duration) -> Self {
        let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        OAuthError {
            status: Status::TooManyRequests,
            error: "too_many_requests",
            description: format!(
                "Too many failed logins for this user or from this address; try again in {secs} s."
            ),
            retry_after: Some(secs.max(1)),
        }
    }
}

#[derive(Serialize)]
struct OAuthErrorBody<'a> {
    error: &'a str,
    error_description: &'a str,
}

impl<'r> Responder<'r, 'static> for OAuthError {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let body = OAuthErrorBody { error: self.error, error_description: &self.description };
        let mut response = Response::build_from(Json(body).respond_to(req)?)
            .status(self.status)
            .raw_header("Cache-Control", "no-store")
            .finalize();
        if self.status == Status::Unauthorized {
            response.set_header(HttpHeader::new("WWW-Authenticate", r#"Basic realm="orderbridge""#));
        }
        if let Some(secs) = self.retry_after {
            response.set_header(HttpHeader::new("Retry-After", secs.to_string()));
        }
        Ok(response)
    }
}

#[derive(Serialize)]
pub struct TokenResponse {
    access_token: String,
    token_type: &'static str,
    expires_in: u64,
}

/// The token endpoint's answer: JSON with `Cache-Control: no-store` (RFC 6749 §5.1).
pub struct NoStore<T>(T);

impl<'r, T: Serialize> Responder<'r, 'static> for NoStore<T> {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        Response::build_from(Json(self.0).respond_to(req)?)
            .header(ContentType::JSON)
            .raw_header("Cache-Control", "no-store")
            .raw_header("Pragma", "no-cache")
            .ok()
    }
}

/// Username and password from `Authorization: Basic`, if the header is there and decodes.
struct BasicCredentials {
    username: String,
    password: String,
}

fn basic_credentials(req: &Request<'_>) -> Result<BasicCredentials, OAuthError> {
    let header = req.headers().get_one("Authorization").ok_or_else(|| {
        OAuthError::invalid_request("Send the credentials in an Authorization: Basic header.")
    })?;
    let garbled = || OAuthError::invalid_request("The Authorization header is not valid HTTP Basic.");
    let (scheme, encoded) = header.trim().split_once(' ').ok_or_else(garbled)?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(garbled());
    }
    let decoded = BASE64.decode(encoded.trim()).map_err(|_| garbled())?;
    let decoded = String::from_utf8(decoded).map_err(|_| garbled())?;
    let (username, password) = decoded.split_once(':').ok_or_else(garbled)?;
    Ok(BasicCredentials { username: username.to_string(), password: password.to_string() })
}

/// `POST /auth/token`: OAuth 2.0 client credentials (RFC 6749 §4.4).
#[post("/auth/token", data = "<body>")]
pub async fn token(
    req_creds: TokenRequestCredentials,
    body: Result<Body, ApiError>,
    pool: &State<Pool>,
    keys: &State<TokenKeys>,
    throttle: &State<crate::http::throttle::LoginThrottle>,
) -> Result<NoStore<TokenResponse>, OAuthError> {
    let address = req_creds.1;
    let creds = req_creds.0?;
    let body = body.map_err(|_| OAuthError::invalid_request("The body could not be read."))?;
    let mut fields = body.fields();
    let grant_type = fields.text("grant_type").value();
    match grant_type.as_deref() {
        None => return Err(OAuthError::invalid_request("grant_type is required.")),
        Some("client_credentials") => {}
        Some(_) => {
            return Err(OAuthError {
                status: Status::BadRequest,
                error: "unsupported_grant_type",
                description: "Only grant_type=client_credentials is supported.".into(),
                retry_after: None,
            });
        }
    }
    let server_error = || OAuthError {
        status: Status::InternalServerError,
        error: "server_error",
        description: "Something went wrong on our side.".into(),
        retry_after: None,
    };
    // Counted as a failure from here, even with the right password, until proven right.
    let attempt = throttle.begin(&creds.username, address).map_err(OAuthError::throttled)?;
    let username = creds.username.clone();
    #[expect(clippy::disallowed_methods, reason = "no user yet: this is where one is proven")]
    let record = db::run(pool, move |conn| Ok::<_, ApiError>(users::login_record(conn, &username)?)).await;
    let Ok(record) = record else {
        attempt.forgive();
        return Err(server_error());
    };
    let user =
        rocket::tokio::task::spawn_blocking(move || users::authenticate(record, &creds.password)).await;
    let user = match user {
        Ok(Some(user)) => user,
        // Dropped unforgiven, the attempt stays counted as a failure.
        Ok(None) => return Err(OAuthError::invalid_client()),
        Err(_) => {
            attempt.forgive();
            return Err(server_error());
        }
    };
    attempt.forgive();
    let access_token = keys.issue(&user).map_err(|_| server_error())?;
    Ok(NoStore(TokenResponse { access_token, token_type: "Bearer", expires_in: keys.ttl_secs }))
}

/// The Basic credentials of a token request, or the OAuth error to answer with.
pub struct TokenRequestCredentials(Result<BasicCredentials, OAuthError>, Option<std::net::IpAddr>);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for TokenRequestCredentials {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        // The peer's own address: `client_ip` would take an `X-Real-IP` header that any client
        // can send, and a new one per guess would dodge the address's limit.
        Outcome::Success(TokenRequestCredentials(basic_credentials(req), req.remote().map(|a| a.ip())))
    }
}

/// A request made with a validly signed, unexpired bearer token: who it claims to be. The
/// claims are trusted only once `run` has checked them against the user's row.
#[derive(Debug, Clone)]
pub struct AuthUser {
    id: i64,
    role: Role,
    customer_id: Option<i64>,
    /// When the token was issued (seconds), against `users.tokens_valid_after`.
    issued_at: i64,
}

impl AuthUser {
    pub fn id(&self) -> i64 {
        self.id
    }

    /// The customer this user is confined to; `None` for admins, who see everything.
    pub fn scope(&self) -> Option<i64> {
        match self.role {
            Role::Admin => None,
            Role::Customer => self.customer_id,
        }
    }

    pub fn is_admin(&self) -> bool {
        self.role == Role::Admin
    }

    /// Whether this user may see rows of `customer_id`.
    pub fn can_see(&self, customer_id: i64) -> bool {
        self.scope().is_none_or(|own| own == customer_id)
    }

    /// Runs a handler's database work in one blocking trip that first checks the token still
    /// speaks for its user: the user exists, is not disabled, has not changed its password
    /// since the token was issued, and still has the role and customer the token claims.
    /// Otherwise 401, before `work` runs.
    pub async fn run<T, F>(self, pool: &Pool, work: F) -> ApiResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &AuthUser) -> ApiResult<T> + Send + 'static,
    {
        #[expect(clippy::disallowed_methods, reason = "the checked trip itself")]
        db::run(pool, move |conn| {
            self.check(conn)?;
            work(conn, &self)
        })
        .await
    }

    fn check(&self, conn: &Connection) -> ApiResult<()> {
        let current = conn
            .prepare_cached(
                "SELECT 1 FROM users
                 WHERE id = ?1 AND disabled_at IS NULL AND tokens_valid_after <= ?2
                   AND role = ?3 AND customer_id IS ?4",
            )?
            .exists(rusqlite::params![self.id, self.issued_at, self.role.as_str(), self.customer_id])?;
        if current { Ok(()) } else { Err(invalid_token()) }
    }
}

fn unauthorized(message: &str, token_sent: bool) -> ApiError {
    ApiError::Unauthorized { message: message.to_string(), token_sent }
}

fn invalid_token() -> ApiError {
    unauthorized("The token is invalid or has expired.", true)
}

/// The user a token's claims describe, if they are well-formed.
fn claimed_user(claims: Claims) -> Option<AuthUser> {
    let id = claims.sub.parse::<i64>().ok()?;
    let issued_at = i64::try_from(claims.iat).ok()?;
    // The shapes `users::add` allows; anything else cannot match a row.
    match (claims.role, claims.cid) {
        (Role::Admin, None) | (Role::Customer, Some(_)) => {}
        _ => return None,
    }
    Some(AuthUser { id, role: claims.role, customer_id: claims.cid, issued_at })
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for AuthUser {
    type Error = ApiError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, ApiError> {
        let fail = |e: ApiError| Outcome::Error(stash(req, e));
        let Some(header) = req.headers().get_one("Authorization") else {
            return fail(unauthorized(
                "A bearer token is required: send Authorization: Bearer <token>.",
                false,
            ));
        };
        let token = match header.trim().split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return fail(unauthorized("The Authorization header must be Bearer <token>.", false)),
        };
        let Some(keys) = req.rocket().state::<TokenKeys>() else {
            return fail(ApiError::internal("token keys missing from state"));
        };
        match keys.verify(token).and_then(claimed_user) {
            Some(user) => Outcome::Success(user),
            None => fail(invalid_token()),
        }
    }
}

/// A request by a token claiming the admin role (checked against the row by `run`).
#[derive(Debug, Clone)]
pub struct AdminUser(pub AuthUser);

#[rocket::async_trait]
impl<'r> FromRequest<'r> for AdminUser {
    type Error = ApiError;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, ApiError> {
        let user = rocket::outcome::try_outcome!(req.guard::<AuthUser>().await);
        if user.is_admin() {
            Outcome::Success(AdminUser(user))
        } else {
            Outcome::Error(stash(req, ApiError::Forbidden("Only admin users may do this.".to_string())))
        }
    }
}
