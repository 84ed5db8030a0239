//! One pass of one connection: the steps of its enabled channels, in CONTRACT §11's order,
//! each skipped when it has nothing to do. A failed step ends the pass; what earlier steps
//! did stays done.

use crate::db::DbError;
use crate::platforms::files::Warehouse;

use super::runs::{self, Failure, Outcome, RunCounts, Step};
use super::sides;
use super::step::StepError;
use super::{Engine, Link, Shared, notify, orders_in, orders_out, shipments_in, stock};
use crate::platforms::store::StoreClient;

/// Runs a pass of the connection as it is now, recorded as run `run_id`.
pub async fn run(engine: &Engine, connection_id: i64, run_id: i64) -> Outcome {
    let mut counts = RunCounts::default();
    let mut pass = Pass { engine, run_id, connection_id };
    let failure = steps(&mut pass, connection_id, &mut counts).await.err();
    Outcome { counts, failure }
}

/// A pass under way: the engine and the run that records it.
struct Pass<'a> {
    engine: &'a Engine,
    run_id: i64,
    connection_id: i64,
}

impl Pass<'_> {
    /// Notes in the run which step the pass is in now.
    async fn enter(&self, step: Step) -> Result<(), Failure> {
        let run_id = self.run_id;
        self.engine
            .db(move |conn| Ok::<_, DbError>(runs::enter(conn, run_id, step)?))
            .await
            .map_err(|e| StepError::Db(e).into_failure(step, self.connection_id))
    }
}

async fn steps(pass: &mut Pass<'_>, connection_id: i64, counts: &mut RunCounts) -> Result<(), Failure> {
    let engine = pass.engine;
    let fail = |step: Step| move |e: StepError| e.into_failure(step, connection_id);
    let link = engine
        .db(move |conn| Ok::<_, DbError>(Link::load(conn, connection_id, None)?))
        .await
        .map_err(|e| fail(Step::PullOrders)(StepError::Db(e)))?;
    let Some(link) = link else {
        return Err(Failure {
            step: Step::PullOrders,
            code: "not_found",
            message: format!("Connection {connection_id} no longer exists."),
        });
    };
    let sales = link.sales_syncs();
    let inventory = link.inventory_syncs();
    if !sales && !inventory {
        return Ok(());
    }
    let first_step = if sales { Step::PullOrders } else { Step::Stock };
    let store = sides::store_for(engine, &link).map_err(|e| fail(first_step)(e.into()))?;
    let mut warehouse = sides::warehouse_for(engine, &link).map_err(|e| fail(first_step)(e.into()))?;

    if sales {
        pass.enter(Step::PullOrders).await?;
        orders_in::pull(engine, &link, store.as_ref(), &mut counts.orders_pulled)
            .await
            .map_err(fail(Step::PullOrders))?;
    }
    // The warehouse session is opened once, when a step first needs it; the passes of other
    // connections to the same warehouse wait for this one's file steps to end.
    let _warehouse = engine.hold(Shared::Warehouse, link.warehouse_id).await;
    let result = warehouse_steps(pass, &link, store.as_ref(), &mut warehouse, counts).await;
    warehouse.close().await;
    result
}

async fn warehouse_steps(
    pass: &Pass<'_>,
    link: &Link,
    store: &dyn StoreClient,
    warehouse: &mut Warehouse,
    counts: &mut RunCounts,
) -> Result<(), Failure> {
    let engine = pass.engine;
    let fail = |step: Step| move |e: StepError| e.into_failure(step, link.id);
    if link.sales_syncs() {
        if orders_out::has_work(engine, link).await.map_err(fail(Step::SendOrders))? {
            pass.enter(Step::SendOrders).await?;
            let warehouse = open(engine, link, warehouse).await.map_err(fail(Step::SendOrders))?;
            counts.orders_sent =
                orders_out::send(engine, link, warehouse).await.map_err(fail(Step::SendOrders))?;
        }
        pass.enter(Step::PullShipments).await?;
        let warehouse = open(engine, link, warehouse).await.map_err(fail(Step::PullShipments))?;
        shipments_in::pull(engine, link, warehouse, &mut counts.shipments_pulled)
            .await
            .map_err(fail(Step::PullShipments))?;
        pass.enter(Step::Notify).await?;
        notify::notify(engine, link, store, pass.run_id, &mut counts.shipments_notified)
            .await
            .map_err(fail(Step::Notify))?;
    }
    if link.inventory_syncs() {
        pass.enter(Step::Stock).await?;
        let warehouse = open(engine, link, warehouse).await.map_err(fail(Step::Stock))?;
        stock::sync(engine, link, store, warehouse, &mut counts.stock_levels_sent)
            .await
            .map_err(fail(Step::Stock))?;
    }
    Ok(())
}
/// The warehouse with its session open, once a step first needs it; the host key an SFTP
/// server showed at the pass's first session is pinned.
async fn open<'a>(
    engine: &Engine,
    link: &Link,
    warehouse: &'a mut Warehouse,
) -> Result<&'a mut Warehouse, StepError> {
    if let Some(shown) = warehouse.connect().await? {
        pin_host_key(engine, link, shown).await?;
    }
    Ok(warehouse)
}

/// Records the host key an SFTP warehouse showed at its first session as its adapter's
/// `host_key`, unless someone set one or changed the server meanwhile; later sessions with
/// another key fail until an admin clears or sets it.
async fn pin_host_key(engine: &Engine, link: &Link, fingerprint: String) -> Result<(), StepError> {
    let warehouse_id = link.warehouse_id;
    let url = link.warehouse_adapter.get("connection_string").and_then(serde_json::Value::as_str);
    let url = url.unwrap_or_default().to_string();
    let pinned = engine
        .db(move |conn| {
            conn.execute(
                "UPDATE warehouses SET adapter = json_set(adapter, '$.host_key', ?2) \
                 WHERE id = ?1 AND json_extract(adapter, '$.host_key') IS NULL \
                   AND json_extract(ob_open(adapter), '$.connection_string') = ?3",
                rusqlite::params![warehouse_id, fingerprint, url],
            )
            .map(|changed| (changed > 0).then_some(fingerprint))
            .map_err(StepError::from)
        })
        .await?;
    if let Some(fingerprint) = pinned {
        crate::logging::notice(format_args!(
            "warehouse {warehouse_id}: pinned the SFTP server's host key {fingerprint}"
        ));
    }
    Ok(())
}
