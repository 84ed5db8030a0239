//! Credentials encrypted at rest. Every adapter value that responses mask (a key naming a
//! token, secret, password or key, and a `connection_string` carrying a password) is stored
//! sealed with XChaCha20-Poly1305 under a key that is not in the database: the key file
//! (`secret_key_file`, by default `<database name>.key` beside it, mode 0600, created on first
//! start). A copy of the `.db` file alone reveals no credential.
//!
//! Sealing happens inside SQLite: every connection gets the functions `ob_seal(json)` and
//! `ob_open(json)`, bound to its database's key, so the statements that write and read an
//! adapter say so themselves and no code path can forget. A sealed value is the text
//! `enc:v1:` + base64(24-byte nonce, ciphertext and tag); `ob_open` passes plain values
//! through, and every start seals any it finds (rows an older release or a tool wrote).
//!
//! The token signing secret orderbridge generates (when `jwt_secret` is not configured) is
//! kept in the database sealed the same way (`ob_seal_text`, `ob_open_text`).
//!
//! The database keeps a sealed check value: a key that cannot open it is a start-up error,
//! and so is a missing key file once credentials were sealed; never a silent new key.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chacha20poly1305::aead::{Aead, AeadCore, KeyInit, OsRng};
use chacha20poly1305::{Key, XChaCha20Poly1305, XNonce};
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use serde_json::{Map, Value};

/// A sealed string value.
const SEALED: &str = "enc:v1:";
/// A sealed non-string value (its JSON text was sealed).
const SEALED_JSON: &str = "enc:v1j:";
const KEY_FILE_HEADER: &str = "orderbridge-key-v1 ";
const CHECK_SETTING: &str = "secrets_key_check";
const CHECK_TEXT: &str = "orderbridge: this key opens this database's credentials";
/// Settings whose values are secrets, sealed like adapter secrets: the token signing
/// secret orderbridge generates when none is configured.
const SEALED_SETTINGS: [&str; 1] = ["jwt_secret"];

/// Whether an adapter key names a secret: it contains token, secret, password or key. An SFTP
/// warehouse's `host_key` is the server's public key fingerprint, shown as it is.
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    if key == "host_key" {
        return false;
    }
    ["token", "secret", "password", "key"].iter().any(|word| key.contains(word))
}

/// Adapter keys whose whole value is the merchant's own plain words, never a secret, at any
/// depth: a file warehouse's CSV layouts and its X12 settings (files-csv-layouts.md §1,
/// files-x12.md §1.1). A header or map entry such as "Donkey Key Rings" is shown as given.
pub fn is_plain_key(key: &str) -> bool {
    ["orders_layout", "shipments_layout", "inventory_layout", "x12"].contains(&key)
}

/// Whether a URL carries a password in its user info (`sftp://user:password@host`).
fn has_url_password(url: &str) -> bool {
    let Some(scheme_end) = url.find("://") else { return false };
    let start = scheme_end + 3;
    let authority_end = url[start..].find(['/', '?', '#']).map_or(url.len(), |i| start + i);
    url[start..authority_end].rfind('@').is_some_and(|at| url[start..start + at].contains(':'))
}

/// The key file that goes with a database file by default: `<stem>.key` beside it
/// (`orderbridge.key` for `orderbridge.db`).
pub fn default_key_file(database: &Path) -> PathBuf {
    let stem =
        database.file_stem().map_or_else(|| "orderbridge".into(), |s| s.to_string_lossy().into_owned());
    database.with_file_name(format!("{stem}.key"))
}

/// A database's key.
pub struct Sealer {
    cipher: XChaCha20Poly1305,
    /// The key file, held with a shared lock while the key is in use, so `rotate-key` cannot
    /// re-seal under a new key while this process would go on sealing with the old one.
    _in_use: Option<std::fs::File>,
}

impl Sealer {
    fn new(key: &Key) -> Sealer {
        Sealer { cipher: XChaCha20Poly1305::new(key), _in_use: None }
    }

    fn seal_text(&self, plain: &str, prefix: &str) -> String {
        let nonce = XChaCha20Poly1305::generate_nonce(&mut OsRng);
        // Encrypting into memory cannot fail for inputs this size; an empty seal would be
        // refused by `open_text`, never taken for the secret.
        let sealed = self.cipher.encrypt(&nonce, plain.as_bytes()).unwrap_or_default();
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        format!("{prefix}{}", BASE64.encode(bytes))
    }

    fn open_text(&self, sealed: &str) -> Option<String> {
        let bytes = BASE64.decode(sealed).ok()?;
        if bytes.len() < 24 + 16 {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(24);
        let nonce: [u8; 24] = nonce.try_into().ok()?;
        let plain = self.cipher.decrypt(&XNonce::from(nonce), ciphertext).ok()?;
        String::from_utf8(plain).ok()
    }

    /// An adapter with every secret value sealed (values sealed already stay as they are).
    pub fn seal_adapter(&self, adapter: &Map<String, Value>) -> Map<String, Value> {
        adapter.iter().map(|(key, value)| (key.clone(), self.seal_value(key, value))).collect()
    }

    fn seal_value(&self, key: &str, value: &Value) -> Value {
        match value {
            Value::Null => Value::Null,
            _ if is_plain_key(key) => value.clone(),
            Value::String(s) if s.starts_with(SEALED) || s.starts_with(SEALED_JSON) => value.clone(),
            Value::String(s) if is_secret_key(key) => Value::String(self.seal_text(s, SEALED)),
            Value::String(s) if key.eq_ignore_ascii_case("connection_string") && has_url_password(s) => {
                Value::String(self.seal_text(s, SEALED))
            }
            Value::Object(map) => Value::Object(self.seal_adapter(map)),
            Value::Array(items) => {
                Value::Array(items.iter().map(|item| self.seal_value(key, item)).collect())
            }
            other if is_secret_key(key) => Value::String(self.seal_text(&other.to_string(), SEALED_JSON)),
            other => other.clone(),
        }
    }

    /// The adapter as it was before sealing; `None` if a sealed value does not open.
    pub fn open_adapter(&self, stored: &Map<String, Value>) -> Option<Map<String, Value>> {
        stored
            .iter()
            .map(|(key, value)| {
                let opened = if is_plain_key(key) { value.clone() } else { self.open_value(value)? };
                Some((key.clone(), opened))
            })
            .collect()
    }

    fn open_value(&self, value: &Value) -> Option<Value> {
        match value {
            Value::String(s) => match (s.strip_prefix(SEALED_JSON), s.strip_prefix(SEALED)) {
                (Some(sealed), _) => serde_json::from_str(&self.open_text(sealed)?).ok(),
                (None, Some(sealed)) => Some(Value::String(self.open_text(sealed)?)),
                (None, None) => Some(value.clone()),
            },
            Value::Object(map) => Some(Value::Object(self.open_adapter(map)?)),
            Value::Array(items) => {
                items.iter().map(|item| self.open_value(item)).collect::<Option<Vec<_>>>().map(Value::Array)
            }
            other => Some(other.clone()),
        }
    }

    /// The database's check value under this key.
    fn check_value(&self) -> String {
        self.seal_text(CHECK_TEXT, SEALED)
    }

    /// Whether this key opens the database's check value.
    fn opens_check(&self, check: Option<&str>) -> bool {
        check
            .and_then(|c| c.strip_prefix(SEALED))
            .and_then(|c| self.open_text(c))
            .is_some_and(|t| t == CHECK_TEXT)
    }

    /// One secret text sealed (a sealed one stays as it is).
    fn seal_secret(&self, text: &str) -> String {
        if text.starts_with(SEALED) { text.to_string() } else { self.seal_text(text, SEALED) }
    }

    /// One secret text opened; plain text passes through.
    fn open_secret(&self, text: &str) -> Result<String, String> {
        match text.strip_prefix(SEALED) {
            Some(sealed) => self
                .open_text(sealed)
                .ok_or_else(|| "a sealed secret does not open with this database's key".to_string()),
            None => Ok(text.to_string()),
        }
    }

    /// `ob_seal`'s work: adapter JSON text in, sealed JSON text out. Text that is not a JSON
    /// object is returned as it came (the statement's own checks deal with it).
    fn seal_json(&self, text: &str) -> String {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Value::Object(self.seal_adapter(&map)).to_string(),
            _ => text.to_string(),
        }
    }

    fn open_json(&self, text: &str) -> Result<String, String> {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => self
                .open_adapter(&map)
                .map(|open| Value::Object(open).to_string())
                .ok_or_else(|| "a sealed credential does not open with this database's key".to_string()),
            _ => Ok(text.to_string()),
        }
    }
}

/// Adapter JSON text as it is stored: its secrets sealed with the connection's key.
pub fn seal(conn: &Connection, adapter_json: &str) -> rusqlite::Result<String> {
    conn.prepare_cached("SELECT ob_seal(?1)")?.query_row([adapter_json], |r| r.get(0))
}

/// Gives a connection `ob_seal` and `ob_open` (adapter JSON), and `ob_seal_text` and
/// `ob_open_text` (one secret text), bound to `sealer`.
pub fn register(conn: &Connection, sealer: &Arc<Sealer>) -> rusqlite::Result<()> {
    sealing_function(conn, "ob_seal", sealer, Sealer::seal_json)?;
    opening_function(conn, "ob_open", sealer, Sealer::open_json)?;
    sealing_function(conn, "ob_seal_text", sealer, Sealer::seal_secret)?;
    opening_function(conn, "ob_open_text", sealer, Sealer::open_secret)
}

fn sealing_function(
    conn: &Connection,
    name: &str,
    sealer: &Arc<Sealer>,
    seal: fn(&Sealer, &str) -> String,
) -> rusqlite::Result<()> {
    let sealer = Arc::clone(sealer);
    conn.create_scalar_function(name, 1, FunctionFlags::SQLITE_UTF8, move |ctx| {
        let text: Option<String> = ctx.get(0)?;
        Ok(text.map(|t| seal(&sealer, &t)))
    })
}

fn opening_function(
    conn: &Connection,
    name: &str,
    sealer: &Arc<Sealer>,
    open: fn(&Sealer, &str) -> Result<String, String>,
) -> rusqlite::Result<()> {
    let sealer = Arc::clone(sealer);
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    conn.create_scalar_function(name, 1, flags, move |ctx| {
        let text: Option<String> = ctx.get(0)?;
        text.map(|t| open(&sealer, &t)).transpose().map_err(|e| rusqlite::Error::UserFunctionError(e.into()))
    })
}

fn read_key_file(path: &Path) -> Result<Key, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read the key file {}: {e}", path.display()))?;
    let encoded = text.trim().strip_prefix(KEY_FILE_HEADER.trim_end()).map(str::trim).unwrap_or("");
    let bytes: [u8; 32] = BASE64.decode(encoded).ok().and_then(|b| b.try_into().ok()).ok_or_else(|| {
        format!("the key file {} is not an orderbridge key (it should be one line: {KEY_FILE_HEADER}<base64 of 32 bytes>)", path.display())
    })?;
    Ok(Key::from(bytes))
}

/// Writes a new key to `path`, which must not exist, readable by its owner only.
fn write_key_file(path: &Path, key: &Key) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file =
        options.open(path).map_err(|e| format!("cannot create the key file {}: {e}", path.display()))?;
    file.write_all(format!("{KEY_FILE_HEADER}{}\n", BASE64.encode(key)).as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write the key file {}: {e}", path.display()))
}

/// Whether the database file already holds sealed credentials (its check value).
fn has_check(database: &Path) -> Result<bool, String> {
    if !database.exists() {
        return Ok(false);
    }
    let conn = Connection::open(database)
        .map_err(|e| format!("cannot open database {}: {e}", database.display()))?;
    let table: bool = conn
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'settings')",
            [],
            |r| r.get(0),
        )
        .map_err(|e| format!("cannot read database {}: {e}", database.display()))?;
    if !table {
        return Ok(false);
    }
    conn.query_row("SELECT EXISTS (SELECT 1 FROM settings WHERE key = ?1)", [CHECK_SETTING], |r| r.get(0))
        .map_err(|e| format!("cannot read database {}: {e}", database.display()))
}

/// The database's key: read from `key_file`, or made there for a database with no sealed
/// credentials yet. A key left by an interrupted `rotate-key` (`<key_file>.new`) is taken
/// up when the old one no longer opens the database (`check` says).
pub fn load_or_create(database: &Path, key_file: &Path) -> Result<Arc<Sealer>, String> {
    if key_file.exists() {
        let mut sealer = Sealer::new(&read_key_file(key_file)?);
        sealer._in_use = Some(lock(key_file, Hold::Shared)?);
        return Ok(Arc::new(sealer));
    }
    if has_check(database)? {
        return Err(format!(
            "this database's credentials are encrypted, but its key file {} is missing; restore that file (or set secret_key_file to where it is): a new key would not open them",
            key_file.display()
        ));
    }
    let key = XChaCha20Poly1305::generate_key(&mut OsRng);
    write_key_file(key_file, &key)?;
    crate::logging::notice(format_args!(
        "created the key file {} for the database's credentials; back it up with the database",
        key_file.display()
    ));
    let mut sealer = Sealer::new(&key);
    sealer._in_use = Some(lock(key_file, Hold::Shared)?);
    Ok(Arc::new(sealer))
}

/// How a process holds the key file: any number of orderbridge processes use the key at
/// once (shared), and `rotate-key` replaces it only when it holds it alone (exclusive).
#[derive(Clone, Copy)]
enum Hold {
    Shared,
    Alone,
}

/// The key file, locked as `hold` says, without waiting.
fn lock(key_file: &Path, hold: Hold) -> Result<std::fs::File, String> {
    let file = std::fs::File::open(key_file)
        .map_err(|e| format!("cannot read the key file {}: {e}", key_file.display()))?;
    let locked = match hold {
        Hold::Shared => file.try_lock_shared(),
        Hold::Alone => file.try_lock(),
    };
    match (locked, hold) {
        (Ok(()), _) => Ok(file),
        (Err(std::fs::TryLockError::WouldBlock), Hold::Shared) => Err(format!(
            "orderbridge rotate-key is replacing the key in {}; start again when it has finished",
            key_file.display()
        )),
        (Err(std::fs::TryLockError::WouldBlock), Hold::Alone) => Err(format!(
            "the key in {} is in use by a running orderbridge (the server or another command); stop it first: it would go on sealing with the old key",
            key_file.display()
        )),
        (Err(std::fs::TryLockError::Error(e)), _) => {
            Err(format!("cannot lock the key file {}: {e}", key_file.display()))
        }
    }
}

/// Passes every stored adapter through `adapter` and every secret setting through
/// `setting`, writing back what changed, in the caller's transaction; the number of
/// adapters read.
fn rewrite(
    tx: &rusqlite::Transaction<'_>,
    adapter: impl Fn(&str) -> Result<String, String>,
    setting: impl Fn(&str) -> Result<String, String>,
) -> Result<usize, String> {
    let failed = |e: rusqlite::Error| format!("sealing credentials: {e}");
    // Overwrite what is deleted, so a value rewritten here leaves no copy in the file.
    tx.execute_batch("PRAGMA secure_delete = ON").map_err(failed)?;
    let mut count = 0;
    for table in ["stores", "warehouses"] {
        let rows: Vec<(i64, String)> = tx
            .prepare(&format!("SELECT id, adapter FROM {table}"))
            .and_then(|mut s| s.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?.collect())
            .map_err(failed)?;
        for (id, stored) in rows {
            let rewritten = adapter(&stored)?;
            if rewritten != stored {
                tx.execute(
                    &format!("UPDATE {table} SET adapter = ?2 WHERE id = ?1"),
                    rusqlite::params![id, rewritten],
                )
                .map_err(failed)?;
            }
            count += 1;
        }
    }
    for key in SEALED_SETTINGS {
        if let Some(stored) = super::setting(tx, key).map_err(failed)? {
            let rewritten = setting(&stored)?;
            if rewritten != stored {
                super::set_setting(tx, key, &rewritten).map_err(failed)?;
            }
        }
    }
    Ok(count)
}

/// After the schema is in place: checks the key against the database's check value (writing
/// one the first time), then seals any credential still stored plain, in one transaction.
pub fn ensure(conn: &mut Connection, sealer: &Sealer, key_file: &Path) -> Result<(), String> {
    let failed = |e: rusqlite::Error| format!("sealing credentials: {e}");
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(failed)?;
    match super::setting(&tx, CHECK_SETTING).map_err(failed)? {
        Some(check) if !sealer.opens_check(Some(&check)) => {
            return Err(format!(
                "the key in {} does not open this database's credentials (they were sealed under another key); start with the right key file",
                key_file.display()
            ));
        }
        Some(_) => {}
        None => super::set_setting(&tx, CHECK_SETTING, &sealer.check_value()).map_err(failed)?,
    }
    rewrite(&tx, |adapter| Ok(sealer.seal_json(adapter)), |secret| Ok(sealer.seal_secret(secret)))?;
    tx.commit().map_err(failed)
}

/// `orderbridge rotate-key`: every sealed credential re-sealed under a new key in one
/// transaction. The new key is written to `<key_file>.new` first and moved over the key
/// file only after the commit; a crash in between leaves both files, and the next start
/// takes the one that opens the database.
pub fn rotate(database: &Path, key_file: &Path) -> Result<usize, String> {
    let _alone = lock(key_file, Hold::Alone)?;
    let old = Sealer::new(&read_key_file(key_file)?);
    let fresh_key = XChaCha20Poly1305::generate_key(&mut OsRng);
    let fresh = Sealer::new(&fresh_key);
    let pending = key_file.with_extension("key.new");
    let _ = std::fs::remove_file(&pending);
    write_key_file(&pending, &fresh_key)?;
    let failed = |e: rusqlite::Error| format!("rotating the key: {e}");
    let mut conn = Connection::open(database).map_err(failed)?;
    conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(failed)?;
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(failed)?;
    if !old.opens_check(super::setting(&tx, CHECK_SETTING).map_err(failed)?.as_deref()) {
        let _ = std::fs::remove_file(&pending);
        return Err(format!("the key in {} does not open this database's credentials", key_file.display()));
    }
    let count = rewrite(
        &tx,
        |adapter| Ok(fresh.seal_json(&old.open_json(adapter)?)),
        |secret| Ok(fresh.seal_secret(&old.open_secret(secret)?)),
    )?;
    super::set_setting(&tx, CHECK_SETTING, &fresh.check_value()).map_err(failed)?;
    tx.commit().map_err(failed)?;
    std::fs::rename(&pending, key_file).map_err(|e| {
        format!("the credentials are sealed under the new key in {}, but it could not be moved over {}: {e}; move it by hand", pending.display(), key_file.display())
    })?;
    Ok(count)
}

/// At start: a key file left `.new` by an interrupted rotation replaces the old one when it
/// is the one the database's check value opens.
pub fn finish_rotation(database: &Path, key_file: &Path) -> Result<(), String> {
    let pending = key_file.with_extension("key.new");
    if !pending.exists() {
        return Ok(());
    }
    let Ok(conn) = Connection::open(database) else { return Ok(()) };
    let check: Option<String> = super::setting(&conn, CHECK_SETTING).ok().flatten();
    let opens =
        |path: &Path| read_key_file(path).is_ok_and(|key| Sealer::new(&key).opens_check(check.as_deref()));
    if opens(&pending) && !opens(key_file) {
        std::fs::rename(&pending, key_file).map_err(|e| format!("cannot finish the key rotation: {e}"))?;
    } else {
        let _ = std::fs::remove_file(&pending);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn secrets_seal_and_open_and_other_values_stay_plain() {
        let sealer = Sealer::new(&XChaCha20Poly1305::generate_key(&mut OsRng));
        let adapter = json!({"access_token": "tok-123", "store_hash": "abc", "pin_key": 42,
                             "connection_string": "sftp://u:pw@h/x", "nested": {"password": "p"}, "empty": null});
        let Value::Object(adapter) = adapter else { unreachable!() };
        let sealed = sealer.seal_adapter(&adapter);
        let text = Value::Object(sealed.clone()).to_string();
        for secret in ["tok-123", "pw@h", "\"p\"", ":42"] {
            assert!(!text.contains(secret), "{secret} in {text}");
        }
        assert_eq!(sealed["store_hash"], "abc");
        assert_eq!(sealer.seal_adapter(&sealed), sealed, "sealing twice changes nothing");
        assert_eq!(sealer.open_adapter(&sealed).unwrap(), adapter);
        let other = Sealer::new(&XChaCha20Poly1305::generate_key(&mut OsRng));
        assert!(other.open_adapter(&sealed).is_none(), "another key opens nothing");
        assert!(
            has_url_password("ftp://a:b@c:21/p")
                && !has_url_password("ftp://a@c/p")
                && !has_url_password("file:///x")
        );
    }
}
