//! `folder` warehouses: a folder on the server's own disk, `connection_string`
//! `file:///absolute/path`, which must lie inside the configured `folder_warehouse_root`
//! (CONTRACT §6, §10). Only admins create or change one; the resource module enforces that.
//! The check that the folder exists and is writable belongs to the `files` module.

use std::path::{Component, Path, PathBuf};

use percent_encoding::percent_decode_str;

use crate::config::Config;
use crate::fields::Fields;

pub const TOKEN: &str = "folder";

/// `connection_string` required, a `file:///absolute/path` URL. Whether the path lies inside
/// the root is [`check_inside_root`]'s question, which needs the configuration.
pub fn validate(adapter: &mut Fields) {
    if let Some(url) = adapter.required("connection_string", Fields::text)
        && let Err(problem) = folder_path(&url)
    {
        adapter.error("connection_string", problem);
    }
}

/// The absolute path a `file:///...` URL names, percent-decoded.
pub fn folder_path(url: &str) -> Result<PathBuf, String> {
    const SHAPE: &str = "must be a URL of the form file:///absolute/path";
    let path = url.strip_prefix("file://").ok_or_else(|| SHAPE.to_string())?;
    if !path.starts_with('/') {
        return Err(format!("{SHAPE} (no host, an absolute path)"));
    }
    let path = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| "has a path that is not valid UTF-8 once decoded".to_string())?;
    if path.contains('\0') {
        return Err("has a path containing a NUL character".to_string());
    }
    Ok(PathBuf::from(path.into_owned()))
}

/// Where `folder` warehouses may live: `folder_warehouse_root`, a relative one taken from the
/// database file's directory (default `warehouses` beside the database).
pub fn root(config: &Config) -> PathBuf {
    let root = &config.folder_warehouse_root;
    if root.is_absolute() {
        return root.clone();
    }
    let database_dir = config.database.parent().unwrap_or(Path::new(""));
    let base = if database_dir.as_os_str().is_empty() { Path::new(".") } else { database_dir };
    base.join(root)
}

/// Problem text when the `file://` URL's folder is not inside `root`; compares resolved
/// paths, so neither `..` nor a symbolic link that exists can lead outside.
pub fn check_inside_root(url: &str, root: &Path) -> Result<(), String> {
    let path = folder_path(url)?;
    let (path, root) = (resolve(&path), resolve(root));
    if path.starts_with(&root) {
        Ok(())
    } else {
        Err("must name a folder inside the server's folder_warehouse_root".to_string())
    }
}

/// An absolute, normalized path: the longest existing ancestor canonicalized (symbolic links
/// followed), the rest with `.` and `..` applied by hand.
fn resolve(path: &Path) -> PathBuf {
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut lexical = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    let mut existing = lexical.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(canonical) = existing.canonicalize() {
            return rest.iter().rev().fold(canonical, |path, part| path.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return lexical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_urls_are_absolute_file_urls() {
        assert_eq!(folder_path("file:///srv/wh%201"), Ok(PathBuf::from("/srv/wh 1")));
        for bad in ["/srv/x", "file://host/x", "file:relative", "sftp://u:p@h/x"] {
            assert!(folder_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_folder_must_stay_inside_the_root_even_through_dot_dot() {
        let root = std::env::temp_dir().join(format!("ob-folder-root-{}", std::process::id()));
        std::fs::create_dir_all(root.join("a")).unwrap();
        let url = |p: &Path| format!("file://{}", p.display());
        assert!(check_inside_root(&url(&root.join("a")), &root).is_ok());
        assert!(check_inside_root(&url(&root.join("new/deeper")), &root).is_ok());
        assert!(check_inside_root(&url(&root.join("a/../../escape")), &root).is_err());
        assert!(check_inside_root("file:///etc", &root).is_err());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_relative_root_lies_beside_the_database() {
        let config = Config { database: PathBuf::from("/var/lib/ob/orderbridge.db"), ..Config::default() };
        assert_eq!(root(&config), PathBuf::from("/var/lib/ob/warehouses"));
        let config = Config { folder_warehouse_root: PathBuf::from("/srv/wh"), ..config };
        assert_eq!(root(&config), PathBuf::from("/srv/wh"));
    }
}
