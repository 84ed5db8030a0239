//! One pass of one connection: the steps of its enabled channels, in CONTRACT §11's order,
//! each skipped when it has nothing to do. A failed step ends the pass; what earlier steps
//! did stays done.

use crate::platforms::store::StoreClient;
use crate::platforms::warehouse::{Learned, WarehouseClient};

use super::context::{Context, Shared, Tools};
use super::link::{self, Link};
use super::runs::{self, Failure, Outcome, RunCounts, Step};
use super::step::StepError;
use super::{notify, orders_in, orders_out, shipments_in, sides, stock};

/// Runs a pass of the connection as it is now, recorded as run `run_id`, with what the engine
/// lends it.
pub async fn run(tools: Tools<'_>, connection_id: i64, run_id: i64) -> Outcome {
    let mut counts = RunCounts::default();
    let pass = Pass { tools, run_id, connection_id };
    let failure = steps(&pass, &mut counts).await.err();
    Outcome { counts, failure }
}

/// A pass under way: what the engine lends it and the run that records it.
struct Pass<'a> {
    tools: Tools<'a>,
    run_id: i64,
    connection_id: i64,
}

impl Pass<'_> {
    /// Notes in the run which step the pass is in now.
    async fn enter(&self, step: Step) -> Result<(), Failure> {
        let run_id = self.run_id;
        self.tools
            .sql(move |conn| runs::enter(conn, run_id, step))
            .await
            .map_err(|e| StepError::Db(e).into_failure(step, self.connection_id))
    }
}

async fn steps(pass: &Pass<'_>, counts: &mut RunCounts) -> Result<(), Failure> {
    let connection_id = pass.connection_id;
    let fail = |step: Step| move |e: StepError| e.into_failure(step, connection_id);
    let link = pass
        .tools
        .sql(move |conn| Link::load(conn, connection_id, None))
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
    let ctx = Context::new(pass.tools, &link, pass.run_id);
    let first_step = if sales { Step::PullOrders } else { Step::Stock };
    let store = sides::store_for(&ctx).map_err(|e| fail(first_step)(e.into()))?;
    let mut warehouse = sides::warehouse_for(&ctx).map_err(|e| fail(first_step)(e.into()))?;

    if sales {
        pass.enter(Step::PullOrders).await?;
        orders_in::pull(&ctx, store.as_ref(), &mut counts.orders_pulled)
            .await
            .map_err(fail(Step::PullOrders))?;
    }
    // The warehouse is opened once, when a step first needs it; the passes of other
    // connections to the same warehouse wait for this one's warehouse steps to end.
    let _warehouse = ctx.hold(Shared::Warehouse, link.warehouse_id).await;
    let result = warehouse_steps(pass, &ctx, store.as_ref(), warehouse.as_mut(), counts).await;
    warehouse.close().await;
    result
}

async fn warehouse_steps(
    pass: &Pass<'_>,
    ctx: &Context<'_>,
    store: &dyn StoreClient,
    warehouse: &mut dyn WarehouseClient,
    counts: &mut RunCounts,
) -> Result<(), Failure> {
    let link = ctx.link;
    let fail = |step: Step| move |e: StepError| e.into_failure(step, link.id);
    if link.sales_syncs() {
        if orders_out::has_work(ctx).await.map_err(fail(Step::SendOrders))? {
            pass.enter(Step::SendOrders).await?;
            let warehouse = open(ctx, warehouse).await.map_err(fail(Step::SendOrders))?;
            counts.orders_sent = orders_out::send(ctx, warehouse).await.map_err(fail(Step::SendOrders))?;
        }
        pass.enter(Step::PullShipments).await?;
        let warehouse = open(ctx, warehouse).await.map_err(fail(Step::PullShipments))?;
        shipments_in::pull(ctx, warehouse, &mut counts.shipments_pulled)
            .await
            .map_err(fail(Step::PullShipments))?;
        pass.enter(Step::Notify).await?;
        notify::notify(ctx, store, &mut counts.shipments_notified).await.map_err(fail(Step::Notify))?;
    }
    if link.inventory_syncs() {
        pass.enter(Step::Stock).await?;
        let warehouse = open(ctx, warehouse).await.map_err(fail(Step::Stock))?;
        stock::sync(ctx, (store, warehouse), &mut counts.stock_levels_sent)
            .await
            .map_err(fail(Step::Stock))?;
    }
    Ok(())
}
/// The warehouse, opened once a step first needs it; what it showed that its adapter keeps
/// (an SFTP server's host key at the pass's first session) is recorded.
async fn open<'a>(
    ctx: &Context<'_>,
    warehouse: &'a mut dyn WarehouseClient,
) -> Result<&'a mut dyn WarehouseClient, StepError> {
    if let Some(learned) = warehouse.connect().await? {
        keep(ctx, learned).await?;
    }
    Ok(warehouse)
}

/// Records what the warehouse showed as its adapter's `learned.key`, unless someone set one
/// or changed where it connects meanwhile; later sessions that show another value fail until
/// an admin clears or sets it.
async fn keep(ctx: &Context<'_>, learned: Learned) -> Result<(), StepError> {
    let warehouse_id = ctx.link.warehouse_id;
    let guard = ctx.link.warehouse_adapter.get(learned.unless_changed).and_then(serde_json::Value::as_str);
    let guard = guard.unwrap_or_default().to_string();
    let what = learned.what;
    let kept = ctx
        .sql(move |conn| {
            let kept = link::keep_learned(conn, warehouse_id, &learned, &guard)?;
            Ok(kept.then_some(learned.value))
        })
        .await?;
    if let Some(value) = kept {
        crate::logging::notice(format_args!("warehouse {warehouse_id}: pinned {what} {value}"));
    }
    Ok(())
}
