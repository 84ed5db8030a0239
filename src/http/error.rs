//! The one error type of the API, its JSON envelope (CONTRACT §5), and the catcher that
//! renders every failure Rocket produces on its own (unknown route, guard failures) in the
//! same envelope.

use std::collections::BTreeMap;
use std::sync::Mutex;

use rocket::http::{Header, Method, Status};
use rocket::request::Request;
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::db::DbError;

/// Maps a field or parameter name to what is wrong with it.
pub use crate::fields::Details;

/// What a route or a piece of request work returns.
pub type ApiResult<T> = Result<T, ApiError>;

/// Every failure an API route can answer with. Variants are named for their HTTP meaning;
/// `status()` and `code()` are the single mapping to the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiError {
    BadRequest {
        message: String,
        details: Details,
    },
    Unauthorized {
        message: String,
        token_sent: bool,
    },
    Forbidden(String),
    NotFound(String),
    /// A path the API has, asked with a method it does not answer there; the ones it does.
    MethodNotAllowed(Vec<Method>),
    SessionNotFound,
    Conflict {
        message: String,
        details: Details,
        /// Ids the client can act on (the existing connection), sent as JSON numbers.
        ids: BTreeMap<String, i64>,
    },
    PayloadTooLarge,
    UnsupportedMediaType(String),
    Validation(Details),
    AdapterAuthenticationFailed(String),
    UnsupportedPlatform(String),
    AdapterUnreachable(String),
    TooManySessions,
    /// The database stayed locked past the busy timeout; the client may try again.
    ServiceUnavailable,
    /// A sync pass was asked of a connection none of whose channels would sync; the details
    /// name what is disabled.
    NotSyncing(Details),
    /// A bug or an environment failure. The cause is logged where it happens, never sent.
    Internal,
}

impl ApiError {
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::BadRequest { message: message.into(), details: Details::new() }
    }

    pub fn bad_parameter(name: &str, problem: impl Into<String>) -> Self {
        let problem = problem.into();
        ApiError::BadRequest {
            message: format!("Query parameter '{name}' {problem}."),
            details: Details::from([(name.to_string(), problem)]),
        }
    }

    pub fn not_found(what: impl Into<String>) -> Self {
        ApiError::NotFound(what.into())
    }

    /// A 422 naming one field.
    pub fn invalid(field: &str, problem: impl Into<String>) -> Self {
        ApiError::Validation(Details::from([(field.to_string(), problem.into())]))
    }

    pub fn conflict(message: impl Into<String>, field: &str, problem: impl Into<String>) -> Self {
        ApiError::Conflict {
            message: message.into(),
            details: Details::from([(field.to_string(), problem.into())]),
            ids: BTreeMap::new(),
        }
    }

    /// A 409 naming the existing row's id as a number (`details.connection_id: 13`).
    pub fn conflict_with_id(message: impl Into<String>, field: &str, id: i64) -> Self {
        ApiError::Conflict {
            message: message.into(),
            details: Details::new(),
            ids: BTreeMap::from([(field.to_string(), id)]),
        }
    }

    /// Logs an internal cause and returns the opaque 500. The cause never reaches the client.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        rocket::error!("internal error: {cause}");
        ApiError::Internal
    }

    pub fn status(&self) -> Status {
        match self {
            ApiError::BadRequest { .. } => Status::BadRequest,
            ApiError::Unauthorized { .. } => Status::Unauthorized,
            ApiError::Forbidden(_) => Status::Forbidden,
            ApiError::NotFound(_) | ApiError::SessionNotFound => Status::NotFound,
            ApiError::MethodNotAllowed(_) => Status::MethodNotAllowed,
            ApiError::Conflict { .. } => Status::Conflict,
            ApiError::PayloadTooLarge => Status::PayloadTooLarge,
            ApiError::UnsupportedMediaType(_) => Status::UnsupportedMediaType,
            ApiError::Validation(_)
            | ApiError::AdapterAuthenticationFailed(_)
            | ApiError::UnsupportedPlatform(_)
            | ApiError::NotSyncing(_) => Status::UnprocessableEntity,
            ApiError::AdapterUnreachable(_) => Status::BadGateway,
            ApiError::TooManySessions => Status::TooManyRequests,
            ApiError::ServiceUnavailable => Status::ServiceUnavailable,
            ApiError::Internal => Status::InternalServerError,
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest { .. } => "bad_request",
            ApiError::Unauthorized { .. } => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::SessionNotFound => "session_not_found",
            ApiError::MethodNotAllowed(_) => "method_not_allowed",
            ApiError::Conflict { .. } => "conflict",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::Validation(_) => "validation_failed",
            ApiError::AdapterAuthenticationFailed(_) => "adapter_authentication_failed",
            ApiError::UnsupportedPlatform(_) => "unsupported_platform",
            ApiError::AdapterUnreachable(_) => "adapter_unreachable",
            ApiError::TooManySessions => "too_many_sessions",
            ApiError::NotSyncing(_) => "connection_not_syncing",
            ApiError::ServiceUnavailable => "service_unavailable",
            ApiError::Internal => "internal_error",
        }
    }

    fn message(&self) -> String {
        match self {
            ApiError::BadRequest { message, .. }
            | ApiError::Unauthorized { message, .. }
            | ApiError::Forbidden(message)
            | ApiError::Conflict { message, .. }
            | ApiError::UnsupportedMediaType(message)
            | ApiError::AdapterAuthenticationFailed(message)
            | ApiError::UnsupportedPlatform(message)
            | ApiError::AdapterUnreachable(message) => message.clone(),
            ApiError::NotFound(what) => format!("{what} was not found."),
            ApiError::SessionNotFound => "The listing session does not exist or has expired.".to_string(),
            ApiError::MethodNotAllowed(allowed) => format!("This path answers {}.", allow_list(allowed)),
            ApiError::PayloadTooLarge => "The request body is larger than allowed.".to_string(),
            ApiError::Validation(details) => {
                let fields: Vec<&str> = details.keys().map(String::as_str).collect();
                format!("The request has invalid fields: {}.", fields.join(", "))
            }
            ApiError::TooManySessions => {
                "Too many listing sessions are open; finish or let some expire.".to_string()
            }
            ApiError::ServiceUnavailable => {
                "The database is busy with other work; try again in a moment.".to_string()
            }
            ApiError::NotSyncing(_) => {
                "The connection does not sync: its details name what is switched off.".to_string()
            }
            ApiError::Internal => "Something went wrong on our side.".to_string(),
        }
    }

    fn details(&self) -> Option<Map<String, Value>> {
        let (texts, ids) = match self {
            ApiError::Conflict { details, ids, .. } => (details, Some(ids)),
            ApiError::BadRequest { details, .. }
            | ApiError::Validation(details)
            | ApiError::NotSyncing(details) => (details, None),
            _ => return None,
        };
        let mut out: Map<String, Value> =
            texts.iter().map(|(k, v)| (k.clone(), Value::from(v.as_str()))).collect();
        out.extend(ids.into_iter().flatten().map(|(k, v)| (k.clone(), Value::from(*v))));
        (!out.is_empty()).then_some(out)
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            error: ErrorContent { code: self.code(), message: self.message(), details: self.details() },
        }
    }
}

/// The one place a database failure becomes an answer: a lock held past the busy timeout is
/// `503` with `Retry-After`, anything else the opaque 500 (its cause logged).
impl From<crate::fields::Invalid> for ApiError {
    fn from(crate::fields::Invalid(details): crate::fields::Invalid) -> Self {
        ApiError::Validation(details)
    }
}

impl From<DbError> for ApiError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Busy => ApiError::ServiceUnavailable,
            DbError::Failed(cause) => ApiError::internal(cause),
        }
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> Self {
        ApiError::from(DbError::from(e))
    }
}

impl From<r2d2::Error> for ApiError {
    fn from(e: r2d2::Error) -> Self {
        ApiError::from(DbError::from(e))
    }
}

#[derive(Debug, Serialize)]
pub struct ErrorBody {
    pub error: ErrorContent,
}

#[derive(Debug, Serialize)]
pub struct ErrorContent {
    pub code: &'static str,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Map<String, Value>>,
}

impl<'r> Responder<'r, 'static> for ApiError {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let mut response =
            Response::build_from(Json(self.body()).respond_to(req)?).status(self.status()).finalize();
        if let ApiError::Unauthorized { token_sent, .. } = &self {
            let value = if *token_sent {
                r#"Bearer realm="orderbridge", error="invalid_token""#
            } else {
                r#"Bearer realm="orderbridge""#
            };
            response.set_header(Header::new("WWW-Authenticate", value));
        }
        if let ApiError::ServiceUnavailable = &self {
            response.set_header(Header::new("Retry-After", "1"));
        }
        if let ApiError::MethodNotAllowed(allowed) = &self {
            response.set_header(Header::new("Allow", allow_list(allowed)));
        }
        Ok(response)
    }
}

/// In Rocket 0.5 a guard's error value never reaches the catcher, so guards park it here
/// and the catcher renders it.
struct Stashed(Mutex<Option<ApiError>>);

/// Parks `error` for the catcher and returns its status, for a guard's `Outcome::Error`.
pub fn stash(req: &Request<'_>, error: ApiError) -> (Status, ApiError) {
    let status = error.status();
    let slot = req.local_cache(|| Stashed(Mutex::new(None)));
    if let Ok(mut slot) = slot.0.lock() {
        *slot = Some(error.clone());
    }
    (status, error)
}

fn take_stashed(req: &Request<'_>) -> Option<ApiError> {
    let slot = req.local_cache(|| Stashed(Mutex::new(None)));
    slot.0.lock().ok().and_then(|mut slot| slot.take())
}

/// What a status that Rocket raised on its own means in our envelope.
fn error_for_status(status: Status) -> ApiError {
    match status.code {
        400 => ApiError::bad_request("The request could not be understood."),
        401 => ApiError::Unauthorized {
            message: "A valid bearer token is required.".to_string(),
            token_sent: false,
        },
        403 => ApiError::Forbidden("You may not do this.".to_string()),
        404 => ApiError::not_found("The requested resource"),
        413 => ApiError::PayloadTooLarge,
        503 => ApiError::ServiceUnavailable,
        415 => ApiError::UnsupportedMediaType(
            "Send the body as application/json, application/x-www-form-urlencoded or multipart/form-data."
                .to_string(),
        ),
        422 => {
            ApiError::Validation(Details::from([("body".to_string(), "could not be processed".to_string())]))
        }
        code if (400..500).contains(&code) => {
            ApiError::BadRequest { message: status.reason_lossy().to_string(), details: Details::new() }
        }
        _ => ApiError::Internal,
    }
}

#[rocket::catch(default)]
pub fn catch_all(status: Status, req: &Request<'_>) -> ApiError {
    match take_stashed(req) {
        Some(error) if error.status() == status => error,
        _ if status == Status::NotFound => {
            // RFC 9110 §15.5.6: a path that exists, asked with another method, is a 405
            // naming the methods it takes, not a 404.
            let allowed = allowed_methods(req);
            if allowed.is_empty() || allowed.contains(&req.method()) {
                error_for_status(status)
            } else {
                ApiError::MethodNotAllowed(allowed)
            }
        }
        _ => error_for_status(status),
    }
}

/// An error as one line for a terminal: the problems of a 422 by field, else the message.
pub fn describe(e: &ApiError) -> String {
    let body = e.body();
    match body.error.details {
        Some(details) => {
            let parts: Vec<String> = details
                .iter()
                .map(|(k, v)| format!("{k} {}", v.as_str().map_or_else(|| v.to_string(), str::to_string)))
                .collect();
            parts.join("; ")
        }
        None => body.error.message,
    }
}

/// The methods of the mounted routes whose path fits the request's most closely (the fewest
/// `<param>` segments: `/stores/ping` is POST's, not `/stores/<id>`'s), HEAD with GET as Rocket
/// answers it, in a fixed order.
fn allowed_methods(req: &Request<'_>) -> Vec<Method> {
    let asked: Vec<&str> = req.uri().path().segments().collect();
    let fitting: Vec<(usize, Method)> = req
        .rocket()
        .routes()
        .filter(|route| path_fits(route.uri.path(), &asked))
        .map(|route| (route.uri.path().matches('<').count(), route.method))
        .collect();
    let closest = fitting.iter().map(|(params, _)| *params).min();
    let mut allowed: Vec<Method> = fitting
        .into_iter()
        .filter(|(params, _)| Some(*params) == closest)
        .map(|(_, method)| method)
        .collect();
    if allowed.contains(&Method::Get) {
        allowed.push(Method::Head);
    }
    allowed.sort_by_key(|m| m.as_str());
    allowed.dedup();
    allowed
}

/// Whether a route path (`/stores/<id>`, `/files/<path..>`) fits the request's segments.
fn path_fits(route: &str, asked: &[&str]) -> bool {
    let mut asked = asked.iter();
    for segment in route.split('/').filter(|s| !s.is_empty()) {
        if segment.starts_with('<') && segment.ends_with("..>") {
            return true;
        }
        match asked.next() {
            Some(given) if segment.starts_with('<') || segment == *given => {}
            _ => return false,
        }
    }
    asked.next().is_none()
}

fn allow_list(methods: &[Method]) -> String {
    methods.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_message_names_every_field() {
        let e = ApiError::Validation(Details::from([
            ("name".to_string(), "is required".to_string()),
            ("adapter".to_string(), "must be an object".to_string()),
        ]));
        let body = serde_json::to_value(e.body()).unwrap();
        assert_eq!(body["error"]["code"], "validation_failed");
        assert_eq!(body["error"]["message"], "The request has invalid fields: adapter, name.");
        assert_eq!(body["error"]["details"]["name"], "is required");
    }

    #[test]
    fn a_database_busy_past_its_timeout_is_503_and_anything_else_an_opaque_500() {
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            Some("database is locked".into()),
        );
        let e = ApiError::from(busy);
        assert_eq!((e.status(), e.code()), (Status::ServiceUnavailable, "service_unavailable"));
        let other = ApiError::from(rusqlite::Error::InvalidQuery);
        assert_eq!(other, ApiError::Internal);
    }

    #[test]
    fn internal_error_body_reveals_nothing() {
        let body = serde_json::to_value(ApiError::internal("secret path /x").body()).unwrap();
        assert_eq!(body["error"]["code"], "internal_error");
        assert!(!body.to_string().contains("/x"));
        assert!(body["error"].get("details").is_none());
    }
}
