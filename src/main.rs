//! The `orderbridge` command: `serve` (the default), `user` administration, `import` of
//! orders and shipments, and `seed --demo`.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use orderbridge::config::Config;
use orderbridge::import::{self, What};
use orderbridge::seed::{self, Options, Summary};
use orderbridge::users::{self, Role};
use orderbridge::{db, error::ApiError};

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
        /// On an empty database, write the demo data set first (see `seed --demo`).
        #[arg(long)]
        demo: bool,
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
    let result = match cli.command.unwrap_or(Command::Serve { demo: false }) {
        Command::Serve { demo } => serve(demo).await,
        Command::Import { what, file } => import_command(what, &file),
        Command::Seed { demo: _, orders, seed, items } => seed_command(Options { orders, seed, items }),
        Command::User { action } => user(action),
        Command::Sync { connection } => sync_command(connection).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("orderbridge: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn sync_command(connection: Option<i64>) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    match orderbridge::sync::command::run(&config, connection).await? {
        true => Ok(()),
        false => Err("a sync pass failed".to_string()),
    }
}

async fn serve(demo: bool) -> Result<(), String> {
    let figment = Config::figment();
    let mut seeded = None;
    let mut admin_before_seed = None;
    if demo {
        let config = Config::from_figment(&figment)?;
        let pool = db::open(&config.database)?;
        let mut conn = pool.get().map_err(|e| format!("database: {e}"))?;
        if seed::is_empty(&conn).map_err(|e| format!("database: {e}"))? {
            // The seed adds customer users; the first admin must exist before them.
            admin_before_seed =
                users::ensure_first_admin(&conn, config.admin_password.as_ref().map(|s| s.expose()))
                    .map_err(|e| describe(&e))?;
            eprintln!("orderbridge: empty database: writing the demo data set");
            seeded = Some(run_seed(&mut conn, &Options::default())?);
        } else {
            eprintln!("orderbridge: the database already holds data; serving it without seeding");
        }
    }
    let mut app = orderbridge::build(figment.clone())?;
    if app.first_admin.is_none() {
        app.first_admin = admin_before_seed;
    }
    let base = base_url(&figment);
    match &app.first_admin {
        Some(admin) => {
            let password = admin.password.as_deref().unwrap_or("<the configured admin_password>");
            if admin.password.is_some() {
                eprintln!(
                    "orderbridge: first run: created user '{}' with password {password}",
                    admin.username
                );
                eprintln!(
                    "orderbridge: this password is shown only once; change it with `orderbridge user passwd admin`"
                );
            }
            eprintln!("orderbridge: get a token with:");
            eprintln!(
                "  curl -s -u {}:{password} -H 'Content-Type: application/json' -d '{{\"grant_type\":\"client_credentials\"}}' {base}/auth/token",
                admin.username
            );
        }
        None => eprintln!(
            "orderbridge: serving {base}; get a token with: curl -u USER:PASSWORD -d grant_type=client_credentials {base}/auth/token"
        ),
    }
    if let Some(summary) = &seeded {
        print_logins(summary, &base);
    }
    app.rocket.launch().await.map_err(|e| format!("server: {e}"))?;
    Ok(())
}

fn import_command(what: ImportKind, file: &str) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    let pool = db::open(&config.database)?;
    let what = match what {
        ImportKind::Orders => What::Orders,
        ImportKind::Shipments => What::Shipments,
    };
    let counts = import::import_file(&pool, what, file)?;
    println!("created {}, updated {}", counts.created, counts.updated);
    Ok(())
}

fn run_seed(conn: &mut rusqlite::Connection, options: &Options) -> Result<Summary, String> {
    let started = std::time::Instant::now();
    let total = options.orders;
    let summary = seed::seed_demo(conn, options, &mut |done| {
        eprint!("\rorderbridge: {done}/{total} orders written ({:.0?})", started.elapsed());
    })?;
    eprintln!(
        "\rorderbridge: wrote {} orders and {} shipments in {:.1?}",
        summary.orders,
        summary.shipments,
        started.elapsed()
    );
    Ok(summary)
}

fn seed_command(options: Options) -> Result<(), String> {
    let figment = Config::figment();
    let config = Config::from_figment(&figment)?;
    // Prepare the file with the pool, then seed over the one connection left open, so the
    // seed may write without a rollback journal (see `seed::seed_demo`).
    drop(db::open(&config.database)?);
    let mut conn = db::connect(&config.database).map_err(|e| format!("database: {e}"))?;
    let admin = users::ensure_first_admin(&conn, config.admin_password.as_ref().map(|s| s.expose()))
        .map_err(|e| describe(&e))?;
    let summary = run_seed(&mut conn, &options)?;
    let base = base_url(&figment);
    match admin {
        Some(admin) => match admin.password {
            Some(password) => println!(
                "admin user: {} with password {password} (shown only once; change it with `orderbridge user passwd admin`)",
                admin.username
            ),
            None => println!("admin user: {} with the configured admin_password", admin.username),
        },
        None => println!("admin user: your existing admin user"),
    }
    print_logins(&summary, &base);
    println!("start the server with `orderbridge serve`");
    Ok(())
}

fn print_logins(summary: &Summary, base: &str) {
    println!("demo customer users (each sees only its own customer's data):");
    for login in &summary.logins {
        println!("  {:<10} password {:<14} ({})", login.username, login.password, login.company);
    }
    if let Some(login) = summary.logins.first() {
        println!("for example:");
        println!(
            "  TOKEN=$(curl -s -u {}:{} -d grant_type=client_credentials {base}/auth/token | sed 's/.*\"access_token\":\"\\([^\"]*\\)\".*/\\1/')",
            login.username, login.password
        );
        println!(
            "  curl -s -H \"Authorization: Bearer $TOKEN\" '{base}/orders?limit=5&ordered_at_min=3+days+ago'"
        );
    }
}

fn user(action: UserCommand) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    let pool = db::open(&config.database)?;
    let conn = pool.get().map_err(|e| format!("database: {e}"))?;
    let api = |e: ApiError| describe(&e);
    match action {
        UserCommand::Add { name, role, customer_id } => {
            let role = match (role.as_deref(), customer_id) {
                (Some(r), _) => Role::parse(r).ok_or("unknown role")?,
                (None, Some(_)) => Role::Customer,
                (None, None) => {
                    return Err("give --role admin, or --customer-id N for a customer user".into());
                }
            };
            let password = read_password(&format!("password for {name}"))?;
            let id = users::add(&conn, &name, &password, role, customer_id).map_err(api)?;
            println!("added user {name} (id {id}, role {})", role.as_str());
        }
        UserCommand::List => {
            let list = users::list(&conn).map_err(|e| format!("database: {e}"))?;
            println!("{:<6} {:<24} {:<9} {:<12} status", "id", "username", "role", "customer_id");
            for u in list {
                let customer = u.customer_id.map_or("-".to_string(), |c| c.to_string());
                let status = if u.disabled_at.is_some() { "disabled" } else { "enabled" };
                println!("{:<6} {:<24} {:<9} {:<12} {status}", u.id, u.username, u.role.as_str(), customer);
            }
        }
        UserCommand::Passwd { name } => {
            let password = read_password(&format!("new password for {name}"))?;
            users::set_password(&conn, &name, &password).map_err(api)?;
            println!("password of {name} changed; earlier tokens no longer work");
        }
        UserCommand::Disable { name } => {
            users::disable(&conn, &name).map_err(api)?;
            println!("disabled {name}; its tokens no longer work");
        }
    }
    Ok(())
}

/// Reads a password: prompted twice without echo on a terminal, else the first line of stdin.
fn read_password(prompt: &str) -> Result<String, String> {
    let stdin = std::io::stdin();
    let password = if stdin.is_terminal() {
        let first = rpassword::prompt_password(format!("{prompt}: ")).map_err(|e| e.to_string())?;
        let again = rpassword::prompt_password("again: ").map_err(|e| e.to_string())?;
        if first != again {
            return Err("the passwords differ".into());
        }
        first
    } else {
        let mut line = String::new();
        stdin.lock().read_line(&mut line).map_err(|e| format!("reading the password: {e}"))?;
        line.trim_end_matches(['\r', '\n']).to_string()
    };
    users::validate_password(&password)?;
    Ok(password)
}

fn describe(e: &ApiError) -> String {
    let body = e.body();
    match body.error.details {
        Some(details) => {
            let parts: Vec<String> = details.iter().map(|(k, v)| format!("{k} {v}")).collect();
            parts.join("; ")
        }
        None => body.error.message,
    }
}

/// Where the server listens, as a client would write it, for the hints we print.
fn base_url(figment: &rocket::figment::Figment) -> String {
    let address: String = figment.extract_inner("address").unwrap_or_else(|_| "127.0.0.1".into());
    let port: u16 = figment.extract_inner("port").unwrap_or(8000);
    format!("http://{address}:{port}")
}
