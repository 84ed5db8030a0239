//! Warehouses: the fulfillment platforms that ship a customer's orders. Each carries a
//! `platform` and an `adapter` (an `access_token`, or a `connection_string` for file
//! transfer), which responses always mask. `POST /warehouses/ping` checks credentials
//! without creating anything.

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::{Connection, Row};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::dates::Timestamp;
use crate::db::Pool;
use crate::http::api::{ApiResult, Created, Id, NoContent, Owned};
use crate::http::auth::AuthUser;
use crate::http::body::{Body, Fields};
use crate::resources::adapter::{self, Adapter, Owner};
use crate::resources::holders::{self, Kind, NewHolder};

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

const COLUMNS: &str = "id, customer_id, name, description, platform, ob_open(adapter), created_at, enabled_at, \
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

static KIND: Kind = Kind {
    owner: Owner::Warehouse,
    table: "warehouses",
    noun: "Warehouse",
    name_required: false,
    extra_text: &[],
};

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

/// A validated new warehouse, as the create and ping calls and a connection's nested
/// `warehouse` take it. Its customer is decided by the caller.
#[derive(Debug)]
pub struct NewWarehouse(NewHolder);

impl NewWarehouse {
    /// Reads a create body (without `customer_id`); problems go into `fields`.
    pub fn read(fields: &mut Fields) -> Option<NewWarehouse> {
        NewHolder::read(&KIND, fields).map(NewWarehouse)
    }

    pub fn adapter(&self) -> &Adapter {
        self.0.adapter()
    }

    /// The rules that need the user and the configuration (`folder` warehouses).
    /// A connection's nested warehouse must pass it before `insert`, as `POST /warehouses` does.
    pub fn authorize(&mut self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        self.0.authorize(user, config)
    }

    /// Where a customer user's warehouse may point (CONTRACT §6): 422 naming the field.
    pub async fn check_address(&self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        self.0.check_address(user, config).await
    }

    /// Inserts the warehouse for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        self.0.insert(conn, customer_id)
    }
}

#[post("/warehouses", data = "<body>")]
async fn create(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<Created> {
    holders::create(&KIND, user, body, pool, config).await
}

/// Validates exactly as create does, writes nothing, then asks the platform.
#[post("/warehouses/ping", data = "<body>")]
async fn ping(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    holders::ping(&KIND, user, body, pool, config).await
}

#[patch("/warehouses/<id>", data = "<body>")]
async fn update(
    id: Id,
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    holders::update(&KIND, id.get("Warehouse")?, user, body, pool, config).await
}
