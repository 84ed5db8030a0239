//! Listing orders and shipments (CONTRACT §7): filters turned into SQL with bound
//! parameters, a whitelisted sort, page mode (capped at 10,000 rows, counted no further than
//! the cap needs) and session mode (keyset pages: the last row's sort value and id, so any
//! page costs what the first does). A page is one query per keyset segment over stored
//! documents, concatenated into the response body.

mod cache;
#[cfg(test)]
mod plan_tests;
pub mod query;
pub mod sessions;

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, params_from_iter};

use crate::db::Pool;
use crate::http::api::ApiResult;
use crate::http::auth::AuthUser;
pub use crate::http::conditional::{JsonText, Tagged};
use crate::http::error::ApiError;
pub use cache::{Cache, Counts, Pages};
pub use query::{MAX_PARAMETER_CHARS, Params};
use sessions::Position;
pub use sessions::Sessions;

/// Rows a page-mode listing reaches at most.
pub const PAGE_MODE_CAP: i64 = 10_000;
pub const DEFAULT_LIMIT: i64 = 100;
pub const MAX_LIMIT: i64 = 1000;

/// A listable resource: its tables, sortable columns and filters.
pub struct Resource {
    /// The response's array key, and the resource a session belongs to.
    pub key: &'static str,
    /// The table of columns (aliased `o`) and the table of documents (by the same id).
    pub table: &'static str,
    pub docs: &'static str,
    /// Sortable properties; each is also the column's name.
    pub sorts: &'static [&'static str],
    /// The sorts whose index `schema.sql` creates. Any other sort gets its index from the first
    /// listing that asks for it (`Plan::ensure_sort_index`).
    pub indexed_sorts: &'static [&'static str],
    /// The sortable columns that are never NULL (their keyset needs no NULL segment).
    pub not_null: &'static [&'static str],
    /// Adds the resource's filters from the query parameters.
    pub filters: fn(&Params, &mut Where) -> ApiResult<()>,
}

/// SQL conditions (joined by AND) and their bound parameters, in order.
#[derive(Debug, Clone, Default)]
pub struct Where {
    conditions: Vec<String>,
    params: Vec<SqlValue>,
}

impl Where {
    pub fn push(&mut self, condition: impl Into<String>, params: impl IntoIterator<Item = SqlValue>) {
        self.conditions.push(condition.into());
        self.params.extend(params);
    }

    fn sql(&self, extra: &str) -> String {
        let mut parts: Vec<&str> = self.conditions.iter().map(String::as_str).collect();
        if !extra.is_empty() {
            parts.push(extra);
        }
        if parts.is_empty() { "1".to_string() } else { parts.join(" AND ") }
    }

    /// `column >= min` and `column < max` from `NAME_min` / `NAME_max` dateStrings.
    ///
    /// Without statistics SQLite guesses a one-sided range keeps a quarter of the rows and
    /// prefers walking the id order past non-matching rows; "the last 3 days" of a 90-day
    /// table would then scan nearly all of it. The likelihood hint says date ranges are
    /// selective, so the date index is used; a range matching most rows then costs a sort of
    /// index entries (never documents) instead.
    pub fn date_range(&mut self, p: &Params, name: &str, column: &str) -> ApiResult<()> {
        if let Some(min) = p.date(&format!("{name}_min"))? {
            self.push(format!("likelihood({column} >= ?, 0.05)"), [SqlValue::Integer(min)]);
        }
        if let Some(max) = p.date(&format!("{name}_max"))? {
            self.push(format!("likelihood({column} < ?, 0.05)"), [SqlValue::Integer(max)]);
        }
        Ok(())
    }

    /// `column = value` when the parameter is given.
    pub fn equals(&mut self, p: &Params, name: &str, column: &str) {
        if let Some(value) = p.get(name) {
            self.push(format!("{column} = ?"), [SqlValue::Text(value.to_string())]);
        }
    }

    /// An id, or (text that is not an integer) the rows of `table` whose `name_column` is it.
    pub fn id_or_name(&mut self, p: &Params, name: &str, column: &str, table: &str, name_column: &str) {
        let Some(value) = p.get(name) else { return };
        match value.trim().parse::<i64>() {
            Ok(id) => self.push(format!("{column} = ?"), [SqlValue::Integer(id)]),
            Err(_) => self.push(
                format!("{column} IN (SELECT id FROM {table} WHERE {name_column} = ?)"),
                [SqlValue::Text(value.to_string())],
            ),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sort {
    pub column: &'static str,
    pub descending: bool,
}

impl Sort {
    /// `sort=PROP` or `sort=-PROP` against the whitelist; default ascending id.
    pub fn parse(resource: &Resource, p: &Params) -> ApiResult<Sort> {
        let Some(raw) = p.get("sort") else { return Ok(Sort { column: "id", descending: false }) };
        let (descending, name) = match raw.trim().strip_prefix('-') {
            Some(name) => (true, name),
            None => (false, raw.trim()),
        };
        match resource.sorts.iter().find(|s| **s == name) {
            Some(column) => Ok(Sort { column, descending }),
            None => Err(ApiError::bad_parameter(
                "sort",
                format!("names an unknown property '{name}'; sortable: {}", resource.sorts.join(", ")),
            )),
        }
    }

    fn order_by(&self) -> String {
        let dir = if self.descending { " DESC" } else { "" };
        if self.column == "id" { format!("o.id{dir}") } else { format!("o.{}{dir}, o.id{dir}", self.column) }
    }
}

/// What a listing reads: resource, filters (with the caller's tenancy), sort and page size.
#[derive(Debug, Clone)]
pub struct Plan {
    pub resource: &'static Resource,
    pub filter: Where,
    pub sort: Sort,
    pub limit: i64,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.key)
    }
}

impl Plan {
    pub fn new(resource: &'static Resource, p: &Params, scope: Option<i64>) -> ApiResult<Plan> {
        let mut filter = Where::default();
        if let Some(customer_id) = scope {
            filter.push("o.customer_id = ?", [SqlValue::Integer(customer_id)]);
        }
        (resource.filters)(p, &mut filter)?;
        let sort = Sort::parse(resource, p)?;
        let limit = p.positive("limit", MAX_LIMIT)?.unwrap_or(DEFAULT_LIMIT);
        Ok(Plan { resource, filter, sort, limit })
    }

    /// The name of the index a sort by `column` uses when `schema.sql` has none for it.
    pub fn sort_index_name(&self) -> String {
        format!("{}_sort_{}", self.resource.table, self.sort.column)
    }

    /// Creates the index of the sort, if `schema.sql` has none and no listing made it yet.
    ///
    /// Orders sort by any of their ~56 scalar properties. Indexing them all up front would
    /// slow every import and the seed for sorts most clients never ask for; without an index,
    /// each page of such a sort reads and sorts every matching row, a cost that grows with the
    /// table (~1 s a page at a million orders). Building the index costs about one such page,
    /// once; every page after it, in any session, walks the index like the indexed sorts do.
    /// The build needs the write lock: when another writer holds it, or the build fails, this
    /// request sorts without the index and a later one builds it.
    pub fn ensure_sort_index(&self, conn: &Connection) -> rusqlite::Result<()> {
        let Resource { table, indexed_sorts, .. } = self.resource;
        let column = self.sort.column;
        if indexed_sorts.contains(&column) {
            return Ok(());
        }
        let name = self.sort_index_name();
        let exists = conn
            .prepare_cached("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?1")?
            .exists([&name])?;
        if exists {
            return Ok(());
        }
        let sql = format!("CREATE INDEX IF NOT EXISTS {name} ON {table} ({column})");
        match crate::db::execute_if_unlocked(conn, &sql) {
            Ok(()) => log::info!("listing: created index {name} for sort={column}"),
            Err(e) if crate::db::is_busy(&e) => {}
            Err(e) => log::warn!("listing: could not create index {name}: {e}"),
        }
        Ok(())
    }

    /// The query of a page's ids and sort values, in order, from the narrow column table
    /// alone: an indexed sort walks its index, and documents are read afterwards by id
    /// (`documents`), so no document is ever copied into a sorter or read for a skipped row.
    fn select(&self, extra: &str, order_by: &str, offset: bool) -> String {
        let Resource { table, .. } = self.resource;
        let column = self.sort.column;
        let offset = if offset { " OFFSET ?" } else { "" };
        format!(
            "SELECT o.id, o.{column} FROM {table} o WHERE {} ORDER BY {order_by} LIMIT ?{offset}",
            self.filter.sql(extra)
        )
    }

    /// The documents of `ids`, in the order of `ids`, as a page's array: one statement
    /// whatever the page size, each document copied once, from SQLite's row into the page.
    fn documents(&self, conn: &Connection, ids: &[i64]) -> rusqlite::Result<Docs> {
        let mut docs = Docs::new(self.resource.key, ids.len());
        if ids.is_empty() {
            return Ok(docs);
        }
        let list: std::rc::Rc<Vec<SqlValue>> =
            std::rc::Rc::new(ids.iter().map(|&id| SqlValue::Integer(id)).collect());
        // SQLite never reorders a CROSS JOIN: the list is the outer loop, so the rows come in
        // the order of `ids`. An id without a document (a broken import) has no row and is
        // skipped rather than invented.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT d.doc FROM rarray(?1) j CROSS JOIN {} d ON d.id = j.value",
            self.resource.docs
        ))?;
        let mut rows = stmt.query([&list])?;
        while let Some(row) = rows.next()? {
            docs.push(row.get_ref(0)?.as_bytes()?);
        }
        Ok(docs)
    }

    /// The queries that read the rows after `cursor`, in order: each one a single index
    /// range, so none of them scans what earlier pages returned. Sorting by a column, rows
    /// tying with the cursor's value come first, then greater values; NULLs sort first
    /// ascending and last descending, as SQLite orders them.
    pub fn segments(&self, cursor: Option<&Cursor>) -> Vec<(String, Vec<SqlValue>)> {
        let with = |extra: &str, order_by: &str, params: Vec<SqlValue>| {
            let mut all = self.filter.params.clone();
            all.extend(params);
            (self.select(extra, order_by, false), all)
        };
        let (c, desc) = (self.sort.column, self.sort.descending);
        let Some(cursor) = cursor else { return vec![with("", &self.sort.order_by(), vec![])] };
        let id = SqlValue::Integer(cursor.id);
        if c == "id" {
            let cond = if desc { "o.id < ?" } else { "o.id > ?" };
            return vec![with(cond, &self.sort.order_by(), vec![id])];
        }
        let v = cursor.value.clone();
        let null = v == SqlValue::Null;
        if desc {
            let mut out = vec![with(&format!("o.{c} IS ? AND o.id < ?"), "o.id DESC", vec![v.clone(), id])];
            if !null {
                out.push(with(&format!("o.{c} < ?"), &self.sort.order_by(), vec![v]));
                if !self.resource.not_null.contains(&c) {
                    out.push(with(&format!("o.{c} IS NULL"), "o.id DESC", vec![]));
                }
            }
            out
        } else {
            let mut out = vec![with(&format!("o.{c} IS ? AND o.id > ?"), "o.id", vec![v.clone(), id])];
            if null {
                out.push(with(&format!("o.{c} IS NOT NULL"), &self.sort.order_by(), vec![]));
            } else {
                out.push(with(&format!("o.{c} > ?"), &self.sort.order_by(), vec![v]));
            }
            out
        }
    }

    /// The next `limit` rows after `cursor`: documents and the new cursor.
    pub fn fetch(
        &self,
        conn: &Connection,
        cursor: Option<&Cursor>,
    ) -> rusqlite::Result<(Docs, Option<Cursor>)> {
        let mut ids = Vec::with_capacity(self.limit as usize);
        let mut last = None;
        for (sql, mut params) in self.segments(cursor) {
            let want = self.limit - ids.len() as i64;
            if want <= 0 {
                break;
            }
            params.push(SqlValue::Integer(want));
            let mut stmt = conn.prepare_cached(&sql)?;
            let mut rows = stmt.query(params_from_iter(params))?;
            while let Some(row) = rows.next()? {
                let id = row.get(0)?;
                ids.push(id);
                last = Some(Cursor { id, value: row.get(1)? });
            }
        }
        Ok((self.documents(conn, &ids)?, last))
    }

    /// The query of rows `offset..offset + count` in sort order (page mode: `offset` < the cap).
    pub fn offset_query(&self, offset: i64, count: i64) -> (String, Vec<SqlValue>) {
        let sql = self.select("", &self.sort.order_by(), true);
        let mut params = self.filter.params.clone();
        params.push(SqlValue::Integer(count));
        params.push(SqlValue::Integer(offset));
        (sql, params)
    }

    fn fetch_offset(&self, conn: &Connection, offset: i64, count: i64) -> rusqlite::Result<Docs> {
        let (sql, params) = self.offset_query(offset, count);
        let mut stmt = conn.prepare_cached(&sql)?;
        let ids = stmt
            .query_map(params_from_iter(params), |r| r.get(0))?
            .collect::<rusqlite::Result<Vec<i64>>>()?;
        self.documents(conn, &ids)
    }

    /// The query counting matching rows, no further than `cap` when given.
    pub fn count_query(&self, cap: Option<i64>) -> (String, Vec<SqlValue>) {
        let table = self.resource.table;
        let mut params = self.filter.params.clone();
        let sql = match cap {
            Some(cap) => {
                params.push(SqlValue::Integer(cap));
                format!(
                    "SELECT count(*) FROM (SELECT 1 FROM {table} o WHERE {} LIMIT ?)",
                    self.filter.sql("")
                )
            }
            None => format!("SELECT count(*) FROM {table} o WHERE {}", self.filter.sql("")),
        };
        (sql, params)
    }
}

/// The last row a session returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Cursor {
    pub id: i64,
    pub value: SqlValue,
}

/// The pagination members after the array.
#[derive(Debug, Default)]
struct Meta<'a> {
    session_id: Option<&'a str>,
    page: i64,
    limit: i64,
    totals: Option<(i64, i64)>,
    max_total_reached: bool,
}

/// A page's body as it is written: the opening of its array, then each document.
pub struct Docs {
    out: Vec<u8>,
    count: usize,
}

impl Docs {
    fn new(key: &str, expected: usize) -> Docs {
        // Orders' documents are ~3 KB; a shorter guess would grow the buffer a few times.
        let mut out = Vec::with_capacity(64 + expected * 3_200);
        out.extend_from_slice(b"{\"");
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":[");
        Docs { out, count: 0 }
    }

    fn push(&mut self, doc: &[u8]) {
        if self.count > 0 {
            self.out.push(b',');
        }
        self.out.extend_from_slice(doc);
        self.count += 1;
    }

    /// Closes the array and adds the pagination members: the finished, tagged page.
    fn finish(mut self, meta: &Meta<'_>) -> Tagged {
        let mut tail = String::with_capacity(200);
        tail.push(']');
        if let Some(id) = meta.session_id {
            tail.push_str(",\"session_id\":");
            crate::jsondoc::write_str(&mut tail, id);
        }
        tail.push_str(&format!(",\"page\":{},\"limit\":{}", meta.page, meta.limit));
        if let Some((count, pages)) = meta.totals {
            tail.push_str(&format!(",\"total_count\":{count},\"total_pages\":{pages}"));
        }
        if meta.max_total_reached {
            tail.push_str(",\"max_total_reached\":true");
        }
        tail.push('}');
        self.out.extend_from_slice(tail.as_bytes());
        Tagged::json_bytes(self.out)
    }
}

fn pages(count: i64, limit: i64) -> i64 {
    (count + limit - 1) / limit
}

/// Answers a listing request in whichever mode its parameters choose, in one checked trip.
pub async fn list(
    resource: &'static Resource,
    user: AuthUser,
    p: Params,
    pool: &Pool,
    sessions: &Sessions,
    cache: &Cache,
) -> ApiResult<Tagged> {
    p.check_lengths()?;
    if let Some(id) = p.get("session_id") {
        let id = id.to_string();
        let sessions = sessions.clone();
        let held = sessions.lock(&id, user.id()).await;
        // Resumed inside the trip, so a revoked token learns nothing about the session.
        return user
            .run(pool, move |conn, user| {
                let sessions::Held { session, mut position } =
                    sessions.resume(&id, held, user.id(), resource.key)?;
                let (docs, last) = session.plan.fetch(conn, position.cursor.as_ref())?;
                position.page += 1;
                if last.is_some() {
                    position.cursor = last;
                }
                let meta = Meta {
                    session_id: Some(&id),
                    page: position.page,
                    limit: session.plan.limit,
                    ..Meta::default()
                };
                Ok(docs.finish(&meta))
            })
            .await;
    }
    let plan = Plan::new(resource, &p, user.scope())?;
    match p.positive("page", i64::MAX)? {
        Some(page) => {
            let cache = cache.clone();
            user.run(pool, move |conn, _| {
                let generation = crate::db::generation(conn)?;
                let key = Pages::key(&plan, page);
                if let Some(answer) = cache.pages.get(&key, generation) {
                    return Ok(answer);
                }
                let answer = page_mode(conn, &plan, page, generation, &cache.counts)?;
                cache.pages.put(key, generation, answer.clone());
                Ok(answer)
            })
            .await
        }
        None => {
            sessions.ensure_room()?;
            let user_id = user.id();
            let counts = cache.counts.clone();
            let (plan, docs, cursor, count) = user
                .run(pool, move |conn, _| {
                    plan.ensure_sort_index(conn)?;
                    let count = counts.count(conn, &plan, crate::db::generation(conn)?, None)?;
                    let (docs, cursor) = plan.fetch(conn, None)?;
                    Ok((plan, docs, cursor, count))
                })
                .await?;
            let limit = plan.limit;
            let id = sessions.open(user_id, plan, Position { cursor, page: 1 })?;
            let meta = Meta {
                session_id: Some(&id),
                page: 1,
                limit,
                totals: Some((count, pages(count, limit))),
                max_total_reached: false,
            };
            Ok(docs.finish(&meta))
        }
    }
}

fn page_mode(
    conn: &Connection,
    plan: &Plan,
    page: i64,
    generation: i64,
    counts: &Counts,
) -> ApiResult<Tagged> {
    plan.ensure_sort_index(conn)?;
    let matched = counts.count(conn, plan, generation, Some(PAGE_MODE_CAP + 1))?;
    let capped = matched > PAGE_MODE_CAP;
    let total = matched.min(PAGE_MODE_CAP);
    let offset = (page - 1).saturating_mul(plan.limit);
    let docs = if offset < total {
        plan.fetch_offset(conn, offset, plan.limit.min(total - offset))?
    } else {
        Docs::new(plan.resource.key, 0)
    };
    let meta = Meta {
        session_id: None,
        page,
        limit: plan.limit,
        totals: Some((total, pages(total, plan.limit))),
        max_total_reached: capped,
    };
    Ok(docs.finish(&meta))
}
