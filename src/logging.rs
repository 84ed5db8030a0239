//! The process's logger: Rocket's log output without the records that carry credentials.
//!
//! At `log_level = "debug"` Rocket 0.5 prints every request as hyper parsed it, headers and
//! all (`Authorization: Basic ...` with the user's password, bearer tokens), and every
//! urlencoded or multipart form field with its value (an adapter's `access_token`, a
//! `connection_string` with its password). Rocket's own logger cannot be told to skip them,
//! so this one is installed before Rocket tries to install its own, drops those records, and
//! prints the rest the way Rocket does.

use std::sync::atomic::{AtomicBool, Ordering};

use log::{Level, LevelFilter, Log, Metadata, Record};
use rocket::figment::Figment;
use yansi::Paint;

struct Logger;

static LOGGER: Logger = Logger;

/// Installs the logger (once per process) and sets the level from the figment's Rocket
/// `log_level`. Rocket, finding a logger in place, leaves both alone; it still decides colors.
pub fn init(figment: &Figment) {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if log::set_logger(&LOGGER).is_ok() {
        INSTALLED.store(true, Ordering::Release);
    }
    // An invalid Rocket config is reported by Rocket itself when it starts.
    if INSTALLED.load(Ordering::Acquire)
        && let Ok(config) = rocket::Config::try_from(figment)
    {
        log::set_max_level(config.log_level.into());
    }
}

/// Whether a record may hold a credential: Rocket's dump of each request and response
/// (`rocket::server`, debug) and its trace of each form field (`rocket::form`, trace).
fn may_hold_credentials(module: &str, level: Level) -> bool {
    let within =
        |path: &str| module == path || module.strip_prefix(path).is_some_and(|r| r.starts_with("::"));
    (within("rocket::server") && level == Level::Debug) || (within("rocket::form") && level == Level::Trace)
}

/// The target of what the operator must see whatever the level (a key file made, a host
/// key pinned, what the demo's simulated platforms are told); see [`notice`].
const NOTICE: &str = "orderbridge::notice";

/// Shows `message` to the operator at every log level but `off`, as Rocket shows its launch
/// records. (`log::info!` would stop at the level before reaching the logger.)
pub fn notice(message: std::fmt::Arguments<'_>) {
    log::logger().log(&Record::builder().level(Level::Info).target(NOTICE).args(message).build());
}

/// `rocket::launch` records are shown at every level, as Rocket shows them, and so are notices.
fn is_launch_record(metadata: &Metadata<'_>) -> bool {
    metadata.target().contains("rocket::launch") || metadata.target() == NOTICE
}

impl Log for Logger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        log::max_level() != LevelFilter::Off
            && (metadata.level() <= log::max_level() || is_launch_record(metadata))
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let module = record.module_path().unwrap_or_default();
        if may_hold_credentials(module, record.level()) {
            return;
        }
        // Rocket shows hyper, rustls and r2d2 only at its debug level, as here.
        let chatty = ["hyper", "rustls", "r2d2"].iter().any(|m| module.starts_with(m));
        if chatty && log::max_level() < LevelFilter::Trace {
            return;
        }
        print(record);
    }

    fn flush(&self) {}
}

/// Rocket 0.5's layout: targets ending in `_` are indented under the previous line, launch
/// warnings count as information, debug records name their source line.
fn print(record: &Record<'_>) {
    let indented = record.target().ends_with('_');
    let level = if is_launch_record(record.metadata()) { Level::Info } else { record.level() };
    let prefix = if indented { format!("   {} ", ">>".bold()) } else { String::new() };
    let args = record.args();
    let line = match level {
        Level::Error if !indented => format!("{} {}", "Error:".red().bold(), args.red().wrap()),
        Level::Warn if !indented => format!("{} {}", "Warning:".yellow().bold(), args.yellow().wrap()),
        Level::Error => args.red().wrap().to_string(),
        Level::Warn => args.yellow().wrap().to_string(),
        Level::Info => args.blue().wrap().to_string(),
        Level::Trace => args.magenta().wrap().to_string(),
        Level::Debug => {
            let file = record.file().unwrap_or_default();
            let at = record.line().map(|l| format!(":{l}")).unwrap_or_default();
            format!("\n{} {}{}\n\t{args}", "-->".blue().bold(), file.blue(), at.blue())
        }
    };
    // Like Rocket, never panic when stdout is gone.
    use std::io::Write;
    let _ = writeln!(std::io::stdout(), "{prefix}{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_dumps_and_form_field_traces_are_dropped() {
        assert!(may_hold_credentials("rocket::server", Level::Debug));
        assert!(may_hold_credentials("rocket::form::parser", Level::Trace));
        assert!(may_hold_credentials("rocket::form", Level::Trace));
    }

    #[test]
    fn everything_else_is_kept() {
        assert!(!may_hold_credentials("rocket::server", Level::Info), "the request line and outcome");
        assert!(!may_hold_credentials("rocket::server", Level::Error));
        assert!(!may_hold_credentials("rocket::form", Level::Debug));
        assert!(!may_hold_credentials("rocket::serverless", Level::Debug));
        assert!(!may_hold_credentials("russh::client", Level::Debug));
        assert!(!may_hold_credentials("orderbridge::error", Level::Error));
    }
}
