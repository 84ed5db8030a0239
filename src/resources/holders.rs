//! What stores and warehouses share as resources that hold a platform adapter: reading a
//! create body, inserting in a write transaction, the ping, the PATCH, the rules of
//! `folder` warehouses (admins only, inside `folder_warehouse_root`), and where a customer
//! user's adapter may point (public addresses only, CONTRACT §6; each row records who set its
//! address, `address_set_by`, for the checks made when the sync connects). Each resource
//! module describes itself once in a [`Kind`] and keeps only its row type and routes.

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, params};

use crate::config::Config;
use crate::dates;
use crate::db::{self, Pool};
use crate::http::api::{
    ApiResult, Created, NoContent, check_customer, customer_id_for_create, update_columns,
};
use crate::http::auth::AuthUser;
use crate::http::body::{Body, Fields, Patch};
use crate::http::error::ApiError;
use crate::platforms::reach::{Address, Reach, SetBy};
use crate::platforms::{address_of, on_this_machine};
use crate::resources::adapter::{Adapter, AdapterPatch, Owner};

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
    /// Who sets the address: a customer until [`NewHolder::authorize`] knows better, so a
    /// row inserted without it is checked at every connection rather than trusted.
    set_by: SetBy,
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
            set_by: SetBy::Customer,
        })
    }

    pub fn adapter(&self) -> &Adapter {
        &self.adapter
    }

    /// The rules that need the user and the configuration: a `folder` warehouse is an
    /// admin's (403 otherwise) and lies inside `folder_warehouse_root` (422 otherwise). Notes
    /// who sets the address.
    pub fn authorize(&mut self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        check_folder(self.kind.owner, &self.adapter, user, config)?;
        self.set_by = SetBy::of_user(user.is_admin());
        self.authorized = true;
        Ok(())
    }

    /// A customer user's address must be public (422 naming its field, CONTRACT §6). A row
    /// inserted without this check is still checked at every connection.
    pub async fn check_address(&self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        check_reach(
            self.kind.owner,
            &self.adapter,
            Reach::for_user(user.is_admin(), config.tenant_private_targets),
        )
        .await
        .map(drop)
    }

    /// Whether [`NewHolder::check_address`] has anything to check for this user.
    fn address_to_check(&self, user: &AuthUser, config: &Config) -> bool {
        Reach::for_user(user.is_admin(), config.tenant_private_targets) == Reach::PublicOnly
            && address_of(self.kind.owner, &self.adapter.platform, &self.adapter.settings).is_some()
    }

    /// Inserts the row for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        if is_folder(self.kind.owner, &self.adapter) && !self.authorized {
            return Err(ApiError::Forbidden(admins_only(&self.adapter)));
        }
        let mut columns = vec!["customer_id", "name", "description"];
        columns.extend(self.kind.extra_text);
        columns.extend(["platform", "adapter", "created_at", "enabled_at", "address_set_by"]);
        let mut values: Vec<SqlValue> =
            vec![customer_id.into(), self.name.clone().into(), self.description.clone().into()];
        values.extend(self.extra.iter().map(|value| SqlValue::from(value.clone())));
        values.extend([
            self.adapter.platform.clone().into(),
            crate::db::secrets::seal(conn, &self.adapter.settings_json())?.into(),
            dates::now_ms().into(),
            self.enabled_at.into(),
            self.set_by.as_str().to_string().into(),
        ]);
        let placeholders = (1..=values.len()).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ");
        conn.execute(
            &format!("INSERT INTO {} ({}) VALUES ({placeholders})", self.kind.table, columns.join(", ")),
            rusqlite::params_from_iter(values),
        )?;
        Ok(conn.last_insert_rowid())
    }
}

/// For a platform on the server's own disk (a `folder` warehouse): 403 unless an admin, and
/// 422 naming the field unless the place is one the operator allows; nothing for the rest.
fn check_folder(owner: Owner, adapter: &Adapter, user: &AuthUser, config: &Config) -> ApiResult<()> {
    let Some(placed) = on_this_machine(owner, &adapter.platform, &adapter.settings, config) else {
        return Ok(());
    };
    if !user.is_admin() {
        return Err(ApiError::Forbidden(admins_only(adapter)));
    }
    placed.map_err(|(field, problem)| ApiError::invalid(field, problem))
}

/// 422 naming the address's field when the adapter points where `reach` may not go (a
/// customer user's loopback, private or other special-purpose address, CONTRACT §6). Returns
/// the address checked; `None` for platforms with no address of their own.
async fn check_reach(owner: Owner, adapter: &Adapter, reach: Reach) -> ApiResult<Option<Address>> {
    let Some(address) = address_of(owner, &adapter.platform, &adapter.settings) else { return Ok(None) };
    address.check(reach).await.map_err(|problem| ApiError::invalid(address.field, problem))?;
    Ok(Some(address))
}

/// The 403 of a customer user's write of a platform on the server's own disk.
fn admins_only(adapter: &Adapter) -> String {
    format!("Only admins may create or change {} warehouses.", adapter.platform)
}

/// Whether the row's platform keeps its data on this machine (a `folder` warehouse). The
/// question needs no configuration, so any will do.
fn is_folder(owner: Owner, adapter: &Adapter) -> bool {
    on_this_machine(owner, &adapter.platform, &adapter.settings, &Config::default()).is_some()
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
    // The customer first, as the insert checks it: a customer user naming another customer
    // hears only that, whatever the address.
    if new.address_to_check(&user, config) {
        user.clone()
            .run(pool, move |conn, user| check_customer(conn, user, customer_id, "customer_id"))
            .await?;
        new.check_address(&user, config).await?;
    }
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
    let reach = Reach::for_user(user.is_admin(), config.tenant_private_targets);
    user.clone().run(pool, move |conn, user| check_customer(conn, user, customer_id, "customer_id")).await?;
    new.check_address(&user, config).await?;
    new.adapter.ping(config, kind.owner, reach).await
}

/// `PATCH /{table}/{id}`. `customer_id` is read-only: a row moved to another customer would
/// leave its connections joining two customers' resources. A customer user may change the
/// name, description and dates of a `folder` warehouse, but not its platform or adapter, and
/// may not turn another warehouse into a folder one. A customer user's change of the
/// platform or adapter must leave an address it may point at (CONTRACT §6).
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
    let reach = Reach::for_user(user.is_admin(), config.tenant_private_targets);
    // The address is checked before the write transaction, so no name lookup waits under the
    // write lock; the transaction then writes only the address that was checked.
    let checked = match (adapter.is_empty(), reach) {
        (false, Reach::PublicOnly) => {
            let patch = adapter.clone();
            let stored =
                user.clone().run(pool, move |conn, user| stored_adapter(conn, kind, id, user)).await?;
            if is_folder(kind.owner, &stored) {
                None // the transaction refuses a customer user's change of a folder warehouse
            } else {
                let resolved = patch.resolve(kind.owner, stored)?;
                Some(check_reach(kind.owner, &resolved, reach).await?)
            }
        }
        _ => None,
    };
    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let stored = stored_adapter(&tx, kind, id, user)?;
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
                return Err(ApiError::Forbidden(admins_only(&stored)));
            }
            let stored_address = address_of(kind.owner, &stored.platform, &stored.settings);
            let resolved = adapter.resolve(kind.owner, stored)?;
            check_folder(kind.owner, &resolved, user, &config)?;
            let address = address_of(kind.owner, &resolved.platform, &resolved.settings);
            if reach == Reach::PublicOnly && checked.as_ref() != Some(&address) {
                return Err(ApiError::conflict(
                    format!("{} {id} changed while this request was checked; send it again.", kind.noun),
                    "adapter",
                    "changed meanwhile",
                ));
            }
            changes.push(("adapter", db::secrets::seal(&tx, &resolved.settings_json())?.into()));
            changes.push(("platform", resolved.platform.into()));
            // Only a new address changes who set it: an admin's edit of a customer user's
            // folder or password must not make a name the customer controls trusted.
            if !same_address(stored_address.as_ref(), address.as_ref()) {
                changes.push(("address_set_by", SetBy::of_user(user.is_admin()).as_str().to_string().into()));
            }
        }
        update_columns(&tx, kind.table, id, changes)?;
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}

/// Whether two adapters connect to the same place: host (names are case-insensitive) and
/// port; the field, the path and the credentials do not count.
fn same_address(a: Option<&Address>, b: Option<&Address>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.host.eq_ignore_ascii_case(&b.host) && a.port == b.port,
        (None, None) => true,
        _ => false,
    }
}

/// The stored platform and adapter (unmasked) of a row the user may see; 404 otherwise.
fn stored_adapter(conn: &Connection, kind: &Kind, id: i64, user: &AuthUser) -> ApiResult<Adapter> {
    conn.query_row(
        &format!(
            "SELECT platform, ob_open(adapter) FROM {} WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)",
            kind.table
        ),
        params![id, user.scope()],
        |row| Adapter::from_columns(row, 0),
    )
    .optional()?
    .ok_or_else(|| ApiError::not_found(format!("{} {id}", kind.noun)))
}
