//! The server, login and path named by a warehouse's `connection_string`
//! (`sftp://user:password@host[:port][/path]`, `ftp://...`): the one parser of it, used to
//! validate an adapter and to open a session (for the ping and for a sync pass). User,
//! password and path are percent-decoded; no path means the login directory.

use percent_encoding::percent_decode_str;
use serde_json::{Map, Value};
use url::{Host, Url};

use crate::platforms::PlatformError;
use crate::platforms::reach::{self, Reach};

pub struct Target {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Percent-decoded URL path; empty when the URL names none.
    pub path: String,
    /// The SSH host key fingerprint the warehouse pins (its adapter's `host_key`), if any.
    pub host_key: Option<String>,
    /// Where [`Target::connect`] may lead (CONTRACT §6); `Anywhere` unless the caller says.
    pub reach: Reach,
}

impl Target {
    /// Reads a connection string; the problem is a phrase for a 422 detail or a message
    /// ("needs a password; expected sftp://user:password@host[:port][/path]").
    pub fn parse(raw: &str, scheme: &str, default_port: u16) -> Result<Self, String> {
        let shape = format!("{scheme}://user:password@host[:port][/path]");
        let wrong = |what: &str| format!("{what}; expected {shape}");
        if !raw.starts_with(&format!("{scheme}://")) {
            return Err(format!("must be a URL of the form {shape}"));
        }
        if raw.chars().any(char::is_whitespace) {
            return Err(wrong("must not contain spaces"));
        }
        let authority = raw[scheme.len() + 3..].split('/').next().unwrap_or_default();
        if authority.ends_with(':') {
            return Err(wrong("has a port that is not a number"));
        }
        let url = Url::parse(raw).map_err(|e| wrong(&format!("is not a valid URL ({e})")))?;
        let host = match url.host() {
            Some(Host::Domain(name))
                if !name.is_empty()
                    && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.') =>
            {
                name.to_owned()
            }
            Some(Host::Domain(name)) if !name.is_empty() => return Err(wrong("has an invalid host name")),
            Some(Host::Ipv4(address)) => address.to_string(),
            Some(Host::Ipv6(address)) => address.to_string(),
            _ => return Err(wrong("needs a host")),
        };
        let decode = |part: &str, what: &str| {
            percent_decode_str(part)
                .decode_utf8()
                .map(|text| text.into_owned())
                .map_err(|_| format!("has a {what} that is not valid UTF-8 once decoded"))
        };
        let user = decode(url.username(), "user name")?;
        let password = decode(url.password().unwrap_or(""), "password")?;
        let path = decode(url.path(), "path")?;
        if user.is_empty() {
            return Err(wrong("needs a user name"));
        }
        if password.is_empty() {
            return Err(wrong("needs a password"));
        }
        // A line break would end the FTP command early and start another one.
        for (value, what) in [(&user, "user name"), (&password, "password"), (&path, "path")] {
            if value.contains(['\r', '\n', '\0']) {
                return Err(format!("has a {what} containing a line break"));
            }
        }
        Ok(Self {
            host,
            port: url.port().unwrap_or(default_port),
            user,
            password,
            path,
            host_key: None,
            reach: Reach::Anywhere,
        })
    }

    /// The target with the SSH host key fingerprint the adapter pins (`host_key`), if any.
    pub fn pinned_by(mut self, adapter: &Map<String, Value>) -> Self {
        self.host_key = adapter.get("host_key").and_then(Value::as_str).map(str::to_string);
        self
    }

    /// The target with connections kept within `reach`.
    pub fn reached_under(mut self, reach: Reach) -> Self {
        self.reach = reach;
        self
    }

    /// `host:port` as a person would type it (IPv6 in brackets).
    pub fn address(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The credentials, for scrubbing text a server sends back.
    pub fn secrets(&self) -> [&str; 2] {
        [&self.password, &self.user]
    }

    /// Where the files are, for telling warehouses apart without the password:
    /// `user@host:port/path`.
    pub fn place(&self) -> String {
        format!("{}@{}{}", self.user, self.address(), self.path)
    }

    /// Opens the TCP connection within the target's reach; failures answer quickly as
    /// `Unreachable`, and an address the reach refuses as `NotAllowed`, with no connection
    /// (it will be refused again until someone changes the address or the policy).
    pub async fn connect(&self, server: &str) -> Result<tokio::net::TcpStream, PlatformError> {
        reach::connect(&self.host, self.port, self.reach).await.map_err(|e| match reach::refusal(&e) {
            Some(refused) => PlatformError::NotAllowed(format!(
                "orderbridge did not connect to the {server} server at {}: {refused}, and a customer user \
                 set this address, which may point only at public internet addresses (an admin who saves \
                 the adapter makes it the operator's choice; tenant_private_targets allows it for all).",
                self.address()
            )),
            None => PlatformError::unreachable(format!(
                "Could not connect to the {server} server at {}: {e}.",
                self.address()
            )),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_password_and_path_are_percent_decoded() {
        let target = Target::parse("sftp://b%40b:p%3Aw%2F@[::1]:2022/in%20box", "sftp", 22).unwrap();
        assert_eq!(
            (target.user.as_str(), target.password.as_str(), target.path.as_str()),
            ("b@b", "p:w/", "/in box")
        );
        assert_eq!(target.address(), "[::1]:2022");
        assert_eq!(target.place(), "b@b@[::1]:2022/in box");
    }

    #[test]
    fn bad_connection_strings_are_refused_without_repeating_them() {
        for (raw, expected) in [
            ("not a url pw-SECRET", "must be a URL of the form sftp://"),
            ("ftp://u:pw-SECRET@host/x", "must be a URL of the form sftp://"),
            ("sftp://u:pw-SECRET%0D%0ADELE@host/x", "line break"),
        ] {
            let problem = Target::parse(raw, "sftp", 22).err().unwrap_or_else(|| panic!("{raw}: accepted"));
            assert!(problem.contains(expected), "{raw}: {problem}");
            assert!(!problem.contains("pw-SECRET"), "{raw}: {problem}");
        }
    }

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
