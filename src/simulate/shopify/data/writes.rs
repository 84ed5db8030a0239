//! The simulated shop's writes: `fulfillmentCreate` checked and applied as Shopify does, and
//! `inventorySetQuantities` with its idempotency key and `changeFromQuantity`.

use serde_json::{Value, json};
use std::collections::BTreeSet;

use super::*;

impl ShopData {
    /// `fulfillmentCreate`: checks the input as Shopify does, then fulfils. Returns the
    /// payload.
    pub fn fulfillment_create(&mut self, input: &Value, now_ms: i64) -> Value {
        let user_error = |field: Value, message: &str| json!({"fulfillment": null, "userErrors": [{"field": field, "message": message}]});
        if let Some(message) = self.refuse_fulfillments.clone() {
            return user_error(json!(["fulfillment"]), &message);
        }
        let Some(groups) = input.get("lineItemsByFulfillmentOrder").and_then(Value::as_array) else {
            return user_error(
                json!(["fulfillment", "lineItemsByFulfillmentOrder"]),
                "Line items by fulfillment order is required.",
            );
        };
        if groups.is_empty() || groups.len() > 250 {
            return user_error(
                json!(["fulfillment", "lineItemsByFulfillmentOrder"]),
                "Fulfillment orders must number 1 to 250.",
            );
        }
        // (order id, fo index, [(fo line index, units)])
        let mut plan: Vec<(usize, Vec<(usize, i64)>)> = Vec::new();
        let mut order_id: Option<i64> = None;
        let mut location: Option<i64> = None;
        for (g, group) in groups.iter().enumerate() {
            let Some(fo_id) = group
                .get("fulfillmentOrderId")
                .and_then(Value::as_str)
                .and_then(|g| gid_number("FulfillmentOrder", g))
            else {
                return user_error(
                    json!([
                        "fulfillment",
                        "lineItemsByFulfillmentOrder",
                        g.to_string(),
                        "fulfillmentOrderId"
                    ]),
                    "Fulfillment order does not exist.",
                );
            };
            let Some((oid, fo_index)) = self
                .orders
                .values()
                .find_map(|o| o.fulfillment_orders.iter().position(|fo| fo.id == fo_id).map(|i| (o.id, i)))
            else {
                return user_error(
                    json!([
                        "fulfillment",
                        "lineItemsByFulfillmentOrder",
                        g.to_string(),
                        "fulfillmentOrderId"
                    ]),
                    "Fulfillment order does not exist.",
                );
            };
            if *order_id.get_or_insert(oid) != oid {
                return user_error(
                    json!(["fulfillment"]),
                    "All fulfillment orders must belong to the same order.",
                );
            }
            let fo = &self.orders[&oid].fulfillment_orders[fo_index];
            if !matches!(fo.status, "OPEN" | "IN_PROGRESS") {
                return user_error(
                    json!(["fulfillment"]),
                    "Fulfillment order is not in an actionable state.",
                );
            }
            if *location.get_or_insert(fo.location_id) != fo.location_id {
                return user_error(
                    json!(["fulfillment"]),
                    "All fulfillment orders must be assigned to the same location.",
                );
            }
            let mut takes = Vec::new();
            match group.get("fulfillmentOrderLineItems").and_then(Value::as_array) {
                None => {
                    for (i, line) in fo.lines.iter().enumerate().filter(|(_, l)| l.remaining > 0) {
                        takes.push((i, line.remaining));
                    }
                }
                Some(lines) => {
                    for (l, entry) in lines.iter().enumerate() {
                        let field = json!([
                            "fulfillment",
                            "lineItemsByFulfillmentOrder",
                            g.to_string(),
                            "fulfillmentOrderLineItems",
                            l.to_string(),
                            "quantity"
                        ]);
                        let id = entry
                            .get("id")
                            .and_then(Value::as_str)
                            .and_then(|g| gid_number("FulfillmentOrderLineItem", g));
                        let Some(i) = id.and_then(|id| fo.lines.iter().position(|x| x.id == id)) else {
                            return user_error(
                                field,
                                "Fulfillment order line item does not belong to the fulfillment order.",
                            );
                        };
                        let quantity = entry.get("quantity").and_then(Value::as_i64).unwrap_or(0);
                        if quantity < 1 || quantity > fo.lines[i].remaining {
                            return user_error(
                                field,
                                "Invalid fulfillment order line item quantity requested.",
                            );
                        }
                        takes.push((i, quantity));
                    }
                }
            }
            plan.push((fo_index, takes));
        }
        let Some(order_id) = order_id else {
            return user_error(json!(["fulfillment"]), "Nothing to fulfil.");
        };
        if plan.iter().all(|(_, t)| t.is_empty()) {
            return user_error(json!(["fulfillment"]), "The fulfillment orders have nothing left to fulfil.");
        }
        let tracking = input.get("trackingInfo");
        let number = tracking.and_then(|t| t.get("number")).and_then(Value::as_str).map(str::to_string);
        let company = tracking.and_then(|t| t.get("company")).and_then(Value::as_str).map(str::to_string);
        let notify = input.get("notifyCustomer").and_then(Value::as_bool).unwrap_or(false);
        let id = self.next_id();
        let mut units = Vec::new();
        self.change(order_id, now_ms, |order| {
            for (fo_index, takes) in &plan {
                let fo = &mut order.fulfillment_orders[*fo_index];
                for (i, n) in takes {
                    fo.lines[*i].remaining -= n;
                    units.push((fo.lines[*i].line_id, *n));
                }
                fo.status = if fo.lines.iter().all(|l| l.remaining == 0) { "CLOSED" } else { "IN_PROGRESS" };
            }
            order.fulfillments.push(Fulfillment {
                id,
                order_id,
                status: "SUCCESS",
                tracking_number: number.clone(),
                company: company.clone(),
                notify_customer: notify,
                units: units.clone(),
                created_ms: now_ms,
            });
        });
        json!({"fulfillment": {"id": gid("Fulfillment", id), "status": "SUCCESS", "legacyResourceId": id.to_string(),
                               "name": "F", "createdAt": iso(now_ms), "totalQuantity": units.iter().map(|(_, n)| n).sum::<i64>(),
                               "trackingInfo": [{"number": number, "company": company, "url": null}]},
               "userErrors": []})
    }

    /// `inventorySetQuantities` under an idempotency key: the same key with the same input
    /// answers as the first time and changes nothing; with another input it is refused.
    pub fn set_quantities(&mut self, input: &Value, key: &str, now_ms: i64) -> Value {
        if self.failed_keys.remove(key) {
            return json!({"inventoryAdjustmentGroup": null, "userErrors": [{"code": "IDEMPOTENCY_PREVIOUS_ATTEMPT_FAILED",
                "field": null, "message": "A previous attempt with this idempotency key failed."}]});
        }
        if let Some((seen, payload)) = self.idempotency.get(key) {
            if seen == input {
                return payload.clone();
            }
            return json!({"inventoryAdjustmentGroup": null, "userErrors": [{"code": "IDEMPOTENCY_KEY_PARAMETER_MISMATCH",
                "field": null, "message": "The idempotency key was used with other parameters."}]});
        }
        let payload = self.apply_quantities(input, now_ms);
        self.idempotency.insert(key.to_string(), (input.clone(), payload.clone()));
        payload
    }

    fn apply_quantities(&mut self, input: &Value, now_ms: i64) -> Value {
        let error = |code: &str, field: Value, message: &str| json!({"code": code, "field": field, "message": message});
        let mut errors = Vec::new();
        let name = input.get("name").and_then(Value::as_str).unwrap_or_default();
        if !matches!(name, "available" | "on_hand") {
            errors.push(error(
                "INVALID_NAME",
                json!(["input", "name"]),
                "The quantity name must be available or on_hand.",
            ));
        }
        let reason = input.get("reason").and_then(Value::as_str).unwrap_or_default();
        if ![
            "correction",
            "cycle_count_available",
            "damaged",
            "movement_created",
            "movement_updated",
            "movement_received",
            "movement_canceled",
            "other",
            "promotion",
            "quality_control",
            "received",
            "reservation_created",
            "reservation_deleted",
            "reservation_updated",
            "restock",
            "safety_stock",
            "shrinkage",
        ]
        .contains(&reason)
        {
            errors.push(error(
                "INVALID_REASON",
                json!(["input", "reason"]),
                "The quantity reason is invalid.",
            ));
        }
        let quantities = input.get("quantities").and_then(Value::as_array).cloned().unwrap_or_default();
        if quantities.len() > 250 {
            errors.push(error(
                "INVALID_QUANTITY_TOO_HIGH",
                json!(["input", "quantities"]),
                "At most 250 quantities at once.",
            ));
        }
        let mut valid = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, q) in quantities.iter().enumerate() {
            let at = |leaf: &str| json!(["input", "quantities", i.to_string(), leaf]);
            if !q.as_object().is_some_and(|m| m.contains_key("changeFromQuantity")) {
                errors.push(error(
                    "INVALID_INVENTORY_ITEM",
                    at("changeFromQuantity"),
                    "changeFromQuantity must be given (null skips the check).",
                ));
                continue;
            }
            let item =
                q.get("inventoryItemId").and_then(Value::as_str).and_then(|g| gid_number("InventoryItem", g));
            let location =
                q.get("locationId").and_then(Value::as_str).and_then(|g| gid_number("Location", g));
            let quantity = q.get("quantity").and_then(Value::as_i64).unwrap_or(-1);
            let Some(item) = item.filter(|id| self.items.contains_key(id)) else {
                errors.push(error(
                    "INVALID_INVENTORY_ITEM",
                    at("inventoryItemId"),
                    "The specified inventory item could not be found.",
                ));
                continue;
            };
            let Some(location) = location.filter(|id| self.locations.iter().any(|l| l.id == *id)) else {
                errors.push(error(
                    "INVALID_LOCATION",
                    at("locationId"),
                    "The specified location could not be found.",
                ));
                continue;
            };
            if !seen.insert((item, location)) {
                errors.push(error(
                    "NO_DUPLICATE_INVENTORY_ITEM_ID_GROUP_ID_PAIR",
                    at("inventoryItemId"),
                    "The same inventory item and location appear twice.",
                ));
                continue;
            }
            if !self.items[&item].levels.contains_key(&location) {
                errors.push(error(
                    "ITEM_NOT_STOCKED_AT_LOCATION",
                    at("locationId"),
                    "The specified inventory item is not stocked at the location.",
                ));
                continue;
            }
            if !self.items[&item].tracked {
                errors.push(error(
                    "NON_MUTABLE_INVENTORY_ITEM",
                    at("inventoryItemId"),
                    "The inventory item is not tracked.",
                ));
                continue;
            }
            if quantity < 0 {
                errors.push(error(
                    "INVALID_QUANTITY_NEGATIVE",
                    at("quantity"),
                    "The quantity can't be negative.",
                ));
                continue;
            }
            if let Some(expected) = q.get("changeFromQuantity").and_then(Value::as_i64)
                && self.items[&item].levels[&location].1 != expected
            {
                errors.push(error(
                    "CHANGE_FROM_QUANTITY_STALE",
                    at("changeFromQuantity"),
                    "The quantity changed since it was read.",
                ));
                continue;
            }
            valid.push((item, location, quantity));
        }
        if !errors.is_empty() {
            return json!({"inventoryAdjustmentGroup": null, "userErrors": errors});
        }
        for (item, location, quantity) in valid {
            if let Some(level) = self.items.get_mut(&item).and_then(|i| i.levels.get_mut(&location)) {
                level.1 = quantity;
            }
        }
        let id = self.next_id();
        json!({"inventoryAdjustmentGroup": {"id": format!("gid://shopify/InventoryAdjustmentGroup/{id}"), "reason": reason,
               "referenceDocumentUri": input.get("referenceDocumentUri"), "createdAt": iso(now_ms)},
               "userErrors": []})
    }
}
