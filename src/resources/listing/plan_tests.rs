//! Every listing query uses an index: each filter alone and with tenancy, each sort in both
//! directions (the ones `schema.sql` indexes, and every other once a listing has asked for
//! it), every keyset segment and both counts. `EXPLAIN QUERY PLAN` must never show a full scan
//! of the column or document tables, and an indexed sort never sorts in a temporary b-tree.

use rusqlite::params_from_iter;
use rusqlite::types::Value as SqlValue;

use super::{Cursor, Params, Plan, Resource};
use crate::resources::orders::ORDERS;
use crate::resources::shipments::SHIPMENTS;

/// (id, parent, detail) of each plan line.
fn explain(conn: &rusqlite::Connection, sql: &str, params: Vec<SqlValue>) -> Vec<(i64, i64, String)> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    stmt.query_map(params_from_iter(params), |r| Ok((r.get(0)?, r.get(1)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// A scan of a whole table without an index. Walking the column table in id order is the
/// id index itself, allowed when the listing has no filter to search by.
fn full_scan(detail: &str, unfiltered_by_id: bool) -> bool {
    let scan = detail == "SCAN o" || detail.starts_with("SCAN d") || detail.starts_with("SCAN o ");
    scan && !detail.contains("USING") && !(unfiltered_by_id && detail == "SCAN o")
}

/// Every query a listing with `query` can run: both counts, page mode, and each segment
/// after a cursor with a value and with NULL.
fn queries(plan: &Plan) -> Vec<(String, Vec<SqlValue>)> {
    let mut out = vec![plan.count_query(Some(10_001)), plan.count_query(None), plan.offset_query(200, 100)];
    let mut segments = plan.segments(None);
    for value in [SqlValue::Integer(5), SqlValue::Text("x".into()), SqlValue::Null] {
        segments.extend(plan.segments(Some(&Cursor { id: 10, value })));
    }
    for (sql, mut params) in segments {
        params.push(SqlValue::Integer(100));
        out.push((sql, params));
    }
    out
}

/// An empty database with the schema; the folder goes when the first value is dropped.
fn fresh_database() -> (tempfile::TempDir, crate::db::Pool) {
    let dir = tempfile::tempdir().unwrap();
    let pool = crate::db::open(&dir.path().join("plan.db")).unwrap();
    (dir, pool)
}

/// `indexed_sort`: the sort must walk an index, after the listing has ensured its index.
fn check(resource: &'static Resource, query: &str, indexed_sort: bool) {
    let (_dir, pool) = fresh_database();
    let conn = pool.get().unwrap();
    for scope in [None, Some(1)] {
        let plan = Plan::new(resource, &Params::parse(query), scope).unwrap();
        if indexed_sort {
            plan.ensure_sort_index(&conn).unwrap();
        }
        let unfiltered_by_id = plan.sort.column == "id" && plan.filter.conditions.is_empty();
        for (sql, params) in queries(&plan) {
            let lines = explain(&conn, &sql, params);
            let context = format!("{} {query} (scope {scope:?}): {sql}\n{lines:#?}", resource.key);
            assert!(!lines.iter().any(|(_, _, d)| full_scan(d, unfiltered_by_id)), "full scan in {context}");
            // The id query reads the column table alone; an indexed sort walks its index.
            if indexed_sort && scope.is_none() {
                let sorts_inside = lines.iter().any(|(_, _, d)| d.contains("TEMP B-TREE"));
                assert!(!sorts_inside, "sorts outside the index: {context}");
            }
        }
    }
}

#[test]
fn every_order_filter_uses_an_index() {
    for query in [
        "ordered_at_min=2024-01-01",
        "ordered_at_max=2024-01-01",
        "created_at_min=2024-01-01&created_at_max=2024-02-01",
        "store_id=3",
        "store_id=Some+Store",
        "external_id=E1",
        "external_display_id=%231",
        "state=shipped",
        "state=shipped&store_id=3&sort=-ordered_at",
        "sort=customer_email&store_id=3",
    ] {
        check(&ORDERS, query, false);
    }
    // One store, a date window, sorted by that date: the benchmark's W3, from one index.
    check(&ORDERS, "store_id=3&ordered_at_min=2024-01-01&ordered_at_max=2024-02-01&sort=ordered_at", true);
    check(&ORDERS, "store_id=3&ordered_at_min=2024-01-01&sort=-ordered_at", true);
}

#[test]
fn every_order_sort_walks_an_index() {
    for column in ORDERS.sorts {
        check(&ORDERS, &format!("sort={column}"), true);
        check(&ORDERS, &format!("sort=-{column}"), true);
    }
}

#[test]
fn the_schema_indexes_exactly_the_sorts_the_resources_say_it_does() {
    let (_dir, pool) = fresh_database();
    let conn = pool.get().unwrap();
    for resource in [&ORDERS, &SHIPMENTS] {
        for column in resource.sorts {
            let plan = Plan::new(resource, &Params::parse(&format!("sort={column}")), None).unwrap();
            plan.ensure_sort_index(&conn).unwrap();
            let created: bool = conn
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE name = ?1",
                    [plan.sort_index_name()],
                    |r| r.get(0),
                )
                .unwrap();
            let listed = resource.indexed_sorts.contains(column);
            assert_eq!(
                created, !listed,
                "{} sort={column}: created an index {created}, listed {listed}",
                resource.key
            );
        }
    }
}

#[test]
fn every_shipment_filter_and_sort_uses_an_index() {
    for query in [
        "shipped_at_min=2024-01-01&shipped_at_max=2024-02-01",
        "created_at_min=2024-01-01",
        "tracking_number=1Z",
        "store_id=2",
        "store_id=Shop",
        "warehouse_id=2",
        "warehouse_id=West",
        "customer_id=2",
        "customer_id=Acme",
        "state=archived",
    ] {
        check(&SHIPMENTS, query, false);
    }
    for column in SHIPMENTS.sorts {
        check(&SHIPMENTS, &format!("sort={column}"), true);
        check(&SHIPMENTS, &format!("sort=-{column}"), true);
    }
}
