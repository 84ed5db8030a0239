//! Conditional requests (RFC 9110 §13): every successful `GET` (a listing page, an order, a
//! shipment, a product, any document) carries a weak `ETag`, and a request whose
//! `If-None-Match` still names it gets `304 Not Modified` with no body, so a client that polls
//! downloads a page again only when something on it changed.
//!
//! The tag is a digest of exactly what the answer shows (its content type and body), so it
//! changes whenever anything on the page changes and never otherwise, and it reveals nothing
//! but that page: a tag tied to the database's write generation would change with every
//! other customer's writes, telling a customer user that someone else wrote. For the same
//! reason there is no `Last-Modified`: the records carry no modification time of their own,
//! and the last write anywhere is not the caller's to know. `If-Modified-Since` is therefore
//! never a reason for a 304 (RFC 9110 §13.1.3: it is ignored without a `Last-Modified`).

use std::hash::{Hash, Hasher};
use std::io::Cursor;

use rocket::fairing::{Fairing, Info, Kind};
use rocket::http::{Header, Method, Status};
use rocket::{Request, Response};

/// The fairing that adds validators and answers 304.
pub struct Conditional;

#[rocket::async_trait]
impl Fairing for Conditional {
    fn info(&self) -> Info {
        Info { name: "conditional GET (ETag, 304)", kind: Kind::Response }
    }

    async fn on_response<'r>(&self, request: &'r Request<'_>, response: &mut Response<'r>) {
        if !matches!(request.method(), Method::Get | Method::Head) || response.status() != Status::Ok {
            return;
        }
        let Ok(body) = response.body_mut().to_bytes().await else {
            // The body could not be read back (a failed stream): answer it as it was, untagged.
            return;
        };
        let content_type = response.headers().get_one("Content-Type").unwrap_or_default().to_string();
        let tag = etag(&content_type, &body);
        let unchanged = request.headers().get("If-None-Match").any(|listed| names(listed, &tag));
        response.set_header(Header::new("ETag", tag));
        // Clients may keep the answer, and must ask again (with the tag) before using it.
        response.set_header(Header::new("Cache-Control", "private, no-cache"));
        if unchanged {
            response.set_status(Status::NotModified);
            response.remove_header("Content-Type");
            response.set_sized_body(0, Cursor::new(Vec::new()));
        } else {
            response.set_sized_body(body.len(), Cursor::new(body));
        }
    }
}

/// A weak tag (`W/"…"`): the same JSON may be written differently by another release.
fn etag(content_type: &str, body: &[u8]) -> String {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    content_type.hash(&mut hasher);
    body.hash(&mut hasher);
    format!("W/\"{:016x}\"", hasher.finish())
}

/// Whether an `If-None-Match` value names `tag`: `*`, or a list of tags compared weakly
/// (RFC 9110 §8.8.3.2: `W/"x"` and `"x"` match).
fn names(if_none_match: &str, tag: &str) -> bool {
    let opaque = |t: &str| t.trim().trim_start_matches("W/").to_string();
    let ours = opaque(tag);
    if_none_match.split(',').any(|listed| listed.trim() == "*" || opaque(listed) == ours)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_follow_the_content_and_nothing_else() {
        let a = etag("application/json", br#"{"id":1}"#);
        assert_eq!(a, etag("application/json", br#"{"id":1}"#));
        assert_ne!(a, etag("application/json", br#"{"id":2}"#));
        assert_ne!(a, etag("text/html", br#"{"id":1}"#));
        assert!(a.starts_with("W/\"") && a.ends_with('"'));
    }

    #[test]
    fn if_none_match_compares_weakly_and_takes_lists_and_the_star() {
        let tag = "W/\"00000000000000ab\"";
        assert!(names(tag, tag));
        assert!(names("\"00000000000000ab\"", tag));
        assert!(names("W/\"x\", W/\"00000000000000ab\"", tag));
        assert!(names("*", tag));
        assert!(!names("W/\"00000000000000ac\"", tag));
        assert!(!names("", tag));
    }
}
