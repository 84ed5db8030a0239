//! A real SSH server with the SFTP subsystem (russh + russh-sftp) that knows one user and one
//! path. It logs in by password, or only by keyboard-interactive like an OpenSSH server with
//! `PasswordAuthentication no`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use russh::keys::PrivateKey;
use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::server::{self, Auth, Msg, Session};
use russh::{Channel, ChannelId, MethodKind, MethodSet};
use russh_sftp::protocol::{Attrs, FileAttributes, StatusCode};

use super::StandIn;

pub const USER: &str = "warehouse-user";
pub const PASSWORD: &str = "pw-SECRET-ssh/@:42";
pub const EXISTING_PATH: &str = "/outbound";
/// The login directory as a client names it when its URL has no path.
pub const LOGIN_DIR: &str = ".";

#[derive(Clone, Copy)]
pub enum Login {
    Password,
    KeyboardInteractive,
}

fn server_key() -> PrivateKey {
    PrivateKey::from(Ed25519Keypair::from_seed(&[7; 32]))
}

/// The stand-in's host key fingerprint as orderbridge records it (`SHA256:…`).
pub fn host_key() -> String {
    server_key().public_key().fingerprint(russh::keys::HashAlg::Sha256).to_string()
}

/// A fingerprint of another key, as a server that changed its key would show.
pub const OTHER_HOST_KEY: &str = "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

pub async fn start(login: Login) -> StandIn {
    serve(login, None).await
}

/// An SFTP server whose files are the folder `root` (the login directory), for sync tests.
pub async fn start_serving(root: &std::path::Path) -> StandIn {
    serve(Login::Password, Some(root.to_path_buf())).await
}

async fn serve(login: Login, root: Option<std::path::PathBuf>) -> StandIn {
    let method = match login {
        Login::Password => MethodKind::Password,
        Login::KeyboardInteractive => MethodKind::KeyboardInteractive,
    };
    let config = Arc::new(server::Config {
        // A fixed key, so tests know its fingerprint (`host_key`).
        keys: vec![server_key()],
        methods: MethodSet::from(&[method][..]),
        auth_rejection_time: Duration::from_millis(10),
        auth_rejection_time_initial: Some(Duration::ZERO),
        inactivity_timeout: Some(Duration::from_secs(30)),
        ..server::Config::default()
    });
    StandIn::start(move |stream| {
        let config = Arc::clone(&config);
        let root = root.clone();
        async move {
            let handler = SshSession { channels: HashMap::new(), root };
            if let Ok(session) = server::run_stream(config, stream, handler).await {
                let _ = session.await;
            }
        }
    })
    .await
}

struct SshSession {
    channels: HashMap<ChannelId, Channel<Msg>>,
    /// Serve this folder's files, or (None) only the directories the ping tests know.
    root: Option<std::path::PathBuf>,
}

fn reject() -> Auth {
    Auth::Reject { proceed_with_methods: None, partial_success: false }
}

impl server::Handler for SshSession {
    type Error = russh::Error;

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        Ok(if user == USER && password == PASSWORD { Auth::Accept } else { reject() })
    }

    async fn auth_keyboard_interactive<'a>(
        &'a mut self,
        user: &str,
        _submethods: &str,
        response: Option<server::Response<'a>>,
    ) -> Result<Auth, Self::Error> {
        Ok(match response {
            None => Auth::Partial {
                name: Cow::Borrowed(""),
                instructions: Cow::Borrowed(""),
                prompts: Cow::Owned(vec![(Cow::Borrowed("Password: "), false)]),
            },
            Some(mut answers) => {
                let answer = answers.next();
                if user == USER && answer.as_deref() == Some(PASSWORD.as_bytes()) {
                    Auth::Accept
                } else {
                    reject()
                }
            }
        })
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: server::ChannelOpenHandle,
        _session: &mut Session,
    ) -> Result<(), Self::Error> {
        self.channels.insert(channel.id(), channel);
        reply.accept().await;
        Ok(())
    }

    async fn subsystem_request(
        &mut self,
        channel_id: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        match self.channels.remove(&channel_id) {
            Some(channel) if name == "sftp" => {
                session.channel_success(channel_id)?;
                match &self.root {
                    Some(root) => {
                        let files = super::sftp_files::Files::new(root.clone());
                        russh_sftp::server::run(channel.into_stream(), files).await;
                    }
                    None => russh_sftp::server::run(channel.into_stream(), Sftp).await,
                }
            }
            _ => session.channel_failure(channel_id)?,
        }
        Ok(())
    }

    async fn channel_eof(&mut self, channel: ChannelId, session: &mut Session) -> Result<(), Self::Error> {
        session.close(channel)
    }
}

/// Knows one directory and the login directory; `stat` of anything else is "no such file".
struct Sftp;

impl Sftp {
    fn attributes(id: u32, path: &str) -> Result<Attrs, StatusCode> {
        if path == EXISTING_PATH || path == LOGIN_DIR {
            Ok(Attrs {
                id,
                attrs: FileAttributes { permissions: Some(0o040755), ..FileAttributes::default() },
            })
        } else {
            Err(StatusCode::NoSuchFile)
        }
    }
}

impl russh_sftp::server::Handler for Sftp {
    type Error = StatusCode;

    fn unimplemented(&self) -> Self::Error {
        StatusCode::OpUnsupported
    }

    async fn stat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        Self::attributes(id, &path)
    }

    async fn lstat(&mut self, id: u32, path: String) -> Result<Attrs, Self::Error> {
        Self::attributes(id, &path)
    }
}
