//! A ShipStation warehouse as the engine's [`WarehouseClient`] for one pass: orders created in
//! batches of 50 (with the ship-from address of the adapter's warehouse, read once), labels
//! walked by creation time from the warehouse's cursor, available stock summed per SKU over
//! every page of the Inventory API, cancellations.

use async_trait::async_trait;
use reqwest::{Method, StatusCode};
use serde_json::Value;

use super::NAME;
use super::labels;
use super::orders::{self, BATCH, Prepared, Shaping};
use super::transport::{Api, INVENTORY, MAX_PAGES};

/// Label pages one walk reads at most (a million labels); the next pass reads on from the
/// cursor its pages committed.
const MAX_LABEL_PAGES: usize = 10_000;
use super::wire::{Inventory, Labels, Warehouse};
use crate::dates::{format_ms, now_ms};
use crate::platforms::warehouse::{
    Cancelled, Delivery, Fed, HeldOrder, Inbound, Inbox, LevelsPerSku, LineRead, OrderStream, SentOrder,
    Since, StockRow, Strangers, WalkPlace, WarehouseClient, WarehouseSettings,
};
use crate::platforms::{Adapter, PlatformError, http};

/// Labels per page of the walk (`page_size`; the file names no maximum, annex §10.4).
const PAGE: usize = 100;

/// How far before its cursor a walk starts again (annex §5.5).
const OVERLAP_MS: i64 = 5 * 60 * 1000;

pub struct Client {
    api: Api,
    shaping: Shaping,
    inventory_warehouse: Option<String>,
    /// The adapter's warehouse's `origin_address`, read once per pass that sends orders.
    ship_from: Option<Value>,
    walk: Option<Walk>,
    stock: Option<Vec<StockRow>>,
}

/// A labels walk under way.
struct Walk {
    /// `created_at_start` of the next request, and its `page`.
    from: i64,
    page: usize,
    requests: usize,
    started: i64,
    latest: Option<i64>,
    held: Option<i64>,
    done: bool,
}

impl Client {
    pub fn new(adapter: &Adapter, settings: &WarehouseSettings) -> Result<Client, PlatformError> {
        let api = Api::new(&settings.platforms, adapter, Some(settings.policy))?;
        let inventory_warehouse =
            adapter.get("inventory_warehouse_id").and_then(Value::as_str).map(str::to_string);
        Ok(Client {
            api,
            shaping: Shaping::of(adapter),
            inventory_warehouse,
            ship_from: None,
            walk: None,
            stock: None,
        })
    }

    /// The adapter's warehouse's `origin_address`, if it names one.
    async fn ship_from(&mut self) -> Result<Option<Value>, PlatformError> {
        let Some(id) = self.shaping.warehouse_id.clone() else { return Ok(None) };
        if self.ship_from.is_none() {
            let target = format!("/v2/warehouses/{id}");
            let answer = self.api.send(Method::GET, &target).await?;
            if answer.status == StatusCode::NOT_FOUND {
                return Err(PlatformError::Refused(format!(
                    "{NAME} has no warehouse {id} for this API key."
                )));
            }
            let warehouse: Warehouse = self.api.read(&answer, &Method::GET, &target)?;
            let address = warehouse.origin_address.filter(Value::is_object).ok_or_else(|| {
                PlatformError::BadData(format!("{NAME}'s warehouse {id} has no origin_address."))
            })?;
            self.ship_from = Some(address);
        }
        Ok(self.ship_from.clone())
    }

    /// The next page of the walk, as lines.
    async fn walk_page(&mut self) -> Result<Option<Inbound<LineRead>>, PlatformError> {
        let Some(walk) = self.walk.as_mut().filter(|w| !w.done) else { return Ok(None) };
        if walk.requests >= MAX_LABEL_PAGES {
            // Each page committed its cursor: the next pass goes on from there.
            log::info!(
                "sync: {NAME}'s label list went on past {MAX_LABEL_PAGES} pages; the next pass reads on"
            );
            walk.done = true;
            return Ok(None);
        }
        let target = format!(
            "/v2/labels?created_at_start={}&sort_by=created_at&sort_dir=asc&page_size={PAGE}&page={}",
            format_ms(walk.from),
            walk.page
        );
        let answer = self.api.send(Method::GET, &target).await?;
        let list: Labels = self.api.read(&answer, &Method::GET, &target)?;
        let page = labels::page(&list.labels, &self.shaping)
            .map_err(|why| PlatformError::BadData(format!("{NAME}'s label list cannot be read: {why}.")))?;
        walk.requests += 1;
        walk.latest = walk.latest.max(page.latest);
        walk.held = match (walk.held, page.held) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let name = format!("label list from {}, page {}", format_ms(walk.from), walk.page);
        walk.done = list.labels.len() < PAGE;
        if !walk.done {
            // By key: the next page starts at the last label read, unless that is where this
            // one started (a full page of one millisecond).
            match page.last {
                Some(last) if last != walk.from => {
                    walk.from = last;
                    walk.page = 1;
                }
                _ => walk.page += 1,
            }
        }
        // The cursor moves with each page (annex §5.5: the labels come oldest first), to the
        // latest label read, never past a label not yet done nor past the walk's start.
        let read = match (walk.latest, walk.held) {
            (Some(latest), Some(held)) => Some(latest.min(held)),
            (latest, held) => latest.or(held),
        };
        let cursor = read.map(|r| r.min(walk.started));
        Ok(Some(Inbound {
            name,
            records: Ok(page.rows.into_iter().map(Ok).collect()),
            cursor,
            walk: WalkPlace::Unchanged,
            strangers: Strangers::Skip,
            reports: Default::default(),
        }))
    }

    /// Every page of inventory levels: available units per SKU, summed (annex §5.6).
    async fn levels(&self) -> Result<Vec<StockRow>, PlatformError> {
        let mut target = format!("{INVENTORY}?group_by=warehouse&limit=100");
        if let Some(id) = &self.inventory_warehouse {
            let id = percent_encoding::utf8_percent_encode(id, percent_encoding::NON_ALPHANUMERIC);
            target.push_str(&format!("&inventory_warehouse_id={id}"));
        }
        let mut per_sku = LevelsPerSku::default();
        for _ in 0..MAX_PAGES {
            let answer = self.api.send(Method::GET, &target).await?;
            if (402..=404).contains(&answer.status.as_u16()) {
                let said = self.api.reason(&answer.body, false);
                return Err(PlatformError::Refused(format!(
                    "{NAME} refused GET {INVENTORY} (HTTP {}: {}): the Inventory API is a paid add-on that this \
                     {NAME} account does not have; add it in {NAME}, or switch off the inventory channel of this \
                     connection.",
                    answer.status.as_u16(),
                    if said.is_empty() { "no reason given" } else { &said }
                )));
            }
            let page: Inventory = self.api.read(&answer, &Method::GET, &target)?;
            for (at, row) in page.inventory.iter().enumerate() {
                let sku = row.get("sku").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
                let available = row.get("available").and_then(Value::as_i64);
                let (Some(sku), Some(available)) = (sku, available) else {
                    return Err(PlatformError::BadData(format!(
                        "{NAME}'s inventory row {} of page {} has no sku or no whole available count.",
                        at + 1,
                        page.page.unwrap_or(1)
                    )));
                };
                per_sku.add(sku, available);
            }
            let next = page.links.and_then(|l| l.next).and_then(|n| n.href).filter(|h| !h.is_empty());
            let last = matches!((page.page, page.pages), (Some(p), Some(all)) if p >= all);
            match next {
                Some(href) if !last => target = http::follow(NAME, &self.api.base, &href, INVENTORY)?,
                _ => return Ok(per_sku.into_rows()),
            }
        }
        Err(PlatformError::BadData(format!("{NAME}'s inventory went on past {MAX_PAGES} pages.")))
    }
}

#[async_trait]
impl WarehouseClient for Client {
    fn orders_per_send(&self) -> Option<usize> {
        Some(BATCH)
    }

    /// Creates the orders in batches of 50; an order orderbridge itself cannot send is
    /// refused without a request; a failure of the step stops taking more.
    async fn send_orders(&mut self, mut orders: OrderStream) -> Delivery {
        let mut delivery = Delivery::default();
        let mut waiting: Vec<crate::platforms::warehouse::OutgoingOrder> = Vec::new();
        let mut end = false;
        while !end {
            match orders.next().await {
                Fed::Orders(batch) => waiting.extend(batch),
                Fed::End | Fed::Stopped => end = true,
            }
            if waiting.len() < BATCH && !end {
                continue;
            }
            if waiting.is_empty() {
                break;
            }
            let ship_from = match self.ship_from().await {
                Ok(from) => from,
                Err(e) => {
                    delivery.failure = Some(e);
                    break;
                }
            };
            let mut prepared = Vec::new();
            for order in waiting.drain(..) {
                match orders::body(&order, &self.shaping, ship_from.as_ref()) {
                    Ok(body) => prepared.push(Prepared {
                        order_id: order.order_id,
                        reference: self.shaping.references.of(order.order_id),
                        body,
                        in_doubt: order.in_doubt,
                    }),
                    Err(why) => delivery.orders.push((order.order_id, SentOrder::Refused(why))),
                }
            }
            let outcome = orders::send(&self.api, prepared).await;
            delivery.orders.extend(outcome.orders);
            if let Some(e) = outcome.failure {
                delivery.failure = Some(e);
                break;
            }
        }
        delivery
    }

    async fn cancel(&mut self, order: &HeldOrder) -> Result<Cancelled, PlatformError> {
        orders::cancel(&self.api, order).await
    }

    async fn find(&mut self, order_id: i64) -> Result<Option<String>, PlatformError> {
        orders::lookup(&self.api, &self.shaping.references.of(order_id)).await
    }

    async fn open_inbox(&mut self, inbox: Inbox, since: Since) -> Result<(), PlatformError> {
        match inbox {
            Inbox::Shipments => {
                let from = since.cursor.unwrap_or(since.created_at).saturating_sub(OVERLAP_MS);
                self.walk = Some(Walk {
                    from,
                    page: 1,
                    requests: 0,
                    started: now_ms(),
                    latest: None,
                    held: None,
                    done: false,
                });
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
