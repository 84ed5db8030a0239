//! Connections: one customer's store linked to one of its warehouses, unique per
//! (customer, store, warehouse), each with its one `sales` channel. A connection may be
//! created from ids or from nested `customer`, `store` and `warehouse` objects, all in one
//! transaction.

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection as Db, OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::Value;

use crate::config::Config;
use crate::dates::{self, Timestamp};
use crate::db::{self, Pool};
use crate::http::api::{
    ApiResult, Created, Id, NoContent, Owned, check_customer, owned_row_exists, update_columns,
};
use crate::http::auth::AuthUser;
use crate::http::body::{Body, Fields, Patch};
use crate::http::error::{ApiError, Details};
use crate::resources::adapter::read_snake_case;
use crate::resources::customers::NewCustomer;
use crate::resources::stores::NewStore;
use crate::resources::warehouses::NewWarehouse;

pub fn routes() -> Vec<Route> {
    routes![list, get, create, update, list_channels, update_channel]
}

const DEFAULT_CONNECTION_TYPE: &str = "fulfillment";

#[derive(Debug, Serialize)]
pub struct Connection {
    pub id: i64,
    pub customer_id: i64,
    pub warehouse_id: i64,
    pub store_id: i64,
    pub name: String,
    pub connection_type: String,
    pub created_at: Timestamp,
    pub enabled_at: Option<Timestamp>,
    pub locations: Vec<Value>,
}

const COLUMNS: &str =
    "id, customer_id, warehouse_id, store_id, name, connection_type, created_at, enabled_at, locations";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Connection> {
    let locations: String = row.get(8)?;
    Ok(Connection {
        id: row.get(0)?,
        customer_id: row.get(1)?,
        warehouse_id: row.get(2)?,
        store_id: row.get(3)?,
        name: row.get(4)?,
        connection_type: row.get(5)?,
        created_at: Timestamp(row.get(6)?),
        enabled_at: row.get::<_, Option<i64>>(7)?.map(Timestamp),
        locations: serde_json::from_str(&locations).map_err(|e| {
            rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, Box::new(e))
        })?,
    })
}

const CONNECTIONS: Owned<Connection> =
    Owned { table: "connections", columns: COLUMNS, from_row, noun: "Connection" };

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Connection {id}"))
}

#[get("/connections")]
async fn list(user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Connection>>> {
    Ok(Json(user.run(pool, move |conn, user| CONNECTIONS.list(conn, user)).await?))
}

/// Reads one connection the user may see.
pub fn find(conn: &Db, user: &AuthUser, id: i64) -> ApiResult<Connection> {
    CONNECTIONS.find(conn, user, id)
}

#[get("/connections/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Connection>> {
    let id = id.get("Connection")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

/// A customer, store or warehouse of a new connection: an id, or an object to create.
enum Party<T> {
    Missing,
    /// Given, but with a problem already recorded.
    Invalid,
    Existing(i64),
    New(T),
}

/// Reads `id_key` or the nested object `object_key`; giving both is a mistake.
fn read_party<T>(
    fields: &mut Fields,
    id_key: &str,
    object_key: &str,
    read: impl FnOnce(&mut Fields) -> Option<T>,
) -> Party<T> {
    let id = fields.id(id_key);
    let object = fields.object(object_key);
    match (id, object) {
        (Patch::Value(_), Patch::Value(_)) => {
            fields.error(object_key, format!("give either {id_key} or {object_key}, not both"));
            Party::Invalid
        }
        (_, Patch::Value(map)) => {
            let mut child = fields.child(object_key, map);
            let new = read(&mut child);
            fields.absorb(child);
            new.map_or(Party::Invalid, Party::New)
        }
        (Patch::Value(id), _) => Party::Existing(id),
        // A wrong type was recorded by `id` or `object`; `finish` reports it.
        _ => Party::Missing,
    }
}

/// `locations`: an array of objects; null means none.
fn read_locations(fields: &mut Fields) -> Patch<Vec<Value>> {
    match fields.array("locations") {
        Patch::Value(items) => {
            let mut all_objects = true;
            for (i, item) in items.iter().enumerate() {
                if !item.is_object() {
                    all_objects = false;
                    fields.error(&format!("locations[{i}]"), "must be an object");
                }
            }
            if all_objects { Patch::Value(items) } else { Patch::Absent }
        }
        other => other,
    }
}

fn locations_json(locations: Option<Vec<Value>>) -> String {
    Value::Array(locations.unwrap_or_default()).to_string()
}

struct NewConnection {
    name: String,
    connection_type: String,
    locations: String,
    enabled_at: Option<i64>,
    customer: Party<NewCustomer>,
    store: Party<NewStore>,
    warehouse: Party<NewWarehouse>,
}

impl NewConnection {
    fn read(mut fields: Fields, user: &AuthUser) -> ApiResult<NewConnection> {
        // Consumed here for customer users, so `read_party` below sees no nested customer.
        if !user.is_admin() && matches!(fields.object("customer"), Patch::Value(_)) {
            return Err(ApiError::Forbidden("Only admin users may create customers.".to_string()));
        }
        let name = fields.required("name", Fields::text);
        // Absent or null: the default. Blank is no token, as in a PATCH.
        let connection_type = match read_snake_case(&mut fields, "connection_type") {
            Patch::Value(blank) if blank.is_empty() => {
                fields.error("connection_type", "must not be empty");
                None
            }
            other => other.value(),
        };
        let locations = read_locations(&mut fields).value();
        let enabled_at = fields.date("enabled_at").value();
        let customer =
            match (read_party(&mut fields, "customer_id", "customer", NewCustomer::read), user.scope()) {
                (Party::Missing, Some(own)) => Party::Existing(own),
                (party, _) => party,
            };
        let store = read_party(&mut fields, "store_id", "store", NewStore::read);
        let warehouse = read_party(&mut fields, "warehouse_id", "warehouse", NewWarehouse::read);
        if matches!(store, Party::Missing) {
            fields.error("store_id", "is required (or give a nested store)");
        }
        if matches!(warehouse, Party::Missing) {
            fields.error("warehouse_id", "is required (or give a nested warehouse)");
        }
        // An admin may leave the customer out when the store is given by id: the connection
        // then belongs to the store's customer.
        if matches!(customer, Party::Missing) && !matches!(store, Party::Existing(_)) {
            fields.error("customer_id", "is required (or give a nested customer, or a store_id)");
        }
        fields.finish()?;
        Ok(NewConnection {
            name: name.ok_or(ApiError::Internal)?.trim().to_string(),
            connection_type: connection_type.unwrap_or_else(|| DEFAULT_CONNECTION_TYPE.to_string()),
            locations: locations_json(locations),
            enabled_at,
            customer,
            store,
            warehouse,
        })
    }

    /// Creates everything in one transaction: nothing is left behind when any part fails.
    fn insert(self, conn: &mut Db, user: &AuthUser) -> ApiResult<i64> {
        // IMMEDIATE: the duplicate check and the insert see the same database.
        let tx = db::write(conn)?;
        let customer_id = match &self.customer {
            Party::Existing(id) => {
                check_customer(&tx, user, *id, "customer_id")?;
                *id
            }
            Party::New(customer) => customer.insert(&tx)?,
            _ => match self.store {
                Party::Existing(store_id) => owner_of(&tx, user, "stores", store_id)?
                    .ok_or_else(|| ApiError::invalid("store_id", format!("unknown store_id {store_id}")))?,
                _ => return Err(ApiError::internal("a connection without customer passed validation")),
            },
        };

        let mut problems = Details::new();
        for (party_id, table, field) in [
            (existing_id(&self.store), "stores", "store_id"),
            (existing_id(&self.warehouse), "warehouses", "warehouse_id"),
        ] {
            if let Some(id) = party_id
                && let Some(problem) = ownership_problem(&tx, user, table, field, id, customer_id)?
            {
                problems.insert(field.to_string(), problem);
            }
        }
        if !problems.is_empty() {
            return Err(ApiError::Validation(problems));
        }

        let store_id = match &self.store {
            Party::New(store) => store.insert(&tx, customer_id)?,
            party => existing_id(party).ok_or(ApiError::Internal)?,
        };
        let warehouse_id = match &self.warehouse {
            Party::New(warehouse) => warehouse.insert(&tx, customer_id)?,
            party => existing_id(party).ok_or(ApiError::Internal)?,
        };
        if let Some(existing) = existing_triple(&tx, customer_id, store_id, warehouse_id)? {
            return Err(duplicate(existing));
        }
        let now = dates::now_ms();
        let inserted = tx.execute(
            "INSERT INTO connections
               (customer_id, store_id, warehouse_id, name, connection_type, locations, created_at, enabled_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                customer_id,
                store_id,
                warehouse_id,
                self.name,
                self.connection_type,
                self.locations,
                now,
                self.enabled_at
            ],
        );
        match inserted {
            Err(e) if db::is_unique_violation(&e) => {
                let existing = existing_triple(&tx, customer_id, store_id, warehouse_id)?;
                return Err(existing.map_or_else(|| ApiError::from(e), duplicate));
            }
            other => other?,
        };
        let id = tx.last_insert_rowid();
        // CONTRACT §6: both channels, disabled, `sales` then `inventory`.
        tx.execute(
            "INSERT INTO channels (connection_id, type, created_at, enabled_at)
             VALUES (?1, 'sales', ?2, NULL), (?1, 'inventory', ?2, NULL)",
            params![id, now],
        )?;
        tx.commit()?;
        Ok(id)
    }
}

fn existing_id<T>(party: &Party<T>) -> Option<i64> {
    match party {
        Party::Existing(id) => Some(*id),
        _ => None,
    }
}

/// The customer of a store or warehouse, when the user may see it.
fn owner_of(conn: &Db, user: &AuthUser, table: &'static str, id: i64) -> ApiResult<Option<i64>> {
    let owner: Option<i64> = conn
        .query_row(&format!("SELECT customer_id FROM {table} WHERE id = ?1"), [id], |r| r.get(0))
        .optional()?;
    Ok(owner.filter(|owner| user.can_see(*owner)))
}

/// Why a store or warehouse given by id cannot join a connection of `customer_id`, if it cannot.
fn ownership_problem(
    conn: &Db,
    user: &AuthUser,
    table: &'static str,
    field: &str,
    id: i64,
    customer_id: i64,
) -> ApiResult<Option<String>> {
    Ok(match owner_of(conn, user, table, id)? {
        Some(owner) if owner == customer_id => None,
        Some(owner) => {
            Some(format!("{field} {id} belongs to customer {owner}, not to customer {customer_id}"))
        }
        None => Some(format!("unknown {field} {id}")),
    })
}

fn existing_triple(
    conn: &Db,
    customer_id: i64,
    store_id: i64,
    warehouse_id: i64,
) -> rusqlite::Result<Option<i64>> {
    conn.query_row(
        "SELECT id FROM connections WHERE customer_id = ?1 AND store_id = ?2 AND warehouse_id = ?3",
        params![customer_id, store_id, warehouse_id],
        |r| r.get(0),
    )
    .optional()
}

fn duplicate(existing: i64) -> ApiError {
    ApiError::conflict_with_id(
        format!("A connection of this customer, store and warehouse already exists (id {existing})."),
        "connection_id",
        existing,
    )
}

#[post("/connections", data = "<body>")]
async fn create(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<Created> {
    let mut connection = NewConnection::read(body.fields(), &user)?;
    // A nested `folder` warehouse is an admin's to create, inside `folder_warehouse_root`;
    // a customer user's nested store and warehouse point only at public addresses.
    if let Party::New(store) = &mut connection.store {
        store.authorize(&user, config)?;
        store.check_address(&user, config).await.map_err(|e| nested("store", e))?;
    }
    if let Party::New(warehouse) = &mut connection.warehouse {
        warehouse.authorize(&user, config)?;
        warehouse.check_address(&user, config).await.map_err(|e| nested("warehouse", e))?;
    }
    let id = user.run(pool, move |conn, user| connection.insert(conn, user)).await?;
    Ok(Created::at("connections", id))
}

/// A nested object's problems named as the body names its fields (`warehouse[adapter][...]`).
fn nested(party: &str, error: ApiError) -> ApiError {
    let path = |key: String| match key.split_once('[') {
        Some((head, rest)) => format!("{party}[{head}][{rest}"),
        None => format!("{party}[{key}]"),
    };
    match error {
        ApiError::Validation(details) => {
            ApiError::Validation(details.into_iter().map(|(key, problem)| (path(key), problem)).collect())
        }
        other => other,
    }
}

/// The customer, store and warehouse are read-only: they are the connection's identity,
/// and another triple is another connection.
#[patch("/connections/<id>", data = "<body>")]
async fn update(id: Id, user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Connection")?;
    let mut fields = body.fields();
    let name = fields.not_null("name", Fields::text);
    let connection_type = fields.not_null("connection_type", read_snake_case);
    let locations = read_locations(&mut fields);
    let enabled_at = fields.date("enabled_at");
    fields.finish()?;

    let mut changes: Vec<(&str, SqlValue)> = Vec::new();
    if let Some(name) = name {
        changes.push(("name", name.trim().to_string().into()));
    }
    if let Some(connection_type) = connection_type {
        changes.push(("connection_type", connection_type.into()));
    }
    if let Some(locations) = locations.present() {
        changes.push(("locations", locations_json(locations).into()));
    }
    if let Some(enabled_at) = enabled_at.present() {
        changes.push(("enabled_at", enabled_at.into()));
    }
    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        if !owned_row_exists(&tx, "connections", id, user.scope())? {
            return Err(not_found(id));
        }
        update_columns(&tx, "connections", id, changes)?;
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}

#[derive(Debug, Serialize)]
pub struct Channel {
    pub id: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub enabled_at: Option<Timestamp>,
}

#[get("/connections/<id>/channels")]
async fn list_channels(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Channel>>> {
    let id = id.get("Connection")?;
    let channels = user
        .run(pool, move |conn, user| {
            if !owned_row_exists(conn, "connections", id, user.scope())? {
                return Err(not_found(id));
            }
            let mut stmt = conn.prepare_cached(
                "SELECT id, type, enabled_at FROM channels WHERE connection_id = ?1 ORDER BY id",
            )?;
            let rows = stmt.query_map([id], |row| {
                Ok(Channel {
                    id: row.get(0)?,
                    kind: row.get(1)?,
                    enabled_at: row.get::<_, Option<i64>>(2)?.map(Timestamp),
                })
            })?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await?;
    Ok(Json(channels))
}

/// Only `enabled_at` changes, and it must be given: a dateString enables, null disables.
#[patch("/connections/<id>/channels/<channel_id>", data = "<body>")]
async fn update_channel(
    id: Id,
    channel_id: Id,
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
) -> ApiResult<NoContent> {
    let id = id.get("Connection")?;
    let channel_id = channel_id.get("Channel")?;
    let mut fields = body.fields();
    let enabled_at = fields.date("enabled_at");
    if enabled_at.is_absent() && !fields.has_errors() {
        fields.error("enabled_at", "is required: a dateString to enable, null to disable");
    }
    fields.finish()?;
    user.run(pool, move |conn, user| {
        if !owned_row_exists(conn, "connections", id, user.scope())? {
            return Err(not_found(id));
        }
        let tx = db::write(conn)?;
        let changed = tx.execute(
            "UPDATE channels SET enabled_at = ?1 WHERE id = ?2 AND connection_id = ?3",
            params![enabled_at.present().flatten(), channel_id, id],
        )?;
        if changed == 0 {
            return Err(ApiError::not_found(format!("Channel {channel_id}")));
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
