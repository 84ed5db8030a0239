//! Stores: the sales platforms (e-commerce sites, marketplaces) a customer's orders come
//! from. Each carries a `platform` and an `adapter` with its credentials, which responses
//! always mask. `POST /stores/ping` checks credentials without creating anything.

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

const COLUMNS: &str = "id, customer_id, name, description, url, platform, ob_open(adapter), created_at, enabled_at, \
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

static KIND: Kind =
    Kind { owner: Owner::Store, table: "stores", noun: "Store", name_required: true, extra_text: &["url"] };

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

/// A validated new store, as the create and ping calls and a connection's nested
/// `store` take it. Its customer is decided by the caller.
#[derive(Debug)]
pub struct NewStore(NewHolder);

impl NewStore {
    /// Reads a create body (without `customer_id`); problems go into `fields`.
    pub fn read(fields: &mut Fields) -> Option<NewStore> {
        NewHolder::read(&KIND, fields).map(NewStore)
    }

    pub fn adapter(&self) -> &Adapter {
        self.0.adapter()
    }

    /// The rules that need the user and the configuration. A connection's nested store must
    /// pass it before `insert`, as `POST /stores` does.
    pub fn authorize(&mut self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        self.0.authorize(user, config)
    }

    /// Where a customer user's store may point (CONTRACT §6): 422 naming the field.
    pub async fn check_address(&self, user: &AuthUser, config: &Config) -> ApiResult<()> {
        self.0.check_address(user, config).await
    }

    /// Inserts the store for `customer_id`, which the caller has checked.
    pub fn insert(&self, conn: &Connection, customer_id: i64) -> ApiResult<i64> {
        self.0.insert(conn, customer_id)
    }
}

#[post("/stores", data = "<body>")]
async fn create(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<Created> {
    holders::create(&KIND, user, body, pool, config).await
}

/// Validates exactly as create does, writes nothing, then asks the platform.
#[post("/stores/ping", data = "<body>")]
async fn ping(
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    holders::ping(&KIND, user, body, pool, config).await
}

#[patch("/stores/<id>", data = "<body>")]
async fn update(
    id: Id,
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
    config: &State<Config>,
) -> ApiResult<NoContent> {
    holders::update(&KIND, id.get("Store")?, user, body, pool, config).await
}
