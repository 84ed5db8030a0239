//! What stores and warehouses share as resources that hold a platform adapter: reading a
//! create body, inserting in a write transaction, the ping, the PATCH, and the rules of
//! `folder` warehouses (admins only, inside `folder_warehouse_root`). Each resource module
//! describes itself once in a [`Kind`] and keeps only its row type and routes.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params};

use crate::adapter::{Adapter, AdapterPatch, Owner};
use crate::api::{ApiResult, Created, NoContent, check_customer, customer_id_for_create, update_columns};
use crate::auth::AuthUser;
use crate::body::{Body, Fields, Patch};
use crate::config::Config;
use crate::dates;
use crate::db::{self, Pool};
use crate::error::ApiError;
use crate::platforms::files::folder;

/// A resource that holds an adapter, as its module describes it. Every name is a literal of
/// our own code, never from a request.
#[derive(Debug)]
pub struct Kind {
    pub owner: Owner,
    /// The table, also the collection in URLs (`stores`).
    pub table: &'static str,
    /// How one row is named in messages (`Store`).
    pub noun: &'static str,
    /// Whether `name` is required (and not nullable by PATCH).
    pub name_required: bool,
    /// Optional text columns beyond `name` and `description` (`url`), read and patched alike.
    pub extra_text: &'static [&'static str],
}

/// A validated new store or warehouse, as the create and ping calls and a connection's
/// nested `store`/`warehouse` take it. Its customer is decided by the caller.
#[derive(Debug)]
pub struct NewHolder {
    kind: &'static Kind,
    name: Option<String>,
    description: Option<String>,
    extra: Vec<Option<String>>,
    adapter: Adapter,
    enabled_at: Option<i64>,
    /// Whether [`NewHolder::authorize`] passed: a `folder` warehouse is inserted only then, so
    /// a caller that forgets to ask fails closed rather than letting anyone name a folder.
    authorized: bool,
}

impl NewHolder {
    /// Reads a create body (without `customer_id`); problems go into `fields`.
    pub fn read(kind: &'static Kind, fields: &mut Fields) -> Option<NewHolder> {
        let name = if kind.name_required {
            fields.required("name", Fields::text).map(Some)
        } else {
            Some(fields.text("name").value())
        };
        let description = fields.text("description").value();
        let extra = kind.extra_text.iter().map(|key| fields.text(key).value()).collect();
        let adapter = Adapter::read(fields, kind.owner);
        let enabled_at = fields.date("enabled_at").value();
        Some(NewHolder {
            kind,
            name: name?.map(|name| name.trim().to_string()),
            description,
            extra,
            adapter: adapter?,
            enabled_at,
            authorized: false,
        })
    }

    pub fn adapter(&self) -> &Adapter {
        &self.adapter
    }

    /// The rules that need the user and the configuration: a `folder` warehouse is an
    /// admin's (403 otherwise) and lies inside `folder_warehouse_root` (422 otherwise).
    pub fn authorize(&mut self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        check_folder(self.kind.owner, &self.adapter, user, config)?;
        self.authorized = true;
        Ok(())
    }

    /// Inserts the row for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        if is_folder(self.kind.owner, &self.adapter) && !self.authorized {
            return Err(ApiError::Forbidden(FOLDER_ADMINS_ONLY.to_string()));
        }
        let mut columns = vec!["customer_id", "name", "description"];
        columns.extend(self.kind.extra_text);
        columns.extend(["platform", "adapter", "created_at", "enabled_at"]);
        let mut values: Vec<SqlValue> =
            vec![customer_id.into(), self.name.clone().into(), self.description.clone().into()];
        values.extend(self.extra.iter().map(|value| SqlValue::from(value.clone())));
        values.extend([
            self.adapter.platform.clone().into(),
            crate::db::secrets::seal(conn, &self.adapter.settings_json())?.into(),
            dates::now_ms().into(),
            self.enabled_at.into(),
        ]);
        let placeholders = (1..=values.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
        conn.execute(
            &format!("INSERT INTO {} ({}) VALUES ({placeholders})", self.kind.table, columns.join(", ")),
            rusqlite::params_from_iter(values),
        )?;
        Ok(conn.last_insert_rowid())
    }
}

/// 403 unless an admin, and 422 naming `adapter[connection_string]` unless inside the root,
/// for a `folder` warehouse; nothing for anything else.
fn check_folder(owner: Owner, adapter: &Adapter, user: &AuthUser, config: &Config) -> ApiResult<()> {
    if !is_folder(owner, adapter) {
        return Ok(());
    }
    if !user.is_admin() {
        return Err(ApiError::Forbidden(FOLDER_ADMINS_ONLY.to_string()));
    }
    let url = adapter.settings.get("connection_string").and_then(|v| v.as_str()).unwrap_or_default();
    folder::check_inside_root(url, &folder::root(config))
        .map_err(|problem| ApiError::invalid("adapter[connection_string]", problem))
}

const FOLDER_ADMINS_ONLY: &str = "Only admins may create or change folder warehouses.";

fn is_folder(owner: Owner, adapter: &Adapter) -> bool {
    owner == Owner::Warehouse && adapter.platform == folder::TOKEN
}

/// The body of a create or ping call: the customer and the new row.
fn read_create(kind: &'static Kind, body: Body, user: &AuthUser) -> ApiResult<(i64, NewHolder)> {
    let mut fields = body.fields();
    let customer_id = customer_id_for_create(&mut fields, user);
    let new = NewHolder::read(kind, &mut fields);
    fields.finish()?;
    customer_id.zip(new).ok_or_else(|| ApiError::internal("a create body passed validation incomplete"))
}

/// `POST /{table}`: validates, then inserts under the write lock taken up front.
pub async fn create(
    kind: &'static Kind,
    user: AuthUser,
    body: Body,
    pool: &Pool,
    config: &Config,
) -> ApiResult<Created> {
    let (customer_id, mut new) = read_create(kind, body, &user)?;
    new.authorize(&user, config)?;
    let id = user
        .run(pool, move |conn, user| {
            let tx = db::write(conn)?;
            check_customer(&tx, user, customer_id, "customer_id")?;
            let id = new.insert(&tx, customer_id)?;
            tx.commit()?;
            Ok(id)
        })
        .await?;
    Ok(Created::at(kind.table, id))
}

/// `POST /{table}/ping`: validates exactly as create does, writes nothing, then asks the platform.
pub async fn ping(
    kind: &'static Kind,
    user: AuthUser,
    body: Body,
    pool: &Pool,
    config: &Config,
) -> ApiResult<NoContent> {
    let (customer_id, mut new) = read_create(kind, body, &user)?;
    new.authorize(&user, config)?;
    user.run(pool, move |conn, user| check_customer(conn, user, customer_id, "customer_id")).await?;
    new.adapter.ping(config, kind.owner).await
}

/// `PATCH /{table}/{id}`. `customer_id` is read-only: a row moved to another customer would
/// leave its connections joining two customers' resources. A customer user may change the
/// name, description and dates of a `folder` warehouse, but not its platform or adapter, and
/// may not turn another warehouse into a folder one.
pub async fn update(
    kind: &'static Kind,
    id: i64,
    user: AuthUser,
    body: Body,
    pool: &Pool,
    config: &Config,
) -> ApiResult<NoContent> {
    let mut fields = body.fields();
    let name = if kind.name_required {
        fields.not_null("name", Fields::text).map_or(Patch::Absent, Patch::Value)
    } else {
        fields.text("name")
    };
    let description = fields.text("description");
    let extra: Vec<(&str, Patch<String>)> =
        kind.extra_text.iter().map(|key| (*key, fields.text(key))).collect();
    let enabled_at = fields.date("enabled_at");
    let adapter = AdapterPatch::read(&mut fields);
    fields.finish()?;

    let config = config.clone();
    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let stored = tx
            .query_row(
                &format!(
                    "SELECT platform, ob_open(adapter) FROM {} WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)",
                    kind.table
                ),
                params![id, user.scope()],
                |row| Adapter::from_columns(row, 0),
            )
            .optional()?
            .ok_or_else(|| ApiError::not_found(format!("{} {id}", kind.noun)))?;
        let mut changes: Vec<(&str, SqlValue)> = Vec::new();
        if let Some(name) = name.present() {
            changes.push(("name", name.map(|name| name.trim().to_string()).into()));
        }
        if let Some(description) = description.present() {
            changes.push(("description", description.into()));
        }
        for (column, value) in extra {
            if let Some(value) = value.present() {
                changes.push((column, value.into()));
            }
        }
        if let Some(enabled_at) = enabled_at.present() {
            changes.push(("enabled_at", enabled_at.into()));
        }
        if !adapter.is_empty() {
            if is_folder(kind.owner, &stored) && !user.is_admin() {
                return Err(ApiError::Forbidden(FOLDER_ADMINS_ONLY.to_string()));
            }
            let resolved = adapter.resolve(kind.owner, stored)?;
            check_folder(kind.owner, &resolved, user, &config)?;
            changes.push(("adapter", db::secrets::seal(&tx, &resolved.settings_json())?.into()));
            changes.push(("platform", resolved.platform.into()));
        }
        update_columns(&tx, kind.table, id, changes)?;
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
