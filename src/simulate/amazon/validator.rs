//! Recorded exchanges held to Amazon's vendored models by
//! `shared/vendor/amazon/validate_requests.py --exchanges` (Python 3 with `jsonschema`), for
//! the simulator's tests and the Amazon client's: `validate(&sim.exchanges())`.

use serde_json::{Value, json};

use crate::simulate::openapi_check::Exchange;

/// The exchanges as the validator reads them, one JSON object a line: SP-API ones only
/// (not the token exchange or the document transfers), the path without the region.
pub(crate) fn validator_lines(exchanges: &[Exchange]) -> String {
    let mut out = String::new();
    for x in exchanges {
        let Some((region, path)) = x.path.trim_start_matches('/').split_once('/') else { continue };
        if !matches!(region, "na" | "eu" | "fe") {
            continue;
        }
        let query = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(&x.query).finish();
        let content_type =
            x.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case("content-type")).map(|(_, v)| v.clone());
        let body = (!x.body.is_empty()).then(|| String::from_utf8_lossy(&x.body).into_owned());
        let answer: Value = serde_json::from_slice(&x.answer_body).unwrap_or(Value::Null);
        let line = json!({"method": x.method, "path": format!("/{path}"), "query": query, "content_type": content_type,
                          "body": body, "status": x.status, "answer": answer});
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

/// A file of `shared/vendor/amazon/` (beside the repository, or under `ORDERBRIDGE_SHARED`).
pub(crate) fn vendor_file(name: &str) -> std::path::PathBuf {
    let beside = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vendor/amazon").join(name);
    match std::env::var_os("ORDERBRIDGE_SHARED") {
        Some(shared) if !beside.exists() => std::path::PathBuf::from(shared).join("vendor/amazon").join(name),
        _ => beside,
    }
}

/// Whether the vendored validator can run here (python3 with jsonschema). As the project's
/// other cross-checks do, a machine without it skips them, unless
/// `ORDERBRIDGE_REQUIRE_VENDOR_PY` is set (CI sets it): then that is a failure.
pub(crate) fn python_here() -> bool {
    let probe = std::process::Command::new("python3").args(["-c", "import jsonschema"]).output();
    let here = probe.is_ok_and(|o| o.status.success());
    assert!(
        here || std::env::var_os("ORDERBRIDGE_REQUIRE_VENDOR_PY").is_none(),
        "ORDERBRIDGE_REQUIRE_VENDOR_PY is set, but python3 with jsonschema is not here"
    );
    if !here {
        eprintln!("validate_requests.py was skipped: no python3 with jsonschema here");
    }
    here
}

/// Runs the vendored validator on the exchanges: `None` when it cannot run here, else how
/// many it checked, or its output when any fails.
pub(crate) fn validate(exchanges: &[Exchange]) -> Option<Result<usize, String>> {
    if !python_here() {
        return None;
    }
    Some(run(exchanges))
}

fn run(exchanges: &[Exchange]) -> Result<usize, String> {
    let lines = validator_lines(exchanges);
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let file = dir.path().join("exchanges.jsonl");
    std::fs::write(&file, &lines).map_err(|e| e.to_string())?;
    let script = vendor_file("validate_requests.py");
    let output = std::process::Command::new("python3")
        .arg(&script)
        .arg("--exchanges")
        .arg(&file)
        .output()
        .map_err(|e| format!("run python3: {e}"))?;
    let text =
        format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if output.status.success() { Ok(lines.lines().count()) } else { Err(text) }
}
