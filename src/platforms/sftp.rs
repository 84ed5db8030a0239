//! The SFTP check: TCP, SSH handshake, password login, then `stat` of the URL's path.
//!
//! A refused login, a path that is missing or forbidden, and a host key other than the one
//! the adapter pins (`host_key`) are `AuthenticationFailed`: the credentials cannot do the
//! job. A server that breaks off the handshake or will not start SFTP is `Unreachable`:
//! there was no verdict on the credentials.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use russh::client::{self, AuthResult, KeyboardInteractiveAuthResponse};
use russh::keys::{HashAlg, PublicKeyOrCertificate};
use russh::{Disconnect, MethodKind};
use russh_sftp::client::SftpSession;
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::protocol::StatusCode;

use super::reach::Reach;
use super::target::Target;
use super::{Adapter, PingError, quote_platform_text};

/// Keyboard-interactive rounds answered before giving up on a chatty server.
const MAX_PROMPT_ROUNDS: usize = 4;

pub(super) async fn check(adapter: &Adapter, timeout: Duration, reach: Reach) -> Result<(), PingError> {
    let target = Target::from_adapter(adapter, "sftp", 22)?.reached_under(reach);
    let stream = target.connect("SFTP").await?;
    let config = client::Config {
        // Bounds the session task too if the check is dropped at the deadline.
        inactivity_timeout: Some(timeout),
        ..client::Config::default()
    };
    let broke_off = |stage: &str, error: &dyn std::fmt::Display| {
        PingError::Unreachable(format!(
            "The SFTP server at {} failed during {stage}: {}.",
            target.address(),
            quote_platform_text(&error.to_string(), &target.secrets())
        ))
    };
    let (mut session, _) = handshake(config, stream, &target).await.map_err(|e| match e {
        Handshake::OtherKey(message) => PingError::AuthenticationFailed(message),
        Handshake::Failed(e) => broke_off("the SSH handshake", &e),
    })?;
    let login = log_in(&mut session, &target).await.map_err(|e| broke_off("login", &e))?;
    if let Login::Refused(why) = login {
        return Err(PingError::AuthenticationFailed(format!(
            "The SFTP server at {} {why}.",
            target.address()
        )));
    }

    let channel = session.channel_open_session().await.map_err(|e| broke_off("opening a session", &e))?;
    channel.request_subsystem(true, "sftp").await.map_err(|e| broke_off("starting SFTP", &e))?;
    let sftp = SftpSession::new(channel.into_stream()).await.map_err(|e| broke_off("starting SFTP", &e))?;
    // A URL without a path means the login directory.
    let path = if target.path.is_empty() { "." } else { target.path.as_str() };
    let outcome = match sftp.metadata(path).await {
        Ok(_) => Ok(()),
        Err(SftpError::Status(status)) if status.status_code == StatusCode::NoSuchFile => {
            Err(PingError::AuthenticationFailed(format!(
                "Logged in to the SFTP server at {}, but the path {path} does not exist.",
                target.address()
            )))
        }
        Err(SftpError::Status(status)) if status.status_code == StatusCode::PermissionDenied => {
            Err(PingError::AuthenticationFailed(format!(
                "Logged in to the SFTP server at {}, but the user may not access the path {path}.",
                target.address()
            )))
        }
        Err(e) => Err(broke_off(&format!("checking the path {path}"), &e)),
    };
    let _ = sftp.close().await;
    let _ = session.disconnect(Disconnect::ByApplication, "", "en").await;
    outcome
}

/// How a login attempt ended, when the server gave a verdict.
pub(crate) enum Login {
    Accepted,
    Refused(&'static str),
}

/// Password login, falling back to keyboard-interactive when the server only offers that
/// (OpenSSH with `PasswordAuthentication no` still takes passwords that way).
pub(crate) async fn log_in(
    session: &mut client::Handle<HostKeys>,
    target: &Target,
) -> Result<Login, russh::Error> {
    const REFUSED: &str = "refused the user name and password";
    let (remaining, partial) = match session.authenticate_password(&target.user, &target.password).await? {
        AuthResult::Success => return Ok(Login::Accepted),
        AuthResult::Failure { remaining_methods, partial_success } => (remaining_methods, partial_success),
    };
    if partial {
        return Ok(Login::Refused(
            "accepted the password but asks for a second login step, which orderbridge cannot give",
        ));
    }
    if remaining.contains(&MethodKind::Password) || !remaining.contains(&MethodKind::KeyboardInteractive) {
        return Ok(Login::Refused(REFUSED));
    }
    let mut reply = session.authenticate_keyboard_interactive_start(&target.user, None).await?;
    for _ in 0..MAX_PROMPT_ROUNDS {
        match reply {
            KeyboardInteractiveAuthResponse::Success => return Ok(Login::Accepted),
            KeyboardInteractiveAuthResponse::Failure { .. } => break,
            KeyboardInteractiveAuthResponse::InfoRequest { prompts, .. } => {
                let answers = vec![target.password.clone(); prompts.len()];
                reply = session.authenticate_keyboard_interactive_respond(answers).await?;
            }
        }
    }
    Ok(Login::Refused(REFUSED))
}

/// The host key check: the server's key fingerprint (`SHA256:…`, as `ssh-keygen -l` prints it)
/// is remembered, and when the warehouse pins one (`host_key`), any other key ends the
/// handshake before the password is sent.
pub(crate) struct HostKeys {
    pinned: Option<String>,
    seen: Arc<Mutex<Option<String>>>,
}

/// Why a handshake failed.
pub(crate) enum Handshake {
    /// The server showed a key other than the pinned one: a message naming both.
    OtherKey(String),
    Failed(russh::Error),
}

/// The SSH handshake with `target`'s server over `stream`, checking its host key against the
/// one `target` pins; the session and the fingerprint of the key the server showed.
pub(crate) async fn handshake(
    config: client::Config,
    stream: tokio::net::TcpStream,
    target: &Target,
) -> Result<(client::Handle<HostKeys>, String), Handshake> {
    let seen = Arc::new(Mutex::new(None));
    let keys = HostKeys { pinned: target.host_key.clone(), seen: Arc::clone(&seen) };
    let shown = || seen.lock().ok().and_then(|seen| seen.clone());
    match client::connect_stream(Arc::new(config), stream, keys).await {
        Ok(session) => Ok((session, shown().unwrap_or_default())),
        Err(e) => match (target.host_key.as_deref(), shown()) {
            (Some(pinned), Some(shown)) if pinned != shown => Err(Handshake::OtherKey(format!(
                "The SFTP server at {} showed the host key {shown}, but the warehouse's adapter pins {pinned}; \
                 if the server's key was changed on purpose, clear or set the adapter's host_key.",
                target.address()
            ))),
            _ => Err(Handshake::Failed(e)),
        },
    }
}

/// A key's SHA-256 fingerprint in OpenSSH's notation; a certificate's is its key's.
fn fingerprint(key: &PublicKeyOrCertificate) -> String {
    match key {
        PublicKeyOrCertificate::PublicKey { key, .. } => key.fingerprint(HashAlg::Sha256).to_string(),
        PublicKeyOrCertificate::Certificate(cert) => {
            cert.public_key().fingerprint(HashAlg::Sha256).to_string()
        }
    }
}

impl client::Handler for HostKeys {
    type Error = russh::Error;

    async fn check_server_key(&mut self, key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        let fingerprint = fingerprint(key);
        let accepted = self.pinned.as_deref().is_none_or(|pinned| pinned == fingerprint);
        if let Ok(mut seen) = self.seen.lock() {
            *seen = Some(fingerprint);
        }
        Ok(accepted)
    }
}

/// Whether `text` is a fingerprint as `host_key` holds it: `SHA256:` and 43 characters of
/// unpadded base64.
pub fn is_fingerprint(text: &str) -> bool {
    text.strip_prefix("SHA256:").is_some_and(|b64| {
        b64.len() == 43 && b64.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    })
}
