//! Rocket's floor: a bare Rocket 0.5 (the HTTP layer orderbridge is built on) answering W1's
//! and W4's bytes from memory, under the same `wrk` load. It has no database, no token check
//! and no fairing, and sends each body in one chunk, as orderbridge does. No handler of
//! orderbridge can answer faster, so its ratio to nginx is the ceiling of W1, W2 and W4.

use std::io::Cursor;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rocket::http::ContentType;
use rocket::response::{self, Responder, Response};
use rocket::{Request, State, get, routes};

use super::client::wrk;
use super::{Options, fail};

/// The two bodies, shared by every request.
struct Bodies {
    w1: Arc<[u8]>,
    w4: Arc<[u8]>,
}

/// Bytes as JSON in one chunk (Rocket's default is 4 KiB chunks).
struct Json(Arc<[u8]>);

impl<'r> Responder<'r, 'static> for Json {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        let len = self.0.len();
        Response::build()
            .header(ContentType::JSON)
            .sized_body(len, Cursor::new(self.0))
            .max_chunk_size(len.max(4096))
            .ok()
    }
}

#[get("/w1")]
fn w1(bodies: &State<Bodies>) -> Json {
    Json(bodies.w1.clone())
}

#[get("/w4")]
fn w4(bodies: &State<Bodies>) -> Json {
    Json(bodies.w4.clone())
}

/// Requests per second of the bare Rocket answering `w1` and `w4`.
pub fn serve_same_bytes(w1_body: &str, w4_body: &str, o: &Options) -> (f64, f64) {
    let port = super::free_port();
    let figment = rocket::Config::figment()
        .merge(("address", "127.0.0.1"))
        .merge(("port", port))
        .merge(("log_level", "off"))
        .merge(("cli_colors", false));
    let bodies = Bodies { w1: Arc::from(w1_body.as_bytes()), w4: Arc::from(w4_body.as_bytes()) };
    let rocket = rocket::custom(figment).manage(bodies).mount("/", routes![w1, w4]);
    let (handle, shutdown) = std::sync::mpsc::channel();
    // `rocket::execute` builds the runtime orderbridge's `#[rocket::main]` does: one worker
    // per core.
    let server = std::thread::spawn(move || {
        rocket::execute(async move {
            let ignited = rocket.ignite().await.map_err(|e| e.to_string())?;
            let _ = handle.send(ignited.shutdown());
            ignited.launch().await.map(drop).map_err(|e| e.to_string())
        })
    });
    let Ok(stop) = shutdown.recv_timeout(Duration::from_secs(30)) else {
        fail("the bare Rocket did not start");
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            stop.notify();
            fail("the bare Rocket did not accept connections within 10 s");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    eprintln!("bench: bare Rocket ...");
    let r1 = wrk(port, "/w1", None, None, o);
    let r4 = wrk(port, "/w4", None, None, o);
    stop.notify();
    match server.join() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => fail(&format!("the bare Rocket: {e}")),
        Err(_) => fail("the bare Rocket panicked"),
    }
    (r1, r4)
}
