//! Variant collections: a named, ordered list of one customer's products. Served at both
//! `/variant_collections` and `/variant_collection` (service-api.md's reference table uses
//! the singular): `routes()` are relative, and `lib.rs` mounts them under each base.

use std::collections::{HashMap, HashSet};

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::dates::{self, Timestamp};
use crate::db::{self, Pool};
use crate::http::api::{self, ApiResult, Created, Id, NoContent};
use crate::http::auth::AuthUser;
use crate::http::body::{Body, Fields};
use crate::http::error::{ApiError, Details};

pub fn routes() -> Vec<Route> {
    routes![list, get, create, update]
}

#[derive(Debug, Serialize)]
pub struct VariantCollection {
    pub id: i64,
    pub customer_id: i64,
    pub name: String,
    /// In the order the client gave them.
    pub product_ids: Vec<i64>,
    pub created_at: Timestamp,
}

const COLUMNS: &str = "id, customer_id, name, created_at";

/// Collections the query may return: the caller's tenancy (?1) and optionally one id (?2).
const FILTER: &str = "(?1 IS NULL OR customer_id = ?1) AND (?2 IS NULL OR id = ?2)";

fn from_row(row: &Row<'_>) -> rusqlite::Result<VariantCollection> {
    Ok(VariantCollection {
        id: row.get(0)?,
        customer_id: row.get(1)?,
        name: row.get(2)?,
        product_ids: Vec::new(),
        created_at: Timestamp(row.get(3)?),
    })
}

/// Collections visible in `scope` (all of them, or just `only`), ordered by id, each with its
/// products: two queries however many collections there are.
fn load(
    conn: &Connection,
    scope: Option<i64>,
    only: Option<i64>,
) -> rusqlite::Result<Vec<VariantCollection>> {
    let mut stmt = conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM variant_collections WHERE {FILTER} ORDER BY id"))?;
    let mut collections =
        stmt.query_map(params![scope, only], from_row)?.collect::<rusqlite::Result<Vec<_>>>()?;
    let index: HashMap<i64, usize> = collections.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    let mut members = conn.prepare_cached(&format!(
        "SELECT collection_id, product_id FROM variant_collection_products
         WHERE collection_id IN (SELECT id FROM variant_collections WHERE {FILTER})
         ORDER BY collection_id, position"
    ))?;
    let rows = members.query_map(params![scope, only], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))?;
    for row in rows {
        let (collection, product) = row?;
        if let Some(&i) = index.get(&collection) {
            collections[i].product_ids.push(product);
        }
    }
    Ok(collections)
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Variant collection {id}"))
}

/// Reads one collection the user may see.
pub fn find(conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<VariantCollection> {
    load(conn, user.scope(), Some(id))?.pop().ok_or_else(|| not_found(id))
}

#[get("/")]
async fn list(user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<VariantCollection>>> {
    let scope = user.scope();
    Ok(Json(user.run(pool, move |conn, _| Ok(load(conn, scope, None)?)).await?))
}

#[get("/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<VariantCollection>> {
    let id = id.get("Variant collection")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

/// `name`: required, not blank; stored trimmed.
fn read_name(fields: &mut Fields, required: bool) -> Option<String> {
    let name =
        if required { fields.required("name", Fields::text) } else { fields.not_null("name", Fields::text) };
    name.map(|n| n.trim().to_string())
}

/// `product_ids`: a non-empty array of ids (`product_ids[]=1` or `product_ids[0]=1` in forms),
/// each listed once.
fn read_product_ids(fields: &mut Fields, required: bool) -> Option<Vec<i64>> {
    let ids = if required {
        fields.required("product_ids", Fields::ids)
    } else {
        fields.not_null("product_ids", Fields::ids)
    }?;
    let mut seen = HashSet::new();
    let mut all_good = true;
    for (i, id) in ids.iter().enumerate() {
        if !seen.insert(*id) {
            fields.error(&format!("product_ids[{i}]"), format!("product {id} is listed more than once"));
            all_good = false;
        }
    }
    all_good.then_some(ids)
}

/// 422 naming each `product_ids[i]` that is not a product of `customer_id`. Unknown and
/// foreign products read the same.
fn check_products(conn: &Connection, customer_id: i64, ids: &[i64]) -> ApiResult<()> {
    let mut problems = Details::new();
    for (i, id) in ids.iter().enumerate() {
        if !api::owned_row_exists(conn, "products", *id, Some(customer_id))? {
            problems.insert(format!("product_ids[{i}]"), format!("unknown product {id}"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(ApiError::Validation(problems)) }
}

/// The customer an admin's collection without `customer_id` belongs to: that of its
/// products, which must all exist and share one customer.
fn customer_of_products(conn: &Connection, ids: &[i64]) -> ApiResult<i64> {
    let mut problems = Details::new();
    let mut owner: Option<(usize, i64)> = None;
    for (i, id) in ids.iter().enumerate() {
        let customer: Option<i64> = conn
            .query_row("SELECT customer_id FROM products WHERE id = ?1", [id], |r| r.get(0))
            .optional()?;
        match (customer, owner) {
            (None, _) => {
                problems.insert(format!("product_ids[{i}]"), format!("unknown product {id}"));
            }
            (Some(c), None) => owner = Some((i, c)),
            (Some(c), Some((first, o))) if c != o => {
                problems.insert(
                    format!("product_ids[{i}]"),
                    format!("belongs to another customer than product_ids[{first}]"),
                );
            }
            _ => {}
        }
    }
    match owner {
        Some((_, customer)) if problems.is_empty() => Ok(customer),
        _ => Err(ApiError::Validation(problems)),
    }
}

fn replace_products(conn: &Connection, id: i64, product_ids: &[i64]) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM variant_collection_products WHERE collection_id = ?1", [id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO variant_collection_products (collection_id, position, product_id) VALUES (?1, ?2, ?3)",
    )?;
    for (position, product) in product_ids.iter().enumerate() {
        insert.execute(params![id, position as i64, product])?;
    }
    Ok(())
}

#[post("/", data = "<body>")]
async fn create(user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<Created> {
    let mut fields = body.fields();
    // Optional even for admins: without it the products decide.
    let customer_id = fields.id("customer_id").value().or(user.scope());
    let name = read_name(&mut fields, true);
    let product_ids = read_product_ids(&mut fields, true);
    fields.finish()?;
    let (Some(name), Some(product_ids)) = (name, product_ids) else { return Err(ApiError::Internal) };

    let id = user
        .run(pool, move |conn, user| {
            let tx = db::write(conn)?;
            let customer_id = match customer_id {
                Some(customer_id) => {
                    api::check_customer(&tx, user, customer_id, "customer_id")?;
                    check_products(&tx, customer_id, &product_ids)?;
                    customer_id
                }
                None => customer_of_products(&tx, &product_ids)?,
            };
            tx.execute(
                "INSERT INTO variant_collections (customer_id, name, created_at) VALUES (?1, ?2, ?3)",
                params![customer_id, name, dates::now_ms()],
            )?;
            let id = tx.last_insert_rowid();
            replace_products(&tx, id, &product_ids)?;
            tx.commit()?;
            Ok(id)
        })
        .await?;
    Ok(Created::at("variant_collections", id))
}

#[patch("/<id>", data = "<body>")]
async fn update(id: Id, user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Variant collection")?;
    let mut fields = body.fields();
    // A collection stays with its customer: `customer_id` may be sent back unchanged, no more.
    let customer_id = fields.id("customer_id").value();
    let name = read_name(&mut fields, false);
    let product_ids = read_product_ids(&mut fields, false);
    fields.finish()?;

    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let collection = find(&tx, user, id)?;
        if customer_id.is_some_and(|c| c != collection.customer_id) {
            return Err(ApiError::invalid("customer_id", "cannot be changed"));
        }
        if let Some(name) = &name {
            tx.execute("UPDATE variant_collections SET name = ?1 WHERE id = ?2", params![name, id])?;
        }
        if let Some(product_ids) = &product_ids {
            check_products(&tx, collection.customer_id, product_ids)?;
            replace_products(&tx, id, product_ids)?;
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
