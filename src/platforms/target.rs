//! The server, login and path named by a warehouse's `connection_string`
//! (`sftp://user:password@host[:port][/path]`, `ftp://...`): the one parser of it, used to
//! validate an adapter, to check credentials and to open a sync pass's file session. User,
//! password and path are percent-decoded; no path means the login directory.

use percent_encoding::percent_decode_str;
use url::{Host, Url};

use super::reach::{self, Reach};
use super::{Adapter, PingError, PlatformError, adapter_field};

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
    /// Reads the adapter's connection string. Messages never repeat the string: it holds the password.
    pub fn from_adapter(adapter: &Adapter, scheme: &str, default_port: u16) -> Result<Self, PingError> {
        let kind = scheme.to_uppercase();
        let raw = adapter_field(adapter, "connection_string", &kind)?;
        let target = Self::parse(raw, scheme, default_port).map_err(|problem| {
            PingError::AuthenticationFailed(format!("The {kind} connection string {problem}."))
        })?;
        Ok(target.pinned_by(adapter))
    }

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
    pub fn pinned_by(mut self, adapter: &Adapter) -> Self {
        self.host_key = adapter.get("host_key").and_then(serde_json::Value::as_str).map(str::to_string);
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

    /// Opens the TCP connection within the target's reach; failures answer quickly as
    /// `Unreachable`, and an address the reach refuses as `NotAllowed`, with no connection.
    pub async fn connect(&self, server: &str) -> Result<tokio::net::TcpStream, PingError> {
        reach::connect(&self.host, self.port, self.reach).await.map_err(|e| match reach::refusal(&e) {
            Some(refused) => PingError::NotAllowed(format!(
                "orderbridge did not connect to the {server} server at {}: {refused}, and a customer user \
                 set this address, which may point only at public internet addresses (an admin who saves \
                 the adapter makes it the operator's choice; tenant_private_targets allows it for all).",
                self.address()
            )),
            None => PingError::Unreachable(format!(
                "Could not connect to the {server} server at {}: {e}.",
                self.address()
            )),
        })
    }
}

/// A connection that failed, as a sync step sees it: an address the reach refuses is not
/// retried (it will be refused again until someone changes the address or the policy).
impl From<PingError> for PlatformError {
    fn from(error: PingError) -> Self {
        match error {
            PingError::NotAllowed(message) => PlatformError::Rejected { status: 0, message },
            PingError::AuthenticationFailed(message) => PlatformError::Refused(message),
            PingError::Unreachable(message) => PlatformError::unreachable(message),
            PingError::UnsupportedPlatform => {
                PlatformError::Rejected { status: 0, message: error.to_string() }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn adapter(connection_string: &str) -> Adapter {
        let mut adapter = Adapter::new();
        adapter.insert("connection_string".into(), connection_string.into());
        adapter
    }

    #[test]
    fn user_password_and_path_are_percent_decoded() {
        let target = Target::from_adapter(&adapter("sftp://b%40b:p%3Aw%2F@[::1]:2022/in%20box"), "sftp", 22)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (target.user.as_str(), target.password.as_str(), target.path.as_str()),
            ("b@b", "p:w/", "/in box")
        );
        assert_eq!(target.address(), "[::1]:2022");
    }

    #[test]
    fn bad_connection_strings_are_refused_without_repeating_them() {
        for (raw, expected) in [
            ("not a url pw-SECRET", "must be a URL of the form sftp://"),
            ("ftp://u:pw-SECRET@host/x", "must be a URL of the form sftp://"),
            ("sftp://u:pw-SECRET%0D%0ADELE@host/x", "line break"),
        ] {
            match Target::from_adapter(&adapter(raw), "sftp", 22) {
                Err(PingError::AuthenticationFailed(message)) => {
                    assert!(message.contains(expected), "{raw}: {message}");
                    assert!(!message.contains("pw-SECRET"), "{raw}: {message}");
                }
                Err(other) => panic!("{raw}: {other:?}"),
                Ok(_) => panic!("{raw}: accepted"),
            }
        }
    }
}
