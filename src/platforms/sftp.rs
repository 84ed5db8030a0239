//! The SFTP check: TCP, SSH handshake, password login, then `stat` of the URL's path.
//!
//! A refused login and a path that is missing or forbidden are `AuthenticationFailed`: the
//! credentials cannot do the job. A server that breaks off the handshake or will not start
//! SFTP is `Unreachable`: there was no verdict on the credentials.

use std::sync::Arc;
use std::time::Duration;

use russh::client::{self, AuthResult, KeyboardInteractiveAuthResponse};
use russh::keys::PublicKeyOrCertificate;
use russh::{Disconnect, MethodKind};
use russh_sftp::client::SftpSession;
use russh_sftp::client::error::Error as SftpError;
use russh_sftp::protocol::StatusCode;

use super::target::Target;
use super::{Adapter, PingError, quote_platform_text};

/// Keyboard-interactive rounds answered before giving up on a chatty server.
const MAX_PROMPT_ROUNDS: usize = 4;

pub(super) async fn check(adapter: &Adapter, timeout: Duration) -> Result<(), PingError> {
    let target = Target::from_adapter(adapter, "sftp", 22)?;
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
    let mut session = client::connect_stream(Arc::new(config), stream, AnyHostKey)
        .await
        .map_err(|e| broke_off("the SSH handshake", &e))?;
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
    session: &mut client::Handle<AnyHostKey>,
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

/// Accepts whatever host key the server shows. orderbridge keeps no known_hosts to compare
/// against, and this check only proves a login works: it sends the password the user gave
/// for this server and transfers no data. The key and its fingerprint appear in no message.
pub(crate) struct AnyHostKey;

impl client::Handler for AnyHostKey {
    type Error = russh::Error;

    async fn check_server_key(&mut self, _key: &PublicKeyOrCertificate) -> Result<bool, Self::Error> {
        Ok(true)
    }
}
