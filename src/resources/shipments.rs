//! Shipments (read-only in the API): `GET /shipments`, served from the documents stored at
//! import (`crate::shipments`).

use rocket::{Route, State, get, routes};
use rusqlite::types::Value as SqlValue;

use crate::db::Pool;
use crate::http::api::ApiResult;
use crate::http::auth::AuthUser;
use crate::http::error::ApiError;
use crate::resources::listing::{self, Cache, Params, Resource, Sessions, Tagged, Where};
use crate::shipments::{STATES, model};

pub fn routes() -> Vec<Route> {
    routes![list]
}

const SORTS: [&str; 6] = ["tracking_number", "shipped_at", "created_at", "warehouse_id", "state", "id"];

pub static SHIPMENTS: Resource = Resource {
    key: "shipments",
    table: "shipments",
    docs: "shipment_docs",
    sorts: &SORTS,
    indexed_sorts: &SORTS,
    not_null: &["tracking_number", "created_at", "warehouse_id", "state", "id"],
    filters,
};

fn filters(p: &Params, w: &mut Where) -> ApiResult<()> {
    w.date_range(p, "shipped_at", "o.shipped_at")?;
    w.date_range(p, "created_at", "o.created_at")?;
    w.equals(p, "tracking_number", "o.tracking_number");
    w.id_or_name(p, "store_id", "o.store_id", "stores", "name");
    w.id_or_name(p, "warehouse_id", "o.warehouse_id", "warehouses", "name");
    w.id_or_name(p, "customer_id", "o.customer_id", "customers", "company_name");
    if let Some(state) = p.get("state") {
        if !STATES.contains(&state) {
            return Err(ApiError::bad_parameter("state", format!("must be one of {}", model::states_list())));
        }
        w.push("o.state = ?", [SqlValue::Text(state.to_string())]);
    }
    Ok(())
}

#[get("/shipments")]
async fn list(
    user: AuthUser,
    params: Params,
    pool: &State<Pool>,
    sessions: &State<Sessions>,
    cache: &State<Cache>,
) -> ApiResult<Tagged> {
    listing::list(&SHIPMENTS, user, params, pool, sessions, cache).await
}
