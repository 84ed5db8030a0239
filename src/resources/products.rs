//! Products: a customer's SKUs, each optionally in a variant group (`variant_of`), tied to a
//! master product (`master_id`) and made of other products (`bundle`). Owns the paged
//! `GET /products` listing, whose filters come from the query string or a body sent with the GET.

use std::collections::{HashMap, HashSet};

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};
use serde::Serialize;
use serde_json::Value;

use crate::dates::{self, Timestamp};
use crate::db::{self, Pool};
use crate::http::api::{self, ApiResult, Created, Id, NoContent};
use crate::http::auth::AuthUser;
use crate::http::body::{self, Body, Fields, Patch};
use crate::http::error::{ApiError, Details};
use crate::resources::listing::Params;

pub fn routes() -> Vec<Route> {
    routes![list, get, create, update]
}

/// One component of a bundle: `qty` units of product `product_id`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleItem {
    pub product_id: i64,
    pub qty: i64,
}

/// A product as the API returns it. `bundle` is `[]` for a product that is not a bundle.
#[derive(Debug, Serialize)]
pub struct Product {
    pub id: i64,
    pub customer_id: i64,
    pub sku: String,
    pub created_at: Timestamp,
    pub variant_of: Option<String>,
    pub master_id: Option<i64>,
    pub bundle: Vec<BundleItem>,
}

const COLUMNS: &str = "id, customer_id, sku, created_at, variant_of, master_id";

/// A product row without its bundle; `attach_bundles` fills that in.
fn from_row(row: &Row<'_>) -> rusqlite::Result<Product> {
    Ok(Product {
        id: row.get(0)?,
        customer_id: row.get(1)?,
        sku: row.get(2)?,
        created_at: Timestamp(row.get(3)?),
        variant_of: row.get(4)?,
        master_id: row.get(5)?,
        bundle: Vec::new(),
    })
}

/// Loads the bundle components of every product in `products` with one query.
fn attach_bundles(conn: &Connection, products: &mut [Product]) -> rusqlite::Result<()> {
    if products.is_empty() {
        return Ok(());
    }
    let index: HashMap<i64, usize> = products.iter().enumerate().map(|(i, p)| (p.id, i)).collect();
    // At most 1000 placeholders (the page limit), well under SQLite's bound-parameter cap.
    let placeholders = vec!["?"; products.len()].join(", ");
    let mut stmt = conn.prepare(&format!(
        "SELECT product_id, component_id, qty FROM product_bundle_items
         WHERE product_id IN ({placeholders}) ORDER BY product_id, position"
    ))?;
    let rows = stmt.query_map(params_from_iter(products.iter().map(|p| p.id)), |r| {
        Ok((r.get::<_, i64>(0)?, BundleItem { product_id: r.get(1)?, qty: r.get(2)? }))
    })?;
    for row in rows {
        let (owner, item) = row?;
        if let Some(&i) = index.get(&owner) {
            products[i].bundle.push(item);
        }
    }
    Ok(())
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Product {id}"))
}

/// Reads one product the user may see, with its bundle.
pub fn find(conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<Product> {
    let product = conn
        .query_row(
            &format!("SELECT {COLUMNS} FROM products WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)"),
            params![id, user.scope()],
            from_row,
        )
        .optional()?
        .ok_or_else(|| not_found(id))?;
    let mut one = [product];
    attach_bundles(conn, &mut one)?;
    let [product] = one;
    Ok(product)
}

#[get("/products/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Product>> {
    let id = id.get("Product")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

// ---------------------------------------------------------------------------------------------
// Listing

pub const DEFAULT_LIMIT: i64 = 1000;
pub const MAX_LIMIT: i64 = 1000;

/// The page envelope of `GET /products`.
#[derive(Debug, Serialize)]
pub struct ProductPage {
    pub products: Vec<Product>,
    pub page: i64,
    pub limit: i64,
    pub total_count: i64,
    /// `ceil(total_count / limit)`: 0 when nothing matches.
    pub total_pages: i64,
}

/// The validated parameters of `GET /products`.
#[derive(Debug, PartialEq)]
struct ListQuery {
    customer_id: Option<i64>,
    sku: Option<String>,
    page: i64,
    limit: i64,
}

impl ListQuery {
    /// Takes each parameter from the query string when given there (non-empty), else from the
    /// body sent with the GET. An empty value counts as not given.
    fn read(query: [(&'static str, Option<String>); 4], body: &Body) -> ApiResult<ListQuery> {
        let mut values = HashMap::new();
        for (name, from_query) in query {
            let value = match from_query.filter(|v| !v.is_empty()) {
                Some(v) => Some(v),
                None => body_text(body, name)?,
            };
            values.insert(name, value.filter(|v| !v.is_empty()));
        }
        let number = |name: &str, min: i64, max: i64, problem: &str| -> ApiResult<Option<i64>> {
            match values.get(name).cloned().flatten() {
                None => Ok(None),
                Some(text) => match text.trim().parse::<i64>() {
                    Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
                    _ => Err(ApiError::bad_parameter(name, problem)),
                },
            }
        };
        Ok(ListQuery {
            customer_id: number("customer_id", 1, i64::MAX, "must be a positive integer id")?,
            page: number("page", 1, i64::MAX, "must be a positive integer")?.unwrap_or(1),
            limit: number("limit", 1, MAX_LIMIT, "must be an integer from 1 to 1000")?
                .unwrap_or(DEFAULT_LIMIT),
            sku: values.remove("sku").flatten(),
        })
    }
}

/// A filter given in a GET body, as text: JSON numbers and strings alike, null as absent.
fn body_text(body: &Body, name: &str) -> ApiResult<Option<String>> {
    match body.0.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(_) => Err(ApiError::bad_parameter(name, "must be a string or a number")),
    }
}

/// Rows a listing may return: the caller's tenancy (?1), then the filters (?2, ?3).
const LIST_FILTER: &str =
    "(?1 IS NULL OR customer_id = ?1) AND (?2 IS NULL OR customer_id = ?2) AND (?3 IS NULL OR sku = ?3)";

/// Lists products, paged and ordered by id. Filters: `customer_id`, `sku` (exact). The query
/// string is read raw, as the other listings read it: Rocket's typed query guards drop a
/// repeated parameter (`limit=x&limit=y`) silently instead of reading its last value.
#[get("/products", data = "<body>")]
async fn list(
    params: Params,
    user: AuthUser,
    body: Body,
    pool: &State<Pool>,
) -> ApiResult<Json<ProductPage>> {
    params.check_lengths()?;
    let given = |name: &'static str| (name, params.get(name).map(str::to_string));
    let query = ListQuery::read([given("customer_id"), given("sku"), given("page"), given("limit")], &body)?;
    let scope = user.scope();
    let page = user
        .run(pool, move |conn, _| {
            let filter = params![scope, query.customer_id, query.sku];
            let total_count: i64 =
                conn.query_row(&format!("SELECT COUNT(*) FROM products WHERE {LIST_FILTER}"), filter, |r| {
                    r.get(0)
                })?;
            // A page far past the end only needs to come back empty.
            let offset = (query.page - 1).saturating_mul(query.limit);
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM products WHERE {LIST_FILTER} ORDER BY id LIMIT ?4 OFFSET ?5"
            ))?;
            let mut products = stmt
                .query_map(params![scope, query.customer_id, query.sku, query.limit, offset], from_row)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            attach_bundles(conn, &mut products)?;
            Ok(ProductPage {
                products,
                page: query.page,
                limit: query.limit,
                total_count,
                total_pages: (total_count + query.limit - 1) / query.limit,
            })
        })
        .await?;
    Ok(Json(page))
}

// ---------------------------------------------------------------------------------------------
// Writing

/// Reads `bundle`: an array of `{product_id, qty}` objects (a form's `bundle[0][qty]` too).
/// Problems are reported as `bundle[i][field]`; a product listed twice is refused rather than
/// merged, so what is stored is exactly what was sent.
fn read_bundle(fields: &mut Fields) -> Patch<Vec<BundleItem>> {
    let items = match fields.array("bundle") {
        Patch::Value(items) => items,
        Patch::Null => return Patch::Null,
        Patch::Absent => return Patch::Absent,
    };
    let mut bundle = Vec::with_capacity(items.len());
    let mut seen = HashSet::new();
    let mut all_good = true;
    for (i, item) in items.into_iter().enumerate() {
        let mut element = match body::element_fields(fields, "bundle", i, item) {
            Ok(element) => element,
            Err(problem) => {
                fields.error(&format!("bundle[{i}]"), problem);
                all_good = false;
                continue;
            }
        };
        let product_id = element.required("product_id", Fields::id);
        let qty = element.required("qty", Fields::integer);
        if qty.is_some_and(|q| q < 1) {
            element.error("qty", "must be at least 1");
        }
        if product_id.is_some_and(|id| !seen.insert(id)) {
            element.error("product_id", "appears more than once in the bundle");
        }
        all_good &= !element.has_errors();
        fields.absorb(element);
        if let (Some(product_id), Some(qty)) = (product_id, qty) {
            bundle.push(BundleItem { product_id, qty });
        }
    }
    if all_good { Patch::Value(bundle) } else { Patch::Absent }
}

/// `variant_of`: text; null and blank both mean "no variant group".
fn read_variant_of(fields: &mut Fields) -> Patch<String> {
    match fields.text("variant_of") {
        Patch::Value(v) if v.trim().is_empty() => Patch::Null,
        Patch::Value(v) => Patch::Value(v.trim().to_string()),
        other => other,
    }
}

/// Whether `id` is a product of `customer_id`.
fn is_customers_product(conn: &Connection, id: i64, customer_id: i64) -> rusqlite::Result<bool> {
    api::owned_row_exists(conn, "products", id, Some(customer_id))
}

/// Whether following master links from `start` reaches `target`.
fn master_chain_reaches(conn: &Connection, start: i64, target: i64) -> rusqlite::Result<bool> {
    conn.query_row(
        "WITH RECURSIVE chain(id) AS (
           SELECT ?1
           UNION
           SELECT p.master_id FROM products p JOIN chain ON p.id = chain.id WHERE p.master_id IS NOT NULL
         )
         SELECT EXISTS (SELECT 1 FROM chain WHERE id = ?2)",
        params![start, target],
        |r| r.get(0),
    )
}

/// Whether `start`, or any product inside its bundle at any depth, is `target`.
fn bundle_tree_contains(conn: &Connection, start: i64, target: i64) -> rusqlite::Result<bool> {
    conn.query_row(
        "WITH RECURSIVE parts(id) AS (
           SELECT ?1
           UNION
           SELECT i.component_id FROM product_bundle_items i JOIN parts ON i.product_id = parts.id
         )
         SELECT EXISTS (SELECT 1 FROM parts WHERE id = ?2)",
        params![start, target],
        |r| r.get(0),
    )
}

/// Checks `master_id` and bundle components against the product's customer, and (for an
/// existing product `this`) against cycles. Foreign and unknown ids read the same.
fn check_references(
    conn: &Connection,
    customer_id: i64,
    this: Option<i64>,
    master_id: Option<i64>,
    bundle: Option<&[BundleItem]>,
) -> ApiResult<()> {
    let mut problems = Details::new();
    if let Some(master) = master_id {
        if this == Some(master) {
            problems.insert("master_id".into(), "cannot be the product itself".into());
        } else if !is_customers_product(conn, master, customer_id)? {
            problems.insert("master_id".into(), format!("unknown product {master}"));
        } else if let Some(this) = this
            && master_chain_reaches(conn, master, this)?
        {
            problems.insert("master_id".into(), "would make a cycle of master products".into());
        }
    }
    for (i, item) in bundle.unwrap_or_default().iter().enumerate() {
        let key = format!("bundle[{i}][product_id]");
        let component = item.product_id;
        if this == Some(component) {
            problems.insert(key, "a product cannot be a bundle of itself".into());
        } else if !is_customers_product(conn, component, customer_id)? {
            problems.insert(key, format!("unknown product {component}"));
        } else if let Some(this) = this
            && bundle_tree_contains(conn, component, this)?
        {
            problems.insert(key, format!("product {component} already contains this product"));
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(ApiError::Validation(problems)) }
}

fn sku_conflict(sku: &str, existing: Option<i64>) -> ApiError {
    let problem = match existing {
        Some(id) => format!("is already used by product {id}"),
        None => "is already used by another product".to_string(),
    };
    ApiError::conflict(format!("This customer already has a product with sku '{sku}'."), "sku", problem)
}

/// 409 if another product of the customer has `sku`.
fn check_sku_free(conn: &Connection, customer_id: i64, sku: &str, this: Option<i64>) -> ApiResult<()> {
    let existing: Option<i64> = conn
        .query_row(
            "SELECT id FROM products WHERE customer_id = ?1 AND sku = ?2 AND id IS NOT ?3",
            params![customer_id, sku, this],
            |r| r.get(0),
        )
        .optional()?;
    match existing {
        Some(id) => Err(sku_conflict(sku, Some(id))),
        None => Ok(()),
    }
}

/// Maps the `products_customer_sku` violation (a concurrent insert) to the same 409.
fn map_unique(sku: &str) -> impl FnOnce(rusqlite::Error) -> ApiError + '_ {
    move |e| if db::is_unique_violation(&e) { sku_conflict(sku, None) } else { e.into() }
}

fn replace_bundle(conn: &Connection, id: i64, bundle: &[BundleItem]) -> rusqlite::Result<()> {
    conn.execute("DELETE FROM product_bundle_items WHERE product_id = ?1", [id])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO product_bundle_items (product_id, position, component_id, qty) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for (position, item) in bundle.iter().enumerate() {
        insert.execute(params![id, position as i64, item.product_id, item.qty])?;
    }
    Ok(())
}

/// A validated create body.
struct NewProduct {
    customer_id: i64,
    sku: String,
    variant_of: Option<String>,
    master_id: Option<i64>,
    bundle: Vec<BundleItem>,
}

impl NewProduct {
    fn read(fields: &mut Fields, user: &AuthUser) -> Option<NewProduct> {
        let customer_id = api::customer_id_for_create(fields, user);
        let sku = fields.required("sku", Fields::text);
        let variant_of = read_variant_of(fields).value();
        let master_id = fields.id("master_id").value();
        let bundle = read_bundle(fields).value().unwrap_or_default();
        Some(NewProduct {
            customer_id: customer_id?,
            sku: sku?.trim().to_string(),
            variant_of,
            master_id,
            bundle,
        })
    }

    fn insert(&self, conn: &Connection, user: &AuthUser) -> ApiResult<i64> {
        api::check_customer(conn, user, self.customer_id, "customer_id")?;
        check_references(conn, self.customer_id, None, self.master_id, Some(&self.bundle))?;
        check_sku_free(conn, self.customer_id, &self.sku, None)?;
        conn.execute(
            "INSERT INTO products (customer_id, sku, variant_of, master_id, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![self.customer_id, self.sku, self.variant_of, self.master_id, dates::now_ms()],
        )
        .map_err(map_unique(&self.sku))?;
        let id = conn.last_insert_rowid();
        replace_bundle(conn, id, &self.bundle)?;
        Ok(id)
    }
}

#[post("/products", data = "<body>")]
async fn create(user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<Created> {
    let mut fields = body.fields();
    let product = NewProduct::read(&mut fields, &user);
    fields.finish()?;
    let product = product.ok_or(ApiError::Internal)?;
    let id = user
        .run(pool, move |conn, user| {
            // IMMEDIATE: the checks read, then the insert writes; taking the write lock up front
            // means another writer cannot invalidate the checks in between.
            let tx = db::write(conn)?;
            let id = product.insert(&tx, user)?;
            tx.commit()?;
            Ok(id)
        })
        .await?;
    Ok(Created::at("products", id))
}

#[patch("/products/<id>", data = "<body>")]
async fn update(id: Id, user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Product")?;
    let mut fields = body.fields();
    // A product stays with its customer: `customer_id` may be sent back unchanged, no more.
    let customer_id = fields.id("customer_id").value();
    let sku = fields.not_null("sku", Fields::text).map(|s| s.trim().to_string());
    let variant_of = read_variant_of(&mut fields);
    let master_id = fields.id("master_id");
    let bundle = read_bundle(&mut fields);
    fields.finish()?;

    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        let product = find(&tx, user, id)?;
        if customer_id.is_some_and(|c| c != product.customer_id) {
            return Err(ApiError::invalid("customer_id", "cannot be changed"));
        }
        let new_master = master_id.present();
        let new_bundle = bundle.present().map(Option::unwrap_or_default);
        check_references(&tx, product.customer_id, Some(id), new_master.flatten(), new_bundle.as_deref())?;
        if let Some(sku) = &sku {
            check_sku_free(&tx, product.customer_id, sku, Some(id))?;
            tx.execute("UPDATE products SET sku = ?1 WHERE id = ?2", params![sku, id])
                .map_err(map_unique(sku))?;
        }
        if let Some(variant_of) = variant_of.present() {
            tx.execute("UPDATE products SET variant_of = ?1 WHERE id = ?2", params![variant_of, id])?;
        }
        if let Some(master) = new_master {
            tx.execute("UPDATE products SET master_id = ?1 WHERE id = ?2", params![master, id])?;
        }
        if let Some(bundle) = new_bundle {
            replace_bundle(&tx, id, &bundle)?;
        }
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(v: Value) -> Body {
        Body(v.as_object().unwrap().clone())
    }

    #[test]
    fn query_string_wins_over_body_and_empty_counts_as_absent() {
        let q = ListQuery::read(
            [
                ("customer_id", Some("3".into())),
                ("sku", Some(String::new())),
                ("page", None),
                ("limit", Some("10".into())),
            ],
            &body(json!({"customer_id": 4, "sku": "A-1", "page": "2"})),
        )
        .unwrap();
        assert_eq!(q, ListQuery { customer_id: Some(3), sku: Some("A-1".into()), page: 2, limit: 10 });
    }

    #[test]
    fn bad_parameters_are_400_naming_the_parameter() {
        for (name, value) in
            [("limit", "0"), ("limit", "1001"), ("limit", "x"), ("page", "0"), ("customer_id", "a")]
        {
            let mut query = [("customer_id", None), ("sku", None), ("page", None), ("limit", None)];
            for slot in &mut query {
                if slot.0 == name {
                    slot.1 = Some(value.to_string());
                }
            }
            let Err(ApiError::BadRequest { details, .. }) = ListQuery::read(query, &Body::default()) else {
                panic!("{name}={value} should be refused");
            };
            assert!(details.contains_key(name), "{name}={value}: {details:?}");
        }
    }
}
