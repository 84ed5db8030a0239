//! The sync benchmark's ShipBob simulator child (this program started again with
//! `--shipbob-simulator`): one account whose token is [`TOKEN`], one inventory item per order
//! the benchmark will send (`SKU-0000`, …), orders that ship as soon as they are listed, and a
//! window wide enough for a benchmark. It prints its base URL, then answers each command line
//! on stdin with one line until stdin closes:
//! - `channel`: the token's `SMA` channel id;
//! - `requests`: every request so far;
//! - `requests <Operation>` (`CreateOrder`, `GetOrders`, `GetChannels`, `GetOrder`,
//!   `CancelOrder`, `GetInventoryLevels`): that operation's;
//! - `orders`: the orders the account holds.
//!
//! The warehouse run that uses it is the lead's (issue 28's engine seam); the ShipBob
//! requests per order come from `requests CreateOrder` over the orders sent.

use std::io::{BufRead, BufReader};

use orderbridge::simulate::shipbob::{AutoShip, Operation, Simulator};

pub const TOKEN: &str = "pat-bench-0123456789abcdef";

pub async fn serve_simulator(orders: usize) {
    let sim = Simulator::start().await;
    let channels = sim.add_account(TOKEN);
    sim.generate_inventory(TOKEN, orders, 42);
    sim.set_auto_ship(Some(AutoShip::immediately()));
    sim.set_rate_limit(TOKEN, usize::MAX);
    println!("{}", sim.base_url());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["channel"] => println!("{}", channels.sma),
            ["requests"] => println!("{}", sim.total_requests()),
            ["requests", name] => match Operation::ALL.iter().find(|op| format!("{op:?}") == *name) {
                Some(op) => println!("{}", sim.requests(*op)),
                None => println!("?"),
            },
            ["orders"] => println!("{}", sim.order_count(TOKEN)),
            _ => println!("?"),
        }
    }
}
