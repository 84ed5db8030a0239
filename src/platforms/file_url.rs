//! The `connection_string` of `sftp`, `dropstream` and `ftp` warehouses as validation reads
//! it, through the one parser (`target::Target::parse`).

use super::target::Target;
use crate::fields::Fields;

/// `connection_string` required, a URL of `scheme`; for SFTP, `host_key` is a fingerprint or
/// null (none pinned yet).
pub fn validate(adapter: &mut Fields, scheme: &str) {
    let port = if scheme == "ftp" { 21 } else { 22 };
    if let Some(url) = adapter.required("connection_string", Fields::text)
        && let Err(problem) = Target::parse(&url, scheme, port)
    {
        adapter.error("connection_string", problem);
    }
    if scheme == "sftp"
        && let Some(key) = adapter.text("host_key").value()
        && !super::sftp::is_fingerprint(&key)
    {
        adapter.error(
            "host_key",
            "must be an SSH host key fingerprint as ssh-keygen -l prints it: SHA256: and 43 base64 characters",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_transfer_urls_are_checked_part_by_part() {
        let t = Target::parse("sftp://bob:p@ss@files.example.com:2222/in/orders", "sftp", 22).unwrap();
        assert_eq!(
            (t.user.as_str(), t.password.as_str(), t.host.as_str(), t.port, t.path.as_str()),
            ("bob", "p@ss", "files.example.com", 2222, "/in/orders")
        );
        assert!(Target::parse("ftp://u:p@10.0.0.1/", "ftp", 21).is_ok());
        assert!(Target::parse("sftp://u:p@[::1]:22/x", "sftp", 22).is_ok());
        // No path is the login directory; no port is the scheme's.
        let t = Target::parse("sftp://wh1:s%2Fcret@ftp.example.com", "sftp", 22).unwrap();
        assert_eq!((t.path.as_str(), t.port, t.password.as_str()), ("", 22, "s/cret"));
        for bad in [
            "ftp://u:p@host/x",
            "sftp:/u:p@host/x",
            "sftp://host/x",
            "sftp://u@host/x",
            "sftp://:p@host/x",
            "sftp://u:@host/x",
            "sftp://u:p@/x",
            "sftp://u:p@host:abc/x",
            "sftp://u:p@host:70000/x",
            "sftp://u:p@host:/x",
            "sftp://u:p@ho st/x",
            "sftp://u:p@ho_st!/x",
            "sftp://u:p%0Aw@host/x",
        ] {
            let problem =
                Target::parse(bad, "sftp", 22).err().unwrap_or_else(|| panic!("{bad} was accepted"));
            assert!(!problem.contains(":p@"), "{bad}: {problem}");
        }
    }
}
