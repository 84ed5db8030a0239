//! Tokens, bearer checks, roles, and the error envelope of Rocket's own failures.

use crate::common::*;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use orderbridge::http::users::{self, Role};
use rocket::http::{ContentType, Header as HttpHeader, Status};
use serde_json::json;

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

fn stored_secret(app: &TestApp) -> String {
    let conn = app.pool().get().unwrap();
    let raw = orderbridge::db::setting(&conn, "jwt_secret").unwrap().expect("generated secret is kept");
    assert!(raw.starts_with("enc:v1:"), "the generated secret is kept sealed: {raw}");
    conn.query_row("SELECT ob_open_text(value) FROM settings WHERE key = 'jwt_secret'", [], |r| r.get(0))
        .unwrap()
}

fn sign(alg: Algorithm, secret: &str, claims: serde_json::Value) -> String {
    jsonwebtoken::encode(&Header::new(alg), &claims, &EncodingKey::from_secret(secret.as_bytes())).unwrap()
}

#[rocket::async_test]
async fn token_endpoint_issues_a_bearer_jwt_with_no_store() {
    let app = spawn_app().await;
    let r = app.token_reply("admin", ADMIN_PASSWORD).await;
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.body["token_type"], "Bearer");
    assert_eq!(r.body["expires_in"], 3600);
    assert_eq!(r.body["access_token"].as_str().unwrap().split('.').count(), 3);
    assert_eq!(r.header("Cache-Control"), Some("no-store"));
    assert_eq!(app.get("/customers", r.body["access_token"].as_str().unwrap()).await.status, Status::Ok);
}

#[rocket::async_test]
async fn token_endpoint_accepts_a_form_body() {
    let app = spawn_app().await;
    use base64::Engine;
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("admin:{ADMIN_PASSWORD}"));
    let r = reply(
        app.client
            .post("/auth/token")
            .header(HttpHeader::new("Authorization", format!("Basic {basic}")))
            .header(ContentType::Form)
            .body("grant_type=client_credentials")
            .dispatch()
            .await,
    )
    .await;
    assert_eq!(r.status, Status::Ok, "{r:?}");
}

#[rocket::async_test]
async fn token_endpoint_errors_follow_rfc_6749() {
    let app = spawn_app().await;
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let good = format!("Basic {}", b64(&format!("admin:{ADMIN_PASSWORD}")));
    // (what, Authorization header, content type, body, status, OAuth error)
    type Case<'a> = (&'a str, Option<String>, ContentType, &'a str, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            "no Authorization header",
            None,
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            400,
            "invalid_request",
        ),
        (
            "not Basic",
            Some("Bearer abc".into()),
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            400,
            "invalid_request",
        ),
        (
            "garbled base64",
            Some("Basic !!!".into()),
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            400,
            "invalid_request",
        ),
        (
            "no colon",
            Some(format!("Basic {}", b64("admin"))),
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            400,
            "invalid_request",
        ),
        ("no body", Some(good.clone()), ContentType::JSON, "", 400, "invalid_request"),
        ("garbled JSON", Some(good.clone()), ContentType::JSON, "{", 400, "invalid_request"),
        (
            "other grant",
            Some(good.clone()),
            ContentType::JSON,
            r#"{"grant_type":"password"}"#,
            400,
            "unsupported_grant_type",
        ),
        (
            "wrong password",
            Some(format!("Basic {}", b64("admin:nope-nope"))),
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            401,
            "invalid_client",
        ),
        (
            "unknown user",
            Some(format!("Basic {}", b64("ghost:whatever1"))),
            ContentType::JSON,
            r#"{"grant_type":"client_credentials"}"#,
            401,
            "invalid_client",
        ),
    ];
    for (what, auth, ct, body, status, error) in cases {
        let mut req = app.client.post("/auth/token").header(ct).body(body);
        if let Some(auth) = auth {
            req = req.header(HttpHeader::new("Authorization", auth));
        }
        let r = reply(req.dispatch().await).await;
        assert_eq!(r.status.code, status, "{what}: {r:?}");
        assert_eq!(r.body["error"], error, "{what}: {r:?}");
        assert!(r.body["error_description"].is_string(), "{what}");
        assert_eq!(r.header("Cache-Control"), Some("no-store"), "{what}");
        if status == 401 {
            assert_eq!(r.header("WWW-Authenticate"), Some(r#"Basic realm="orderbridge""#), "{what}");
        }
        assert!(!r.text.contains(ADMIN_PASSWORD), "{what}: password echoed");
    }
}

#[rocket::async_test]
async fn missing_or_malformed_bearer_tokens_get_401_with_www_authenticate() {
    let app = spawn_app().await;
    let r = app.get_anonymous("/customers").await;
    assert_error(&r, 401, "unauthorized");
    assert_eq!(r.header("WWW-Authenticate"), Some(r#"Bearer realm="orderbridge""#));

    let r = app.get("/customers", "not-a-jwt").await;
    assert_error(&r, 401, "unauthorized");
    assert_eq!(r.header("WWW-Authenticate"), Some(r#"Bearer realm="orderbridge", error="invalid_token""#));
}

#[rocket::async_test]
async fn expired_tampered_and_foreign_algorithm_tokens_are_refused() {
    let app = spawn_app().await;
    let secret = stored_secret(&app);
    let t = now();
    let claims = |iat: u64, exp: u64| json!({"sub": "1", "iat": iat, "exp": exp, "jti": "x", "role": "admin", "cid": null});

    let valid = sign(Algorithm::HS256, &secret, claims(t, t + 60));
    assert_eq!(app.get("/customers", &valid).await.status, Status::Ok, "a well-formed token works");

    let expired = sign(Algorithm::HS256, &secret, claims(t - 120, t - 1));
    let hs384 = sign(Algorithm::HS384, &secret, claims(t, t + 60));
    let other_secret = sign(Algorithm::HS256, "some-other-secret", claims(t, t + 60));
    let mut tampered = valid.clone();
    tampered.pop();
    tampered.push(if valid.ends_with('A') { 'B' } else { 'A' });
    use base64::Engine;
    let enc = |v: serde_json::Value| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string());
    let unsigned = format!("{}.{}.", enc(json!({"alg": "none", "typ": "JWT"})), enc(claims(t, t + 60)));
    let unknown_user = sign(
        Algorithm::HS256,
        &secret,
        json!({"sub": "999", "iat": t, "exp": t + 60, "jti": "x", "role": "admin", "cid": null}),
    );

    for (what, token) in [
        ("expired", expired),
        ("HS384", hs384),
        ("other secret", other_secret),
        ("tampered", tampered),
        ("alg none", unsigned),
        ("unknown user", unknown_user),
    ] {
        let r = app.get("/customers", &token).await;
        assert_error(&r, 401, "unauthorized");
        assert!(r.header("WWW-Authenticate").unwrap().contains("invalid_token"), "{what}");
    }
}

#[rocket::async_test]
async fn disabling_a_user_revokes_its_tokens_and_refuses_new_ones() {
    let app = spawn_app().await;
    let token = app.user_token("ops", Role::Admin, None).await;
    assert_eq!(app.get("/customers", &token).await.status, Status::Ok);
    users::disable(&app.pool().get().unwrap(), "ops").unwrap();
    assert_error(&app.get("/customers", &token).await, 401, "unauthorized");
    let r = app.token_reply("ops", "password-of-user").await;
    assert_eq!((r.status.code, r.body["error"].as_str()), (401, Some("invalid_client")));
}

#[rocket::async_test]
async fn changing_a_password_revokes_earlier_tokens() {
    let app = spawn_app().await;
    let token = app.user_token("ops", Role::Admin, None).await;
    // Tokens carry whole seconds; make sure the change happens in a later second.
    rocket::tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    users::set_password(&app.pool().get().unwrap(), "ops", "a-new-password").unwrap();
    assert_error(&app.get("/customers", &token).await, 401, "unauthorized");
    let fresh = app.token("ops", "a-new-password").await;
    assert_eq!(app.get("/customers", &fresh).await.status, Status::Ok);
}

#[rocket::async_test]
async fn tokens_without_the_role_and_customer_claims_are_refused() {
    let app = spawn_app().await;
    let secret = stored_secret(&app);
    let t = now();
    let base = json!({"sub": "1", "iat": t, "exp": t + 60, "jti": "x", "role": "admin", "cid": null});
    let without = |key: &str| {
        let mut claims = base.clone();
        claims.as_object_mut().unwrap().remove(key);
        claims
    };
    let with = |key: &str, value: serde_json::Value| {
        let mut claims = base.clone();
        claims[key] = value;
        claims
    };
    assert_eq!(
        app.get("/customers", &sign(Algorithm::HS256, &secret, base.clone())).await.status,
        Status::Ok
    );
    for (what, claims) in [
        ("no role", without("role")),
        ("no cid", without("cid")),
        ("neither (a token of before)", json!({"sub": "1", "iat": t, "exp": t + 60, "jti": "x"})),
        ("unknown role", with("role", json!("root"))),
        ("admin with a customer", with("cid", json!(1))),
        ("cid as text", with("cid", json!("1"))),
    ] {
        let r = app.get("/customers", &sign(Algorithm::HS256, &secret, claims)).await;
        assert_eq!(r.status.code, 401, "{what}: {r:?}");
        assert_error(&r, 401, "unauthorized");
        assert!(r.header("WWW-Authenticate").unwrap().contains("invalid_token"), "{what}");
    }
}

#[rocket::async_test]
async fn a_token_whose_claims_differ_from_the_users_row_is_refused() {
    let app = spawn_app().await;
    let secret = stored_secret(&app);
    let (acme, _) = app.tenant("Acme").await;
    let (other, _) = app.tenant("Other").await;
    let user_id: i64 = app
        .pool()
        .get()
        .unwrap()
        .query_row("SELECT id FROM users WHERE customer_id = ?1", [acme], |r| r.get(0))
        .unwrap();
    let t = now();
    let claims = |role: &str, cid: Option<i64>| json!({"sub": user_id.to_string(), "iat": t, "exp": t + 60, "jti": "x", "role": role, "cid": cid});
    let honest = sign(Algorithm::HS256, &secret, claims("customer", Some(acme)));
    assert_eq!(
        app.get(&format!("/customers/{acme}"), &honest).await.status,
        Status::Ok,
        "the row's own claims"
    );

    let before = all_rows(&app);
    for (what, token) in [
        ("role admin", sign(Algorithm::HS256, &secret, claims("admin", None))),
        ("another customer", sign(Algorithm::HS256, &secret, claims("customer", Some(other)))),
    ] {
        for r in [
            app.get("/customers", &token).await,
            app.get(&format!("/customers/{other}"), &token).await,
            app.post_json("/stores", &token, json!({"customer_id": other, "name": "Forged", "platform": "bigcommerce",
                                                    "adapter": {"access_token": "token-123456", "store_hash": "abc"}}))
                .await,
            app.patch_json(&format!("/customers/{other}"), &token, json!({"company_name": "Forged"})).await,
        ] {
            assert_error(&r, 401, "unauthorized");
            assert!(r.header("WWW-Authenticate").unwrap().contains("invalid_token"), "{what}: {r:?}");
        }
    }
    // Admin-only routes answer a customer's claims with 403 before any trip; nothing leaks.
    let forged = sign(Algorithm::HS256, &secret, claims("customer", Some(other)));
    assert_error(
        &app.post_json("/customers", &forged, json!({"company_name": "Forged"})).await,
        403,
        "forbidden",
    );
    assert_eq!(all_rows(&app), before, "refused requests write nothing");
}

#[rocket::async_test]
async fn a_configured_secret_signs_tokens_that_survive_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    let build = || {
        let app = orderbridge::build(figment(&dir)).unwrap();
        rocket::local::asynchronous::Client::tracked(app.rocket)
    };
    let first = build().await.unwrap();
    let app = TestApp::from_client(first);
    let token = app.token("admin", ADMIN_PASSWORD).await;
    drop(app);
    let second = TestApp::from_client(build().await.unwrap());
    assert_eq!(second.get("/customers", &token).await.status, Status::Ok, "token survives a restart");
}

#[rocket::async_test]
async fn health_is_open() {
    let app = spawn_app().await;
    let r = app.get_anonymous("/health").await;
    assert_eq!(r.status, Status::Ok);
    assert_eq!(r.body, json!({"status": "ok"}));
}

#[rocket::async_test]
async fn rocket_failures_answer_in_the_error_envelope() {
    let app = spawn_app().await;
    assert_error(&app.get("/no/such/route", &app.admin).await, 404, "not_found");
    assert_error(&app.get_anonymous("/no/such/route").await, 404, "not_found");
    assert_error(&app.get("/customers/abc", &app.admin).await, 404, "not_found");
    assert_error(&app.get("/customers/0", &app.admin).await, 404, "not_found");
    assert_error(&app.post_json("/customers", &app.admin, json!([1])).await, 400, "bad_request");
    assert_error(
        &app.send("POST", "/customers", &app.admin, ContentType::JSON, "{\"a\":".into()).await,
        400,
        "bad_request",
    );
    assert_error(
        &app.send("POST", "/customers", &app.admin, ContentType::Text, "company_name".into()).await,
        415,
        "unsupported_media_type",
    );
    assert_error(
        &app.send("POST", "/customers", &app.admin, ContentType::XML, "<a/>".into()).await,
        415,
        "unsupported_media_type",
    );
    // A form name that is not bracket notation is an unknown field, ignored (CONTRACT §4): what
    // is missing is named; one nested past the decoder's depth is still a bad request.
    assert_error(&app.post_form("/customers", &app.admin, "a[b=1").await, 422, "validation_failed");
    let deep = format!("company_name{}=1", "[x]".repeat(40));
    assert_error(&app.post_form("/customers", &app.admin, &deep).await, 400, "bad_request");
}

#[rocket::async_test]
async fn a_path_asked_with_a_method_it_does_not_take_is_405_naming_the_ones_it_does() {
    use rocket::http::Method;
    let app = spawn_app().await;
    let cases = [
        (Method::Delete, "/customers/1", "GET, HEAD, PATCH"),
        (Method::Put, "/customers", "GET, HEAD, POST"),
        (Method::Options, "/connections/1/channels/2", "PATCH"),
        (Method::Trace, "/", "GET, HEAD"),
        (Method::Delete, "/variant_collection/abc", "GET, HEAD, PATCH"),
        (Method::Get, "/auth/token", "POST"),
        (Method::Options, "/stores/ping", "POST"),
    ];
    let token = HttpHeader::new("Authorization", format!("Bearer {}", app.admin));
    for (method, path, allowed) in cases {
        let r =
            crate::common::reply(app.client.req(method, path).header(token.clone()).dispatch().await).await;
        assert_error(&r, 405, "method_not_allowed");
        assert_eq!(r.header("Allow"), Some(allowed), "{method} {path}");
    }
    // A path the API does not have stays a 404, whatever the method.
    let r = crate::common::reply(app.client.delete("/no/such/route").dispatch().await).await;
    assert_error(&r, 404, "not_found");
    assert_eq!(r.header("Allow"), None);
}

#[rocket::async_test]
async fn bodies_over_the_limit_get_413() {
    let app = spawn_app_with(|f| f.merge(("body_limit", 64))).await;
    let big = "x".repeat(200);
    assert_error(
        &app.post_json("/customers", &app.admin, json!({"company_name": big})).await,
        413,
        "payload_too_large",
    );
    assert_error(
        &app.post_form("/customers", &app.admin, &format!("company_name={big}")).await,
        413,
        "payload_too_large",
    );
    let r = app.post_multipart("/customers", &app.admin, &[("company_name", &big)]).await;
    assert_error(&r, 413, "payload_too_large");
}

#[rocket::async_test]
async fn a_multipart_body_cut_off_in_a_part_is_400_not_413() {
    let app = spawn_app().await;
    let ct = ContentType::new("multipart", "form-data").with_params(("boundary", "b"));
    let cut_off = [
        "--b\r\n\x1c\u{86}b--b--\r\n",
        "--b\r\nContent-Disposition: form-data; name=\"company_name\"\r\n",
        "--b\r\nContent-Disposition: form-data; name=\"company_name\"\r\n\r\nAcme",
    ];
    for body in cut_off {
        let r = app.send("POST", "/customers", &app.admin, ct.clone(), body.to_string()).await;
        assert_error(&r, 400, "bad_request");
    }
}

#[rocket::async_test]
async fn a_broken_database_answers_500_in_the_envelope_without_details() {
    let app = spawn_app().await;
    app.pool().get().unwrap().execute_batch("DROP TABLE customers").unwrap();
    let r = app.get("/customers", &app.admin).await;
    assert_error(&r, 500, "internal_error");
    assert!(!r.text.contains("customers"), "no internal detail leaks: {}", r.text);
}

/// A token request as a client at `address` sends it.
async fn login_from(
    app: &crate::common::TestApp,
    address: &str,
    user: &str,
    password: &str,
) -> crate::common::Reply {
    login_with(app, address, user, password, None).await
}

/// A token request as a client at `address` sends it, with the headers `extra` besides.
async fn login_with(
    app: &crate::common::TestApp,
    address: &str,
    user: &str,
    password: &str,
    extra: Option<HttpHeader<'static>>,
) -> crate::common::Reply {
    let mut request = app
        .client
        .post("/auth/token")
        .remote(address.parse().unwrap())
        .header(crate::common::basic(user, password))
        .header(ContentType::JSON)
        .body(r#"{"grant_type":"client_credentials"}"#);
    if let Some(header) = extra {
        request = request.header(header);
    }
    crate::common::reply(request.dispatch().await).await
}

fn assert_throttled(r: &crate::common::Reply, what: &str) {
    assert_eq!(r.status.code, 429, "{what}: {r:?}");
    assert_eq!(r.body["error"], "too_many_requests", "{what}");
    let wait: u64 = r.header("Retry-After").expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&wait), "{what}: Retry-After {wait}");
}

#[rocket::async_test]
async fn five_failed_logins_throttle_that_username_while_another_user_at_the_same_address_logs_in() {
    let app = crate::common::spawn_app().await;
    app.user_token("bob", orderbridge::http::users::Role::Admin, None).await;
    let shared = "192.0.2.7:40000";
    for attempt in 1..=5 {
        let r = login_from(&app, shared, "admin", &format!("guess-{attempt}")).await;
        assert_eq!(r.status.code, 401, "attempt {attempt}: {r:?}");
    }
    // The sixth attempt waits, even with the right password, and says how long...
    let r = login_from(&app, shared, "admin", crate::common::ADMIN_PASSWORD).await;
    assert_throttled(&r, "admin, the right password");
    // ...from any address: the username is what was guessed at.
    let r = login_from(&app, "198.51.100.1:1234", "admin", crate::common::ADMIN_PASSWORD).await;
    assert_throttled(&r, "admin from elsewhere");
    // Behind a reverse proxy everyone shares the address: bob is not locked out with admin.
    let r = login_from(&app, shared, "bob", "password-of-user").await;
    assert_eq!(r.status.code, 200, "bob at the same address: {r:?}");
    let r = login_from(&app, shared, "bob", "wrong").await;
    assert_eq!(r.status.code, 401, "bob's own guesses are his: {r:?}");
}

#[rocket::async_test]
async fn fifty_failed_logins_from_one_address_throttle_it_whatever_the_usernames_and_x_real_ip() {
    let app = crate::common::spawn_app().await;
    app.user_token("bob", orderbridge::http::users::Role::Admin, None).await;
    let sprayer = "192.0.2.7:40000";
    // One guess per username, so no username reaches its own limit; each claims another
    // client in X-Real-IP, which anyone can send and which is not believed.
    for i in 0..50 {
        let claimed = HttpHeader::new("X-Real-IP", format!("203.0.113.{i}"));
        let r = login_with(&app, sprayer, &format!("user-{i}"), "guess", Some(claimed)).await;
        assert_eq!(r.status.code, 401, "guess {i}: {r:?}");
    }
    let r = login_from(&app, sprayer, "bob", "password-of-user").await;
    assert_throttled(&r, "bob from the spraying address");
    let r = login_from(&app, sprayer, "user-50", "guess").await;
    assert_throttled(&r, "a username never tried, from the spraying address");
    // Neither the usernames nor the other addresses are held back.
    let r = login_from(&app, "198.51.100.1:1234", "bob", "password-of-user").await;
    assert_eq!(r.status.code, 200, "bob from elsewhere: {r:?}");
    let r = login_from(&app, "198.51.100.1:1234", "user-0", "guess").await;
    assert_eq!(r.status.code, 401, "one failure does not throttle user-0: {r:?}");
}
