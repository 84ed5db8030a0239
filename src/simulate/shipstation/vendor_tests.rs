//! The annex's examples held to ShipStation's file as its README reads it, and the check shown
//! to refuse what the file refuses (so a passing exchange means something).

use serde_json::{Value, json};

use super::vendor::{description, problems};
use crate::simulate::openapi_check::Exchange;

fn exchange(method: &str, path: &str, body: Option<Value>, status: u16, answer: Option<Value>) -> Exchange {
    let json = || ("Content-Type".to_string(), "application/json".to_string());
    let mut headers = vec![("api-key".to_string(), "key-example".to_string())];
    headers.extend(body.as_ref().map(|_| json()));
    Exchange {
        method: method.into(),
        path: path.into(),
        query: Vec::new(),
        headers,
        body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        status,
        answer_headers: answer.as_ref().map(|_| json()).into_iter().collect(),
        answer_body: answer.map(|a| a.to_string().into_bytes()).unwrap_or_default(),
    }
}

/// The annex's §7.1 shipment object.
fn annex_shipment() -> Value {
    json!({"external_shipment_id": "ob-4312", "validate_address": "no_validation",
           "ship_to": {"name": "Ada Lovelace", "phone": "+1 512 555 0100", "email": "ada@example.com",
                       "address_line1": "12 Byron Road", "address_line2": "Apt 3", "city_locality": "Austin",
                       "state_province": "TX", "postal_code": "78701", "country_code": "US",
                       "address_residential_indicator": "unknown"},
           "carrier_id": "se-1001", "notes_from_buyer": "Leave at the blue door",
           "shipping_paid": {"currency": "usd", "amount": 8.5}, "tax_paid": {"currency": "usd", "amount": 1.4},
           "items": [{"name": "Tea Mug", "quantity": 2, "sku": "MUG-1", "unit_price": 12.5, "tax_amount": 0.7,
                      "upc": "0001234", "external_order_item_id": "5001", "weight": {"value": 0.75, "unit": "pound"}},
                     {"name": "Gift wrap", "quantity": 1, "unit_price": 1.0, "tax_amount": 0.0,
                      "external_order_item_id": "5002"}]})
}

fn annex_label() -> Value {
    json!({"label_id": "se-9001", "status": "completed", "shipment_id": "se-4417",
           "external_shipment_id": "ob-4312", "ship_date": "2026-03-05T00:00:00Z",
           "created_at": "2026-03-05T14:07:09.120Z", "tracking_number": "9400111899560000000001",
           "is_return_label": false, "carrier_id": "se-1001", "carrier_code": "stamps_com",
           "service_code": "usps_priority_mail", "voided": false, "voided_at": null,
           "packages": [{"package_id": 1, "weight": {"value": 24, "unit": "ounce"},
                         "tracking_number": "9400111899560000000001"}]})
}

fn labels_page(label: Value) -> Value {
    json!({"labels": [label], "total": 1, "page": 1, "pages": 1,
           "links": {"first": {"href": "/v2/labels?page=1"}, "last": {"href": "/v2/labels?page=1"}, "prev": {}, "next": {}}})
}

#[test]
fn the_annexs_examples_follow_shipstations_file() {
    let create = exchange("POST", "/v2/shipments", Some(json!({"shipments": [annex_shipment()]})), 200, None);
    assert_eq!(description().check_parts(&create, true, false), Vec::<String>::new());
    let created = json!({"has_errors": true, "shipments": [{"shipment_id": "se-4418", "external_shipment_id": "ob-4313",
        "errors": ["Invalid postal code for country US"]}]});
    let found =
        description().check_parts(&exchange("POST", "/v2/shipments", None, 200, Some(created)), false, true);
    assert!(
        found.iter().all(|p| p.contains("required")),
        "only the shipment's own members are left out: {found:#?}"
    );
    let labels = exchange("GET", "/v2/labels", None, 200, Some(labels_page(annex_label())));
    assert_eq!(problems(&[labels]), Vec::<String>::new());
    let unauthorized = json!({"request_id": "8a0d4c6e-1f0b-4a5e-9c1d-2b7e5f3a9d10", "errors": [{"error_source": "ShipStation", "error_type": "security",
        "error_code": "unauthorized", "message": "The API key is invalid."}]});
    assert_eq!(
        problems(&[exchange("GET", "/v2/warehouses", None, 401, Some(unauthorized))]),
        Vec::<String>::new()
    );
    let cancel_refused = json!({"request_id": "8a0d4c6e-1f0b-4a5e-9c1d-2b7e5f3a9d11", "errors": [{"error_source": "ShipStation",
        "error_type": "business_rules", "error_code": "invalid_status", "message": "Any label associated with the shipment needs to be voided first."}]});
    let cancel = exchange("PUT", "/v2/shipments/se-4417/cancel", None, 400, Some(cancel_refused));
    assert_eq!(problems(&[cancel]), Vec::<String>::new());
}

#[test]
fn the_check_refuses_what_the_file_refuses() {
    let request = |body: Value| {
        description().check_parts(&exchange("POST", "/v2/shipments", Some(body), 200, None), true, false)
    };
    let mut closed = annex_shipment();
    closed["service_code"] = json!("usps_priority_mail");
    let found = request(json!({"shipments": [closed]}));
    assert!(found.iter().any(|p| p.contains("service_code")), "{found:#?}");
    let mut no_phone = annex_shipment();
    no_phone["ship_to"].as_object_mut().unwrap().remove("phone");
    assert!(!request(json!({"shipments": [no_phone]})).is_empty());
    let mut light = annex_shipment();
    light["items"][0]["weight"]["value"] = json!(0);
    assert!(!request(json!({"shipments": [light]})).is_empty());
    let mut label = annex_label();
    label["status"] = json!("shipped");
    assert!(!problems(&[exchange("GET", "/v2/labels", None, 200, Some(labels_page(label)))]).is_empty());
    let mut no_key = exchange("GET", "/v2/warehouses", None, 503, None);
    no_key.headers.clear();
    assert!(!problems(&[no_key]).is_empty());
    let cancel_with_body = exchange("PUT", "/v2/shipments/se-1/cancel", Some(json!({})), 503, None);
    assert!(!problems(&[cancel_with_body]).is_empty(), "the cancel declares no body");
    assert!(
        description()
            .operation_id(&exchange("GET", "/v2/shipments/external_shipment_id/ob-1", None, 404, None))
            .is_some_and(|id| id == "get_shipment_by_external_id")
    );
    let unused = exchange("GET", "/v2/carriers", None, 503, None);
    assert!(problems(&[unused]).iter().any(|p| p.contains("not an operation orderbridge uses")));
}
