//! Every GraphQL document orderbridge can send to Shopify, checked against Shopify's official
//! Admin API schema of the pinned version (`../shared/vendor/shopify/admin-2026-07.graphql`):
//! valid, no deprecated field, argument or enum value, every connection sized, the stock
//! mutation `@idempotent`, and the cost each declares equal to Shopify's published rules.
//! The simulated shop is held to the same schema: the part it serves is Shopify's own, and its
//! answers to every document fit the document and the schema.

use std::sync::OnceLock;

use apollo_compiler::executable::{self, Selection, SelectionSet};
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use orderbridge::platforms::shopify::documents::{self, Document, MAX_QUERY_COST};
use orderbridge::simulate::shopify::{ALL_SCOPES, Simulator};
use serde_json::{Value, json};

const SHOP: &str = "schema-check.myshopify.com";
const TOKEN: &str = "shpat_schema_check_0001";

/// Shopify's schema, as its vendor file holds it.
fn vendor() -> &'static Valid<Schema> {
    static SCHEMA: OnceLock<Valid<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let path = orderbridge::simulate::shared_files::shared("vendor/shopify/admin-2026-07.graphql");
        let sdl = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // graphql-core prints `@oneOf` without defining it: it is built in there, not here.
        let sdl = sdl + "\ndirective @oneOf on INPUT_OBJECT\n";
        Schema::parse_and_validate(sdl, "admin-2026-07.graphql").expect("Shopify's schema is valid")
    })
}

fn parse(doc: &Document) -> Valid<ExecutableDocument> {
    ExecutableDocument::parse_and_validate(vendor(), doc.text, format!("{}.graphql", doc.name))
        .unwrap_or_else(|e| panic!("{} is not valid against Shopify's 2026-07 schema:\n{e}", doc.name))
}

/// Every problem with deprecated or unsized things in a selection set.
fn audit(doc: &ExecutableDocument, set: &SelectionSet, path: &str, problems: &mut Vec<String>) {
    for selection in &set.selections {
        match selection {
            Selection::Field(field) => {
                let here = format!("{path}.{}", field.name);
                if field.definition.directives.get("deprecated").is_some() {
                    problems.push(format!("{here} is deprecated"));
                }
                for argument in &field.arguments {
                    let definition = field.definition.argument_by_name(&argument.name);
                    if definition.is_some_and(|d| d.directives.get("deprecated").is_some()) {
                        problems.push(format!("{here}({}) is deprecated", argument.name));
                    }
                    if let Some(value) = argument.value.as_enum() {
                        let ty = definition.map(|d| d.ty.inner_named_type().clone());
                        if let Some(ExtendedType::Enum(e)) = ty.and_then(|t| vendor().types.get(&t).cloned())
                            && e.values.get(value).is_some_and(|v| v.directives.get("deprecated").is_some())
                        {
                            problems
                                .push(format!("{here}({}: {value}) is a deprecated value", argument.name));
                        }
                    }
                }
                let named = field.definition.ty.inner_named_type().as_str();
                if named.ends_with("Connection")
                    && field.definition.argument_by_name("first").is_some()
                    && field.specified_argument_by_name("first").is_none()
                    && field.specified_argument_by_name("last").is_none()
                {
                    problems.push(format!("{here} is a connection without first or last"));
                }
                audit(doc, &field.selection_set, &here, problems);
            }
            Selection::FragmentSpread(spread) => {
                let fragment = doc.fragments.get(&spread.fragment_name).expect("fragment");
                audit(doc, &fragment.selection_set, path, problems);
            }
            Selection::InlineFragment(inline) => audit(doc, &inline.selection_set, path, problems),
        }
    }
}

/// Shopify's requested cost by its published rules (annex B.2): scalars and enums 0, objects
/// 1, connections 2 + first x one node, lists given first that many elements, other lists
/// one, mutation fields 10 plus their payload.
fn cost(doc: &ExecutableDocument, set: &SelectionSet) -> u32 {
    let mut total = 0;
    for selection in &set.selections {
        total += match selection {
            Selection::Field(field) => field_cost(doc, field),
            Selection::FragmentSpread(spread) => {
                cost(doc, &doc.fragments[&spread.fragment_name].selection_set)
            }
            Selection::InlineFragment(inline) => cost(doc, &inline.selection_set),
        };
    }
    total
}

fn first(field: &executable::Field) -> Option<u32> {
    ["first", "last"].iter().find_map(|a| field.specified_argument_by_name(a)?.to_i32()).map(|n| n as u32)
}

fn field_cost(doc: &ExecutableDocument, field: &executable::Field) -> u32 {
    let named = field.definition.ty.inner_named_type();
    match vendor().types.get(named) {
        Some(ExtendedType::Object(_) | ExtendedType::Interface(_) | ExtendedType::Union(_)) => {}
        _ => return 0,
    }
    if named.as_str().ends_with("Connection") && field.definition.argument_by_name("first").is_some() {
        let mut node = 1;
        for selection in &field.selection_set.selections {
            if let Selection::Field(f) = selection {
                if f.name == "nodes" {
                    node = node.max(1 + cost(doc, &f.selection_set));
                }
                if f.name == "edges" {
                    for inner in &f.selection_set.selections {
                        if let Selection::Field(n) = inner
                            && n.name == "node"
                        {
                            node = node.max(1 + cost(doc, &n.selection_set));
                        }
                    }
                }
            }
        }
        return 2 + first(field).unwrap_or(250) * node;
    }
    let child = cost(doc, &field.selection_set);
    if field.definition.ty.is_list() {
        return first(field).unwrap_or(1) * (1 + child);
    }
    1 + child
}

fn operation_cost(doc: &ExecutableDocument) -> u32 {
    let op = doc.operations.iter().next().expect("one operation");
    if op.is_mutation() {
        op.selection_set
            .selections
            .iter()
            .filter_map(|s| s.as_field())
            .map(|f| 10 + cost(doc, &f.selection_set))
            .sum()
    } else {
        cost(doc, &op.selection_set)
    }
}

#[test]
fn every_document_the_client_sends_is_valid_against_shopifys_schema_without_deprecated_fields() {
    for doc in documents::ALL {
        let parsed = parse(&doc);
        let op = parsed.operations.iter().next().expect("an operation");
        assert_eq!(op.name.as_deref(), Some(doc.name), "the operation is named as sent");
        let mut problems = Vec::new();
        audit(&parsed, &op.selection_set, doc.name, &mut problems);
        assert!(problems.is_empty(), "{}: {problems:#?}", doc.name);
        let estimated = operation_cost(&parsed);
        assert_eq!(doc.cost, estimated, "{}: the cost it declares is Shopify's", doc.name);
        assert!(estimated <= MAX_QUERY_COST, "{} costs {estimated}", doc.name);
    }
    let set = parse(&documents::SET_AVAILABLE);
    let root = set.operations.iter().next().unwrap().selection_set.selections[0].as_field().unwrap().clone();
    assert_eq!(root.name, "inventorySetQuantities");
    assert!(root.directives.get("idempotent").is_some(), "mandatory at run time from 2026-04");
}

#[test]
fn the_audit_catches_a_deprecated_field_and_an_unsized_connection() {
    // The test's own check must be able to fail.
    let bad = Document {
        name: "Bad",
        text: "query Bad { order(id: \"gid://shopify/Order/1\") { lineItems { nodes { fulfillableQuantity } } } }",
        cost: 0,
    };
    let parsed = parse(&bad);
    let mut problems = Vec::new();
    audit(&parsed, &parsed.operations.iter().next().unwrap().selection_set, "Bad", &mut problems);
    assert_eq!(problems.len(), 2, "{problems:?}");
    let invalid = "query X { shop { nonsense } }";
    assert!(ExecutableDocument::parse_and_validate(vendor(), invalid, "x.graphql").is_err());
}

#[test]
fn the_simulated_shop_serves_a_part_of_shopifys_own_schema() {
    let subset = orderbridge::simulate::shopify::graphql::schema();
    let show = |ty: &apollo_compiler::ast::Type| ty.to_string();
    for (name, ty) in &subset.types {
        if ty.is_built_in() {
            continue;
        }
        let theirs = vendor().types.get(name).unwrap_or_else(|| panic!("Shopify has no type {name}"));
        match (ty, theirs) {
            (ExtendedType::Object(ours), ExtendedType::Object(shopify)) => {
                for (field, def) in &ours.fields {
                    let real = shopify
                        .fields
                        .get(field)
                        .unwrap_or_else(|| panic!("Shopify's {name} has no {field}"));
                    assert_eq!(show(&def.ty), show(&real.ty), "{name}.{field}");
                    assert_eq!(
                        def.arguments.len(),
                        real.arguments.iter().filter(|a| a.directives.get("deprecated").is_none()).count(),
                        "{name}.{field}'s arguments"
                    );
                    for arg in &def.arguments {
                        let shopify_arg = real
                            .argument_by_name(&arg.name)
                            .unwrap_or_else(|| panic!("{name}.{field}({})", arg.name));
                        assert_eq!(show(&arg.ty), show(&shopify_arg.ty), "{name}.{field}({})", arg.name);
                    }
                }
            }
            (ExtendedType::InputObject(ours), ExtendedType::InputObject(shopify)) => {
                let theirs: Vec<_> =
                    shopify.fields.iter().filter(|(_, f)| f.directives.get("deprecated").is_none()).collect();
                assert_eq!(ours.fields.len(), theirs.len(), "{name} is whole");
                for (field, def) in &ours.fields {
                    assert_eq!(show(&def.ty), show(&shopify.fields[field].ty), "{name}.{field}");
                }
            }
            (ExtendedType::Enum(ours), ExtendedType::Enum(shopify)) => {
                let mine: Vec<_> = ours.values.keys().collect();
                let real: Vec<_> = shopify.values.keys().collect();
                assert_eq!(mine, real, "{name} is whole");
            }
            (ExtendedType::Scalar(_), ExtendedType::Scalar(_)) => {}
            _ => panic!("{name} is of another kind at Shopify"),
        }
    }
}

/// Whether `data` is what `set` asks for, typed as Shopify's schema says: every selected key
/// and no other, nulls only where allowed, enums among their values, scalars of their kind.
fn fits(doc: &ExecutableDocument, set: &SelectionSet, data: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(object) = data.as_object() else {
        problems.push(format!("{path} is not an object"));
        return;
    };
    let mut keys = Vec::new();
    collect(doc, set, &mut keys);
    for (key, field) in &keys {
        let here = format!("{path}.{key}");
        match object.get(key.as_str()) {
            None => problems.push(format!("{here} is missing")),
            Some(value) => fits_type(doc, field, &field.definition.ty, value, &here, problems),
        }
    }
    for key in object.keys() {
        if !keys.iter().any(|(k, _)| k == key) {
            problems.push(format!("{path}.{key} was not asked for"));
        }
    }
}

fn collect<'a>(
    doc: &'a ExecutableDocument,
    set: &'a SelectionSet,
    keys: &mut Vec<(String, &'a executable::Field)>,
) {
    for selection in &set.selections {
        match selection {
            Selection::Field(field) => {
                let key = field.response_key().to_string();
                if !keys.iter().any(|(k, _)| *k == key) {
                    keys.push((key, field));
                }
            }
            Selection::FragmentSpread(spread) => {
                collect(doc, &doc.fragments[&spread.fragment_name].selection_set, keys)
            }
            Selection::InlineFragment(inline) => collect(doc, &inline.selection_set, keys),
        }
    }
}

fn fits_type(
    doc: &ExecutableDocument,
    field: &executable::Field,
    ty: &apollo_compiler::ast::Type,
    value: &Value,
    path: &str,
    problems: &mut Vec<String>,
) {
    use apollo_compiler::ast::Type;
    if value.is_null() {
        if ty.is_non_null() {
            problems.push(format!("{path} is null but {ty} is not nullable"));
        }
        return;
    }
    match ty {
        Type::List(item) | Type::NonNullList(item) => match value.as_array() {
            Some(items) => {
                for (i, v) in items.iter().enumerate() {
                    fits_type(doc, field, item, v, &format!("{path}[{i}]"), problems);
                }
            }
            None => problems.push(format!("{path} is not a list")),
        },
        Type::Named(name) | Type::NonNullNamed(name) => match vendor().types.get(name) {
            Some(ExtendedType::Enum(e)) => {
                if !value.as_str().is_some_and(|v| e.values.keys().any(|k| k.as_str() == v)) {
                    problems.push(format!("{path} = {value} is no {name}"));
                }
            }
            Some(ExtendedType::Object(_)) => fits(doc, &field.selection_set, value, path, problems),
            Some(ExtendedType::Scalar(_)) => {
                let ok = match name.as_str() {
                    "Int" => value.as_i64().is_some(),
                    "Float" => value.is_number(),
                    "Boolean" => value.is_boolean(),
                    // ID, String, and Shopify's custom scalars (DateTime, Decimal, URL,
                    // UnsignedInt64...) travel as text.
                    _ => value.is_string(),
                };
                if !ok {
                    problems.push(format!("{path} = {value} is no {name}"));
                }
            }
            _ => problems.push(format!("{path} has a type the check does not know: {name}")),
        },
    }
}

/// Asks the simulated shop with `doc` and `variables`; returns the whole answer.
async fn ask(sim: &Simulator, doc: &Document, variables: Value) -> Value {
    let url = format!("{}/admin/api/2026-07/graphql.json", sim.base_url().replace("{shop}", SHOP));
    let body = json!({"query": doc.text, "operationName": doc.name, "variables": variables});
    let response = orderbridge::platforms::http::client()
        .post(url)
        .header("X-Shopify-Access-Token", TOKEN)
        .header("Content-Type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .expect("the simulator answers");
    assert_eq!(response.status().as_u16(), 200, "{}", doc.name);
    serde_json::from_slice(&response.bytes().await.expect("a body")).expect("JSON")
}

#[tokio::test]
async fn the_simulated_shop_answers_every_document_as_the_schema_says_and_charges_its_declared_cost() {
    let sim = Simulator::start().await;
    sim.add_shop(SHOP, TOKEN, &ALL_SCOPES);
    let orders = sim.add_orders(SHOP, 3, 5);
    sim.add_item(SHOP, "SKU-0001", true, true);
    sim.add_item(SHOP, "SKU-0001-B", true, false);
    let order = orders[0];
    let (fo, fo_line) = sim.edit(SHOP, |shop| {
        let fo = &shop.orders[&order].fulfillment_orders[0];
        (fo.id, fo.lines[0].id)
    });
    let location = sim.edit(SHOP, |shop| shop.primary_location());
    let gid = |kind: &str, id: i64| format!("gid://shopify/{kind}/{id}");
    let cases: Vec<(Document, Value)> = vec![
        (documents::PING, json!({})),
        (documents::ORDERS, json!({"query": "status:open", "after": null})),
        (documents::ORDER_LINE_ITEMS, json!({"id": gid("Order", order), "after": null})),
        (documents::FULFILLMENT_STATE, json!({"id": gid("Order", order), "after": null})),
        (documents::FULFILLMENT_ORDER_LINE_ITEMS, json!({"id": gid("FulfillmentOrder", fo), "after": null})),
        (documents::PRIMARY_LOCATION, json!({})),
        (
            documents::INVENTORY_ITEMS,
            json!({"query": "sku:\"SKU-0001\"", "locationId": gid("Location", location), "after": null}),
        ),
        (
            documents::FULFILLMENT_CREATE,
            json!({"fulfillment": {"notifyCustomer": true, "trackingInfo": {"number": "1Z", "company": "UPS"},
                   "lineItemsByFulfillmentOrder": [{"fulfillmentOrderId": gid("FulfillmentOrder", fo),
                       "fulfillmentOrderLineItems": [{"id": gid("FulfillmentOrderLineItem", fo_line), "quantity": 1}]}]}}),
        ),
        (
            documents::SET_AVAILABLE,
            json!({"idempotencyKey": "5f1c0d4e-0000-4000-8000-000000000001",
                   "input": {"name": "available", "reason": "correction", "referenceDocumentUri": "gid://orderbridge/StockBatch/1",
                             "quantities": [{"inventoryItemId": gid("InventoryItem", sim.edit(SHOP, |s| *s.items.keys().next().unwrap())),
                                             "locationId": gid("Location", location), "quantity": 7, "changeFromQuantity": null}]}}),
        ),
    ];
    for (doc, variables) in cases {
        let answer = ask(&sim, &doc, variables).await;
        assert!(answer.get("errors").is_none(), "{}: {answer}", doc.name);
        let parsed = parse(&doc);
        let op = parsed.operations.iter().next().unwrap();
        let mut problems = Vec::new();
        fits(&parsed, &op.selection_set, &answer["data"], "data", &mut problems);
        assert!(problems.is_empty(), "{}: {problems:#?}\n{answer}", doc.name);
        let charged = &answer["extensions"]["cost"];
        assert_eq!(charged["requestedQueryCost"], json!(doc.cost), "{}", doc.name);
        let actual = charged["actualQueryCost"].as_u64().expect("an actual cost");
        assert!(actual <= u64::from(doc.cost), "{}: {actual}", doc.name);
        assert!(charged["throttleStatus"]["currentlyAvailable"].is_number());
    }
    // Shopify's search matches more than the exact SKU; the shop does too.
    let found = ask(
        &sim,
        &documents::INVENTORY_ITEMS,
        json!({"query": "sku:\"SKU-0001\"", "locationId": gid("Location", location), "after": null}),
    )
    .await;
    assert_eq!(found["data"]["inventoryItems"]["nodes"].as_array().unwrap().len(), 2, "{found}");
    assert_eq!(sim.available(SHOP).get("SKU-0001"), Some(&7));
}

#[tokio::test]
async fn any_valid_document_reading_the_same_data_is_answered_and_an_invalid_one_refused() {
    let sim = Simulator::start().await;
    sim.add_shop(SHOP, TOKEN, &ALL_SCOPES);
    sim.add_orders(SHOP, 2, 9);
    // Another shape: edges instead of nodes, an alias, an inline fragment, a variable page size.
    let other = Document {
        name: "Mine",
        text: "query Mine($n: Int!) { o: orders(first: $n, sortKey: UPDATED_AT, query: \"status:open\") {
                 edges { cursor node { ... on Order { num: legacyResourceId lineItems(first: 2) { edges { node { sku } } } } } }
               } }",
        cost: 0,
    };
    let answer = ask(&sim, &other, json!({"n": 1})).await;
    assert!(answer.get("errors").is_none(), "{answer}");
    let edges = answer["data"]["o"]["edges"].as_array().unwrap();
    assert_eq!(edges.len(), 1);
    assert!(edges[0]["node"]["num"].as_str().unwrap().parse::<u64>().is_ok(), "{answer}");
    assert_eq!(answer["extensions"]["cost"]["requestedQueryCost"], json!(2 + (1 + 2 + 2)));
    let wrong = Document { name: "Wrong", text: "query Wrong { shop { name secretField } }", cost: 0 };
    let answer = ask(&sim, &wrong, json!({})).await;
    assert!(answer["errors"][0]["message"].as_str().unwrap().contains("secretField"), "{answer}");
}
