//! A ShipBob warehouse as the engine's [`WarehouseClient`] for one pass: orders created five at
//! a time on the token's channel, shipments walked page by page from the warehouse's cursor,
//! stock summed per SKU over every page of inventory levels, cancellations.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use futures::StreamExt;
use reqwest::Method;
use serde::{Deserialize, Serialize};

use super::NAME;
use super::orders::{self, Shaping};
use super::shipments;
use super::transport::{self, Api, MAX_PAGES};
use super::wire::{InventoryPage, Order};
use crate::dates::now_ms;
use crate::platforms::retry::MAX_IN_FLIGHT;
use crate::platforms::warehouse::{
    Cancelled, Delivery, Fed, HeldOrder, Inbound, Inbox, LevelsPerSku, LineRead, OrderStream, OutgoingOrder,
    SentOrder, Since, StockRow, Strangers, WalkPlace, WarehouseClient, WarehouseSettings,
};
use crate::platforms::{Adapter, PlatformError};

/// Orders one send claims: a crash repeats at most these creates (each found by its lookup).
const ORDERS_PER_SEND: usize = 250;

/// Orders per page of the shipments walk (Get Orders' `Limit`, at most 250).
const PAGE: usize = 250;

/// How far before its cursor a walk starts again (annex §7.1).
const OVERLAP_MS: i64 = 10 * 60 * 1000;

pub struct Client {
    api: Api,
    shaping: Shaping,
    /// The adapter's `channel_id`, or the one found and kept for the warehouse.
    channel: Option<i32>,
    /// What the channel kept in memory is keyed by: the warehouse and its token's account.
    channel_key: (i64, String),
    kept: Channels,
    walk: Option<Walk>,
    stock: Option<Vec<StockRow>>,
}

/// A shipments walk under way. What the next page needs is kept in the database when the
/// walk stops at [`MAX_PAGES`] pages in a pass (annex §4), for the next pass to go on from.
#[derive(Serialize, Deserialize)]
struct Walk {
    /// A 16-bit mark of the token's account: a walk of another token is not resumed (so few
    /// bits that the database holds nothing to test a guessed token against).
    account: u16,
    /// `LastTrackingUpdateStartDate`, fixed for the walk.
    from: String,
    /// The next page to read.
    page: usize,
    /// orderbridge's clock when the walk began: the cursor never moves past it.
    started: i64,
    /// The latest tracking update read so far.
    latest: Option<i64>,
    /// Pages read in this pass.
    #[serde(skip)]
    read: usize,
    #[serde(skip)]
    done: bool,
    /// Whether a walk was kept for the warehouse when the inbox opened (to forget at the end).
    #[serde(skip)]
    kept: bool,
}

/// The channel found for each warehouse and token (annex §5.2: asked once per process and
/// adapter), kept in the engine's memory across passes.
#[derive(Clone, Default)]
struct Channels(Arc<Mutex<HashMap<(i64, String), i32>>>);

impl Client {
    pub fn new(adapter: &Adapter, settings: &WarehouseSettings) -> Result<Client, PlatformError> {
        let api = Api::new(&settings.platforms, adapter, Some(settings.policy))?;
        let channel =
            adapter.get("channel_id").and_then(super::channel_id).and_then(|id| i32::try_from(id).ok());
        let channel_key = (settings.warehouse_id, api.account.clone());
        let kept = settings.memory.kept();
        Ok(Client { api, shaping: Shaping::of(adapter), channel, channel_key, kept, walk: None, stock: None })
    }

    /// The channel orders go through: the adapter's, else the token's own, found once.
    async fn channel(&mut self) -> Result<i32, PlatformError> {
        if let Some(channel) = self.channel {
            return Ok(channel);
        }
        let kept = self.kept.0.lock().ok().and_then(|c| c.get(&self.channel_key).copied());
        let channel = match kept {
            Some(channel) => channel,
            None => {
                let found = transport::own_channel(&self.api.channels(false).await?).ok_or_else(|| {
                    PlatformError::Refused("this token has no channel with orders_write.".into())
                })?;
                if let Ok(mut kept) = self.kept.0.lock() {
                    kept.insert(self.channel_key.clone(), found);
                }
                found
            }
        };
        self.channel = Some(channel);
        Ok(channel)
    }

    /// The next page of the walk, as lines. After [`MAX_PAGES`] pages in a pass the walk stops
    /// without an error, its place kept with its last page; a walk read whole is forgotten.
    async fn walk_page(&mut self) -> Result<Option<Inbound<LineRead>>, PlatformError> {
        let channel = self.channel().await?;
        let Some(walk) = self.walk.as_mut().filter(|w| !w.done && w.read < MAX_PAGES) else {
            return Ok(None);
        };
        let target = format!(
            "{}?LastTrackingUpdateStartDate={}&SortOrder=Oldest&Limit={PAGE}&Page={}",
            Api::path("order"),
            walk.from,
            walk.page
        );
        let answer = self.api.send(Method::GET, &target, Some(channel), None).await?;
        let orders: Vec<Order> = self.api.read(&answer, &target)?;
        let (rows, latest) = shipments::lines(&orders, &self.shaping)
            .map_err(|why| PlatformError::BadData(format!("{NAME}'s order list cannot be read: {why}.")))?;
        walk.latest = walk.latest.max(latest);
        let name = format!("order list, page {}", walk.page);
        walk.page += 1;
        walk.read += 1;
        walk.done = orders.len() < PAGE;
        // The cursor moves once the walk is whole, never past its start.
        let (cursor, place) = if walk.done {
            let ended = if walk.kept { WalkPlace::Ended } else { WalkPlace::Unchanged };
            (walk.latest.map(|l| l.min(walk.started)), ended)
        } else if walk.read >= MAX_PAGES {
            log::info!("sync: {NAME}'s order list goes on past {MAX_PAGES} pages; the next pass reads on");
            let place = serde_json::to_string(&*walk)
                .map_err(|e| PlatformError::BadData(format!("{NAME}'s walk cannot be kept: {e}.")))?;
            (None, WalkPlace::Stopped(place))
        } else {
            (None, WalkPlace::Unchanged)
        };
        Ok(Some(Inbound {
            name,
            records: Ok(rows.into_iter().map(Ok).collect()),
            cursor,
            walk: place,
            strangers: Strangers::Skip,
            reports: Default::default(),
        }))
    }

    /// Every page of inventory levels: fulfillable units per SKU, summed (annex §8).
    async fn levels(&self) -> Result<Vec<StockRow>, PlatformError> {
        let path = Api::path("inventory-level");
        let mut target = format!("{path}?PageSize=250");
        let mut per_sku = LevelsPerSku::default();
        for _ in 0..MAX_PAGES {
            let answer = self.api.send(Method::GET, &target, None, None).await?;
            let page: InventoryPage = self.api.read(&answer, &target)?;
            for level in page.items.unwrap_or_default() {
                let Some(sku) = level.sku.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) else {
                    continue;
                };
                let units = i64::from(level.total_fulfillable_quantity.unwrap_or_default().max(0));
                per_sku.add(&sku, units);
            }
            match page.next.filter(|n| !n.is_empty()) {
                Some(next) => target = self.api.follow(&next, &path)?,
                None => return Ok(per_sku.into_rows()),
            }
        }
        Err(PlatformError::BadData(format!("{NAME}'s inventory levels went on past {MAX_PAGES} pages.")))
    }
}

/// One order's create, owning the order so the sends of a batch can run side by side.
fn create<'a>(
    api: &'a Api,
    channel: i32,
    order: OutgoingOrder,
    shaping: &'a Shaping,
) -> futures::future::BoxFuture<'a, (i64, Result<SentOrder, PlatformError>)> {
    Box::pin(async move { (order.order_id, orders::send(api, channel, &order, shaping).await) })
}

/// A 16-bit mark of an account name (itself a fingerprint of the token).
fn mark(account: &str) -> u16 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    account.hash(&mut hasher);
    (hasher.finish() & 0xffff) as u16
}

#[async_trait]
impl WarehouseClient for Client {
    fn orders_per_send(&self) -> Option<usize> {
        Some(ORDERS_PER_SEND)
    }

    /// Creates the orders as they come, five at a time; a failure of the step (the token
    /// refused, no verdict) stops taking more, and the orders answered for are kept.
    async fn send_orders(&mut self, mut orders: OrderStream) -> Delivery {
        let channel = match self.channel().await {
            Ok(channel) => channel,
            Err(e) => return Delivery { orders: Vec::new(), failure: Some(e) },
        };
        let mut delivery = Delivery::default();
        while let Fed::Orders(batch) = orders.next().await {
            let (api, shaping) = (&self.api, &self.shaping);
            let sends = batch.into_iter().map(|order| create(api, channel, order, shaping));
            let answers: Vec<_> =
                futures::stream::iter(sends).buffer_unordered(MAX_IN_FLIGHT).collect().await;
            for (order_id, answer) in answers {
                match answer {
                    Ok(sent) => delivery.orders.push((order_id, sent)),
                    Err(e) => {
                        delivery.failure.get_or_insert(e);
                    }
                }
            }
            if delivery.failure.is_some() {
                break;
            }
        }
        delivery
    }

    async fn cancel(&mut self, order: &HeldOrder) -> Result<Cancelled, PlatformError> {
        let channel = self.channel().await?;
        orders::cancel(&self.api, channel, order).await
    }

    async fn find(&mut self, order_id: i64) -> Result<Option<String>, PlatformError> {
        let channel = self.channel().await?;
        let reference = self.shaping.references.of(order_id);
        Ok(orders::lookup(&self.api, channel, &reference).await?.map(|id| id.to_string()))
    }

    async fn open_inbox(&mut self, inbox: Inbox, since: Since) -> Result<(), PlatformError> {
        match inbox {
            Inbox::Shipments => {
                let kept = since.walk.is_some();
                // A walk an earlier pass stopped goes on from its next page, if it is this token's.
                let resumed = since
                    .walk
                    .as_deref()
                    .and_then(|text| serde_json::from_str::<Walk>(text).ok())
                    .filter(|w| w.account == mark(&self.api.account) && w.page >= 1);
                let from = since.cursor.unwrap_or(since.created_at).saturating_sub(OVERLAP_MS);
                let fresh = || Walk {
                    account: mark(&self.api.account),
                    from: orders::whole_seconds(from),
                    page: 1,
                    started: now_ms(),
                    latest: None,
                    read: 0,
                    done: false,
                    kept: false,
                };
                self.walk = Some(Walk { kept, ..resumed.unwrap_or_else(fresh) });
            }
            Inbox::Stock => self.stock = Some(self.levels().await?),
        }
        Ok(())
    }

    async fn next_shipments(&mut self) -> Result<Option<Inbound<LineRead>>, PlatformError> {
        self.walk_page().await
    }

    async fn next_stock(&mut self) -> Result<Option<Inbound<StockRow>>, PlatformError> {
        Ok(self.stock.take().map(Inbound::levels))
    }
}
