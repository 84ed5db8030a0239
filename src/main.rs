//! The `orderbridge` command line: `serve` (the default), `user` administration, `import`
//! of orders and shipments, `seed --demo` and `sync`. It parses and dispatches; `cli` does.

use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use orderbridge::cli;
use orderbridge::resources::import::What;
use orderbridge::seed::Options;

/// mimalloc rather than glibc's allocator, measured with `examples/bench/` (the README
/// has the figures): imports ~20% faster, `GET /orders/{id}` ~15% faster, and less resident
/// after a burst of listing sessions, whose 300 KiB pages left glibc's per-thread arenas
/// fragmented. Built without transparent huge pages (`no_thp` in Cargo.toml), so freed
/// memory goes back to the system in small pieces.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "orderbridge", version, about = "Self-hosted order fulfillment integration service")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default): ROCKET_ADDRESS / ROCKET_PORT, 127.0.0.1:8000 unless set.
    Serve {
        /// On an empty database, write the demo data set first (see `seed --demo`), and
        /// simulate its stores and warehouse worker on loopback so orders flow.
        #[arg(long)]
        demo: bool,
        /// With --demo: the demo data only, no simulated platforms (its stores then point
        /// at the real BigCommerce and Sellbrite, with made-up credentials).
        #[arg(long, requires = "demo")]
        no_simulate: bool,
    },
    /// Import orders or shipments from a JSON array or NDJSON file (`-` for stdin). Any bad
    /// record imports nothing; records already present (same key) are updated.
    Import {
        #[arg(value_enum)]
        what: ImportKind,
        file: String,
    },
    /// Write demo data into an empty database.
    Seed {
        /// The realistic demo set: customers, stores, warehouses, connections, products, orders, shipments.
        #[arg(long, required = true)]
        demo: bool,
        /// How many orders.
        #[arg(long, default_value_t = Options::default().orders)]
        orders: u64,
        /// Random seed: the same seed gives the same data.
        #[arg(long, default_value_t = Options::default().seed)]
        seed: u64,
        /// Items per order (default: 1 to 5 at random).
        #[arg(long)]
        items: Option<u32>,
    },
    /// Run one sync pass of each syncing connection (or of one) now, in the foreground, and
    /// print what each step did; fails when a pass failed. Runs whatever sync_mode says.
    Sync {
        /// Only this connection.
        #[arg(long)]
        connection: Option<i64>,
    },
    /// Copy the database to FILE (which must not exist), consistently, while the server
    /// runs: SQLite's online backup. To restore: stop the server, copy FILE over the
    /// database file (removing its -wal and -shm files), start the server.
    Backup { file: std::path::PathBuf },
    /// Re-seal every stored credential under a new key, in one transaction, and replace the
    /// key file (secret_key_file). Stop the server first: it holds the old key until restarted.
    RotateKey,
    /// Manage the users who may get tokens.
    User {
        #[command(subcommand)]
        action: UserCommand,
    },
}

#[derive(Subcommand)]
enum UserCommand {
    /// Add a user; the password is read from standard input (or prompted for on a terminal).
    Add {
        name: String,
        /// admin (sees everything) or customer (sees one customer's data).
        #[arg(long, value_parser = ["admin", "customer"])]
        role: Option<String>,
        /// The customer a customer user belongs to.
        #[arg(long)]
        customer_id: Option<i64>,
    },
    /// List users.
    List,
    /// Set a user's password (read from standard input or prompted); earlier tokens stop working.
    Passwd { name: String },
    /// Disable a user: no new tokens, and its tokens stop working.
    Disable { name: String },
}

#[derive(Clone, Copy, ValueEnum)]
enum ImportKind {
    Orders,
    Shipments,
}

#[rocket::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command.unwrap_or(Command::Serve { demo: false, no_simulate: false }) {
        Command::Serve { demo, no_simulate } => cli::serve(demo, !no_simulate).await,
        Command::Import { what: ImportKind::Orders, file } => cli::import(What::Orders, &file),
        Command::Import { what: ImportKind::Shipments, file } => cli::import(What::Shipments, &file),
        Command::Seed { demo: _, orders, seed, items } => {
            cli::seed(Options { orders, seed, items, warehouse_root: None })
        }
        Command::User { action: UserCommand::Add { name, role, customer_id } } => {
            cli::user_add(&name, role.as_deref(), customer_id)
        }
        Command::User { action: UserCommand::List } => cli::user_list(),
        Command::User { action: UserCommand::Passwd { name } } => cli::user_passwd(&name),
        Command::User { action: UserCommand::Disable { name } } => cli::user_disable(&name),
        Command::Sync { connection } => cli::sync(connection).await,
        Command::Backup { file } => cli::backup(&file),
        Command::RotateKey => cli::rotate_key(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("orderbridge: {message}");
            ExitCode::FAILURE
        }
    }
}
