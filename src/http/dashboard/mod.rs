//! The dashboard: a page for people, at `/`, served from the binary with every asset
//! embedded (no CDN, no network). It is a client of the JSON API and nothing else: it logs
//! in at `/auth/token` with the same users, and shows only what the API answers that user,
//! so a customer user sees its own customer's data exactly as through the API.

use rocket::http::{ContentType, Header};
use rocket::response::Responder;
use rocket::{Request, Response, Route, get, routes};

const INDEX: &str = include_str!("index.html");
const APP_JS: &str = include_str!("app.js");
const APP_CSS: &str = include_str!("app.css");

/// An embedded asset with the headers every one gets: no caching across releases, and a
/// content security policy that allows this origin only.
pub struct Asset {
    kind: ContentType,
    body: &'static str,
}

impl<'r> Responder<'r, 'static> for Asset {
    fn respond_to(self, _: &'r Request<'_>) -> rocket::response::Result<'static> {
        Response::build()
            .header(self.kind)
            .header(Header::new("Cache-Control", "no-cache"))
            .header(Header::new(
                "Content-Security-Policy",
                "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'",
            ))
            .header(Header::new("X-Content-Type-Options", "nosniff"))
            .header(Header::new("Referrer-Policy", "no-referrer"))
            .sized_body(self.body.len(), std::io::Cursor::new(self.body))
            .ok()
    }
}

#[get("/")]
fn index() -> Asset {
    Asset { kind: ContentType::HTML, body: INDEX }
}

#[get("/dashboard/app.js")]
fn app_js() -> Asset {
    Asset { kind: ContentType::JavaScript, body: APP_JS }
}

#[get("/dashboard/app.css")]
fn app_css() -> Asset {
    Asset { kind: ContentType::CSS, body: APP_CSS }
}

pub fn routes() -> Vec<Route> {
    routes![index, app_js, app_css]
}
