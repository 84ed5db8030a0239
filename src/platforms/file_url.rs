//! The `connection_string` of `sftp`, `dropstream` and `ftp` warehouses as validation reads
//! it: `scheme://user:password@host[:port][/path]`. The `files` module's parser replaces it.

use crate::body::Fields;

/// `connection_string` required, a URL of `scheme`.
pub fn validate(adapter: &mut Fields, scheme: &str) {
    if let Some(url) = adapter.required("connection_string", Fields::text)
        && let Err(problem) = FileTransferUrl::parse(&url, scheme)
    {
        adapter.error("connection_string", problem);
    }
}

/// The parts of an `sftp://user:password@host[:port][/path]` (or `ftp://`) URL; `path` is
/// empty when the URL names none (the login directory).
#[derive(Debug, PartialEq, Eq)]
pub struct FileTransferUrl<'a> {
    pub user: &'a str,
    pub password: &'a str,
    pub host: &'a str,
    pub port: Option<u16>,
    pub path: &'a str,
}

impl<'a> FileTransferUrl<'a> {
    pub fn parse(url: &'a str, scheme: &str) -> Result<FileTransferUrl<'a>, String> {
        let shape = format!("{scheme}://user:password@host[:port][/path]");
        let rest = url
            .strip_prefix(scheme)
            .and_then(|r| r.strip_prefix("://"))
            .ok_or_else(|| format!("must be a URL of the form {shape}"))?;
        if rest.chars().any(char::is_whitespace) {
            return Err(format!("must not contain spaces; expected {shape}"));
        }
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            // No path: the login directory (CONTRACT §6).
            None => (rest, ""),
        };
        // The password may hold an unescaped '@'; the host never does.
        let (userinfo, host_port) = authority
            .rsplit_once('@')
            .ok_or_else(|| format!("needs a user and password; expected {shape}"))?;
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        if user.is_empty() {
            return Err(format!("needs a user name; expected {shape}"));
        }
        if password.is_empty() {
            return Err(format!("needs a password; expected {shape}"));
        }
        let (host, port) = split_port(host_port).map_err(|p| format!("{p}; expected {shape}"))?;
        Ok(FileTransferUrl { user, password, host, port, path })
    }
}

fn split_port(host_port: &str) -> Result<(&str, Option<u16>), &'static str> {
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        // A bracketed IPv6 literal: [::1] or [::1]:22.
        let close = inner.find(']').ok_or("has an unclosed '[' in the host")?;
        let host = &host_port[..close + 2];
        let after = &inner[close + 1..];
        let ip = &inner[..close];
        if ip.is_empty() || !ip.bytes().all(|b| b.is_ascii_hexdigit() || b == b':' || b == b'.') {
            return Err("has an invalid IPv6 host");
        }
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':').ok_or("has text after the host")?)),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() {
        return Err("needs a host");
    }
    if !host.starts_with('[') && !host.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') {
        return Err("has an invalid host name");
    }
    let port = match port {
        None => None,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
            Some(p.parse::<u16>().ok().filter(|p| *p >= 1).ok_or("has a port outside 1..65535")?)
        }
        Some(_) => return Err("has a port that is not a number"),
    };
    Ok((host, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_transfer_urls_are_checked_part_by_part() {
        assert_eq!(
            FileTransferUrl::parse("sftp://bob:p@ss@files.example.com:2222/in/orders", "sftp"),
            Ok(FileTransferUrl {
                user: "bob",
                password: "p@ss",
                host: "files.example.com",
                port: Some(2222),
                path: "/in/orders"
            })
        );
        assert!(FileTransferUrl::parse("ftp://u:p@10.0.0.1/", "ftp").is_ok());
        assert!(FileTransferUrl::parse("sftp://u:p@[::1]:22/x", "sftp").is_ok());
        // No path is the login directory.
        assert_eq!(
            FileTransferUrl::parse("sftp://wh1:secret@ftp.example.com", "sftp").map(|u| u.path),
            Ok("")
        );
        assert_eq!(FileTransferUrl::parse("ftp://u:p@host:21", "ftp").map(|u| u.port), Ok(Some(21)));
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
        ] {
            assert!(FileTransferUrl::parse(bad, "sftp").is_err(), "{bad}");
        }
    }
}
