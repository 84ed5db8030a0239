//! A file warehouse as the engine's [`WarehouseClient`]: a send is one order file, an inbox
//! is its settled files handed out one at a time, each moved once the engine has taken it.

use async_trait::async_trait;

use super::Warehouse;
use super::format::FileRead;
use super::warehouse::{Incoming, Sent};
use crate::platforms::PlatformError;
use crate::platforms::warehouse::{
    Delivery, Inbound, Inbox, Learned, LineRead, OrderStream, SentOrder, Since, StockRow, Strangers, Taken,
    WalkPlace, WarehouseClient,
};

impl Warehouse {
    /// A file as the piece handed out now: the one `taken` moves next. A file's lines that name
    /// an unknown order refuse the whole file (a person fixes it and puts it back).
    fn hand_out<T>(&mut self, file: Incoming, read: FileRead<T>) -> Inbound<T> {
        let name = file.name().to_string();
        self.current = Some(file);
        self.ack = read.ack;
        Inbound {
            name,
            records: read.records,
            cursor: None,
            walk: WalkPlace::Unchanged,
            strangers: Strangers::RefuseThePiece,
            reports: read.reports,
        }
    }
}

#[async_trait]
impl WarehouseClient for Warehouse {
    /// Every waiting order goes into the step's one file.
    fn orders_per_send(&self) -> Option<usize> {
        None
    }

    async fn connect(&mut self) -> Result<Option<Learned>, PlatformError> {
        Ok(self.open_session().await?.map(|fingerprint| Learned {
            key: "host_key",
            value: fingerprint,
            unless_changed: "connection_string",
            what: "the SFTP server's host key",
        }))
    }

    async fn send_orders(&mut self, orders: OrderStream) -> Delivery {
        match self.write_orders(orders).await {
            Ok(Sent::Delivered { ids, refused }) => Delivery {
                orders: ids
                    .into_iter()
                    .map(|id| (id, SentOrder::Accepted { warehouse_order_id: None }))
                    .chain(refused.into_iter().map(|(id, why)| (id, SentOrder::Refused(why))))
                    .collect(),
                failure: None,
            },
            // The producer stopped, and says why itself.
            Ok(Sent::Abandoned) => Delivery {
                orders: Vec::new(),
                failure: Some(PlatformError::unreachable(
                    "The order file was not finished; it is sent again in the next pass.",
                )),
            },
            Err(e) => Delivery { orders: Vec::new(), failure: Some(e) },
        }
    }

    /// The settled files of `inbox`, in name order; a file warehouse keeps no cursor.
    async fn open_inbox(&mut self, inbox: Inbox, _since: Since) -> Result<(), PlatformError> {
        self.current = None;
        self.queue = self.waiting(inbox).await?.into();
        Ok(())
    }

    async fn next_shipments(&mut self) -> Result<Option<Inbound<LineRead>>, PlatformError> {
        let Some(file) = self.queue.pop_front() else { return Ok(None) };
        let records = self.read_shipments(&file).await?;
        Ok(Some(self.hand_out(file, records)))
    }

    async fn next_stock(&mut self) -> Result<Option<Inbound<StockRow>>, PlatformError> {
        let Some(file) = self.queue.pop_front() else { return Ok(None) };
        let records = self.read_stock(&file).await?;
        Ok(Some(self.hand_out(file, records)))
    }

    /// Answers the file handed out last with its 997 (X12), then moves it to `processed/`, or
    /// to `failed/` beside its bad lines.
    async fn taken(&mut self, outcome: Taken<'_>) -> Result<(), PlatformError> {
        let Some(file) = self.current.take() else { return Ok(()) };
        self.acknowledge().await?;
        match outcome {
            Taken::Imported => self.processed(&file).await,
            Taken::Refused(bad) => self.failed(&file, bad).await,
        }
    }

    fn failed_place(&self, inbox: Inbox) -> String {
        self.failed_folder(inbox)
    }

    fn refusal_fails_the_step(&self) -> bool {
        Warehouse::refusal_fails_the_step(self)
    }

    async fn close(&mut self) {
        self.end_session().await;
    }
}
