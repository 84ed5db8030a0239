//! What the `orderbridge` commands do: `serve` (with `--demo`), `import`, `seed`, `user`
//! and `sync`. `main.rs` only parses the command line and calls these.

use std::io::{BufRead, IsTerminal};

use crate::config::Config;
use crate::db;
use crate::http::error::describe;
use crate::http::users::{self, Role};
use crate::resources::import::{self as import_data, What};
use crate::seed::{self as seed_data, Options, Summary};

pub async fn sync(connection: Option<i64>) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    match crate::sync::command::run(&config, connection).await? {
        true => Ok(()),
        false => Err("a sync pass failed".to_string()),
    }
}

pub async fn serve(demo: bool, simulate: bool) -> Result<(), String> {
    let mut figment = Config::figment();
    // Before the database is opened: its first start has something to say (the key file).
    crate::logging::init(&figment);
    let mut seeded = None;
    let mut admin_before_seed = None;
    let mut simulation = None;
    if demo {
        let config = Config::from_figment(&figment)?;
        let pool = config.open_database(0)?;
        let mut conn = pool.get().map_err(|e| format!("database: {e}"))?;
        // The simulated warehouse worker serves `folder` warehouses, which must be absolute.
        let folder_root = crate::platforms::files::folder::root(&config);
        if simulate {
            std::fs::create_dir_all(&folder_root)
                .map_err(|e| format!("cannot create folder_warehouse_root {}: {e}", folder_root.display()))?;
        }
        let folder_root = std::fs::canonicalize(&folder_root).unwrap_or(folder_root);
        if seed_data::is_empty(&conn).map_err(|e| format!("database: {e}"))? {
            // The seed adds customer users; the first admin must exist before them.
            admin_before_seed =
                users::ensure_first_admin(&conn, config.admin_password.as_ref().map(|s| s.expose()))
                    .map_err(|e| describe(&e))?;
            eprintln!("orderbridge: empty database: writing the demo data set");
            let options =
                Options { warehouse_root: simulate.then(|| folder_root.clone()), ..Options::default() };
            seeded = Some(run_seed(&mut conn, &options)?);
        } else {
            eprintln!("orderbridge: the database already holds data; serving it without seeding");
        }
        if simulate {
            // Two demo 3PLs speak their own language: a Landmark-like CSV layout, and X12.
            crate::simulate::speak_formats(&conn, seeded.is_some()).map_err(|e| format!("database: {e}"))?;
        }
        let plan = simulate.then(|| crate::simulate::demo::Plan::read(&conn, &folder_root)).transpose()?;
        // No connection is held while the simulators start.
        drop(conn);
        if let Some(plan) = plan {
            let mut demo = crate::simulate::demo::Demo::start(plan).await?;
            let conn = pool.get().map_err(|e| format!("database: {e}"))?;
            demo.attach_woocommerce(&conn, seeded.is_some())?;
            demo.attach_shipbob(&conn, seeded.is_some())?;
            demo.attach_shipstation(&conn, seeded.is_some())?;
            demo.attach_amazon(&conn, seeded.is_some())?;
            demo.attach_ebay(&conn, seeded.is_some())?;
            drop(conn);
            eprintln!("orderbridge: demo: {}", demo.describe());
            figment = figment
                .merge(("bigcommerce_api_base", demo.big_commerce.base_url()))
                .merge(("sellbrite_api_base", demo.sellbrite.base_url()))
                .merge(("shopify_api_base", demo.shopify.base_url()))
                .merge(("shipbob_api_base", demo.shipbob.base_url()))
                .merge(("shipstation_api_base", demo.shipstation.base_url()))
                .merge(("amazon_api_base", demo.amazon.api_base()))
                .merge(("amazon_lwa_base", demo.amazon.lwa_base()))
                .merge(("ebay_api_base", demo.ebay.api_base()))
                .merge(("ebay_sandbox_api_base", demo.ebay.sandbox_base()))
                // Passes every 10 s, unless configured: the demo should move while watched.
                .join(("sync_interval_secs", 10));
            simulation = Some(demo);
        }
    }
    let mut app = crate::build(figment.clone())?;
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
    // The simulated platforms stop with the server.
    drop(simulation);
    Ok(())
}

pub fn rotate_key() -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    // Upgrades the file and seals anything still plain under the current key, then lets go
    // of the key, which the rotation must hold alone.
    let key_file = config.key_file();
    db::prepare(&config.database, &key_file)?;
    let count = db::secrets::rotate(&config.database, &key_file)?;
    println!(
        "re-sealed the credentials of {count} stores and warehouses under a new key, now in {}; back it up (the old key opens nothing any more)",
        key_file.display()
    );
    Ok(())
}

pub fn backup(file: &std::path::Path) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    let started = std::time::Instant::now();
    let pages = db::backup::backup(&config.database, file)?;
    let bytes = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
    println!(
        "copied {} to {} ({pages} pages, {:.1} MiB, checked) in {:.1?}",
        config.database.display(),
        file.display(),
        bytes as f64 / (1024.0 * 1024.0),
        started.elapsed()
    );
    println!(
        "its credentials are sealed with the key in {}, which is not in the copy: keep that file with the backup, apart from it",
        config.key_file().display()
    );
    Ok(())
}

pub fn import(what: What, file: &str) -> Result<(), String> {
    let config = Config::from_figment(&Config::figment())?;
    let pool = config.open_database(0)?;
    let counts = import_data::import_file(&pool, what, file)?;
    println!("created {}, updated {}", counts.created, counts.updated);
    Ok(())
}

fn run_seed(conn: &mut rusqlite::Connection, options: &Options) -> Result<Summary, String> {
    let mut bar = crate::progress::Progress::new("orders written", Some(options.orders), options.orders / 10);
    let summary = seed_data::seed_demo(conn, options, &mut |done| bar.set(done))?;
    bar.finish(&format!("wrote {} orders and {} shipments", summary.orders, summary.shipments));
    Ok(summary)
}

pub fn seed(options: Options) -> Result<(), String> {
    let figment = Config::figment();
    let config = Config::from_figment(&figment)?;
    // Prepare the file with the pool, then seed over the one connection left open, so the
    // seed may write without a rollback journal (see `seed::seed_demo`).
    drop(config.open_database(0)?);
    let mut conn = db::connect(&config.database, &config.key_file())?;
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

/// Opens the configured database for a `user` command.
fn user_db() -> Result<r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>, String> {
    let config = Config::from_figment(&Config::figment())?;
    let pool = config.open_database(0)?;
    pool.get().map_err(|e| format!("database: {e}"))
}

/// `user add NAME [--role admin|customer] [--customer-id N]`.
pub fn user_add(name: &str, role: Option<&str>, customer_id: Option<i64>) -> Result<(), String> {
    let role = match (role, customer_id) {
        (Some(r), _) => Role::parse(r).ok_or("unknown role")?,
        (None, Some(_)) => Role::Customer,
        (None, None) => return Err("give --role admin, or --customer-id N for a customer user".into()),
    };
    let conn = user_db()?;
    let password = read_password(&format!("password for {name}"))?;
    let id = users::add(&conn, name, &password, role, customer_id).map_err(|e| describe(&e))?;
    println!("added user {name} (id {id}, role {})", role.as_str());
    Ok(())
}

pub fn user_list() -> Result<(), String> {
    let conn = user_db()?;
    let list = users::list(&conn).map_err(|e| format!("database: {e}"))?;
    println!("{:<6} {:<24} {:<9} {:<12} status", "id", "username", "role", "customer_id");
    for u in list {
        let customer = u.customer_id.map_or("-".to_string(), |c| c.to_string());
        let status = if u.disabled_at.is_some() { "disabled" } else { "enabled" };
        println!("{:<6} {:<24} {:<9} {:<12} {status}", u.id, u.username, u.role.as_str(), customer);
    }
    Ok(())
}

pub fn user_passwd(name: &str) -> Result<(), String> {
    let conn = user_db()?;
    let password = read_password(&format!("new password for {name}"))?;
    users::set_password(&conn, name, &password).map_err(|e| describe(&e))?;
    println!("password of {name} changed; earlier tokens no longer work");
    Ok(())
}

pub fn user_disable(name: &str) -> Result<(), String> {
    let conn = user_db()?;
    users::disable(&conn, name).map_err(|e| describe(&e))?;
    println!("disabled {name}; its tokens no longer work");
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
    users::validate_password(&password).map_err(|problem| format!("the password {problem}"))?;
    Ok(password)
}

/// Where the server listens, as a client would write it, for the hints we print.
fn base_url(figment: &rocket::figment::Figment) -> String {
    let address: String = figment.extract_inner("address").unwrap_or_else(|_| "127.0.0.1".into());
    let port: u16 = figment.extract_inner("port").unwrap_or(8000);
    format!("http://{address}:{port}")
}
