//! A warehouse's document numbers (files-x12.md §3): the seam through which a warehouse client
//! asks the engine, which keeps them in the database, for the number, name and parts of a
//! document it writes. The client never sees the database.

#[cfg(test)]
use std::collections::HashMap;
#[cfg(test)]
use std::sync::Mutex;

use async_trait::async_trait;

use super::PlatformError;

/// A warehouse's document numbers (an X12 interchange's control number),
/// kept by the engine in the database. A number is committed before the document carrying it
/// is written and is never handed out twice, across connections, passes and processes.
#[async_trait]
pub trait Documents: Send + Sync {
    /// The number and time of send `send`'s document: those recorded with the send, else the
    /// warehouse's next number and now, recorded with it before this returns. A send written
    /// again after a crash gets the same.
    async fn of_send(&self, send: SendKey, counter: Counter) -> Result<Numbered, PlatformError>;

    /// The name recorded with send `send`'s document, else `name`, recorded with it now: a
    /// send written again after a crash keeps its first name even if the name's template
    /// changed meanwhile (files-csv-layouts.md §1).
    async fn named(&self, send: SendKey, name: String) -> Result<String, PlatformError>;

    /// Records where each order of send `send` stands in its document (`(order id, part)`), so
    /// the warehouse's answer about a part finds its order.
    async fn place(&self, send: SendKey, parts: Vec<(i64, i64)>) -> Result<(), PlatformError>;

    /// The warehouse's next number and now, for a document no send records (an
    /// acknowledgement), committed before this returns.
    async fn next(&self, counter: Counter) -> Result<Numbered, PlatformError>;
}

/// How a warehouse's numbers run: from `first` (raised by the adapter, never lowered) up to
/// `last`, then from 1 again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter {
    pub first: i64,
    pub last: i64,
}

/// A document's number and the time it was first made (ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Numbered {
    pub number: i64,
    pub at: i64,
}

/// Document numbers held in memory, for a client test: each send keeps the first number it got.
#[cfg(test)]
#[derive(Default)]
pub struct NumbersInMemory(Mutex<HeldNumbers>);

/// The next number, each send's, and the parts placed.
#[cfg(test)]
type HeldNumbers = (i64, HashMap<(i64, i64), Numbered>, Vec<(i64, i64)>);

#[cfg(test)]
#[async_trait]
impl Documents for NumbersInMemory {
    async fn of_send(&self, send: SendKey, counter: Counter) -> Result<Numbered, PlatformError> {
        let mut held = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(numbered) = held.1.get(&(send.connection_id, send.number)) {
            return Ok(*numbered);
        }
        held.0 = held.0.max(counter.first);
        let numbered = Numbered { number: held.0, at: send.created_at };
        held.0 += 1;
        held.1.insert((send.connection_id, send.number), numbered);
        Ok(numbered)
    }

    async fn named(&self, _send: SendKey, name: String) -> Result<String, PlatformError> {
        Ok(name)
    }

    async fn place(&self, _send: SendKey, parts: Vec<(i64, i64)>) -> Result<(), PlatformError> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).2.extend(parts);
        Ok(())
    }

    async fn next(&self, counter: Counter) -> Result<Numbered, PlatformError> {
        let mut held = self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        held.0 = held.0.max(counter.first);
        let numbered = Numbered { number: held.0, at: crate::dates::now_ms() };
        held.0 += 1;
        Ok(numbered)
    }
}

/// Which send of which connection a stream's orders are: the same after a crash, so a
/// warehouse that names a document after it (a file drop's `orders-{connection}-{number}.csv`)
/// writes the same document again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendKey {
    pub connection_id: i64,
    pub number: i64,
    /// When the send was first claimed (ms): a document named or dated after it (a layout's
    /// `{date}`) is the same when the send is written again.
    pub created_at: i64,
}
