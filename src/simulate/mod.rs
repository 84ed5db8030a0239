//! Simulated platforms: real servers on loopback that answer like the platforms orderbridge
//! talks to, so tests, benchmarks and demos drive the real clients over real HTTP with no
//! network. Only the other side is simulated.

pub mod amazon;
pub mod big_commerce;
pub mod demo;
mod demo_formats;
pub mod ebay;
pub use demo_formats::{landmark as landmark_adapter, speak as speak_formats};
mod demo_amazon;
mod demo_ebay;
mod demo_rows;
mod http;
#[cfg(test)]
pub(crate) mod openapi_check;
#[cfg(test)]
mod openapi_readings;
mod running;
pub mod sellbrite;
pub mod shared_files;
pub mod shipbob;
pub mod shipstation;
pub mod shopify;
#[cfg(test)]
pub(crate) mod swagger2;
pub mod woocommerce;

pub use running::{Handle, Simulator};

/// A deterministic generator (xorshift), so a seed gives the same orders every time.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const FIRST: [&str; 8] = ["Ann", "Ben", "Chloé", "Dev", "Eva", "Finn", "Grace", "Hugo"];
const LAST: [&str; 8] = ["Smith", "Okafor", "Müller", "Rossi", "Nguyen", "García", "Kowalski", "Brown"];
const CITIES: [&str; 6] = ["Austin", "Berlin", "Lyon", "Osaka", "Leeds", "Porto"];

/// The first few `sku=level` pairs of stock records, for a simulator's log line.
fn levels(records: &[serde_json::Value], level: &str) -> String {
    let shown: Vec<String> = records
        .iter()
        .take(8)
        .map(|r| format!("{}={}", r["sku"].as_str().unwrap_or("?"), r[level].as_i64().unwrap_or_default()))
        .collect();
    let more = if records.len() > shown.len() {
        format!(" and {} more", records.len() - shown.len())
    } else {
        String::new()
    };
    format!("{}{more}", shown.join(", "))
}
