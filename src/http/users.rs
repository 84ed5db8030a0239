//! Users of the API (CONTRACT §1): argon2id password hashes, roles, the first-run admin, and
//! the operations behind the `orderbridge user ...` subcommands.

use argon2::{Argon2, PasswordHash, PasswordHasher, PasswordVerifier};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use crate::dates::{self, Timestamp};
use crate::http::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Admin,
    Customer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Customer => "customer",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "admin" => Some(Role::Admin),
            "customer" => Some(Role::Customer),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct User {
    pub id: i64,
    pub username: String,
    pub role: Role,
    pub customer_id: Option<i64>,
    /// Tokens issued (iat, seconds) before this are refused.
    #[serde(skip)]
    pub tokens_valid_after: i64,
    pub disabled_at: Option<Timestamp>,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, username, role, customer_id, tokens_valid_after, disabled_at, created_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<User> {
    let role: String = row.get(2)?;
    Ok(User {
        id: row.get(0)?,
        username: row.get(1)?,
        role: Role::parse(&role).unwrap_or(Role::Customer),
        customer_id: row.get(3)?,
        tokens_valid_after: row.get(4)?,
        disabled_at: row.get::<_, Option<i64>>(5)?.map(Timestamp),
        created_at: Timestamp(row.get(6)?),
    })
}

pub fn hash_password(password: &str) -> Result<String, ApiError> {
    let hash: PasswordHash = Argon2::default()
        .hash_password(password.as_bytes())
        .map_err(|e| ApiError::internal(format_args!("hashing a password: {e}")))?;
    Ok(hash.to_string())
}

fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc)
        .map(|hash| Argon2::default().verify_password(password.as_bytes(), &hash).is_ok())
        .unwrap_or(false)
}

/// Checks a password from standard input or a prompt is usable.
pub fn validate_password(password: &str) -> Result<(), String> {
    if password.chars().count() < 8 {
        return Err("must have at least 8 characters".to_string());
    }
    Ok(())
}

/// What a login needs from the database: the user and its password hash.
pub struct LoginRecord {
    user: User,
    password_hash: String,
}

/// The login record of `username`, if there is such a user.
pub fn login_record(conn: &Connection, username: &str) -> rusqlite::Result<Option<LoginRecord>> {
    conn.query_row(
        &format!("SELECT {COLUMNS}, password_hash FROM users WHERE username = ?1"),
        [username],
        |row| Ok(LoginRecord { user: from_row(row)?, password_hash: row.get(7)? }),
    )
    .optional()
}

/// The enabled user whose password this is, or `None`. A hash is verified even for an unknown
/// name, so the answer takes as long either way. CPU-heavy (argon2): run it off the async
/// threads, and not on a database thread.
pub fn authenticate(record: Option<LoginRecord>, password: &str) -> Option<User> {
    let Some(record) = record else {
        let _ = verify_password(password, DUMMY_HASH);
        return None;
    };
    let matches = verify_password(password, &record.password_hash);
    (matches && record.user.disabled_at.is_none()).then_some(record.user)
}

/// A valid argon2id hash of a random string, verified against when the username is unknown.
const DUMMY_HASH: &str =
    "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$9sTbSlTio3Biev89thdrlKKiCaYsjjYVJxGAL3swxpQ";

pub fn list(conn: &Connection) -> rusqlite::Result<Vec<User>> {
    let mut stmt = conn.prepare(&format!("SELECT {COLUMNS} FROM users ORDER BY id"))?;
    let rows = stmt.query_map([], from_row)?;
    rows.collect()
}

pub fn add(
    conn: &Connection,
    username: &str,
    password: &str,
    role: Role,
    customer_id: Option<i64>,
) -> Result<i64, ApiError> {
    let username = username.trim();
    if username.is_empty() || username.contains(':') || username.chars().any(char::is_whitespace) {
        return Err(ApiError::invalid("username", "must be non-empty, without spaces or ':'"));
    }
    validate_password(password).map_err(|e| ApiError::invalid("password", e))?;
    let customer_id = match (role, customer_id) {
        (Role::Admin, None) => None,
        (Role::Admin, Some(_)) => {
            return Err(ApiError::invalid("customer_id", "is only for customer users"));
        }
        (Role::Customer, None) => {
            return Err(ApiError::invalid("customer_id", "is required for customer users"));
        }
        (Role::Customer, Some(id)) => {
            let exists: bool =
                conn.query_row("SELECT EXISTS (SELECT 1 FROM customers WHERE id = ?1)", [id], |r| r.get(0))?;
            if !exists {
                return Err(ApiError::invalid("customer_id", format!("no customer has id {id}")));
            }
            Some(id)
        }
    };
    let hash = hash_password(password)?;
    match conn.execute(
        "INSERT INTO users (username, password_hash, role, customer_id, created_at)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![username, hash, role.as_str(), customer_id, dates::now_ms()],
    ) {
        Ok(_) => Ok(conn.last_insert_rowid()),
        Err(e) if crate::db::is_unique_violation(&e) => {
            Err(ApiError::conflict(format!("The username '{username}' is taken."), "username", "is taken"))
        }
        Err(e) => Err(e.into()),
    }
}

/// Sets a new password and revokes every token issued before now.
pub fn set_password(conn: &Connection, username: &str, password: &str) -> Result<(), ApiError> {
    validate_password(password).map_err(|e| ApiError::invalid("password", e))?;
    let hash = hash_password(password)?;
    let changed = conn.execute(
        "UPDATE users SET password_hash = ?1, tokens_valid_after = ?2 WHERE username = ?3",
        params![hash, dates::now_ms() / 1000, username],
    )?;
    if changed == 0 {
        return Err(ApiError::not_found(format!("The user '{username}'")));
    }
    Ok(())
}

/// Disables a user: no new tokens, and its tokens stop working.
pub fn disable(conn: &Connection, username: &str) -> Result<(), ApiError> {
    let changed = conn.execute(
        "UPDATE users SET disabled_at = COALESCE(disabled_at, ?1) WHERE username = ?2",
        params![dates::now_ms(), username],
    )?;
    if changed == 0 {
        return Err(ApiError::not_found(format!("The user '{username}'")));
    }
    Ok(())
}

/// On a database with no users, creates `admin` with the configured password, or a random
/// one that is returned so the caller can print it once.
pub fn ensure_first_admin(
    conn: &Connection,
    configured: Option<&str>,
) -> Result<Option<FirstAdmin>, ApiError> {
    let any: bool = conn.query_row("SELECT EXISTS (SELECT 1 FROM users)", [], |r| r.get(0))?;
    if any {
        return Ok(None);
    }
    let (password, generated) = match configured {
        Some(p) => {
            validate_password(p).map_err(|problem| ApiError::invalid("admin_password", problem))?;
            (p.to_string(), false)
        }
        None => (random_token(18), true),
    };
    add(conn, "admin", &password, Role::Admin, None)?;
    Ok(Some(FirstAdmin { username: "admin".to_string(), password: generated.then_some(password) }))
}

/// The admin created on first run; `password` is set only when it was generated.
pub struct FirstAdmin {
    pub username: String,
    pub password: Option<String>,
}

/// A URL-safe random string carrying `bytes` random bytes.
pub fn random_token(bytes: usize) -> String {
    use base64::Engine;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut buf = vec![0u8; bytes];
    rand::fill(&mut buf[..]);
    URL_SAFE_NO_PAD.encode(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dummy_hash_is_a_valid_hash() {
        assert!(PasswordHash::new(DUMMY_HASH).is_ok());
    }

    #[test]
    fn hashes_verify_only_the_right_password() {
        let phc = hash_password("correct horse").unwrap();
        assert!(phc.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &phc));
        assert!(!verify_password("wrong horse", &phc));
    }
}
