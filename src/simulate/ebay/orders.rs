//! `getOrders`: the `filter` grammar (`creationdate`/`lastmodifieddate` ranges, the two
//! `orderfulfillmentstatus` combinations), `orderIds`, `limit` and `offset`, and the paged
//! answer `{href, total, limit, offset, orders, next?, prev?}`, newest creation first.

use std::cmp::Reverse;

use serde_json::{Value, json};

use super::call::Call;
use super::{Account, State, error, iso, parse_iso};
use crate::simulate::http::Response;

const DOMAIN: &str = "API_FULFILLMENT";
/// Two years, the widest window eBay takes.
const TWO_YEARS_MS: i64 = 730 * 86_400_000;

fn bad(id: u32, message: String) -> Response {
    error(400, id, DOMAIN, &message, None)
}

/// A parsed `filter`.
#[derive(Default)]
struct Filter {
    /// (creation date?, start, end) of the date range that applies.
    range: Option<(bool, i64, i64)>,
    statuses: Option<[&'static str; 2]>,
}

/// The value of `name` in the raw query, as it was sent.
fn raw_param<'a>(raw: &'a str, name: &str) -> Option<&'a str> {
    raw.split('&').find_map(|pair| pair.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// Reads `text` (decoded) as eBay's filter grammar, `now_ms` being the simulator's clock.
fn parse_filter(text: &str, now_ms: i64) -> Result<Filter, Response> {
    let mut filter = Filter::default();
    let mut created = None;
    let mut modified = None;
    let mut rest = text.trim();
    while !rest.is_empty() {
        let (name, after) =
            rest.split_once(':').ok_or_else(|| bad(30700, format!("Invalid filter name: {rest}")))?;
        let close = match after.chars().next() {
            Some('[') => ']',
            Some('{') => '}',
            _ => return Err(bad(30800, format!("Invalid filter value {after} for filter {name}"))),
        };
        let end = after
            .find(close)
            .ok_or_else(|| bad(30800, format!("Invalid filter value {after} for filter {name}")))?;
        let value = &after[1..end];
        rest = after[end + 1..].trim_start_matches(',').trim();
        match name.trim() {
            "creationdate" | "lastmodifieddate" if close == ']' => {
                let range = parse_range(name, value, now_ms)?;
                if name.trim() == "creationdate" { created = Some(range) } else { modified = Some(range) }
            }
            "orderfulfillmentstatus" if close == '}' => {
                filter.statuses = Some(match value {
                    "NOT_STARTED|IN_PROGRESS" => ["NOT_STARTED", "IN_PROGRESS"],
                    "FULFILLED|IN_PROGRESS" => ["FULFILLED", "IN_PROGRESS"],
                    _ => {
                        return Err(bad(
                            30800,
                            format!("Invalid filter value {{{value}}} for filter {name}"),
                        ));
                    }
                });
            }
            "creationdate" | "lastmodifieddate" | "orderfulfillmentstatus" => {
                return Err(bad(30800, format!("Invalid filter value {value} for filter {name}")));
            }
            other => return Err(bad(30700, format!("Invalid filter name: {other}"))),
        }
    }
    // creationdate wins over lastmodifieddate (getOrders' filter text).
    filter.range = created.map(|(a, b)| (true, a, b)).or(modified.map(|(a, b)| (false, a, b)));
    Ok(filter)
}

/// `A..B` or `A..`: (start, end), end defaulting to now.
fn parse_range(name: &str, value: &str, now_ms: i64) -> Result<(i64, i64), Response> {
    let (start, end) = value.split_once("..").ok_or_else(|| bad(30810, "Invalid date format".into()))?;
    if start.trim().is_empty() {
        return Err(bad(30820, "Start date is missing".into()));
    }
    let start = parse_iso(start.trim()).ok_or_else(|| bad(30810, "Invalid date format".into()))?;
    let end = match end.trim() {
        "" => now_ms,
        end => parse_iso(end).ok_or_else(|| bad(30810, "Invalid date format".into()))?,
    };
    if start > now_ms || end > now_ms {
        return Err(bad(30850, "Start and end dates can't be in the future".into()));
    }
    if start > end {
        return Err(bad(30840, "Start date should be before end date".into()));
    }
    if end - start > TWO_YEARS_MS {
        let _ = name;
        return Err(bad(
            30830,
            "Time range between start date and end date must be within '2' years.".into(),
        ));
    }
    Ok((start, end))
}

/// Answers `GET /sell/fulfillment/v1/order`.
pub(super) fn get_orders(state: &mut State, call: &Call) -> Response {
    let request = call.request;
    let raw = request.raw_query.as_str();
    if raw.contains(['[', ']', '{', '}', '|']) {
        let filter = request.param("filter").unwrap_or(raw);
        // eBay quotes the value up to the range's `..` (annex §7's refusal).
        let shown = filter.find("..").map_or(filter, |at| &filter[..at + 2]);
        let name = filter.split(':').next().unwrap_or("filter");
        return bad(30800, format!("Invalid filter value {shown} for filter {name}"));
    }
    let limit = match request.param("limit") {
        None => 50,
        Some(text) => match text.parse::<usize>() {
            Ok(n) if (1..=200).contains(&n) => n,
            _ => return bad(31100, format!("Invalid limit: {text}")),
        },
    };
    let offset = match request.param("offset") {
        None => 0,
        Some(text) => match text.parse::<usize>() {
            Ok(n) => n,
            Err(_) => return bad(31000, format!("Invalid offset: {text}")),
        },
    };
    let now_ms = state.now_ms();
    let lag = state.index_lag_ms;
    let Some(account) = state.accounts.get_mut(&call.seller) else { return super::call::invalid_token() };
    let picked: Vec<usize> = if let Some(ids) = request.param("orderIds").filter(|v| !v.trim().is_empty()) {
        let ids: Vec<&str> = ids.split(',').map(str::trim).collect();
        if ids.len() > 50 {
            return bad(30900, "Exceeded maximum number of order IDs (the current limit is 50)".into());
        }
        ids.iter().filter_map(|id| account.by_id.get(*id).copied()).collect()
    } else {
        let filter = match request.param("filter") {
            Some(text) => match parse_filter(text, now_ms) {
                Ok(filter) => filter,
                Err(response) => return response,
            },
            None => Filter::default(),
        };
        let mut picked: Vec<usize> = (0..account.orders.len())
            .filter(|&i| {
                let o = &account.orders[i];
                let in_range = filter.range.is_none_or(|(created, a, b)| {
                    let at = if created { o.created_ms } else { o.modified_ms };
                    a <= at && at <= b
                });
                let status = filter.statuses.is_none_or(|s| s.contains(&o.status.as_str()));
                in_range && status && o.modified_ms + lag <= now_ms
            })
            .collect();
        picked.sort_by_key(|&i| (Reverse(account.orders[i].created_ms), account.orders[i].key));
        picked
    };
    let total = picked.len();
    let page: Vec<Value> =
        picked.iter().skip(offset).take(limit).map(|&i| listed(&account.orders[i])).collect();
    let href = |offset: usize| {
        let mut parts: Vec<String> = ["filter", "orderIds"]
            .iter()
            .filter_map(|name| raw_param(raw, name).map(|v| format!("{name}={v}")))
            .collect();
        parts.push(format!("limit={limit}&offset={offset}"));
        format!("{}/sell/fulfillment/v1/order?{}", call.ebay_host, parts.join("&"))
    };
    let mut body =
        json!({"href": href(offset), "total": total, "limit": limit, "offset": offset, "orders": page});
    if offset.saturating_add(limit) < total {
        body["next"] = json!(href(offset.saturating_add(limit)));
    }
    if offset > 0 {
        body["prev"] = json!(href(offset.saturating_sub(limit)));
    }
    modify_waiting(account, now_ms);
    Response::json(200, &body)
}

/// An order as the list shows it: `cancelRequests` always empty.
fn listed(order: &super::OrderRec) -> Value {
    let mut json = order.json.clone();
    if let Some(cancel) = json.get_mut("cancelStatus").and_then(Value::as_object_mut) {
        cancel.insert("cancelRequests".into(), json!([]));
    }
    json
}

/// The orders set to change between two pages change now.
fn modify_waiting(account: &mut Account, now_ms: i64) {
    for id in std::mem::take(&mut account.modify_between_pages) {
        account.touch(&id, now_ms);
    }
}

impl Account {
    /// `lastModifiedDate` = `now_ms` (at least one millisecond after it was).
    pub(super) fn touch(&mut self, order_id: &str, now_ms: i64) {
        if let Some(&i) = self.by_id.get(order_id) {
            let order = &mut self.orders[i];
            order.modified_ms = now_ms.max(order.modified_ms + 1);
            super::set(&mut order.json, "lastModifiedDate", json!(iso(order.modified_ms)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grammar_reads_ranges_and_statuses() {
        let now = parse_iso("2026-11-25T12:00:00.000Z").unwrap();
        let f = parse_filter(
            "lastmodifieddate:[2026-11-25T10:15:00.000Z..2026-11-25T10:58:00.000Z],orderfulfillmentstatus:{NOT_STARTED|IN_PROGRESS}",
            now,
        )
        .unwrap_or_else(|_| panic!("parses"));
        assert_eq!(f.statuses, Some(["NOT_STARTED", "IN_PROGRESS"]));
        assert!(matches!(f.range, Some((false, _, _))));
        let both = "lastmodifieddate:[2026-11-25T10:15:00.000Z..],creationdate:[2026-11-20T10:15:00.000Z..]";
        assert!(matches!(parse_filter(both, now).ok().and_then(|f| f.range), Some((true, _, _))));
        for (text, id) in [
            ("orderfulfillmentstatus:{FULFILLED}", 30800),
            ("paymentstatus:{PAID}", 30700),
            ("lastmodifieddate:[2026-11-25..]", 30810),
            ("lastmodifieddate:[..2026-11-25T10:15:00.000Z]", 30820),
            ("lastmodifieddate:[2026-11-25T10:15:00.000Z..2026-11-26T10:15:00.000Z]", 30850),
            ("lastmodifieddate:[2026-11-25T10:15:00.000Z..2026-11-24T10:15:00.000Z]", 30840),
            ("lastmodifieddate:[2023-11-25T10:15:00.000Z..2026-11-24T10:15:00.000Z]", 30830),
        ] {
            let answer = parse_filter(text, now).err().unwrap_or_else(|| panic!("{text} was taken"));
            let body: Value = serde_json::from_slice(&answer.body).unwrap_or_default();
            assert_eq!(body["errors"][0]["errorId"], id, "{text}");
        }
    }
}
