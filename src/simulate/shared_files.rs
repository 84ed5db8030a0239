//! Where the tests find `shared/` (the specs and the vendors' own descriptions): beside the
//! clone, as CI has it, or under `$ORDERBRIDGE_SHARED` for a checkout elsewhere.

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
