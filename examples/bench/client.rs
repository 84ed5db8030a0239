//! The benchmark's side of the wire: one plain HTTP/1.1 request at a time, and `wrk`.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use super::{Options, fail};

/// One HTTP/1.1 request on a fresh connection: (status, body). `body` makes it a POST. An
/// import of 5,000 orders may take a while, hence the long timeout.
pub fn http(port: u16, path: &str, headers: &[(&str, &str)], body: Option<&[u8]>) -> (u16, String) {
    let method = if body.is_some() { "POST" } else { "GET" };
    super::common::http(port, method, path, headers, body.unwrap_or(b""), Duration::from_secs(300))
        .unwrap_or_else(|e| fail(&e))
}

/// A scalar member of a JSON text, found by name (the first one).
pub fn json_field<'a>(body: &'a str, key: &str) -> Option<&'a str> {
    let start = body.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = body[start..].trim_start();
    let rest = rest.strip_prefix('"').unwrap_or(rest);
    let end = rest.find(['"', ',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// Requests per second from wrk's summary.
pub fn wrk(port: u16, path: &str, token: Option<&str>, script: Option<&Path>, o: &Options) -> f64 {
    let mut cmd = Command::new("wrk");
    cmd.arg("-t2")
        .arg(format!("-c{}", o.connections))
        .arg(format!("-d{}s", o.duration_secs))
        .arg("--timeout")
        .arg("10s");
    if let Some(token) = token {
        cmd.arg("-H").arg(format!("Authorization: Bearer {token}"));
    }
    if let Some(script) = script {
        cmd.arg("-s").arg(script);
    }
    cmd.arg(format!("http://127.0.0.1:{port}{path}"));
    let out = cmd.output().unwrap_or_else(|e| fail(&format!("wrk: {e} (apt-get install -y wrk)")));
    let text = String::from_utf8_lossy(&out.stdout);
    let non2xx = text.lines().find(|l| l.contains("Non-2xx")).map(str::trim).unwrap_or("");
    if !non2xx.is_empty() {
        eprintln!("bench: warning: {non2xx} for {path}");
    }
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| fail(&format!("no wrk result for {path}:\n{text}")))
}

/// W2's wrk script: 32 listing sessions walked page after page. The sessions were opened
/// beforehand (`sessions`, page 1 read); each of wrk's threads walks 16 of them at a time,
/// round robin, and a session read to its last page (`pages` pages after the first) gives its
/// place to the next of the thread's share, so the walk never turns into reading empty pages.
/// The script only counts: it never reads an answer, so wrk does the same work per request
/// as in the other workloads (a Lua `response` callback would copy every 300 KiB body).
pub fn session_script(sessions: &[String], walkers_per_thread: usize, pages: usize, token: &str) -> String {
    let list: Vec<String> = sessions.iter().map(|s| format!("\"{s}\"")).collect();
    format!(
        r#"local sessions = {{{list}}}
local next_thread = 0
function setup(thread)
  thread:set("tid", next_thread)
  next_thread = next_thread + 1
end
local auth = {{["Authorization"] = "Bearer {token}"}}
local share = {{}}
local walkers = {{}}
local used = {{}}
local taken = 0
local function take()
  taken = taken + 1
  local id = share[taken] or share[#share]
  return {{request = wrk.format("GET", "/orders?session_id=" .. id, auth), left = {pages}}}
end
function init(args)
  local half = math.floor(#sessions / 2)
  for k = 1, half do
    share[k] = sessions[(tid % 2) * half + k]
  end
  for k = 1, {walkers_per_thread} do
    walkers[k] = take()
  end
end
local i = 0
function request()
  i = i % #walkers + 1
  local w = walkers[i]
  if w.left <= 0 then
    w = take()
    walkers[i] = w
  end
  w.left = w.left - 1
  return w.request
end
"#,
        list = list.join(", ")
    )
}
