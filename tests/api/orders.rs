//! Orders: the document, every filter, sorting, both pagination modes, sessions, tenancy.

use std::collections::HashSet;

use crate::common::*;
use crate::fixtures::*;
use orderbridge::resources::listing;
use rocket::http::Status;
use serde_json::{Value, json};

fn full_order(store: i64) -> Value {
    json!({
        "store_id": store, "external_id": "BC-1", "external_display_id": "#1001", "customer_email": "a@example.com",
        "ordered_at": "2024-03-05T14:07:09.12Z", "signature_required": "true", "shipping_insurance": false,
        "shipping_amount": 12.5, "discount_amount": "0", "tax_amount": "1.07", "insured_amount": 999999.99,
        "fulfillment_state": "pending_shipment", "country_of_origin": "us", "currency_code": "usd",
        "custom": {"channel": "web"}, "id": 999, "created_at": "2000-01-01",
        "shipping_address": {"first_name": "Ann", "last_name": "Lee", "street1": "1 Main St", "city": "Austin",
                             "region": "TX", "postal_code": "78701", "country": "US", "telephone": "555"},
        "order_items": [
            {"name": "Tent", "sku": "T-1", "unit_price": "249.00", "weight": 12345678.9, "quantity": 2,
             "external_order_item_id": "L1", "gift_wrap": true, "options": [{"gift_message": "hi"}],
             "custom": {"gift_message": "for you"}},
            {"sku": "S-2"}
        ]
    })
}

#[rocket::async_test]
async fn get_order_returns_every_field_with_two_digit_decimals() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let r = app
        .send(
            "POST",
            "/import/orders",
            &app.admin,
            rocket::http::ContentType::JSON,
            json!([full_order(w.store)]).to_string(),
        )
        .await;
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert_eq!(r.body, json!({"created": 1, "updated": 0}));
    let list = app.get("/orders?page=1", &app.admin).await;
    let id = list.body["orders"][0]["id"].as_i64().unwrap();
    let r = app.get(&format!("/orders/{id}"), &app.admin).await;
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.header("Content-Type"), Some("application/json"));
    for fragment in [
        r#""shipping_amount":12.50"#,
        r#""discount_amount":0.00"#,
        r#""insured_amount":999999.99"#,
        r#""weight":12345678.90"#,
        r#""unit_price":249.00"#,
    ] {
        assert!(r.text.contains(fragment), "{fragment} in {}", r.text);
    }
    let o = &r.body["order"];
    assert_eq!(o["id"], id);
    assert_eq!(o["store_id"], w.store);
    assert_eq!(o["ordered_at"], "2024-03-05T14:07:09.120Z");
    assert_eq!(o["signature_required"], true);
    assert_eq!(o["country_of_origin"], "US");
    assert_eq!(o["currency_code"], "USD");
    assert_eq!(o["custom"], json!({"channel": "web"}));
    assert_eq!(o["billing_address"], Value::Null);
    assert_eq!(o["shipping_address"]["city"], "Austin");
    assert_eq!(o["invoice_number"], Value::Null, "unknown fields are null");
    assert_ne!(o["created_at"], "2000-01-01T00:00:00.000Z", "created_at is the service's");
    assert_eq!(o.as_object().unwrap().len(), 60, "every documented field: {o}");
    let item = &o["order_items"][0];
    assert_eq!(item["quantity"], 2);
    assert_eq!(item["gift_wrap"], true);
    assert_eq!(item["options"], json!([{"gift_message": "hi"}]));
    assert_eq!(item["custom"], json!({"gift_message": "for you"}));
    assert_eq!(o["order_items"][1]["quantity"], 1, "quantity defaults to 1");
    assert_eq!(item.as_object().unwrap().len(), 24, "{item}");
    assert!(item["id"].as_i64().is_some());

    assert_error(&app.get("/orders/99999", &app.admin).await, 404, "not_found");
    assert_error(&app.get("/orders/abc", &app.admin).await, 404, "not_found");
    let (_, other) = app.tenant("Other").await;
    assert_error(&app.get(&format!("/orders/{id}"), &other).await, 404, "not_found");
    assert_eq!(app.get(&format!("/orders/{id}"), &w.token).await.status, Status::Ok);
}

/// Four orders placed relative to now, in two stores.
async fn dated_orders(app: &TestApp) -> (World, i64, Vec<i64>) {
    let w = world(app, "Acme").await;
    let second = store(app, w.customer, "Second Shop");
    let specs = [
        (w.store, -10 * DAY, "shipped"),
        (w.store, -5 * DAY, "pending_shipment"),
        (second, -2 * DAY, "shipped"),
        (second, -HOUR, "cancelled"),
    ];
    let orders = specs
        .iter()
        .enumerate()
        .map(|(i, (store, offset, state))| {
            json!({"store_id": store, "external_id": format!("E{i}"), "external_display_id": format!("#{i}"),
                   "ordered_at": at(*offset), "fulfillment_state": state})
        })
        .collect();
    import_orders(app, orders);
    let all = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders");
    assert_eq!(all.len(), 4);
    (w, second, all)
}

#[rocket::async_test]
async fn every_order_filter_selects_what_it_names() {
    let app = spawn_app().await;
    let (w, second, o) = dated_orders(&app).await;
    let day = |offset: i64| at(offset)[..10].to_string();
    let cases: Vec<(String, Vec<i64>)> = vec![
        ("ordered_at_min=3 days ago".into(), vec![o[2], o[3]]),
        ("ordered_at_min=yesterday".into(), vec![o[3]]),
        ("ordered_at_max=3+days+ago".into(), vec![o[0], o[1]]),
        (format!("ordered_at_min={}", day(-6 * DAY)), vec![o[1], o[2], o[3]]),
        (format!("ordered_at_min={}&ordered_at_max={}", day(-6 * DAY), day(-3 * DAY)), vec![o[1]]),
        (format!("ordered_at_max={}", at(-7 * DAY).replace(':', "%3A")), vec![o[0]]),
        (format!("ordered_at_min={}", at(-6 * DAY)), vec![o[1], o[2], o[3]]),
        (format!("ordered_at_min={}T00:00:00%2B00:00", day(-6 * DAY)), vec![o[1], o[2], o[3]]),
        ("ordered_at_min=now".into(), vec![]),
        ("created_at_min=1 hour ago".into(), o.clone()),
        ("created_at_max=1 hour ago".into(), vec![]),
        ("created_at_max=now&created_at_min=2020-01-01".into(), o.clone()),
        (format!("store_id={}", w.store), vec![o[0], o[1]]),
        (format!("store_id={second}"), vec![o[2], o[3]]),
        ("store_id=Second+Shop".into(), vec![o[2], o[3]]),
        ("store_id=No Such Shop".into(), vec![]),
        ("external_id=E2".into(), vec![o[2]]),
        ("external_display_id=%231".into(), vec![o[1]]),
        ("state=shipped".into(), vec![o[0], o[2]]),
        ("state=shipped&store_id=Second Shop".into(), vec![o[2]]),
        ("unknown_parameter=1".into(), o.clone()),
    ];
    for (query, want) in cases {
        for mode in ["&page=1", ""] {
            let r = app.get(&format!("/orders?{}{mode}", query.replace(' ', "+")), &app.admin).await;
            assert_eq!(r.status, Status::Ok, "{query}: {r:?}");
            assert_eq!(ids(&r.body, "orders"), want, "{query}{mode}");
            assert_eq!(r.body["total_count"], want.len(), "{query}{mode}");
        }
    }
}

#[rocket::async_test]
async fn bad_listing_parameters_answer_400_naming_the_parameter() {
    let app = spawn_app().await;
    for (query, parameter) in [
        ("ordered_at_min=not+a+date", "ordered_at_min"),
        ("ordered_at_max=2024-13-45", "ordered_at_max"),
        ("created_at_min=", "created_at_min"),
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("page=0", "page"),
        ("page=-1", "page"),
        ("page=x", "page"),
        ("sort=nope", "sort"),
        ("sort=order_items", "sort"),
        ("sort=custom", "sort"),
        ("sort=id%3B+DROP+TABLE+orders", "sort"),
    ] {
        let r = app.get(&format!("/orders?{query}"), &app.admin).await;
        assert_error(&r, 400, "bad_request");
        assert!(r.body["error"]["details"][parameter].is_string(), "{query}: {r:?}");
    }
    assert_eq!(app.get("/orders?limit=1000&page=1", &app.admin).await.status, Status::Ok);
}

#[rocket::async_test]
async fn an_over_long_query_parameter_answers_422_naming_it() {
    let app = spawn_app().await;
    let long = "x".repeat(listing::MAX_PARAMETER_CHARS + 1);
    for path in ["/orders", "/shipments", "/products"] {
        for query in [format!("page=1&external_id={long}"), format!("sku={long}&tracking_number={long}")] {
            let r = app.get(&format!("{path}?{query}"), &app.admin).await;
            assert_error(&r, 422, "validation_failed");
            let details = r.body["error"]["details"].as_object().unwrap();
            let named = details.keys().next().unwrap();
            assert!(query.contains(&format!("{named}=")), "{path}?{query}: {details:?}");
            assert!(details[named].as_str().unwrap().contains("1024"), "{details:?}");
            assert!(!r.text.contains(&long), "the value is not echoed");
        }
    }
    // Exactly at the cap is fine, in characters, not bytes.
    let at_cap = "%C3%A9".repeat(listing::MAX_PARAMETER_CHARS);
    let r = app.get(&format!("/orders?page=1&external_id={at_cap}"), &app.admin).await;
    assert_eq!(r.status, Status::Ok, "{r:?}");
}

#[rocket::async_test]
async fn sorting_breaks_ties_by_id_honours_descending_and_the_last_sort() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let emails = ["c@x", "a@x", "b@x", "a@x", "c@x"];
    let orders = emails
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({"store_id": w.store, "external_id": format!("E{i}"), "customer_email": e,
                             "ordered_at": at(-(i as i64) * DAY), "shipping_amount": (5 - i) as i64})
        })
        .collect();
    import_orders(&app, orders);
    let o = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders");
    let cases = [
        ("sort=customer_email", vec![o[1], o[3], o[2], o[0], o[4]]),
        ("sort=-customer_email", vec![o[4], o[0], o[2], o[3], o[1]]),
        ("sort=ordered_at", vec![o[4], o[3], o[2], o[1], o[0]]),
        ("sort=-ordered_at", o.clone()),
        ("sort=id&sort=ordered_at", vec![o[4], o[3], o[2], o[1], o[0]]),
        ("sort=ordered_at&sort=id", o.clone()),
        ("sort=-id", vec![o[4], o[3], o[2], o[1], o[0]]),
        ("sort=shipping_amount", vec![o[4], o[3], o[2], o[1], o[0]]),
        ("sort=store_id", o.clone()),
        ("sort=invoice_number", o.clone()),
    ];
    for (query, want) in cases {
        assert_eq!(
            ids(&app.get(&format!("/orders?{query}&page=1"), &app.admin).await.body, "orders"),
            want,
            "{query}"
        );
        // Session mode walks the same order two rows at a time.
        let mut walked = Vec::new();
        let mut r = app.get(&format!("/orders?{query}&limit=2"), &app.admin).await;
        for _ in 0..5 {
            let page = ids(&r.body, "orders");
            if page.is_empty() {
                break;
            }
            walked.extend(page);
            let session = r.body["session_id"].as_str().unwrap().to_string();
            r = app.get(&format!("/orders?session_id={session}"), &app.admin).await;
        }
        assert_eq!(walked, want, "session walk of {query}");
    }
}

#[rocket::async_test]
async fn page_mode_reports_pages_and_answers_empty_past_the_end() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    import_orders(&app, (0..7).map(|i| order(w.store, &format!("E{i}"))).collect());
    let r = app.get("/orders?page=2&limit=3", &app.admin).await;
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.body["orders"].as_array().unwrap().len(), 3);
    assert_eq!((r.body["page"].clone(), r.body["limit"].clone()), (json!(2), json!(3)));
    assert_eq!((r.body["total_count"].clone(), r.body["total_pages"].clone()), (json!(7), json!(3)));
    assert!(r.body.get("session_id").is_none());
    assert!(r.body.get("max_total_reached").is_none());
    assert_eq!(
        app.get("/orders?page=3&limit=3", &app.admin).await.body["orders"].as_array().unwrap().len(),
        1
    );
    let past = app.get("/orders?page=4&limit=3", &app.admin).await;
    assert_eq!(past.body["orders"], json!([]));
    assert_eq!(app.get("/orders?page=9223372036854775807", &app.admin).await.body["orders"], json!([]));
    let r = app.get("/orders?page=1", &app.admin).await;
    assert_eq!(r.body["limit"], 100, "default limit");
}

#[rocket::async_test]
async fn page_mode_is_capped_at_ten_thousand_rows_and_sessions_are_not() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let counts = import_orders(
        &app,
        (0..10_050).map(|i| json!({"store_id": w.store, "external_id": format!("E{i}")})).collect(),
    );
    assert_eq!(counts.created, 10_050);
    let r = app.get("/orders?page=10&limit=1000", &app.admin).await;
    assert_eq!(r.body["total_count"], 10_000);
    assert_eq!(r.body["total_pages"], 10);
    assert_eq!(r.body["max_total_reached"], true);
    let page = ids(&r.body, "orders");
    assert_eq!(page.len(), 1000);
    let r = app.get("/orders?page=11&limit=1000", &app.admin).await;
    assert_eq!(r.body["orders"], json!([]), "rows past the 10,000th are never returned");
    let r = app.get("/orders?page=34&limit=300", &app.admin).await;
    assert_eq!(r.body["total_pages"], 34);
    assert_eq!(r.body["orders"].as_array().unwrap().len(), 100, "the last page stops at the cap");
    let r = app.get("/orders?limit=1000", &app.admin).await;
    assert_eq!(r.body["total_count"], 10_050, "session mode is uncapped");
    assert_eq!(r.body["total_pages"], 11);
    assert!(r.body.get("max_total_reached").is_none());
    let r = app.get("/orders?page=1&external_id=E5", &app.admin).await;
    assert!(r.body.get("max_total_reached").is_none());
}

#[rocket::async_test]
async fn a_session_walks_to_the_end_without_duplicates_or_gaps_while_orders_arrive() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let states = ["a", "b", "c"];
    let make = |i: usize| {
        let mut o =
            json!({"store_id": w.store, "external_id": format!("E{i}"), "fulfillment_state": states[i % 3]});
        if !i.is_multiple_of(5) {
            o["ordered_at"] = json!(at(-((i % 17) as i64) * HOUR));
        }
        o
    };
    import_orders(&app, (0..230).map(make).collect());
    let originals: HashSet<i64> =
        ids(&app.get("/orders?page=1&limit=1000", &app.admin).await.body, "orders").into_iter().collect();
    for sort in
        ["id", "-id", "external_id", "fulfillment_state", "-fulfillment_state", "ordered_at", "-ordered_at"]
    {
        let first = app.get(&format!("/orders?sort={sort}&limit=50"), &app.admin).await;
        assert_eq!(first.body["page"], 1);
        assert!(first.body["total_count"].as_u64().unwrap() >= originals.len() as u64);
        let session = first.body["session_id"].as_str().unwrap().to_string();
        assert!(session.len() >= 22, "at least 128 bits: {session}");
        let mut seen = ids(&first.body, "orders");
        let mut page = 1;
        loop {
            page += 1;
            assert!(page < 20, "bounded walk");
            if page == 3 {
                let n = originals.len() + 1000 * page as usize;
                import_orders(&app, (n..n + 20).map(make).collect());
            }
            let r =
                app.get(&format!("/orders?session_id={session}&sort=id&limit=1&page=7"), &app.admin).await;
            assert_eq!(r.status, Status::Ok, "{r:?}");
            assert_eq!(r.body["page"], page);
            assert_eq!(r.body["limit"], 50, "original limit persists");
            assert!(r.body.get("total_count").is_none());
            let rows = ids(&r.body, "orders");
            if rows.is_empty() {
                break;
            }
            seen.extend(rows);
        }
        let unique: HashSet<i64> = seen.iter().copied().collect();
        assert_eq!(unique.len(), seen.len(), "no duplicates with sort={sort}");
        assert!(originals.is_subset(&unique), "no gaps with sort={sort}");
        let after = app.get(&format!("/orders?session_id={session}"), &app.admin).await;
        assert_eq!(after.body["orders"], json!([]), "past the end stays empty");
    }
}

#[rocket::async_test]
async fn requests_on_one_session_at_once_get_successive_pages() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    import_orders(&app, (0..40).map(|i| order(w.store, &format!("E{i}"))).collect());
    let first = app.get("/orders?limit=2", &app.admin).await;
    let session = first.body["session_id"].as_str().unwrap().to_string();
    let path = format!("/orders?session_id={session}");
    let replies = rocket::futures::future::join_all((0..12).map(|_| app.get(&path, &app.admin))).await;
    let mut pages: Vec<u64> = replies.iter().map(|r| r.body["page"].as_u64().expect("a page")).collect();
    pages.sort_unstable();
    assert_eq!(pages, (2..14).collect::<Vec<u64>>(), "each request got its own next page");
    let mut seen = ids(&first.body, "orders");
    for r in &replies {
        seen.extend(ids(&r.body, "orders"));
    }
    seen.sort_unstable();
    let all = ids(&app.get("/orders?page=1&limit=26", &app.admin).await.body, "orders");
    assert_eq!(seen, all, "the first 13 pages, each row once");
}

#[rocket::async_test]
async fn an_unindexed_sort_gets_its_index_from_a_listing_that_need_not_wait_for_it() {
    let app = spawn_app().await;
    let w = world(&app, "Acme").await;
    let email = |i: usize| format!("{:02}@example.com", (i * 7) % 30);
    let orders = (0..30).map(|i| {
        let mut o = order(w.store, &format!("E{i}"));
        o["customer_email"] = json!(email(i));
        o
    });
    import_orders(&app, orders.collect());
    let pool = app.pool();
    let index_exists = || -> bool {
        pool.get()
            .unwrap()
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name = 'orders_sort_customer_email'",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    let emails = |r: &Reply| -> Vec<String> {
        r.body["orders"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["customer_email"].as_str().unwrap().into())
            .collect()
    };
    let mut sorted: Vec<String> = (0..30).map(email).collect();
    sorted.sort();

    // An import holds the write lock: the listing answers at once, sorted, and builds nothing.
    let mut writer = pool.get().unwrap();
    let import = writer.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).unwrap();
    let r = app.get("/orders?sort=customer_email&page=1", &app.admin).await;
    assert_eq!(r.status, Status::Ok, "{r:?}");
    assert_eq!(emails(&r), sorted);
    assert!(!index_exists(), "the write lock was taken, so no index yet");
    drop(import);

    let session = app.get("/orders?sort=customer_email&limit=10", &app.admin).await;
    assert!(index_exists(), "the first listing with the lock free built the index");
    let mut walked = emails(&session);
    let id = session.body["session_id"].as_str().unwrap().to_string();
    for _ in 0..3 {
        walked.extend(emails(&app.get(&format!("/orders?session_id={id}"), &app.admin).await));
    }
    assert_eq!(walked, sorted, "pages after the index was built continue the same order");
}

#[rocket::async_test]
async fn sessions_expire_and_belong_to_their_user() {
    let app = spawn_app_with(|f| f.merge(("session_ttl_secs", 1))).await;
    let w = world(&app, "Acme").await;
    import_orders(&app, (0..5).map(|i| order(w.store, &format!("E{i}"))).collect());
    let first = app.get("/orders?limit=2", &app.admin).await;
    let session = first.body["session_id"].as_str().unwrap().to_string();
    let other = app.get(&format!("/orders?session_id={session}"), &w.token).await;
    assert_error(&other, 404, "session_not_found");
    let shipments = app.get(&format!("/shipments?session_id={session}"), &app.admin).await;
    assert_error(&shipments, 404, "session_not_found");
    assert_eq!(app.get(&format!("/orders?session_id={session}"), &app.admin).await.body["page"], 2);
    assert_error(&app.get("/orders?session_id=made-up", &app.admin).await, 404, "session_not_found");
    rocket::tokio::time::sleep(std::time::Duration::from_millis(1300)).await;
    assert_error(
        &app.get(&format!("/orders?session_id={session}"), &app.admin).await,
        404,
        "session_not_found",
    );
    let sessions = app.client.rocket().state::<orderbridge::resources::listing::Sessions>().unwrap();
    assert!(sessions.is_empty(), "the sweeper or the lookup dropped the expired session");
}

#[rocket::async_test]
async fn sessions_past_the_cap_answer_429() {
    let app = spawn_app_with(|f| f.merge(("max_sessions", 2))).await;
    for _ in 0..2 {
        assert_eq!(app.get("/orders", &app.admin).await.status, Status::Ok);
    }
    assert_error(&app.get("/orders", &app.admin).await, 429, "too_many_sessions");
    assert_eq!(app.get("/orders?page=1", &app.admin).await.status, Status::Ok, "page mode needs no session");
}

#[rocket::async_test]
async fn a_customer_user_sees_only_its_own_orders() {
    let app = spawn_app().await;
    let a = world(&app, "Acme").await;
    let b = world(&app, "Bluebird").await;
    import_orders(&app, vec![order(a.store, "A1"), order(b.store, "B1"), order(a.store, "A2")]);
    let all = ids(&app.get("/orders?page=1", &app.admin).await.body, "orders");
    assert_eq!(ids(&app.get("/orders?page=1", &a.token).await.body, "orders"), vec![all[0], all[2]]);
    assert_eq!(ids(&app.get("/orders", &b.token).await.body, "orders"), vec![all[1]]);
    let r = app.get(&format!("/orders?page=1&store_id={}", b.store), &a.token).await;
    assert_eq!(r.body["orders"], json!([]));
    assert_eq!(r.body["total_count"], 0);
    assert_error(&app.get(&format!("/orders/{}", all[1]), &a.token).await, 404, "not_found");
    assert_error(&app.get_anonymous("/orders").await, 401, "unauthorized");
}

#[rocket::async_test]
async fn totals_follow_every_write_even_when_counts_are_remembered() {
    let app = spawn_app().await;
    let w = world(&app, "Counted").await;
    let total = |body: &Value| body["total_count"].as_i64().unwrap();
    import_orders(&app, (0..3).map(|i| order(w.store, &format!("C-{i}"))).collect());
    let by_name = "/orders?page=1&store_id=Counted+Store";
    assert_eq!(total(&app.get("/orders?page=1", &app.admin).await.body), 3);
    assert_eq!(total(&app.get(by_name, &app.admin).await.body), 3);

    // Through the library, as `orderbridge import` does from another process.
    import_orders(&app, (3..5).map(|i| order(w.store, &format!("C-{i}"))).collect());
    assert_eq!(total(&app.get("/orders?page=1", &app.admin).await.body), 5, "an import shows at once");
    assert_eq!(total(&app.get("/orders", &app.admin).await.body), 5, "in session mode too");

    // Renaming the store changes what the name filter matches, though no order changed.
    let r = app.patch_json(&format!("/stores/{}", w.store), &app.admin, json!({"name": "Renamed"})).await;
    assert_eq!(r.status.code, 204, "{r:?}");
    assert_eq!(total(&app.get(by_name, &app.admin).await.body), 0);
    assert_eq!(total(&app.get("/orders?page=1&store_id=Renamed", &app.admin).await.body), 5);
}
