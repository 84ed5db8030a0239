//! One pass of one connection: the steps of its enabled channels, in CONTRACT §11's order,
//! each skipped when it has nothing to do. A failed step ends the pass; what earlier steps
//! did stays done.

use crate::db::DbError;
use crate::platforms::warehouse::{Learned, WarehouseClient};

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
    // The warehouse is opened once, when a step first needs it; the passes of other
    // connections to the same warehouse wait for this one's warehouse steps to end.
    let _warehouse = engine.hold(Shared::Warehouse, link.warehouse_id).await;
    let result = warehouse_steps(pass, &link, store.as_ref(), warehouse.as_mut(), counts).await;
    warehouse.close().await;
    result
}

async fn warehouse_steps(
    pass: &Pass<'_>,
    link: &Link,
    store: &dyn StoreClient,
    warehouse: &mut dyn WarehouseClient,
    counts: &mut RunCounts,
) -> Result<(), Failure> {
    let engine = pass.engine;
    let fail = |step: Step| move |e: StepError| e.into_failure(step, link.id);
    if link.sales_syncs() {
        if orders_out::has_work(engine, link).await.map_err(fail(Step::SendOrders))? {
            pass.enter(Step::SendOrders).await?;
            let warehouse = open(engine, link, warehouse).await.map_err(fail(Step::SendOrders))?;
            counts.orders_sent = orders_out::send(engine, link, pass.run_id, warehouse)
                .await
                .map_err(fail(Step::SendOrders))?;
        }
        pass.enter(Step::PullShipments).await?;
        let warehouse = open(engine, link, warehouse).await.map_err(fail(Step::PullShipments))?;
        shipments_in::pull(engine, link, pass.run_id, warehouse, &mut counts.shipments_pulled)
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
        stock::sync(engine, link, pass.run_id, (store, warehouse), &mut counts.stock_levels_sent)
            .await
            .map_err(fail(Step::Stock))?;
    }
    Ok(())
}
/// The warehouse, opened once a step first needs it; what it showed that its adapter keeps
/// (an SFTP server's host key at the pass's first session) is recorded.
async fn open<'a>(
    engine: &Engine,
    link: &Link,
    warehouse: &'a mut dyn WarehouseClient,
) -> Result<&'a mut dyn WarehouseClient, StepError> {
    if let Some(learned) = warehouse.connect().await? {
        keep(engine, link, learned).await?;
    }
    Ok(warehouse)
}

/// Records what the warehouse showed as its adapter's `learned.key`, unless someone set one
/// or changed where it connects meanwhile; later sessions that show another value fail until
/// an admin clears or sets it.
async fn keep(engine: &Engine, link: &Link, learned: Learned) -> Result<(), StepError> {
    let warehouse_id = link.warehouse_id;
    let guard = link.warehouse_adapter.get(learned.unless_changed).and_then(serde_json::Value::as_str);
    let guard = guard.unwrap_or_default().to_string();
    let (key, what) = (format!("$.{}", learned.key), learned.what);
    let guard_key = format!("$.{}", learned.unless_changed);
    let kept = engine
        .db(move |conn| {
            conn.execute(
                "UPDATE warehouses SET adapter = json_set(adapter, ?2, ?3) \
                 WHERE id = ?1 AND json_extract(adapter, ?2) IS NULL \
                   AND json_extract(ob_open(adapter), ?5) = ?4",
                rusqlite::params![warehouse_id, key, learned.value, guard, guard_key],
            )
            .map(|changed| (changed > 0).then_some(learned.value))
            .map_err(StepError::from)
        })
        .await?;
    if let Some(value) = kept {
        crate::logging::notice(format_args!("warehouse {warehouse_id}: pinned {what} {value}"));
    }
    Ok(())
}
