//! Warehouses: the fulfillment platforms that ship a customer's orders. Each carries a
//! `platform` and an `adapter` (an `access_token`, or a `connection_string` for file
//! transfer), which responses always mask. `POST /warehouses/ping` checks credentials
//! without creating anything.

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::adapter::{self, Adapter, AdapterPatch, Owner};
use crate::api::{ApiResult, Created, Id, NoContent, Owned, check_customer, customer_id_for_create};
use crate::auth::AuthUser;
use crate::body::{Body, Fields};
use crate::config::Config;
use crate::dates::{self, Timestamp};
use crate::db::{self, Pool};
use crate::error::ApiError;

pub fn routes() -> Vec<Route> {
    routes![list, get, create, update, ping]
}

#[derive(Debug, Serialize)]
pub struct Warehouse {
    pub id: i64,
    pub customer_id: i64,
    pub name: Option<String>,
    pub description: Option<String>,
    pub platform: String,
    /// Masked: secrets never leave the service whole.
    pub adapter: Map<String, Value>,
    pub created_at: Timestamp,
    pub enabled_at: Option<Timestamp>,
    pub order_status_imported_at: Option<Timestamp>,
    pub inventory_updated_at: Option<Timestamp>,
}

const COLUMNS: &str = "id, customer_id, name, description, platform, adapter, created_at, enabled_at, \
                       order_status_imported_at, inventory_updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Warehouse> {
    Ok(Warehouse {
        id: row.get(0)?,
        customer_id: row.get(1)?,
        name: row.get(2)?,
        description: row.get(3)?,
        platform: row.get(4)?,
        adapter: adapter::mask(&adapter::settings_from_column(row, 5)?),
        created_at: Timestamp(row.get(6)?),
        enabled_at: row.get::<_, Option<i64>>(7)?.map(Timestamp),
        order_status_imported_at: row.get::<_, Option<i64>>(8)?.map(Timestamp),
        inventory_updated_at: row.get::<_, Option<i64>>(9)?.map(Timestamp),
    })
}

const WAREHOUSES: Owned<Warehouse> =
    Owned { table: "warehouses", columns: COLUMNS, from_row, noun: "Warehouse" };

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Warehouse {id}"))
}

#[get("/warehouses")]
async fn list(user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Warehouse>>> {
    Ok(Json(user.run(pool, move |conn, user| WAREHOUSES.list(conn, user)).await?))
}

/// Reads one warehouse the user may see.
pub fn find(conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<Warehouse> {
    WAREHOUSES.find(conn, user, id)
}

#[get("/warehouses/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Warehouse>> {
    let id = id.get("Warehouse")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

/// A validated new warehouse, as the create and ping calls and a connection's nested `warehouse`
/// take it. Its customer is decided by the caller.
#[derive(Debug)]
pub struct NewWarehouse {
    name: Option<String>,
    description: Option<String>,
    adapter: Adapter,
    enabled_at: Option<i64>,
}

impl NewWarehouse {
    /// Reads a create body (without `customer_id`); problems go into `fields`.
    pub fn read(fields: &mut Fields) -> Option<NewWarehouse> {
        let name = fields.text("name").value();
        let description = fields.text("description").value();
        let adapter = Adapter::read(fields, Owner::Warehouse);
        let enabled_at = fields.date("enabled_at").value();
        Some(NewWarehouse { name, description, adapter: adapter?, enabled_at })
    }

    pub fn adapter(&self) -> &Adapter {
        &self.adapter
    }

    /// Inserts the warehouse for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        conn.execute(
            "INSERT INTO warehouses (customer_id, name, description, platform, adapter, created_at, enabled_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                customer_id,
                self.name,
                self.description,
                self.adapter.platform,
                self.adapter.settings_json(),
                dates::now_ms(),
                self.enabled_at
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }
}

/// The body of `POST /warehouses` and `POST /warehouses/ping`: the customer and the warehouse.
fn read_create(body: Body, user: &AuthUser) -> ApiResult<(i64, NewWarehouse)> {
    let mut fields = body.fields();
    let customer_id = customer_id_for_create(&mut fields, user);
    let warehouse = NewWarehouse::read(&mut fields);
    fields.finish()?;
    customer_id
        .zip(warehouse)
        .ok_or_else(|| ApiError::internal("a warehouse body passed validation incomplete"))
}

#[post("/warehouses", data = "<body>")]
async fn create(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<Created> {
    let (customer_id, warehouse) = read_create(body, &user)?;
    adapter::check_folder(&warehouse.adapter, &config.folder_root(), user.is_admin())?;
    let id = user
        .run(pool, move |conn, user| {
            check_customer(conn, user, customer_id, "customer_id")?;
            warehouse.insert(conn, customer_id)
        })
        .await?;
    Ok(Created::at("warehouses", id))
}

/// Validates exactly as create does, writes nothing, then asks the platform.
#[post("/warehouses/ping", data = "<body>")]
async fn ping(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    let (customer_id, warehouse) = read_create(body, &user)?;
    adapter::check_folder(&warehouse.adapter, &config.folder_root(), user.is_admin())?;
    user.run(pool, move |conn, user| check_customer(conn, user, customer_id, "customer_id")).await?;
    warehouse.adapter.ping(config, Owner::Warehouse).await
}

/// `customer_id` is read-only: a warehouse moved to another customer would leave its
/// connections joining two customers' resources.
#[patch("/warehouses/<id>", data = "<body>")]
async fn update(
    id: Id,
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    let folder_root = config.folder_root();
    let id = id.get("Warehouse")?;
    let mut fields = body.fields();
    let name = fields.text("name");
    let description = fields.text("description");
    let enabled_at = fields.date("enabled_at");
    let adapter = AdapterPatch::read(&mut fields);
    fields.finish()?;

    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let warehoused = tx
            .query_row(
                "SELECT platform, adapter FROM warehouses WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)",
                params![id, user.scope()],
                |row| Adapter::from_columns(row, 0),
            )
            .optional()?
            .ok_or_else(|| not_found(id))?;
        let mut changes: Vec<(&str, SqlValue)> = Vec::new();
        if let Some(name) = name.present() {
            changes.push(("name", name.into()));
        }
        if let Some(description) = description.present() {
            changes.push(("description", description.into()));
        }
        if let Some(enabled_at) = enabled_at.present() {
            changes.push(("enabled_at", enabled_at.into()));
        }
        // A folder warehouse is an admin's to change, whatever the field.
        adapter::check_folder(&warehoused, &folder_root, user.is_admin()).or_else(|e| match e {
            ApiError::Forbidden(_) => Err(e),
            _ => Ok(()),
        })?;
        if !adapter.is_empty() {
            let resolved = adapter.resolve(Owner::Warehouse, warehoused)?;
            adapter::check_folder(&resolved, &folder_root, user.is_admin())?;
            changes.push(("adapter", resolved.settings_json().into()));
            changes.push(("platform", resolved.platform.into()));
        }
        for (column, value) in changes {
            // `column` is one of the literals above, never from the request.
            tx.execute(&format!("UPDATE warehouses SET {column} = ?1 WHERE id = ?2"), params![value, id])?;
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
