//! Small pieces every resource module shares: path ids, the 201 and 204 answers, and
//! reading an id reference (`customer_id`) under the caller's tenancy.

use rocket::http::Status;
use rocket::request::{FromParam, Request};
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use rusqlite::{Connection, OptionalExtension, Row};
use serde::Serialize;

use crate::http::auth::AuthUser;
use crate::http::body::Fields;
use crate::http::error::ApiError;
pub use crate::http::error::ApiResult;

/// An id in a path. Parsing never fails, so a bad segment (`/stores/abc`) still passes through
/// authentication and then answers 404, exactly like an unknown id.
#[derive(Debug, Clone, Copy)]
pub struct Id(Option<i64>);

impl Id {
    /// The id, or the 404 for `what` (e.g. "Store 12").
    pub fn get(self, what: &str) -> ApiResult<i64> {
        self.0.ok_or_else(|| ApiError::not_found(what.to_string()))
    }
}

impl<'a> FromParam<'a> for Id {
    type Error = std::convert::Infallible;

    fn from_param(param: &'a str) -> Result<Self, Self::Error> {
        let valid = !param.is_empty() && param.len() <= 18 && param.bytes().all(|b| b.is_ascii_digit());
        Ok(Id(valid.then(|| param.parse().ok()).flatten().filter(|id| *id >= 1)))
    }
}

/// 201 with `{"id": N}` and a `Location` header.
pub struct Created {
    pub id: i64,
    pub location: String,
}

impl Created {
    pub fn at(collection: &str, id: i64) -> Self {
        Created { id, location: format!("/{collection}/{id}") }
    }
}

#[derive(Serialize)]
struct IdBody {
    id: i64,
}

impl<'r> Responder<'r, 'static> for Created {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        Response::build_from(Json(IdBody { id: self.id }).respond_to(req)?)
            .status(Status::Created)
            .raw_header("Location", self.location)
            .ok()
    }
}

/// 204 with no body.
pub struct NoContent;

impl<'r> Responder<'r, 'static> for NoContent {
    fn respond_to(self, _: &'r Request<'_>) -> response::Result<'static> {
        Response::build().status(Status::NoContent).ok()
    }
}

/// Whether a row with this id exists in `table`, owned by `customer_id` when given.
/// `table` is always a literal from our own code.
pub fn owned_row_exists(
    conn: &Connection,
    table: &'static str,
    id: i64,
    customer_id: Option<i64>,
) -> rusqlite::Result<bool> {
    conn.query_row(
        &format!("SELECT EXISTS (SELECT 1 FROM {table} WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2))"),
        rusqlite::params![id, customer_id],
        |r| r.get(0),
    )
}

/// Reads `customer_id` of a create body: required for admins; for a customer user it defaults
/// to its own customer, and any other id is reported as unknown (no leak of existence).
/// The existence check of the id happens in the transaction (`check_customer`).
pub fn customer_id_for_create(fields: &mut Fields, user: &AuthUser) -> Option<i64> {
    match user.scope() {
        None => fields.required("customer_id", Fields::id),
        // A wrong type was recorded by `id`; the 422 comes from `finish` either way.
        Some(own) => fields.id("customer_id").value().or(Some(own)),
    }
}

/// 422 unless `customer_id` names a customer the user may see.
pub fn check_customer(conn: &Connection, user: &AuthUser, customer_id: i64, field: &str) -> ApiResult<()> {
    // `customers` has no `customer_id` column, so `owned_row_exists` does not apply here.
    let visible = user.can_see(customer_id)
        && conn.query_row("SELECT EXISTS (SELECT 1 FROM customers WHERE id = ?1)", [customer_id], |r| {
            r.get(0)
        })?;
    if visible { Ok(()) } else { Err(ApiError::invalid(field, format!("unknown customer_id {customer_id}"))) }
}

/// A table of rows owned by customers, as a resource module describes it once: the table,
/// its column list and its row mapper. `table` and `columns` are literals of our own code.
pub struct Owned<T: 'static> {
    pub table: &'static str,
    pub columns: &'static str,
    pub from_row: fn(&Row<'_>) -> rusqlite::Result<T>,
    /// How a missing row is named in the 404 ("Store").
    pub noun: &'static str,
}

impl<T> Owned<T> {
    /// Every row the user may see, ordered by id.
    pub fn list(&self, conn: &Connection, user: &AuthUser) -> ApiResult<Vec<T>> {
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT {} FROM {} WHERE (?1 IS NULL OR customer_id = ?1) ORDER BY id",
            self.columns, self.table
        ))?;
        let rows = stmt.query_map([user.scope()], self.from_row)?;
        Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
    }

    /// One row the user may see; 404 for an unknown id and for another customer's row alike.
    pub fn find(&self, conn: &Connection, user: &AuthUser, id: i64) -> ApiResult<T> {
        conn.prepare_cached(&format!(
            "SELECT {} FROM {} WHERE id = ?1 AND (?2 IS NULL OR customer_id = ?2)",
            self.columns, self.table
        ))?
        .query_row(rusqlite::params![id, user.scope()], self.from_row)
        .optional()?
        .ok_or_else(|| ApiError::not_found(format!("{} {id}", self.noun)))
    }
}

/// Writes a PATCH's column changes to one row of `table`. `table` and every column are
/// literals of the calling module, never from the request.
pub fn update_columns(
    conn: &Connection,
    table: &str,
    id: i64,
    changes: Vec<(&str, rusqlite::types::Value)>,
) -> rusqlite::Result<()> {
    for (column, value) in changes {
        conn.execute(
            &format!("UPDATE {table} SET {column} = ?1 WHERE id = ?2"),
            rusqlite::params![value, id],
        )?;
    }
    Ok(())
}
