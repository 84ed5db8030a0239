//! Where the tests find `shared/` (the specs and the vendors' own descriptions): beside the
//! clone, as CI has it, or under `$ORDERBRIDGE_SHARED` for a checkout elsewhere; and whether
//! the vendors' own Python validators there can run.

use std::path::{Path, PathBuf};

/// The file or folder `path` of `shared/`; panics naming both places when it is in neither.
pub fn shared(path: &str) -> PathBuf {
    let beside = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared").join(path);
    if beside.exists() {
        return beside;
    }
    if let Some(there) = std::env::var_os("ORDERBRIDGE_SHARED").map(|s| PathBuf::from(s).join(path))
        && there.exists()
    {
        return there;
    }
    panic!(
        "{path} is not in {} nor under $ORDERBRIDGE_SHARED: clone orderbridge beside `shared/`, or set ORDERBRIDGE_SHARED to it",
        beside.display()
    );
}

#[cfg(test)]
/// Whether a vendor's own validator (Amazon's, eBay's `validate_requests.py`) can run here
/// (python3 with jsonschema). Where it cannot, the cross-checks say they were skipped; with
/// `ORDERBRIDGE_REQUIRE_VENDOR_PY` set (CI sets it) that is a failure instead.
pub fn python_validator_here() -> bool {
    let python = std::process::Command::new("python3").args(["-c", "import jsonschema"]).output();
    let here = python.is_ok_and(|o| o.status.success());
    if !here {
        assert!(
            std::env::var_os("ORDERBRIDGE_REQUIRE_VENDOR_PY").is_none(),
            "ORDERBRIDGE_REQUIRE_VENDOR_PY is set, but python3 with jsonschema is not here"
        );
        eprintln!("the cross-check with validate_requests.py was skipped: no python3 with jsonschema here");
    }
    here
}
