//! Customers: the tenants everything else belongs to. Admins create them; a customer user
//! sees and changes only its own record.

use rocket::serde::json::Json;
use rocket::{Route, State, get, patch, post, routes};
use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::dates::{self, Timestamp};
use crate::db::{self, Pool};
use crate::http::api::{ApiResult, Created, Id, NoContent, update_columns};
use crate::http::auth::AuthUser;
use crate::http::body::{Body, Fields, Patch};
use crate::http::error::ApiError;

pub fn routes() -> Vec<Route> {
    routes![list, get, create, update]
}

#[derive(Debug, Serialize)]
pub struct Customer {
    pub id: i64,
    pub company_name: String,
    pub street1: Option<String>,
    pub street2: Option<String>,
    pub street3: Option<String>,
    pub city: Option<String>,
    pub state: Option<String>,
    pub zipcode: Option<String>,
    pub country: Option<String>,
    pub provider: Option<String>,
    pub created_at: Timestamp,
}

const COLUMNS: &str =
    "id, company_name, street1, street2, street3, city, state, zipcode, country, provider, created_at";

/// The optional text fields, in `COLUMNS` order after `company_name`.
const OPTIONAL_TEXT: [&str; 8] =
    ["street1", "street2", "street3", "city", "state", "zipcode", "country", "provider"];

fn from_row(row: &Row<'_>) -> rusqlite::Result<Customer> {
    Ok(Customer {
        id: row.get(0)?,
        company_name: row.get(1)?,
        street1: row.get(2)?,
        street2: row.get(3)?,
        street3: row.get(4)?,
        city: row.get(5)?,
        state: row.get(6)?,
        zipcode: row.get(7)?,
        country: row.get(8)?,
        provider: row.get(9)?,
        created_at: Timestamp(row.get(10)?),
    })
}

fn not_found(id: i64) -> ApiError {
    ApiError::not_found(format!("Customer {id}"))
}

#[get("/customers")]
async fn list(user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Vec<Customer>>> {
    let scope = user.scope();
    let customers = user
        .run(pool, move |conn, _| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM customers WHERE (?1 IS NULL OR id = ?1) ORDER BY id"
            ))?;
            let rows = stmt.query_map([scope], from_row)?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await?;
    Ok(Json(customers))
}

/// Reads one customer the user may see.
pub fn find(conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<Customer> {
    if !user.can_see(id) {
        return Err(not_found(id));
    }
    conn.query_row(&format!("SELECT {COLUMNS} FROM customers WHERE id = ?1"), [id], from_row)
        .optional()?
        .ok_or_else(|| not_found(id))
}

#[get("/customers/<id>")]
async fn get(id: Id, user: AuthUser, pool: &State<Pool>) -> ApiResult<Json<Customer>> {
    let id = id.get("Customer")?;
    Ok(Json(user.run(pool, move |conn, user| find(conn, user, id)).await?))
}

/// A validated new customer, as the create call and a connection's nested `customer` take it.
pub struct NewCustomer {
    company_name: String,
    optional: [Option<String>; 8],
}

impl NewCustomer {
    /// Reads a create body; problems go into `fields`.
    pub fn read(fields: &mut Fields) -> Option<NewCustomer> {
        let company_name = fields.required("company_name", Fields::text);
        let optional = OPTIONAL_TEXT.map(|key| fields.text(key).value());
        Some(NewCustomer { company_name: company_name?, optional })
    }

    pub fn insert(&self, conn: &Connection) -> ApiResult<i64> {
        let [street1, street2, street3, city, state, zipcode, country, provider] = &self.optional;
        conn.execute(
            "INSERT INTO customers
               (company_name, street1, street2, street3, city, state, zipcode, country, provider, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                self.company_name.trim(),
                street1,
                street2,
                street3,
                city,
                state,
                zipcode,
                country,
                provider,
                dates::now_ms()
            ],
        )?;
        Ok(conn.last_insert_rowid())
    }
}

#[post("/customers", data = "<body>")]
async fn create(user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<Created> {
    if !user.is_admin() {
        return Err(ApiError::Forbidden("Only admin users may create customers.".to_string()));
    }
    let mut fields = body.fields();
    let customer = NewCustomer::read(&mut fields);
    fields.finish()?;
    let customer = customer.ok_or(ApiError::Internal)?;
    let id = user
        .run(pool, move |conn, _| {
            let tx = db::write(conn)?;
            let id = customer.insert(&tx)?;
            tx.commit()?;
            Ok(id)
        })
        .await?;
    Ok(Created::at("customers", id))
}

#[patch("/customers/<id>", data = "<body>")]
async fn update(id: Id, user: AuthUser, body: Body, pool: &State<Pool>) -> ApiResult<NoContent> {
    let id = id.get("Customer")?;
    let mut fields = body.fields();
    let company_name = fields.not_null("company_name", Fields::text);
    let optional: Vec<(&str, Patch<String>)> =
        OPTIONAL_TEXT.iter().map(|key| (*key, fields.text(key))).collect();
    fields.finish()?;

    user.run(pool, move |conn, user| {
        let tx = db::write(conn)?;
        find(&tx, user, id)?;
        let mut changes: Vec<(&str, SqlValue)> = Vec::new();
        if let Some(name) = company_name {
            changes.push(("company_name", name.trim().to_string().into()));
        }
        // `column` comes from OPTIONAL_TEXT, never from the request.
        for (column, value) in optional {
            if let Some(value) = value.present() {
                changes.push((column, value.into()));
            }
        }
        update_columns(&tx, "customers", id, changes)?;
        tx.commit()?;
        Ok(NoContent)
    })
    .await
}
