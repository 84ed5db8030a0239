//! Stock levels a store took to apply later (CONTRACT §11 with the Amazon annex: a
//! `JSON_LISTINGS_FEED` feed). The receipt is kept with the store in the transaction that
//! records its levels as sent; each stock step first asks what became of the receipts still
//! outstanding. A level the store then refused is one of the run's problems and goes again at
//! the next pass (its record as sent is dropped); a receipt the store did not process at all
//! sends all its levels again. Either way the stock step fails with the store's sentence.

use rusqlite::{Connection, params};

use crate::platforms::store::{Receipt, StoreClient};

use super::context::Context;
use super::problems::ProblemKind;
use super::runs::Step;
use super::step::{StepError, note};

/// Outstanding receipts asked in one step at most; the rest wait for the next.
const MAX_ASKED: i64 = 100;

/// Asks the store what became of its outstanding receipts and settles those it answered;
/// returns the sentence the stock step fails with, if a receipt's levels were refused.
pub(super) async fn settle(ctx: &Context<'_>, store: &dyn StoreClient) -> Result<Option<String>, StepError> {
    let (store_id, run_id) = (ctx.link.store_id, ctx.run_id);
    let outstanding: Vec<String> = ctx
        .sql(move |conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT receipt FROM store_receipts WHERE store_id = ?1 ORDER BY sent_at, receipt LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![store_id, MAX_ASKED], |r| r.get(0))?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
        })
        .await?;
    if outstanding.is_empty() {
        return Ok(None);
    }
    let answers = store.read_receipts(&outstanding).await?;
    let mut failure = None;
    for (receipt, answer) in answers {
        let message = match &answer {
            Receipt::Pending => continue,
            Receipt::Applied => None,
            Receipt::Refused { message, .. } | Receipt::Failed(message) => Some(message.clone()),
        };
        ctx.sql(move |conn| settle_one(conn, run_id, store_id, &receipt, &answer)).await?;
        failure = failure.or(message);
    }
    Ok(failure)
}

/// Settles one receipt in one transaction.
fn settle_one(
    conn: &mut Connection,
    run_id: i64,
    store_id: i64,
    receipt: &str,
    answer: &Receipt,
) -> rusqlite::Result<()> {
    let tx = crate::db::write(conn)?;
    let row: Option<(i64, String)> = {
        use rusqlite::OptionalExtension;
        tx.prepare_cached(
            "SELECT connection_id, skus FROM store_receipts WHERE store_id = ?1 AND receipt = ?2",
        )?
        .query_row(params![store_id, receipt], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?
    };
    let Some((connection_id, skus)) = row else { return Ok(()) };
    let resend: Vec<String> = match answer {
        Receipt::Pending | Receipt::Applied => Vec::new(),
        Receipt::Refused { levels, .. } => {
            for (sku, why) in levels {
                note(&tx, run_id, Step::Stock, ProblemKind::Sku, sku, why)?;
            }
            levels.iter().map(|(sku, _)| sku.clone()).collect()
        }
        Receipt::Failed(_) => serde_json::from_str(&skus).unwrap_or_default(),
    };
    let mut forget = tx.prepare_cached("DELETE FROM stock_sent WHERE connection_id = ?1 AND sku = ?2")?;
    for sku in &resend {
        forget.execute(params![connection_id, sku])?;
    }
    drop(forget);
    tx.prepare_cached("DELETE FROM store_receipts WHERE store_id = ?1 AND receipt = ?2")?
        .execute(params![store_id, receipt])?;
    tx.commit()
}

/// Keeps receipts the store handed out for `levels` of the connection (in the transaction
/// that records them as sent).
pub(super) fn keep(
    conn: &Connection,
    store_id: i64,
    connection_id: i64,
    receipts: &[String],
    levels: &[(String, i64)],
    now: i64,
) -> rusqlite::Result<()> {
    if receipts.is_empty() {
        return Ok(());
    }
    let skus: Vec<&str> = levels.iter().map(|(sku, _)| sku.as_str()).collect();
    let skus = serde_json::to_string(&skus).unwrap_or_else(|_| "[]".into());
    let mut insert = conn.prepare_cached(
        "INSERT INTO store_receipts (store_id, receipt, connection_id, skus, sent_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (store_id, receipt) DO NOTHING",
    )?;
    for receipt in receipts {
        insert.execute(params![store_id, receipt, connection_id, skus, now])?;
    }
    Ok(())
}
