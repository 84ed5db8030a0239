//! Tests of `graphql`.

use super::*;

fn cost_of(query: &str, variables: Value) -> u32 {
    let prepared = prepare(query, None).unwrap();
    requested_cost(&prepared, variables.as_object().unwrap()).unwrap()
}

#[test]
fn the_schema_loads_and_costs_follow_shopifys_rules() {
    // An object 1, a scalar 0.
    assert_eq!(cost_of("{ shop { name } }", json!({})), 1);
    // A connection: 2 + first x (node 1 + its objects).
    assert_eq!(
        cost_of("{ orders(first: 10, query: \"x\") { nodes { id shippingAddress { city } } } }", json!({})),
        2 + 10 * 2
    );
    assert_eq!(
        cost_of(
            "query($n: Int) { orders(first: $n) { edges { node { id } } pageInfo { hasNextPage } } }",
            json!({"n": 5})
        ),
        2 + 5
    );
    // A list given first counts first elements, other lists one.
    assert_eq!(
        cost_of(
            "{ order(id: \"gid://shopify/Order/1\") { fulfillments(first: 3) { trackingInfo { number } } } }",
            json!({})
        ),
        1 + 3 * (1 + 1)
    );
    let missing = prepare("{ orders(query: \"x\") { nodes { id } } }", None).unwrap();
    assert!(requested_cost(&missing, &Map::new()).unwrap_err().contains("first or last"));
}

#[test]
fn documents_that_read_fields_the_shop_lacks_are_refused_like_shopify_refuses_them() {
    let errors = prepare("{ shop { name nonsense } }", None).err().unwrap();
    assert!(errors[0]["message"].as_str().unwrap().contains("nonsense"), "{errors:?}");
}

#[test]
fn pages_follow_first_after_last_and_before() {
    let args = |v: Value| v.as_object().unwrap().clone();
    let page = paginate(5, &args(json!({"first": 2}))).ok().unwrap();
    assert_eq!((page.range, page.has_next, page.has_previous), (0..2, true, false));
    let page = paginate(5, &args(json!({"first": 2, "after": index_cursor(1)}))).ok().unwrap();
    assert_eq!((page.range, page.has_next, page.has_previous), (2..4, true, true));
    let page = paginate(5, &args(json!({"last": 2}))).ok().unwrap();
    assert_eq!(page.range, 3..5);
    assert!(paginate(5, &args(json!({}))).is_err());
    assert!(paginate(5, &args(json!({"first": 251}))).is_err());
}
