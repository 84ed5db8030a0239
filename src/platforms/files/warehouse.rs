//! A file warehouse as a sync pass drives it (CONTRACT §11, "File warehouses"): an order file
//! written under a hidden name and renamed into view once complete; the shipment and stock
//! files waiting to be read, once they have stopped changing; each read into records, then
//! moved to `processed/`, or to `failed/` beside a report of its bad lines. The engine keeps
//! the database work, the states and the counts, and never sees a path or a session.

use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::csv::{BadLine, LineRead, StockRow};
use super::format::{Document, FileRead, Format};
use super::settle::{Look, Sightings, Stamp, is_taken_name};
use super::x12::Ack;
use super::{Facts, FileSession, Kind, Location, join, open};
use crate::platforms::PlatformError;
use crate::platforms::reach::Reach;
use crate::platforms::warehouse::{Documents, Fed, Inbox, OrderStream, OutgoingOrder};

/// What a pass's warehouse needs from the configuration and the engine.
#[derive(Clone)]
pub struct FileSettings {
    /// The longest wait for one answer.
    pub timeout: Duration,
    /// How long a file must look unchanged before it is read (`file_settle_secs`).
    pub settle: Duration,
    /// What earlier looks saw, across passes.
    pub sightings: Sightings,
    /// Where the warehouse's server may be (CONTRACT §6): the row's, for a pass.
    pub reach: Reach,
    /// The largest file (or FTP listing) read (`max_warehouse_file_mib`); past it, `BadData`.
    pub max_file_bytes: usize,
    /// The warehouse's document numbers (X12 control numbers), kept in the database.
    pub documents: std::sync::Arc<dyn Documents>,
    /// The connection whose pass this is (an X12 997 is named after it).
    pub connection_id: i64,
}

/// The adapter keys naming the warehouse's folders, in the order validation compares them,
/// with the folder each names when not given (CONTRACT §11).
pub(super) const FOLDER_KEYS: [(&str, &str); 3] =
    [("orders_dir", "orders"), ("shipments_dir", "shipments"), ("inventory_dir", "inventory")];

/// The folder an adapter key names as the warehouse uses it: `default` when not given,
/// empty and `.` segments dropped (so `/out/./` is `out`), empty meaning the root.
pub(super) fn folder(given: Option<&str>, default: &str) -> String {
    let parts: Vec<&str> =
        given.unwrap_or(default).split('/').filter(|part| !part.is_empty() && *part != ".").collect();
    parts.join("/")
}

/// The folders the warehouse's adapter names, relative to its root (empty: the root).
struct Folders {
    orders: String,
    shipments: String,
    inventory: String,
}

impl Folders {
    fn of(adapter: &Map<String, Value>) -> Folders {
        let [orders, shipments, inventory] =
            FOLDER_KEYS.map(|(key, default)| folder(adapter.get(key).and_then(Value::as_str), default));
        Folders { orders, shipments, inventory }
    }

    fn inbox(&self, inbox: Inbox) -> &str {
        match inbox {
            Inbox::Shipments => &self.shipments,
            Inbox::Stock => &self.inventory,
        }
    }
}

/// A file waiting in an inbox, settled when it was listed.
#[derive(Debug, Clone)]
pub struct Incoming {
    inbox: Inbox,
    name: String,
}

impl Incoming {
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// How an order file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sent {
    /// Complete and renamed into view (or not written, when no order could be), with the ids
    /// of the orders it holds and those its format cannot write, each with why.
    Delivered { ids: Vec<i64>, refused: Vec<(i64, String)> },
    /// Its feed stopped before it was finished (the producer failed, and says why):
    /// nothing came into view.
    Abandoned,
}

/// A file warehouse for one pass: where its files are, and the session, opened when first
/// needed. Made by the file warehouse platforms (`WarehousePlatform::warehouse`).
pub struct Warehouse {
    location: Location,
    /// The location without its password: the key of its files' sightings.
    place: String,
    folders: Folders,
    /// What the files say.
    format: std::sync::Arc<Format>,
    settings: FileSettings,
    session: Option<FileSession>,
    /// The host key the pass's first SFTP session showed when the adapter pinned none, until
    /// [`Warehouse::open_session`] hands it out to be recorded.
    unrecorded_key: Option<String>,
    /// The files of the inbox opened last still to hand out, and the one handed out last.
    pub(super) queue: std::collections::VecDeque<Incoming>,
    pub(super) current: Option<Incoming>,
    /// The 997 answering the file handed out last (X12), written when it is taken.
    pub(super) ack: Option<Ack>,
}

/// Bytes handed to the session at a time while an order file is written.
const CHUNK_BYTES: usize = 64 * 1024;

impl Warehouse {
    /// The warehouse of a validated adapter for one pass; an error for an unusable
    /// `connection_string`. Nothing is opened yet.
    pub(super) fn new(
        kind: Kind,
        adapter: &Map<String, Value>,
        settings: &FileSettings,
    ) -> Result<Warehouse, PlatformError> {
        let location = Location::of(kind, adapter)
            .map_err(|problem| {
                PlatformError::Refused(format!("The warehouse's connection_string {problem}."))
            })?
            .reached_under(settings.reach);
        Ok(Warehouse {
            place: location.place(),
            location,
            folders: Folders::of(adapter),
            format: std::sync::Arc::new(Format::of(adapter)),
            settings: settings.clone(),
            session: None,
            unrecorded_key: None,
            queue: Default::default(),
            current: None,
            ack: None,
        })
    }

    /// Opens the session unless one is open. Returns the host key an SFTP server showed at
    /// the pass's first session when the adapter pins none, once, for the caller to record;
    /// any later session of this pass must show the same key.
    pub async fn open_session(&mut self) -> Result<Option<String>, PlatformError> {
        self.session().await?;
        Ok(self.unrecorded_key.take())
    }

    async fn session(&mut self) -> Result<&mut FileSession, PlatformError> {
        if self.session.is_none() {
            let session = open(&self.location, self.settings.timeout).await?;
            if let (Location::Sftp(target), Some(shown)) = (&mut self.location, session.host_key())
                && target.host_key.is_none()
            {
                target.host_key = Some(shown.to_string());
                self.unrecorded_key = Some(shown.to_string());
            }
            self.session = Some(session);
        }
        self.session.as_mut().ok_or_else(|| PlatformError::unreachable("The warehouse session closed."))
    }

    /// Ends the session, if one is open.
    pub async fn end_session(&mut self) {
        if let Some(session) = self.session.take() {
            session.close().await;
        }
    }

    /// Writes the send `orders` is into `orders_dir` as one document in the warehouse's format
    /// (an order file of its layout, or a 940 interchange), from what `orders` delivers as it
    /// comes: under the name with a leading `.` first, renamed once complete, so a reader never
    /// sees half a file. An order the format cannot write is left out and named; when none can
    /// be written, nothing is written (and no X12 control number is used). The same send
    /// written again (after a crash) is the same document under the same name.
    pub async fn write_orders(&mut self, mut orders: OrderStream) -> Result<Sent, PlatformError> {
        let send = orders.send;
        let mut refused = Vec::new();
        // The orders up to the first one the format can write: nothing is named or numbered
        // before there is something to write.
        let mut first = Vec::new();
        let mut ended = false;
        while first.is_empty() && !ended {
            match orders.next().await {
                Fed::Orders(batch) => {
                    for order in batch {
                        match self.format.refusal(&order) {
                            Some(why) => refused.push((order.order_id, why)),
                            None => first.push(order),
                        }
                    }
                }
                Fed::End => ended = true,
                Fed::Stopped => return Ok(Sent::Abandoned),
            }
        }
        if first.is_empty() {
            return Ok(Sent::Delivered { ids: Vec::new(), refused });
        }
        let (name, document) = self.format.begin(send, &*self.settings.documents).await?;
        let dir = self.folders.orders.clone();
        let session = self.session().await?;
        session.make_dir_all(&dir).await?;
        let hidden = join(&dir, &format!(".{name}"));
        let (bytes, chunks) = mpsc::channel(2);
        let feed = Feed { first, rest: (!ended).then_some(orders), refused };
        let (rendered, written) =
            tokio::join!(render_into(document, feed, bytes), session.write_from(&hidden, chunks));
        // The write's own failure first: when it fails, the feed only sees its reader gone.
        written?;
        let Some((ids, refused, parts)) = rendered else {
            // Hidden and replaced when the batch is sent again; removed to leave no litter.
            let _ = session.remove(&hidden).await;
            return Ok(Sent::Abandoned);
        };
        if !parts.is_empty() {
            self.settings.documents.place(send, parts).await?;
        }
        let session = self.session().await?;
        session.rename(&hidden, &join(&dir, &name)).await?;
        Ok(Sent::Delivered { ids, refused })
    }

    /// The files waiting in `inbox` that may be read now, in name order (CONTRACT §11, "Files
    /// still being written"): `*.csv` files whose size and modification time two looks at
    /// least the settle time apart saw unchanged. The others are left for a later pass.
    pub async fn waiting(&mut self, inbox: Inbox) -> Result<Vec<Incoming>, PlatformError> {
        let dir = self.folders.inbox(inbox).to_string();
        let settle = self.settings.settle;
        let mut waited = false;
        loop {
            let seen = self.look(inbox, &dir).await?;
            let now = std::time::Instant::now();
            let names: Vec<String> = seen.iter().map(|(name, _)| name.clone()).collect();
            let sightings = &self.settings.sightings;
            sightings.keep_only(&self.place, &dir, &names);
            let mut settled = Vec::new();
            let mut last_to_settle = None;
            for (name, stamp) in seen {
                match sightings.look(&self.place, &join(&dir, &name), stamp, now, settle) {
                    Look::Settled => settled.push(Incoming { inbox, name }),
                    Look::Unsettled { settles_at } => last_to_settle = last_to_settle.max(Some(settles_at)),
                }
            }
            // A pass waits once, at most the settle time, for the files it saw new or changed,
            // then looks again: a file put there just before a pass (or a "Sync now") is read
            // in that pass rather than an interval later, and a file that keeps changing is
            // left for the next pass instead of holding this one. No connection is held while
            // waiting: servers drop idle logins, and a warehouse may allow few at once.
            match last_to_settle {
                Some(at) if !waited => {
                    waited = true;
                    self.end_session().await;
                    tokio::time::sleep_until(Instant::from_std(at)).await;
                }
                _ => return Ok(settled),
            }
        }
    }

    /// The names in `dir` the warehouse reads for `inbox`, with what this look saw of each.
    async fn look(&mut self, inbox: Inbox, dir: &str) -> Result<Vec<(String, Stamp)>, PlatformError> {
        let max = self.settings.max_file_bytes;
        let format = self.format.clone();
        let session = self.session().await?;
        let entries = session.list(dir, max).await?;
        let mut seen = Vec::new();
        let read_here = |name: &str| is_taken_name(name) && format.reads(inbox, name);
        for entry in entries.into_iter().filter(|e| read_here(&e.name)) {
            let path = join(dir, &entry.name);
            // A listing without facts (FTP's NLST) is followed by SIZE and MDTM; a server
            // without those either is judged by the bytes themselves, read at each look.
            let facts =
                if entry.facts == Facts::default() { session.facts(&path).await? } else { entry.facts };
            let stamp = if facts == Facts::default() {
                Stamp::of_content(&session.read(&path, max).await?)
            } else {
                Stamp::Facts(facts)
            };
            seen.push((entry.name, stamp));
        }
        Ok(seen)
    }

    pub(super) async fn read(&mut self, file: &Incoming) -> Result<Vec<u8>, PlatformError> {
        let path = join(self.folders.inbox(file.inbox), &file.name);
        let max = self.settings.max_file_bytes;
        self.session().await?.read(&path, max).await
    }

    /// A shipment file's lines (or its bad lines), what else it says, and its 997.
    pub async fn read_shipments(&mut self, file: &Incoming) -> Result<FileRead<LineRead>, PlatformError> {
        let bytes = self.read(file).await?;
        let (format, name) = (self.format.clone(), file.name.clone());
        Ok(parse(move || format.read_shipments(&name, &bytes)).await)
    }

    /// A stock file's rows (or its bad lines), what else it says, and its 997.
    pub async fn read_stock(&mut self, file: &Incoming) -> Result<FileRead<StockRow>, PlatformError> {
        let bytes = self.read(file).await?;
        let format = self.format.clone();
        Ok(parse(move || format.read_stock(&bytes)).await)
    }

    /// Answers the file handed out last with its 997 (X12, when it has one to send): written
    /// into `orders_dir` under a hidden name and renamed, numbered before it is written.
    pub(super) async fn acknowledge(&mut self) -> Result<(), PlatformError> {
        let Some(ack) = self.ack.take() else { return Ok(()) };
        let documents = self.settings.documents.clone();
        let Some((name, bytes)) =
            self.format.acknowledgement(&ack, self.settings.connection_id, &*documents).await?
        else {
            return Ok(());
        };
        let dir = self.folders.orders.clone();
        let session = self.session().await?;
        session.make_dir_all(&dir).await?;
        let hidden = join(&dir, &format!(".{name}"));
        session.write(&hidden, &bytes).await?;
        session.rename(&hidden, &join(&dir, &name)).await
    }

    /// Whether a refused file fails the step (CSV) or is only named in the run (X12).
    pub(super) fn refusal_fails_the_step(&self) -> bool {
        self.format.refusal_fails_the_step()
    }

    /// Moves a file that was read into `processed/` of its folder.
    pub async fn processed(&mut self, file: &Incoming) -> Result<(), PlatformError> {
        self.move_to(file, "processed", None).await
    }

    /// Moves a file that could not be used into `failed/` of its folder, beside
    /// `{name}.errors.txt` listing each bad line.
    pub async fn failed(&mut self, file: &Incoming, bad: &[BadLine]) -> Result<(), PlatformError> {
        let report = self.format.report(&file.name, bad);
        self.move_to(file, "failed", Some(report)).await
    }

    /// Where failed files of `inbox` go, as a person reads it (`shipments/failed/`).
    pub fn failed_folder(&self, inbox: Inbox) -> String {
        let dir = self.folders.inbox(inbox);
        format!("{}/failed/", if dir.is_empty() { "." } else { dir })
    }

    async fn move_to(
        &mut self,
        file: &Incoming,
        folder: &str,
        report: Option<String>,
    ) -> Result<(), PlatformError> {
        let dir = self.folders.inbox(file.inbox).to_string();
        let place = join(&dir, folder);
        let session = self.session().await?;
        session.make_dir_all(&place).await?;
        if let Some(report) = report {
            session.write(&join(&place, &format!("{}.errors.txt", file.name)), report.as_bytes()).await?;
        }
        let path = join(&dir, &file.name);
        session.rename(&path, &join(&place, &file.name)).await?;
        self.settings.sightings.forget(&self.place, &path);
        Ok(())
    }
}

/// Reads a file off the async threads: a large one takes a while.
async fn parse<T: Send + 'static>(read: impl FnOnce() -> T + Send + 'static) -> T {
    match tokio::task::spawn_blocking(read).await {
        Ok(parsed) => parsed,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// The orders of a send: those read before the document was opened, the stream of the rest
/// (none when it had ended), and those refused so far.
struct Feed {
    first: Vec<OutgoingOrder>,
    rest: Option<OrderStream>,
    refused: Vec<(i64, String)>,
}

/// Renders the orders as they come into `bytes`; when the feed was finished, the ids of the
/// orders written, those the format refused (with why) and where each written one stands in
/// the document; `None` when the feed stopped before.
async fn render_into(
    mut document: Document,
    Feed { first, rest, mut refused }: Feed,
    bytes: mpsc::Sender<Vec<u8>>,
) -> Option<(Vec<i64>, Vec<(i64, String)>, Vec<(i64, i64)>)> {
    let mut ids = Vec::new();
    let mut add = |document: &mut Document, batch: Vec<OutgoingOrder>| {
        for order in &batch {
            match document.add(order) {
                Ok(()) => ids.push(order.order_id),
                Err(why) => refused.push((order.order_id, why)),
            }
        }
    };
    add(&mut document, first);
    if let Some(mut orders) = rest {
        loop {
            if let Some(chunk) = document.chunk(CHUNK_BYTES)
                && bytes.send(chunk).await.is_err()
            {
                return None;
            }
            match orders.next().await {
                Fed::Orders(batch) => add(&mut document, batch),
                Fed::End => break,
                Fed::Stopped => return None,
            }
        }
    }
    let (last, parts) = document.finish();
    bytes.send(last).await.is_ok().then_some((ids, refused, parts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::warehouse::{OutgoingOrder, SendKey, order_feed};

    fn settings(settle: Duration) -> FileSettings {
        FileSettings {
            timeout: Duration::from_secs(5),
            settle,
            sightings: Sightings::default(),
            reach: Reach::Anywhere,
            max_file_bytes: 1 << 20,
            documents: std::sync::Arc::new(crate::platforms::warehouse::NumbersInMemory::default()),
            connection_id: 7,
        }
    }

    fn folder_adapter(root: &std::path::Path) -> Map<String, Value> {
        let url = format!("file://{}", root.display());
        Map::from_iter([
            ("connection_string".to_string(), Value::from(url)),
            ("shipments_dir".to_string(), Value::from("/in/")),
        ])
    }

    fn warehouse(
        kind: Kind,
        adapter: &Map<String, Value>,
        settings: &FileSettings,
    ) -> Result<Warehouse, PlatformError> {
        Warehouse::new(kind, adapter, settings)
    }

    #[test]
    fn a_connection_string_of_another_transport_is_refused_without_repeating_it() {
        let adapter = folder_adapter(std::path::Path::new("/srv"));
        assert!(warehouse(Kind::Folder, &adapter, &settings(Duration::ZERO)).is_ok());
        let Err(e) = warehouse(Kind::Ftp, &adapter, &settings(Duration::ZERO)) else { panic!("accepted") };
        assert_eq!(e.code(), "adapter_authentication_failed", "{e}");
        assert!(e.message().contains("connection_string"), "{e}");
    }

    #[tokio::test]
    async fn an_order_file_comes_into_view_only_when_its_feed_is_finished() {
        let dir = tempfile::tempdir().unwrap();
        let mut warehouse =
            warehouse(Kind::Folder, &folder_adapter(dir.path()), &settings(Duration::ZERO)).unwrap();
        let order = OutgoingOrder { order_id: 1, store_id: 1, ..OutgoingOrder::default() };

        let (feed, stream) = order_feed(SendKey { connection_id: 7, number: 1, created_at: 0 });
        let producer = std::thread::spawn({
            let order = order.clone();
            move || {
                feed.send(vec![order])?;
                feed.finish()
            }
        });
        assert_eq!(
            warehouse.write_orders(stream).await,
            Ok(Sent::Delivered { ids: vec![1], refused: Vec::new() })
        );
        assert_eq!(producer.join().unwrap(), Ok(()));

        let (feed, stream) = order_feed(SendKey { connection_id: 7, number: 2, created_at: 0 });
        let producer = std::thread::spawn(move || feed.send(vec![order]));
        assert_eq!(warehouse.write_orders(stream).await, Ok(Sent::Abandoned), "no finish");
        assert_eq!(producer.join().unwrap(), Ok(()));
        warehouse.end_session().await;

        let names = crate::platforms::files::folder::Session::open(dir.path().join("orders"))
            .await
            .unwrap()
            .list("")
            .await
            .unwrap();
        assert_eq!(names.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["orders-7-1.csv"]);
    }

    #[tokio::test]
    async fn a_new_file_is_waited_for_once_and_a_changing_one_left_for_a_later_pass() {
        let dir = tempfile::tempdir().unwrap();
        let inbox = dir.path().join("in");
        std::fs::create_dir_all(&inbox).unwrap();
        let settings = settings(Duration::from_millis(300));
        let mut warehouse = warehouse(Kind::Folder, &folder_adapter(dir.path()), &settings).unwrap();
        std::fs::write(inbox.join("b.csv"), "x").unwrap();
        std::fs::write(inbox.join("a.csv"), "x").unwrap();
        std::fs::write(inbox.join("a.csv.part"), "x").unwrap();
        std::fs::write(inbox.join(".c.csv"), "x").unwrap();
        let names = |files: Vec<Incoming>| files.into_iter().map(|f| f.name).collect::<Vec<_>>();

        let started = std::time::Instant::now();
        assert_eq!(names(warehouse.waiting(Inbox::Shipments).await.unwrap()), ["a.csv", "b.csv"]);
        assert!(started.elapsed() >= settings.settle, "two looks apart");
        // Settled already: the next look takes them without waiting again.
        assert_eq!(names(warehouse.waiting(Inbox::Shipments).await.unwrap()), ["a.csv", "b.csv"]);

        // A file that grows during the wait is left for a later pass.
        let writer = {
            let path = inbox.join("a.csv");
            std::thread::spawn(move || {
                for _ in 0..20 {
                    std::thread::sleep(Duration::from_millis(50));
                    let mut text = std::fs::read_to_string(&path).unwrap();
                    text.push('y');
                    std::fs::write(&path, text).unwrap();
                }
            })
        };
        std::thread::sleep(Duration::from_millis(75));
        assert_eq!(names(warehouse.waiting(Inbox::Shipments).await.unwrap()), ["b.csv"]);
        writer.join().unwrap();
        assert_eq!(names(warehouse.waiting(Inbox::Shipments).await.unwrap()), ["a.csv", "b.csv"]);
        warehouse.end_session().await;
    }
}
