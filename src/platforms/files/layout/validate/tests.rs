use serde_json::{Value, json};

use super::*;
use crate::fields::adapter_problems;

/// The paths the checks name for `adapter`.
fn paths(adapter: Value) -> Vec<String> {
    adapter_problems(validate, adapter).into_iter().map(|(path, _)| path).collect()
}

/// A valid orders column list plus `extra`.
fn order_columns(extra: Value) -> Value {
    let mut columns = vec![json!("order_id"), json!("sku"), json!("quantity")];
    columns.push(extra);
    Value::Array(columns)
}

#[test]
fn every_rule_names_the_offending_value_by_its_path() {
    let long = "x".repeat(201);
    let many: Vec<Value> = (0..201).map(|i| json!({"header": format!("c{i}"), "value": ""})).collect();
    let items: Vec<Value> =
        (0..30).map(|i| json!({"header": format!("Item {i} {{n}}"), "field": "sku"})).collect();
    let mut wide = vec![json!("order_id"), json!({"header": "Qty {n}", "field": "quantity"})];
    wide.extend(items);
    let cases: Vec<(&str, Value, &str)> = vec![
        // 1
        ("a layout that is not an object", json!({"orders_layout": "x"}), "adapter[orders_layout]"),
        (
            "a column neither text nor object",
            json!({"orders_layout": {"columns": order_columns(json!(5))}}),
            "adapter[orders_layout][columns][3]",
        ),
        (
            "a filter that is not an object",
            json!({"shipments_layout": {"filters": [3]}}),
            "adapter[shipments_layout][filters][0]",
        ),
        // 2
        (
            "a typo of a key",
            json!({"orders_layout": {"delimeter": ","}}),
            "adapter[orders_layout][delimeter]",
        ),
        (
            "value in a read layout",
            json!({"shipments_layout": {"columns": ["order_id", "tracking_number", {"header": "X", "value": "1"}]}}),
            "adapter[shipments_layout][columns][2][value]",
        ),
        (
            "filters in orders_layout",
            json!({"orders_layout": {"filters": []}}),
            "adapter[orders_layout][filters]",
        ),
        (
            "file_name in a read layout",
            json!({"inventory_layout": {"file_name": "a"}}),
            "adapter[inventory_layout][file_name]",
        ),
        (
            "max_length in a read layout",
            json!({"inventory_layout": {"columns": ["sku", "quantity", {"header": "x", "max_length": 3}]}}),
            "adapter[inventory_layout][columns][2][max_length]",
        ),
        (
            "an unknown column key",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "notes", "size": 3}))}}),
            "adapter[orders_layout][columns][3][size]",
        ),
        (
            "an unknown filter key",
            json!({"inventory_layout": {"filters": [{"header": "x", "equals": "1", "or": "2"}]}}),
            "adapter[inventory_layout][filters][0][or]",
        ),
        (
            "a value column with another key",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "value": "0", "prefix": "A"}))}}),
            "adapter[orders_layout][columns][3][prefix]",
        ),
        // 3
        (
            "a delimiter outside its set",
            json!({"orders_layout": {"delimiter": ":"}}),
            "adapter[orders_layout][delimiter]",
        ),
        (
            "header not a boolean",
            json!({"shipments_layout": {"header": "yes"}}),
            "adapter[shipments_layout][header]",
        ),
        ("rows outside its set", json!({"orders_layout": {"rows": "line"}}), "adapter[orders_layout][rows]"),
        (
            "max_items above 50",
            json!({"orders_layout": {"rows": "order", "max_items": 51}}),
            "adapter[orders_layout][max_items]",
        ),
        (
            "line_ending outside its set",
            json!({"orders_layout": {"line_ending": "cr"}}),
            "adapter[orders_layout][line_ending]",
        ),
        (
            "decimal_separator outside its set",
            json!({"inventory_layout": {"decimal_separator": " "}}),
            "adapter[inventory_layout][decimal_separator]",
        ),
        (
            "decimal_places above 4",
            json!({"orders_layout": {"decimal_places": 5}}),
            "adapter[orders_layout][decimal_places]",
        ),
        (
            "max_length 0",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "notes", "max_length": 0}))}}),
            "adapter[orders_layout][columns][3][max_length]",
        ),
        ("file_format outside its set", json!({"file_format": "xml"}), "adapter[file_format]"),
        // 4
        (
            "rows order without max_items",
            json!({"orders_layout": {"rows": "order"}}),
            "adapter[orders_layout][max_items]",
        ),
        (
            "max_items without rows order",
            json!({"orders_layout": {"max_items": 3}}),
            "adapter[orders_layout][max_items]",
        ),
        // 5
        (
            "an item column without {n}",
            json!({"orders_layout": {"rows": "order", "max_items": 2, "columns": ["order_id", {"header": "SKU", "field": "sku"}, {"header": "Qty {n}", "field": "quantity"}]}}),
            "adapter[orders_layout][columns][1][header]",
        ),
        (
            "{n} in an order column",
            json!({"orders_layout": {"rows": "order", "max_items": 2, "columns": [{"header": "Order {n}", "field": "order_id"}, {"header": "SKU {n}", "field": "sku"}, {"header": "Qty {n}", "field": "quantity"}]}}),
            "adapter[orders_layout][columns][0][header]",
        ),
        (
            "{n} with rows item",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "Note {n}", "field": "notes"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "item columns apart",
            json!({"orders_layout": {"rows": "order", "max_items": 2, "columns": [{"header": "SKU {n}", "field": "sku"}, "order_id", {"header": "Qty {n}", "field": "quantity"}]}}),
            "adapter[orders_layout][columns][2][header]",
        ),
        // 6
        (
            "a pattern with y",
            json!({"orders_layout": {"date_format": "yyyy-MM-dd"}}),
            "adapter[orders_layout][date_format]",
        ),
        (
            "a pattern with h",
            json!({"shipments_layout": {"date_format": "YYYY-MM-DD hh:mm"}}),
            "adapter[shipments_layout][date_format]",
        ),
        (
            "a bad column format",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "d", "field": "ordered_at", "format": "MM/DD"}))}}),
            "adapter[orders_layout][columns][3][format]",
        ),
        (
            "format on a field that is no date",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "d", "field": "notes", "format": "date"}))}}),
            "adapter[orders_layout][columns][3][format]",
        ),
        (
            "a time zone that is not IANA's",
            json!({"orders_layout": {"time_zone": "Mars/Olympus_Mons"}}),
            "adapter[orders_layout][time_zone]",
        ),
        // 7
        (
            "a column without header",
            json!({"orders_layout": {"columns": order_columns(json!({"field": "notes"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "a blank header",
            json!({"orders_layout": {"columns": order_columns(json!({"header": " \t", "field": "notes"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "a header of 201 characters",
            json!({"orders_layout": {"columns": order_columns(json!({"header": long, "field": "notes"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "a header with a line break",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "a\nb", "field": "notes"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "two equal headers",
            json!({"orders_layout": {"columns": order_columns(json!({"header": " SKU ", "field": "upc"}))}}),
            "adapter[orders_layout][columns][3][header]",
        ),
        (
            "two equal headers once {n} is replaced",
            json!({"orders_layout": {"rows": "order", "max_items": 2, "columns": [{"header": "sku 2", "field": "order_id"}, {"header": "SKU {n}", "field": "sku"}, {"header": "Qty {n}", "field": "quantity"}]}}),
            "adapter[orders_layout][columns][1][header]",
        ),
        (
            "neither field nor value",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x"}))}}),
            "adapter[orders_layout][columns][3]",
        ),
        (
            "both field and value",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "notes", "value": "1"}))}}),
            "adapter[orders_layout][columns][3]",
        ),
        (
            "a field of another layout",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "tracking_number"}))}}),
            "adapter[orders_layout][columns][3][field]",
        ),
        (
            "one field in two read columns",
            json!({"inventory_layout": {"columns": ["sku", "quantity", {"header": "Other", "field": "sku"}]}}),
            "adapter[inventory_layout][columns][2][field]",
        ),
        (
            "a map of numbers",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "notes", "map": {"a": 1}}))}}),
            "adapter[orders_layout][columns][3][map]",
        ),
        (
            "an empty prefix",
            json!({"orders_layout": {"columns": order_columns(json!({"header": "x", "field": "notes", "prefix": ""}))}}),
            "adapter[orders_layout][columns][3][prefix]",
        ),
        (
            "an empty split",
            json!({"shipments_layout": {"columns": ["order_id", {"header": "t", "field": "tracking_number", "split": ""}]}}),
            "adapter[shipments_layout][columns][1][split]",
        ),
        (
            "split on a field not tracking_number",
            json!({"shipments_layout": {"columns": ["order_id", "tracking_number", {"header": "c", "field": "carrier_name", "split": ","}]}}),
            "adapter[shipments_layout][columns][2][split]",
        ),
        (
            "a shorthand that is no field",
            json!({"inventory_layout": {"columns": ["sku", "quantity", "Facility"]}}),
            "adapter[inventory_layout][columns][2]",
        ),
        // 8
        (
            "orders without sku",
            json!({"orders_layout": {"columns": ["order_id", "quantity"]}}),
            "adapter[orders_layout][columns]",
        ),
        (
            "shipments without tracking_number",
            json!({"shipments_layout": {"columns": ["order_id"]}}),
            "adapter[shipments_layout][columns]",
        ),
        (
            "shipments naming no order",
            json!({"shipments_layout": {"columns": ["tracking_number"]}}),
            "adapter[shipments_layout][columns]",
        ),
        (
            "two match fields not today's pair",
            json!({"shipments_layout": {"columns": ["order_id", "external_display_id", "tracking_number"]}}),
            "adapter[shipments_layout][columns]",
        ),
        (
            "all three match fields",
            json!({"shipments_layout": {"columns": ["order_id", "external_id", "external_display_id", "tracking_number"]}}),
            "adapter[shipments_layout][columns]",
        ),
        (
            "inventory without quantity",
            json!({"inventory_layout": {"columns": ["sku"]}}),
            "adapter[inventory_layout][columns]",
        ),
        // 9
        (
            "a match field the orders layout does not write",
            json!({"orders_layout": {"columns": ["order_id", "sku", "quantity"]}, "shipments_layout": {"columns": ["external_display_id", "tracking_number"]}}),
            "adapter[shipments_layout][columns]",
        ),
        (
            "today's shipments and an orders layout writing neither id",
            json!({"orders_layout": {"columns": ["external_display_id", "sku", "quantity"]}}),
            "adapter[orders_layout][columns]",
        ),
        // 10
        (
            "an empty file_name",
            json!({"orders_layout": {"file_name": ""}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name of 201 characters",
            json!({"orders_layout": {"file_name": format!("{{connection_id}}{{batch}}{long}")}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name without {batch}",
            json!({"orders_layout": {"file_name": "o-{connection_id}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name with another placeholder",
            json!({"orders_layout": {"file_name": "{connection_id}-{batch}-{time}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name with a lone brace",
            json!({"orders_layout": {"file_name": "{connection_id}-{batch}}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a hidden file_name",
            json!({"orders_layout": {"file_name": ".{connection_id}-{batch}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name with a folder",
            json!({"orders_layout": {"file_name": "a/{connection_id}-{batch}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name with a backslash",
            json!({"orders_layout": {"file_name": "a\\{connection_id}-{batch}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "a file_name with a control character",
            json!({"orders_layout": {"file_name": "a\u{7}{connection_id}-{batch}.csv"}}),
            "adapter[orders_layout][file_name]",
        ),
        (
            "an empty file_pattern",
            json!({"shipments_layout": {"file_pattern": ""}}),
            "adapter[shipments_layout][file_pattern]",
        ),
        (
            "a file_pattern with a folder",
            json!({"inventory_layout": {"file_pattern": "in/*.csv"}}),
            "adapter[inventory_layout][file_pattern]",
        ),
        (
            "a file_pattern of 201 characters",
            json!({"inventory_layout": {"file_pattern": long}}),
            "adapter[inventory_layout][file_pattern]",
        ),
        // 11
        (
            "a filter without header",
            json!({"inventory_layout": {"filters": [{"equals": "1"}]}}),
            "adapter[inventory_layout][filters][0][header]",
        ),
        (
            "a filter with neither test",
            json!({"inventory_layout": {"filters": [{"header": "x"}]}}),
            "adapter[inventory_layout][filters][0]",
        ),
        (
            "a filter with both tests",
            json!({"inventory_layout": {"filters": [{"header": "x", "equals": "1", "not_equals": "2"}]}}),
            "adapter[inventory_layout][filters][0]",
        ),
        (
            "a filter value that is no string",
            json!({"inventory_layout": {"filters": [{"header": "x", "equals": 12}]}}),
            "adapter[inventory_layout][filters][0]",
        ),
        (
            "a filter on no column without a header row",
            json!({"inventory_layout": {"header": false, "filters": [{"header": "Facility", "equals": "12"}]}}),
            "adapter[inventory_layout][filters][0][header]",
        ),
        // 12
        (
            "a layout on an x12 warehouse",
            json!({"file_format": "x12", "orders_layout": {}}),
            "adapter[orders_layout]",
        ),
        // 13
        ("no columns", json!({"inventory_layout": {"columns": []}}), "adapter[inventory_layout][columns]"),
        ("201 columns", json!({"orders_layout": {"columns": many}}), "adapter[orders_layout][columns]"),
        (
            "over 1000 columns once repeated",
            json!({"orders_layout": {"rows": "order", "max_items": 50, "columns": wide}}),
            "adapter[orders_layout][columns]",
        ),
    ];
    for (what, adapter, path) in cases {
        let found = paths(adapter);
        assert!(found.iter().any(|p| p == path), "{what}: wanted {path}, found {found:?}");
    }
}

#[test]
fn the_worked_examples_and_null_layouts_are_valid() {
    for adapter in [
        super::super::examples::landmark(),
        json!({"orders_layout": super::super::examples::shipwire_orders()}),
        json!({"orders_layout": super::super::examples::wfi_orders()}),
        json!({"file_format": "x12", "orders_layout": null, "shipments_layout": null}),
        json!({"file_format": "csv", "orders_layout": {}, "shipments_layout": {"columns": ["order_id", "external_id", "tracking_number"]}}),
        json!({}),
    ] {
        assert_eq!(adapter_problems(validate, adapter.clone()), vec![], "{adapter}");
    }
}

#[test]
fn problems_say_why_in_words() {
    let problems = adapter_problems(
        validate,
        json!({"file_format": "x12", "orders_layout": {"delimiter": ","}, "inventory_layout": {}}),
    );
    assert_eq!(
        problems,
        vec![
            ("adapter[inventory_layout]".to_string(), "layouts apply only to csv warehouses".to_string()),
            ("adapter[orders_layout]".to_string(), "layouts apply only to csv warehouses".to_string()),
        ]
    );
}

#[test]
fn an_api_warehouse_refuses_each_layout_key_given() {
    let problems = adapter_problems(
        refuse_on_api_warehouse,
        json!({"orders_layout": {}, "shipments_layout": null, "inventory_layout": {"columns": ["sku", "quantity"]}}),
    );
    let paths: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["adapter[inventory_layout]", "adapter[orders_layout]"]);
}

#[test]
fn a_max_items_out_of_range_blames_only_itself() {
    let mut layout = super::super::examples::wfi_orders();
    layout["max_items"] = json!(51);
    assert_eq!(paths(json!({"orders_layout": layout})), ["adapter[orders_layout][max_items]"]);
}
