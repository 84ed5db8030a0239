//! Stores: the sales platforms (e-commerce sites, marketplaces) a customer's orders come
//! from. Each carries a `platform` and an `adapter` with its credentials, which responses
//! always mask. `POST /stores/ping` checks credentials without creating anything.

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
pub struct Store {
    pub id: i64,
    pub customer_id: i64,
    pub name: String,
    pub description: Option<String>,
    pub url: Option<String>,
    pub platform: String,
    /// Masked: secrets never leave the service whole.
    pub adapter: Map<String, Value>,
    pub created_at: Timestamp,
    pub enabled_at: Option<Timestamp>,
    pub order_imported_at: Option<Timestamp>,
    pub inventory_updated_at: Option<Timestamp>,
}

const COLUMNS: &str = "id, customer_id, name, description, url, platform, adapter, created_at, enabled_at, \
                       order_imported_at, inventory_updated_at";

fn from_row(row: &Row<'_>) -> rusqlite::Result<Store> {
    Ok(Store {
        id: row.get(0)?,
        customer_id: row.get(1)?,
        name: row.get(2)?,
        description: row.get(3)?,
        url: row.get(4)?,
        platform: row.get(5)?,
        adapter: adapter::mask(&adapter::settings_from_column(row, 6)?),
        created_at: Timestamp(row.get(7)?),
        enabled_at: row.get::<_, Option<i64>>(8)?.map(Timestamp),
        order_imported_at: row.get::<_, Option<i64>>(9)?.map(Timestamp),
        inventory_updated_at: row.get::<_, Option<i64>>(10)?.map(Timestamp),
    })
}

const STORES: Owned<Store> = Owned { table: "stores", columns: COLUMNS, from_row, noun: "Store" };

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Store {id}"))
}

#[get("/stores")]
async fn list(user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Store>>> {
    Ok(Json(user.run(pool, move |conn, user| STORES.list(conn, user)).await?))
}

/// Reads one store the user may see.
pub fn find(conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<Store> {
    STORES.find(conn, user, id)
}

#[get("/stores/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Store>> {
    let id = id.get("Store")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

/// A validated new store, as the create and ping calls and a connection's nested `store`
/// take it. Its customer is decided by the caller.
#[derive(Debug)]
pub struct NewStore {
    name: String,
    description: Option<String>,
    url: Option<String>,
    adapter: Adapter,
    enabled_at: Option<i64>,
}

impl NewStore {
    /// Reads a create body (without `customer_id`); problems go into `fields`.
    pub fn read(fields: &mut Fields) -> Option<NewStore> {
        let name = fields.required("name", Fields::text);
        let description = fields.text("description").value();
        let url = fields.text("url").value();
        let adapter = Adapter::read(fields, Owner::Store);
        let enabled_at = fields.date("enabled_at").value();
        Some(NewStore { name: name?.trim().to_string(), description, url, adapter: adapter?, enabled_at })
    }

    pub fn adapter(&self) -> &Adapter {
        &self.adapter
    }

    /// Inserts the store for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        conn.execute(
            "INSERT INTO stores (customer_id, name, description, url, platform, adapter, created_at, enabled_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                customer_id,
                self.name,
                self.description,
                self.url,
                self.adapter.platform,
                self.adapter.settings_json(),
                dates::now_ms(),
                self.enabled_at
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }
}

/// The body of `POST /stores` and `POST /stores/ping`: the customer and the store.
fn read_create(body: Body, user: &AuthUser) -> ApiResult<(i64, NewStore)> {
    let mut fields = body.fields();
    let customer_id = customer_id_for_create(&mut fields, user);
    let store = NewStore::read(&mut fields);
    fields.finish()?;
    customer_id.zip(store).ok_or_else(|| ApiError::internal("a store body passed validation incomplete"))
}

#[post("/stores", data = "<body>")]
async fn create(user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<Created> {
    let (customer_id, store) = read_create(body, &user)?;
    let id = user
        .run(pool, move |conn, user| {
            check_customer(conn, user, customer_id, "customer_id")?;
            store.insert(conn, customer_id)
        })
        .await?;
    Ok(Created::at("stores", id))
}

/// Validates exactly as create does, writes nothing, then asks the platform.
#[post("/stores/ping", data = "<body>")]
async fn ping(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    let (customer_id, store) = read_create(body, &user)?;
    user.run(pool, move |conn, user| check_customer(conn, user, customer_id, "customer_id")).await?;
    store.adapter.ping(config, Owner::Store).await
}

/// `customer_id` is read-only: a store moved to another customer would leave its
/// connections joining two customers' resources.
#[patch("/stores/<id>", data = "<body>")]
async fn update(id: Id, user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Store")?;
    let mut fields = body.fields();
    let name = fields.not_null("name", Fields::text);
    let description = fields.text("description");
    let url = fields.text("url");
    let enabled_at = fields.date("enabled_at");
    let adapter = AdapterPatch::read(&mut fields);
    fields.finish()?;

    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let stored = tx
            .query_row(
                "SELECT platform, adapter FROM stores WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)",
                params![id, user.scope()],
                |row| Adapter::from_columns(row, 0),
            )
            .optional()?
            .ok_or_else(|| not_found(id))?;
        let mut changes: Vec<(&str, SqlValue)> = Vec::new();
        if let Some(name) = name {
            changes.push(("name", name.trim().to_string().into()));
        }
        if let Some(description) = description.present() {
            changes.push(("description", description.into()));
        }
        if let Some(url) = url.present() {
            changes.push(("url", url.into()));
        }
        if let Some(enabled_at) = enabled_at.present() {
            changes.push(("enabled_at", enabled_at.into()));
        }
        if !adapter.is_empty() {
            let resolved = adapter.resolve(Owner::Store, stored)?;
            changes.push(("adapter", resolved.settings_json().into()));
            changes.push(("platform", resolved.platform.into()));
        }
        for (column, value) in changes {
            // `column` is one of the literals above, never from the request.
            tx.execute(&format!("UPDATE stores SET {column} = ?1 WHERE id = ?2"), params![value, id])?;
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
