//! The SSH half of an SFTP warehouse: the handshake, which checks the server's host key
//! against the one the adapter pins (`host_key`), and the password login. A key other than
//! the pinned one ends the handshake before the password is sent.

use std::sync::{Arc, Mutex};

use russh::MethodKind;
use russh::client::{self, AuthResult, KeyboardInteractiveAuthResponse};
use russh::keys::{HashAlg, PublicKeyOrCertificate};

use super::target::Target;

/// Keyboard-interactive rounds answered before giving up on a chatty server.
const MAX_PROMPT_ROUNDS: usize = 4;

/// How a login attempt ended, when the server gave a verdict.
pub(super) enum Login {
    Accepted,
    Refused(&'static str),
}

/// Password login, falling back to keyboard-interactive when the server only offers that
/// (OpenSSH with `PasswordAuthentication no` still takes passwords that way).
pub(super) async fn log_in(
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
pub(super) struct HostKeys {
    pinned: Option<String>,
    seen: Arc<Mutex<Option<String>>>,
}

/// Why a handshake failed.
pub(super) enum Handshake {
    /// The server showed a key other than the pinned one: a message naming both.
    OtherKey(String),
    Failed(russh::Error),
}

/// The SSH handshake with `target`'s server over `stream`, checking its host key against the
/// one `target` pins; the session and the fingerprint of the key the server showed.
pub(super) async fn handshake(
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
pub(super) fn is_fingerprint(text: &str) -> bool {
    text.strip_prefix("SHA256:").is_some_and(|b64| {
        b64.len() == 43 && b64.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
    })
}
