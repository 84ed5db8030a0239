//! orderbridge's configuration: one figment of defaults, `Rocket.toml`, `ROCKET_*` for
//! Rocket's own keys and `ORDERBRIDGE_*` for ours (CONTRACT §10).

use std::fmt;
use std::path::PathBuf;

use rocket::figment::Figment;
use rocket::figment::providers::{Env, Serialized};
use serde::{Deserialize, Serialize};

/// A configured secret. `Debug` never prints it, so a logged config stays clean.
#[derive(Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Secret(value.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(********)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PingMode {
    /// Ask the platform whether the credentials authenticate.
    Live,
    /// Validate the body only; for machines with no network.
    Offline,
}

/// Whether `serve` runs the sync engine (CONTRACT §10, §11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Every syncing connection gets its passes.
    Live,
    /// No pass runs in `serve`; `orderbridge sync` still runs them by hand.
    Off,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(default)]
pub struct Config {
    /// The SQLite file, created on first run.
    pub database: PathBuf,
    /// Password of the `admin` user created on first run; random and printed once if unset.
    pub admin_password: Option<Secret>,
    /// Token signing secret; generated and kept in the database if unset.
    pub jwt_secret: Option<Secret>,
    pub token_ttl_secs: u64,
    pub session_ttl_secs: u64,
    pub max_sessions: usize,
    pub ping_mode: PingMode,
    pub ping_timeout_secs: u64,
    pub bigcommerce_api_base: String,
    pub sellbrite_api_base: String,
    /// Where `shopify` checks and syncs go; `{shop}` becomes the adapter's shop in lower case
    /// (a base without it is used as it is).
    pub shopify_api_base: String,
    /// Where `shipbob` warehouses' checks and syncs go (ShipBob's sandbox is
    /// `https://sandbox-api.shipbob.com`); a trailing `/` is dropped.
    pub shipbob_api_base: String,
    /// Where `shipstation` warehouses' checks and syncs go (ShipStation API V2); a trailing
    /// `/` is dropped.
    pub shipstation_api_base: String,
    /// Where `amazon` stores' Selling Partner API is: `{region}` becomes the adapter's region
    /// in lower case; a base without it is used as it is.
    pub amazon_api_base: String,
    /// Where `amazon` stores fetch access tokens: `{amazon_lwa_base}/auth/o2/token`.
    pub amazon_lwa_base: String,
    /// Where `ebay` stores of `environment` `production` are checked and synced and fetch
    /// their tokens (`{base}/identity/v1/oauth2/token`); a trailing `/` is dropped.
    pub ebay_api_base: String,
    /// The same for `environment` `sandbox`.
    pub ebay_sandbox_api_base: String,
    /// The only place `folder` warehouses may use; relative to the database file's directory.
    pub folder_warehouse_root: PathBuf,
    /// The key that seals stored credentials; `<database name>.key` beside the database
    /// when unset (created with mode 0600 on first start).
    pub secret_key_file: Option<PathBuf>,
    /// Threads that run database work; 0 means the number of cores (at least 2).
    pub db_workers: usize,
    /// Largest accepted request body in bytes (JSON, urlencoded or multipart).
    pub body_limit: u64,
    /// Largest accepted body of `POST /import/*` in bytes.
    pub import_body_limit: u64,
    pub sync_mode: SyncMode,
    /// Time between scheduled passes of one connection (1..86400).
    pub sync_interval_secs: u64,
    /// Tries of one delivery before it is `errored_*`.
    pub sync_max_attempts: u32,
    /// First retry delay; it doubles with each try.
    pub sync_retry_base_secs: u64,
    /// Customer users may point stores and warehouses at loopback, private and other
    /// special-purpose addresses, as admins may (CONTRACT §6); for a trusted network.
    pub tenant_private_targets: bool,
    /// How long a warehouse's shipment or stock file must stay unchanged (size and
    /// modification time) before it is read (0..3600; 0 reads it at first sight).
    pub file_settle_secs: u64,
    /// The largest answer read from a store's or warehouse's API, in MiB (1..1024); a larger
    /// one fails its step with `bad_data`.
    pub max_platform_body_mib: u64,
    /// The largest file (and file listing) read from a file warehouse, in MiB (1..16384); a
    /// larger one fails its step with `bad_data`.
    pub max_warehouse_file_mib: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            database: PathBuf::from("orderbridge.db"),
            admin_password: None,
            jwt_secret: None,
            token_ttl_secs: 3600,
            session_ttl_secs: 60,
            max_sessions: 10_000,
            ping_mode: PingMode::Live,
            ping_timeout_secs: 10,
            bigcommerce_api_base: "https://api.bigcommerce.com".to_string(),
            sellbrite_api_base: "https://api.sellbrite.com".to_string(),
            shopify_api_base: "https://{shop}".to_string(),
            shipbob_api_base: "https://api.shipbob.com".to_string(),
            shipstation_api_base: "https://api.shipstation.com".to_string(),
            amazon_api_base: "https://sellingpartnerapi-{region}.amazon.com".to_string(),
            amazon_lwa_base: "https://api.amazon.com".to_string(),
            ebay_api_base: "https://api.ebay.com".to_string(),
            ebay_sandbox_api_base: "https://api.sandbox.ebay.com".to_string(),
            folder_warehouse_root: PathBuf::from("warehouses"),
            secret_key_file: None,
            db_workers: 0,
            body_limit: 1024 * 1024,
            import_body_limit: 64 * 1024 * 1024,
            sync_mode: SyncMode::Live,
            sync_interval_secs: 60,
            sync_max_attempts: 8,
            sync_retry_base_secs: 60,
            tenant_private_targets: false,
            file_settle_secs: 10,
            max_platform_body_mib: 16,
            max_warehouse_file_mib: 64,
        }
    }
}

impl Config {
    /// Where the key of the database's credentials is kept.
    pub fn key_file(&self) -> PathBuf {
        self.secret_key_file.clone().unwrap_or_else(|| crate::db::secrets::default_key_file(&self.database))
    }

    /// Opens the configured database with its key and `workers` database threads; each
    /// commit checkpoints the WAL as needed (the CLI's commands).
    pub fn open_database(&self, workers: usize) -> Result<crate::db::Pool, String> {
        crate::db::open_with(&self.database, workers, &self.key_file(), crate::db::Checkpoints::OnCommit)
    }

    /// As `open_database`, for the server: a `db::Checkpointer` started at liftoff copies the
    /// WAL into the file, so requests do not.
    pub fn open_served_database(&self, workers: usize) -> Result<crate::db::Pool, String> {
        crate::db::open_with(&self.database, workers, &self.key_file(), crate::db::Checkpoints::InBackground)
    }

    /// The sync engine's own database outside the server (`orderbridge sync`, benchmarks):
    /// one database thread and a connection with the engine's larger page cache
    /// (`db::ENGINE_CACHE_KIB`), as `serve` gives its engine (`Pool::own`).
    pub fn open_engine_database(&self) -> Result<crate::db::Pool, String> {
        self.open_database(1)?.own(1, crate::db::ENGINE_CACHE_KIB)
    }

    /// The figment production reads: our defaults, Rocket's own (`Rocket.toml`, `ROCKET_*`),
    /// then `ORDERBRIDGE_*`.
    pub fn figment() -> Figment {
        Figment::from(Serialized::defaults(Config::default()))
            .merge(rocket::Config::figment())
            .merge(Env::prefixed("ORDERBRIDGE_").global())
    }

    pub fn from_figment(figment: &Figment) -> Result<Config, String> {
        let config: Config = figment.extract().map_err(|e| format!("configuration: {e}"))?;
        if config.token_ttl_secs == 0 {
            return Err("configuration: token_ttl_secs must be at least 1".to_string());
        }
        if config.session_ttl_secs == 0 {
            return Err("configuration: session_ttl_secs must be at least 1".to_string());
        }
        if config.body_limit == 0 || config.import_body_limit == 0 {
            return Err("configuration: body limits must be at least 1 byte".to_string());
        }
        if !(1..=86_400).contains(&config.sync_interval_secs) {
            return Err("configuration: sync_interval_secs must be between 1 and 86400".to_string());
        }
        if config.sync_max_attempts == 0 {
            return Err("configuration: sync_max_attempts must be at least 1".to_string());
        }
        if config.sync_retry_base_secs == 0 {
            return Err("configuration: sync_retry_base_secs must be at least 1".to_string());
        }
        // A pass may wait this long for a file, holding its connection's turn.
        if config.file_settle_secs > 3600 {
            return Err("configuration: file_settle_secs must be between 0 and 3600".to_string());
        }
        if !(1..=1024).contains(&config.max_platform_body_mib) {
            return Err("configuration: max_platform_body_mib must be between 1 and 1024".to_string());
        }
        if !(1..=16_384).contains(&config.max_warehouse_file_mib) {
            return Err("configuration: max_warehouse_file_mib must be between 1 and 16384".to_string());
        }
        Ok(config)
    }

    /// `max_platform_body_mib` in bytes.
    pub fn max_platform_body_bytes(&self) -> usize {
        mib(self.max_platform_body_mib)
    }

    /// `max_warehouse_file_mib` in bytes.
    pub fn max_warehouse_file_bytes(&self) -> usize {
        mib(self.max_warehouse_file_mib)
    }
}

fn mib(count: u64) -> usize {
    usize::try_from(count.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_do_not_appear_in_debug_output() {
        let config = Config {
            admin_password: Some(Secret::new("hunter2-admin")),
            jwt_secret: Some(Secret::new("jwt-very-secret")),
            ..Config::default()
        };
        let printed = format!("{config:?}");
        assert!(!printed.contains("hunter2"), "{printed}");
        assert!(!printed.contains("very-secret"), "{printed}");
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail dictates the closure's error type
    fn environment_overrides_defaults() {
        rocket::figment::Jail::expect_with(|jail| {
            jail.set_env("ORDERBRIDGE_DATABASE", "/tmp/x.db");
            jail.set_env("ORDERBRIDGE_PING_MODE", "offline");
            jail.set_env("ORDERBRIDGE_TOKEN_TTL_SECS", "60");
            jail.set_env("ORDERBRIDGE_FILE_SETTLE_SECS", "1");
            let config = Config::from_figment(&Config::figment()).unwrap();
            assert_eq!(config.database, PathBuf::from("/tmp/x.db"));
            assert_eq!(config.ping_mode, PingMode::Offline);
            assert_eq!(config.token_ttl_secs, 60);
            assert_eq!(config.session_ttl_secs, 60);
            assert_eq!(config.file_settle_secs, 1);
            Ok(())
        });
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail dictates the closure's error type
    fn the_file_settle_time_comes_from_rocket_toml_and_is_bounded() {
        rocket::figment::Jail::expect_with(|jail| {
            assert_eq!(Config::from_figment(&Config::figment()).unwrap().file_settle_secs, 10, "default");
            jail.create_file("Rocket.toml", "[default]\nfile_settle_secs = 0\n")?;
            assert_eq!(Config::from_figment(&Config::figment()).unwrap().file_settle_secs, 0);
            jail.set_env("ORDERBRIDGE_FILE_SETTLE_SECS", "3601");
            let refused = Config::from_figment(&Config::figment()).unwrap_err();
            assert!(refused.contains("file_settle_secs"), "{refused}");
            Ok(())
        });
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail dictates the closure's error type
    fn the_platform_read_limits_have_defaults_come_from_the_environment_and_are_bounded() {
        rocket::figment::Jail::expect_with(|jail| {
            let config = Config::from_figment(&Config::figment()).unwrap();
            assert_eq!((config.max_platform_body_mib, config.max_warehouse_file_mib), (16, 64), "defaults");
            assert_eq!(config.max_platform_body_bytes(), 16 << 20);
            jail.set_env("ORDERBRIDGE_MAX_PLATFORM_BODY_MIB", "2");
            jail.set_env("ORDERBRIDGE_MAX_WAREHOUSE_FILE_MIB", "3");
            let config = Config::from_figment(&Config::figment()).unwrap();
            assert_eq!(
                (config.max_platform_body_bytes(), config.max_warehouse_file_bytes()),
                (2 << 20, 3 << 20)
            );
            for (key, value) in [("MAX_PLATFORM_BODY_MIB", "0"), ("MAX_WAREHOUSE_FILE_MIB", "16385")] {
                jail.set_env(format!("ORDERBRIDGE_{key}"), value);
                let refused = Config::from_figment(&Config::figment()).unwrap_err();
                assert!(refused.contains(&key.to_lowercase()), "{refused}");
                jail.set_env(format!("ORDERBRIDGE_{key}"), "1");
            }
            Ok(())
        });
    }

    #[test]
    #[allow(clippy::result_large_err)] // figment's Jail dictates the closure's error type
    fn tenant_private_targets_is_off_unless_rocket_toml_or_the_environment_turns_it_on() {
        rocket::figment::Jail::expect_with(|jail| {
            let read = || Config::from_figment(&Config::figment()).map(|c| c.tenant_private_targets);
            assert_eq!(read(), Ok(false));
            jail.create_file("Rocket.toml", "[default]\ntenant_private_targets = true\n")?;
            assert_eq!(read(), Ok(true));
            jail.set_env("ORDERBRIDGE_TENANT_PRIVATE_TARGETS", "false");
            assert_eq!(read(), Ok(false), "the environment wins over the file");
            Ok(())
        });
    }
}
