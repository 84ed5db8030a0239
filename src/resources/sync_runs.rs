//! The sync API (CONTRACT §11): start a pass, read a connection's runs, read why an order or
//! shipment is where it is, and put an errored one back into its step. Tenancy as everywhere: a customer user sees only its
//! own connections, orders and shipments, and anything else answers 404.

use std::sync::Arc;

use rocket::http::Status;
use rocket::response::status::Custom;
use rocket::serde::json::Json;
use rocket::{Route, State, get, post, routes};
use serde::Serialize;

use crate::config::Config;
use crate::dates::now_ms;
use crate::db::{self, Pool};
use crate::http::api::{ApiResult, Id, NoContent, owned_row_exists};
use crate::http::auth::AuthUser;
use crate::http::error::ApiError;

use crate::sync::problems::{self, ItemSync};
use crate::sync::runs::{self, Run, Trigger};
use crate::sync::states::{self, OrderState};
use crate::sync::{Engine, Link, notify};

pub fn routes() -> Vec<Route> {
    routes![start, list, get, order_sync, shipment_sync, retry_order, retry_shipment]
}

#[derive(Serialize)]
pub struct RunId {
    run_id: i64,
}

/// 202 with the id of the pass started, or of the one already under way.
#[post("/connections/<id>/sync")]
async fn start(
    id: Id,
    user: AuthUser,
    pool: &State<Pool>,
    config: &State<Config>,
    engine: &State<Arc<Engine>>,
) -> ApiResult<Custom<Json<RunId>>> {
    let id = id.get("Connection")?;
    let mode = config.sync_mode;
    user.run(pool, move |conn, user| {
        let link = Link::load(conn, id, user.scope())?
            .ok_or_else(|| ApiError::not_found(format!("Connection {id}")))?;
        let why = link.why_not(Some(mode));
        if why.is_empty() { Ok(()) } else { Err(ApiError::NotSyncing(why)) }
    })
    .await?;
    let started = engine.start(id, Trigger::Request).await.map_err(ApiError::internal)?;
    Ok(Custom(Status::Accepted, Json(RunId { run_id: started.run_id() })))
}

fn visible_connection(conn: &rusqlite::Connection, user: &AuthUser, id: i64) -> ApiResult<()> {
    if owned_row_exists(conn, "connections", id, user.scope())? {
        Ok(())
    } else {
        Err(ApiError::not_found(format!("Connection {id}")))
    }
}

/// The latest 100 passes, newest first.
#[get("/connections/<id>/sync_runs")]
async fn list(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Run>>> {
    let id = id.get("Connection")?;
    let found = user
        .run(pool, move |conn, user| {
            visible_connection(conn, user, id)?;
            Ok(runs::latest(conn, id)?)
        })
        .await?;
    Ok(Json(found))
}

#[get("/connections/<id>/sync_runs/<run_id>")]
async fn get(id: Id, run_id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Run>> {
    let id = id.get("Connection")?;
    let run_id = run_id.get("Sync run")?;
    let found = user
        .run(pool, move |conn, user| {
            visible_connection(conn, user, id)?;
            Ok(runs::find(conn, run_id)?.filter(|run| run.connection_id == id))
        })
        .await?;
    found.map(Json).ok_or_else(|| ApiError::not_found(format!("Sync run {run_id}")))
}

/// An order's tries at the warehouse, its latest error and when it is tried next; 404 as for
/// the order itself.
#[get("/orders/<id>/sync")]
async fn order_sync(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<ItemSync>> {
    let id = id.get("Order")?;
    let found = user
        .run(pool, move |conn, user| {
            if !owned_row_exists(conn, "orders", id, user.scope())? {
                return Err(ApiError::not_found(format!("Order {id}")));
            }
            Ok(problems::order_sync(conn, id)?)
        })
        .await?;
    Ok(Json(found))
}

/// A shipment's tries at the store, its latest error and when it is tried next; 404 as for
/// the shipment itself.
#[get("/shipments/<id>/sync")]
async fn shipment_sync(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<ItemSync>> {
    let id = id.get("Shipment")?;
    let found = user
        .run(pool, move |conn, user| {
            if !owned_row_exists(conn, "shipments", id, user.scope())? {
                return Err(ApiError::not_found(format!("Shipment {id}")));
            }
            Ok(problems::shipment_sync(conn, id)?)
        })
        .await?;
    Ok(Json(found))
}

/// An `errored` order goes back to `new`, to be sent again; 409 in any other state.
#[post("/orders/<id>/retry")]
async fn retry_order(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Order")?;
    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        if !owned_row_exists(&tx, "orders", id, user.scope())? {
            return Err(ApiError::not_found(format!("Order {id}")));
        }
        let state: Option<String> =
            tx.query_row("SELECT fulfillment_state FROM orders WHERE id = ?1", [id], |r| r.get(0))?;
        if OrderState::parse(state.as_deref()) != Some(OrderState::Errored) {
            return Err(not_errored("Order", id, state.as_deref()));
        }
        states::move_order(&tx, id, OrderState::New, now_ms())?;
        // As a shipment's retry: the order starts over, with no tries and no error.
        tx.prepare_cached(
            "UPDATE order_sync SET attempts = 0, next_attempt_at = NULL, last_error = NULL, last_error_at = NULL,
               last_error_step = NULL WHERE order_id = ?1",
        )?
        .execute([id])?;
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}

/// An `errored_*` shipment goes back into the step that failed; 409 in any other state.
#[post("/shipments/<id>/retry")]
async fn retry_shipment(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Shipment")?;
    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        if !owned_row_exists(&tx, "shipments", id, user.scope())? {
            return Err(ApiError::not_found(format!("Shipment {id}")));
        }
        if notify::retry(&tx, id)?.is_none() {
            let state: Option<String> =
                tx.query_row("SELECT state FROM shipments WHERE id = ?1", [id], |r| r.get(0))?;
            return Err(not_errored("Shipment", id, state.as_deref()));
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}

fn not_errored(noun: &str, id: i64, state: Option<&str>) -> ApiError {
    ApiError::conflict(
        format!("{noun} {id} is not in an errored state, so there is nothing to retry."),
        "state",
        format!("is {}", state.unwrap_or("null")),
    )
}
