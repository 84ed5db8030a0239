//! Orders (read-only in the API): `GET /orders` and `GET /orders/<id>`, served from the
//! documents stored at import (`crate::orders`).

use rocket::{Route, State, get, routes};
use rusqlite::OptionalExtension;

use crate::db::Pool;
use crate::http::api::{ApiResult, Id};
use crate::http::auth::AuthUser;
use crate::http::error::ApiError;
use crate::orders::fields::ORDER_FIELDS;
use crate::resources::listing::{self, Cache, JsonText, Params, Resource, Sessions, Tagged, Where};

pub fn routes() -> Vec<Route> {
    routes![list, get]
}

const SORT_COUNT: usize = ORDER_FIELDS.len() + 3;

/// Every scalar top-level property sorts: `id`, `store_id`, `created_at` and the fields.
const fn order_sorts() -> [&'static str; SORT_COUNT] {
    let mut out = [""; SORT_COUNT];
    out[0] = "id";
    out[1] = "store_id";
    out[2] = "created_at";
    let mut i = 0;
    while i < ORDER_FIELDS.len() {
        out[3 + i] = ORDER_FIELDS[i].0;
        i += 1;
    }
    out
}

static SORTS: [&str; SORT_COUNT] = order_sorts();

pub static ORDERS: Resource = Resource {
    key: "orders",
    table: "orders",
    docs: "order_docs",
    sorts: &SORTS,
    indexed_sorts: &[
        "id",
        "store_id",
        "created_at",
        "ordered_at",
        "external_id",
        "external_display_id",
        "fulfillment_state",
    ],
    not_null: &["id", "store_id", "created_at", "external_id"],
    filters,
};

fn filters(p: &Params, w: &mut Where) -> ApiResult<()> {
    w.date_range(p, "ordered_at", "o.ordered_at")?;
    w.date_range(p, "created_at", "o.created_at")?;
    w.id_or_name(p, "store_id", "o.store_id", "stores", "name");
    w.equals(p, "external_id", "o.external_id");
    w.equals(p, "external_display_id", "o.external_display_id");
    w.equals(p, "state", "o.fulfillment_state");
    Ok(())
}

#[get("/orders")]
async fn list(
    user: AuthUser,
    params: Params,
    pool: &State<Pool>,
    sessions: &State<Sessions>,
    cache: &State<Cache>,
) -> ApiResult<Tagged> {
    listing::list(&ORDERS, user, params, pool, sessions, cache).await
}

#[get("/orders/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<JsonText> {
    let id = id.get("Order")?;
    let scope = user.scope();
    let doc: Option<String> = user
        .run(pool, move |conn, _| {
            Ok(conn
                .prepare_cached(
                    "SELECT d.doc FROM orders o JOIN order_docs d ON d.id = o.id
                 WHERE o.id = ?1 AND (?2 IS NULL OR o.customer_id = ?2)",
                )?
                .query_row(rusqlite::params![id, scope], |r| r.get(0))
                .optional()?)
        })
        .await?;
    let doc = doc.ok_or_else(|| ApiError::not_found(format!("Order {id}")))?;
    Ok(JsonText(format!("{{\"order\":{doc}}}")))
}
