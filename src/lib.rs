//! orderbridge: an order fulfillment integration service served from one binary over an
//! embedded SQLite file. `build` assembles the Rocket instance from a figment, so tests run
//! exactly what production runs.

pub mod cli;
pub mod config;
pub mod dates;
pub mod db;
#[cfg(test)]
mod decoders_proptest;
pub mod fields;
pub mod http;
pub mod jsondoc;
mod logging;
mod module_graph;
pub mod money;
pub mod orders;
pub mod platforms;
pub mod progress;
pub mod resources;
pub mod seed;
pub mod shipments;
pub mod simulate;
pub mod sync;

use rocket::figment::Figment;
use rocket::serde::json::Json;
use rocket::{Build, Rocket, catchers, get, routes};
use serde::Serialize;

use crate::config::Config;
use crate::http::auth::TokenKeys;
use crate::http::users::{self, FirstAdmin};
use crate::http::{auth, conditional, dashboard, error, openapi, throttle};
use crate::resources::listing::{self, Sessions};
use crate::resources::{
    connections, customers, import, products, stores, sync_runs, variant_collections, warehouses,
};

/// A Rocket instance ready to launch, and the admin created if this was the first run.
pub struct App {
    pub rocket: Rocket<Build>,
    pub first_admin: Option<FirstAdmin>,
}

/// Builds the service from a figment (usually `Config::figment()`): installs the logger,
/// opens or creates the database, creates the first admin on an empty one, and mounts every
/// route and catcher.
pub fn build(figment: Figment) -> Result<App, String> {
    logging::init(&figment);
    let config = Config::from_figment(&figment)?;
    let pool = config.open_served_database(config.db_workers)?;
    let first_admin = {
        let conn = pool.get().map_err(|e| format!("database: {e}"))?;
        users::ensure_first_admin(&conn, config.admin_password.as_ref().map(|s| s.expose()))
            .map_err(|e| format!("creating the first admin: {}", error::describe(&e)))?
    };
    let keys = TokenKeys::load(&pool, &config)?;
    // Rocket's form parser enforces these while streaming; JSON is capped in `body`.
    let figment =
        figment.merge(("limits.form", config.body_limit)).merge(("limits.data-form", config.body_limit));

    let sessions = Sessions::new(config.session_ttl_secs, config.max_sessions);
    // The engine has its own database thread, so passes never queue behind requests.
    let engine = sync::Engine::new(pool.own(1, db::ENGINE_CACHE_KIB)?, sync::Settings::from_config(&config));

    let rocket = rocket::custom(figment)
        .manage(pool)
        .manage(sessions)
        .manage(listing::Cache::default())
        .manage(keys)
        .manage(throttle::LoginThrottle::default())
        .manage(engine)
        .manage(config)
        .mount("/", routes![health, auth::token, openapi::document])
        .mount("/", customers::routes())
        .mount("/", stores::routes())
        .mount("/", warehouses::routes())
        .mount("/", connections::routes())
        .mount("/", products::routes())
        // service-api.md's reference table uses the singular; every example the plural.
        .mount("/variant_collections", variant_collections::routes())
        .mount("/variant_collection", variant_collections::routes())
        .mount("/", resources::orders::routes())
        .mount("/", resources::shipments::routes())
        .mount("/", import::routes())
        .mount("/", sync_runs::routes())
        .mount("/", dashboard::routes())
        .attach(Sessions::sweeper())
        .attach(sync_schedule())
        .attach(checkpoints())
        .attach(conditional::Conditional)
        .register("/", catchers![error::catch_all]);
    Ok(App { rocket, first_admin })
}

/// Starts the sync engine's schedule when Rocket lifts off, and stops it when Rocket shuts
/// down.
fn sync_schedule() -> rocket::fairing::AdHoc {
    rocket::fairing::AdHoc::on_liftoff("sync schedule", |rocket| {
        Box::pin(async move {
            let Some(engine) = rocket.state::<std::sync::Arc<sync::Engine>>().cloned() else { return };
            let shutdown = rocket.shutdown();
            sync::start_schedule(engine, shutdown).await;
        })
    })
}

/// Starts the WAL checkpoint thread when Rocket lifts off, and stops it when Rocket shuts
/// down (`db::checkpoint`).
fn checkpoints() -> rocket::fairing::AdHoc {
    rocket::fairing::AdHoc::on_liftoff("WAL checkpoints", |rocket| {
        Box::pin(async move {
            let Some(config) = rocket.state::<Config>() else { return };
            let checkpointer = match crate::db::Checkpointer::start(&config.database) {
                Ok(checkpointer) => checkpointer,
                Err(e) => {
                    // Commits still checkpoint past the backstop; the WAL stays bounded.
                    log::warn!("{e}; WAL checkpoints are left to commits");
                    return;
                }
            };
            let shutdown = rocket.shutdown();
            rocket::tokio::spawn(async move {
                shutdown.await;
                // Joining waits for at most one checkpoint in progress.
                let _ = rocket::tokio::task::spawn_blocking(move || drop(checkpointer)).await;
            });
        })
    })
}

#[derive(Serialize)]
struct Health {
    status: &'static str,
}

/// Liveness, open to all.
#[get("/health")]
fn health() -> Json<Health> {
    Json(Health { status: "ok" })
}
