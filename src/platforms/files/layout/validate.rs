//! The layouts' 422s (§8): every rule, each naming the offending value by its bracket path
//! (`adapter[orders_layout][columns][3][field]`), so a typo never writes a wrong file
//! silently. Values are read without being taken from the adapter: `file_format` is read by
//! the X12 checks too.

use std::collections::HashMap;

use jiff::tz::TimeZone;
use serde_json::Value;

use super::{DateFormat, Field, LAYOUT_KEYS, LayoutKind, boolean, delimiter_byte, header_key, integer, trim};
use crate::fields::Fields;

/// Keys every layout takes.
const COMMON_KEYS: [&str; 6] =
    ["delimiter", "header", "date_format", "time_zone", "decimal_separator", "columns"];
/// Keys only `orders_layout` takes.
const ORDERS_KEYS: [&str; 5] = ["rows", "max_items", "line_ending", "decimal_places", "file_name"];
/// Keys only `shipments_layout` and `inventory_layout` take.
const READ_KEYS: [&str; 2] = ["file_pattern", "filters"];
/// Column keys every layout takes.
const COLUMN_KEYS: [&str; 5] = ["header", "field", "map", "prefix", "format"];
/// Column keys only `orders_layout` takes.
const ORDERS_COLUMN_KEYS: [&str; 3] = ["value", "default", "max_length"];
/// Column keys only a read layout takes.
const READ_COLUMN_KEYS: [&str; 1] = ["split"];
/// The most columns a layout lists, and the most an order row has once its item group is
/// repeated.
const MOST_COLUMNS: usize = 200;
const MOST_WRITTEN_COLUMNS: usize = 1000;
/// The longest header, file name or file pattern, in characters.
const LONGEST_TEXT: usize = 200;

/// Checks `file_format` and the three layouts of a file warehouse's adapter (§1, §8).
pub fn validate(adapter: &mut Fields) {
    let mut problems = Problems::default();
    let csv = match adapter.peek("file_format") {
        None | Some(Value::Null) => true,
        Some(Value::String(format)) if format == "csv" || format == "x12" => format == "csv",
        Some(_) => {
            problems.at(&["file_format"], "must be \"csv\" or \"x12\"");
            true
        }
    };
    let mut summaries = HashMap::new();
    for kind in [LayoutKind::Orders, LayoutKind::Shipments, LayoutKind::Inventory] {
        match adapter.peek(kind.key()) {
            None | Some(Value::Null) => {}
            Some(_) if !csv => problems.at(&[kind.key()], "layouts apply only to csv warehouses"),
            Some(layout) => {
                if let Some(summary) = problems.layout(kind, layout) {
                    summaries.insert(kind.key(), summary);
                }
            }
        }
    }
    if csv {
        problems.match_field_written(&summaries, adapter);
    }
    problems.report(adapter);
}

/// Refuses each layout key on an API warehouse (`shipbob`, `shipstation`; §8 rule 12): its
/// files are not ours to shape.
pub fn refuse_on_api_warehouse(adapter: &mut Fields) {
    for key in LAYOUT_KEYS {
        if adapter.peek(key).is_some_and(|v| !v.is_null()) {
            adapter.error(key, "layouts apply only to file warehouses (sftp, ftp, dropstream, folder)");
        }
    }
}

/// What rule 9 needs to know of a layout that could be read.
struct Summary {
    /// The fields of its columns (today's when it has no `columns`), `None` when its columns
    /// are broken.
    fields: Option<Vec<Field>>,
    /// It lists its own `columns`.
    own_columns: bool,
}

/// The problems found, by path from the adapter in.
#[derive(Default)]
struct Problems(Vec<(Vec<String>, String)>);

impl Problems {
    fn at(&mut self, path: &[&str], problem: impl Into<String>) {
        self.0.push((path.iter().map(|p| p.to_string()).collect(), problem.into()));
    }

    fn report(self, adapter: &mut Fields) {
        for (path, problem) in self.0 {
            adapter.error_in(&path, problem);
        }
    }

    /// Rules 1 to 8, 10, 11 and 13 for one layout.
    fn layout(&mut self, kind: LayoutKind, layout: &Value) -> Option<Summary> {
        let key = kind.key();
        let Value::Object(layout) = layout else {
            self.at(&[key], "must be an object");
            return None;
        };
        let orders = kind == LayoutKind::Orders;
        for (name, value) in layout.iter().filter(|(_, v)| !v.is_null()) {
            let name = name.as_str();
            let allowed = COMMON_KEYS.contains(&name)
                || orders && ORDERS_KEYS.contains(&name)
                || !orders && READ_KEYS.contains(&name);
            if !allowed {
                let problem = if ORDERS_KEYS.contains(&name) || READ_KEYS.contains(&name) {
                    format!("is not a key of {key}")
                } else {
                    "is not a layout key".to_string()
                };
                self.at(&[key, name], problem);
                continue;
            }
            if let Err(problem) = setting(name, value) {
                self.at(&[key, name], problem);
            }
        }
        let given = |name: &str| layout.get(name).filter(|v| !v.is_null());
        let rows_per_order = orders && given("rows").and_then(Value::as_str) == Some("order");
        let max_items = given("max_items").and_then(integer).filter(|n| (1..=50).contains(n));
        if orders {
            match (rows_per_order, given("max_items").is_some()) {
                (true, false) => self.at(&[key, "max_items"], "is required when rows is \"order\""),
                (false, true) => self.at(&[key, "max_items"], "applies only when rows is \"order\""),
                _ => {}
            }
        }
        let columns = match given("columns") {
            None => Some(None),
            Some(Value::Array(columns)) => {
                // A max_items out of range is its own problem: the columns are checked as if 1.
                let repeat = rows_per_order.then(|| max_items.unwrap_or(1));
                self.columns(kind, columns, repeat).map(Some)
            }
            Some(_) => {
                self.at(&[key, "columns"], "must be an array of columns");
                None
            }
        };
        if !orders {
            let header = given("header").and_then(boolean).unwrap_or(true);
            let headers: Option<Vec<String>> = match &columns {
                Some(Some(listed)) => Some(listed.iter().map(|(h, _)| header_key(h)).collect()),
                Some(None) => Some(default_columns(kind).iter().map(|c| header_key(&c.header)).collect()),
                None => None,
            };
            match given("filters") {
                None => {}
                Some(Value::Array(filters)) => {
                    self.filters(key, filters, (!header).then_some(headers).flatten())
                }
                Some(_) => self.at(&[key, "filters"], "must be an array of filters"),
            }
        }
        let own_columns = given("columns").is_some();
        let fields = match columns {
            Some(Some(listed)) => Some(listed.into_iter().filter_map(|(_, f)| f).collect()),
            Some(None) => Some(default_fields(kind)),
            None => None,
        };
        Some(Summary { fields, own_columns })
    }

    /// The columns of a layout: each one's header and field, or `None` when any is broken.
    /// `repeat` is `max_items` of a `rows: "order"` layout.
    fn columns(
        &mut self,
        kind: LayoutKind,
        columns: &[Value],
        repeat: Option<i64>,
    ) -> Option<Vec<(String, Option<Field>)>> {
        let key = kind.key();
        if columns.is_empty() || columns.len() > MOST_COLUMNS {
            self.at(&[key, "columns"], format!("must hold 1 to {MOST_COLUMNS} columns"));
            return None;
        }
        let before = self.0.len();
        let listed: Vec<Option<(String, Option<Field>)>> =
            columns.iter().enumerate().map(|(i, c)| self.column(kind, i, c)).collect();
        // The checks across columns look at every column that could be read.
        let mut headers: HashMap<String, usize> = HashMap::new();
        let mut fields: HashMap<Field, usize> = HashMap::new();
        let mut item_columns = Vec::new();
        let mut written = 0usize;
        for (i, (header, field)) in listed.iter().enumerate().filter_map(|(i, c)| Some((i, c.as_ref()?))) {
            let at = i.to_string();
            let item = kind == LayoutKind::Orders && field.is_some_and(Field::is_item);
            let numbered = header.contains("{n}");
            match repeat {
                Some(_) if item && !numbered => self.at(
                    &[key, "columns", &at, "header"],
                    "must contain {n}: an item column is repeated per item",
                ),
                Some(_) if !item && numbered => {
                    self.at(&[key, "columns", &at, "header"], "takes {n} only in an item column")
                }
                None if numbered => self.at(
                    &[key, "columns", &at, "header"],
                    "takes {n} only in an item column of an orders layout with rows \"order\"",
                ),
                _ => {}
            }
            if item && repeat.is_some() {
                if item_columns.last().is_some_and(|last| last + 1 != i) {
                    self.at(&[key, "columns", &at, "header"], "item columns must stand next to each other");
                }
                item_columns.push(i);
            }
            let copies = if item { repeat.unwrap_or(1) } else { 1 };
            for n in 1..=copies {
                written += 1;
                let expanded = header_key(&header.replace("{n}", &n.to_string()));
                if let Some(first) = headers.get(&expanded) {
                    let problem = format!("repeats the header of column {first}");
                    self.at(&[key, "columns", &at, "header"], problem);
                    break;
                }
                headers.insert(expanded, i);
            }
            if kind != LayoutKind::Orders
                && let Some(field) = field
            {
                if let Some(first) = fields.get(field) {
                    self.at(
                        &[key, "columns", &at, "field"],
                        format!("is the field of column {first} already"),
                    );
                } else {
                    fields.insert(*field, i);
                }
            }
        }
        if written > MOST_WRITTEN_COLUMNS {
            self.at(
                &[key, "columns"],
                format!("must make at most {MOST_WRITTEN_COLUMNS} columns once the item columns are repeated max_items times"),
            );
        }
        let listed: Vec<(String, Option<Field>)> = listed.into_iter().flatten().collect();
        let has = |field: Field| listed.iter().any(|(_, f)| *f == Some(field));
        match kind {
            LayoutKind::Orders | LayoutKind::Inventory if !(has(Field::Sku) && has(Field::Quantity)) => {
                self.at(&[key, "columns"], "must have a sku column and a quantity column")
            }
            LayoutKind::Shipments => {
                if !has(Field::TrackingNumber) {
                    self.at(&[key, "columns"], "must have a tracking_number column");
                }
                let matches: Vec<Field> = [Field::OrderId, Field::ExternalId, Field::ExternalDisplayId]
                    .into_iter()
                    .filter(|f| has(*f))
                    .collect();
                match matches.as_slice() {
                    [] => self.at(
                        &[key, "columns"],
                        "must have a column naming the order: order_id, external_id or external_display_id",
                    ),
                    [_] | [Field::OrderId, Field::ExternalId] => {}
                    _ => self.at(
                        &[key, "columns"],
                        "must name the order by one field (order_id, external_id or external_display_id), or by order_id and external_id together",
                    ),
                }
            }
            _ => {}
        }
        (self.0.len() == before).then_some(listed)
    }

    /// One column: its header and field, or `None` when it cannot be read.
    fn column(&mut self, kind: LayoutKind, i: usize, column: &Value) -> Option<(String, Option<Field>)> {
        let key = kind.key();
        let at = i.to_string();
        let path = |name: &'static str| [key, "columns", at.as_str(), name];
        let column = match column {
            Value::String(name) => {
                return match kind.field(name) {
                    Some(field) => Some((name.clone(), Some(field))),
                    None => {
                        self.at(
                            &[key, "columns", &at],
                            format!("is not a field of {key}; a column given as text is a field's name"),
                        );
                        None
                    }
                };
            }
            Value::Object(column) => column,
            _ => {
                self.at(&[key, "columns", &at], "must be a field name or an object");
                return None;
            }
        };
        let orders = kind == LayoutKind::Orders;
        let constant = column.contains_key("value");
        for name in column.keys() {
            let name = name.as_str();
            let allowed = COLUMN_KEYS.contains(&name)
                || orders && ORDERS_COLUMN_KEYS.contains(&name)
                || !orders && READ_COLUMN_KEYS.contains(&name);
            if !allowed {
                let problem = if ORDERS_COLUMN_KEYS.contains(&name) || READ_COLUMN_KEYS.contains(&name) {
                    format!("is not a column key of {key}")
                } else {
                    "is not a column key".to_string()
                };
                self.at(&[key, "columns", &at, name], problem);
            } else if constant && orders && !matches!(name, "header" | "value" | "field") {
                self.at(&[key, "columns", &at, name], "a value column takes no other key than header");
            }
        }
        let header = match column.get("header") {
            None | Some(Value::Null) => Err("is required".to_string()),
            Some(Value::String(header)) if trim(header).is_empty() => Err("must not be empty".into()),
            Some(Value::String(header)) if header.chars().count() > LONGEST_TEXT => {
                Err(format!("must be at most {LONGEST_TEXT} characters"))
            }
            Some(Value::String(header)) if header.contains(['\r', '\n']) => {
                Err("must not hold a line break".into())
            }
            Some(Value::String(header)) => Ok(header.clone()),
            Some(_) => Err("must be a string".into()),
        };
        let header = header.map_err(|problem| self.at(&path("header"), problem)).ok();
        if orders && column.contains_key("field") == constant {
            self.at(&[key, "columns", &at], "needs exactly one of field and value");
        }
        let field = match column.get("field") {
            None => None,
            Some(Value::String(name)) => {
                let field = kind.field(name);
                if field.is_none() {
                    self.at(&path("field"), format!("is not a field of {key}"));
                }
                field
            }
            Some(_) => {
                self.at(&path("field"), "must be a string");
                None
            }
        };
        for name in ["value", "default"] {
            if column.get(name).is_some_and(|v| !v.is_string()) {
                self.at(&[key, "columns", &at, name], "must be a string");
            }
        }
        if let Some(map) = column.get("map")
            && !map.as_object().is_some_and(|map| map.values().all(Value::is_string))
        {
            self.at(&path("map"), "must be an object of strings to strings");
        }
        if let Some(prefix) = column.get("prefix")
            && prefix.as_str().is_none_or(str::is_empty)
        {
            self.at(&path("prefix"), "must be non-empty text");
        }
        if let Some(format) = column.get("format") {
            match format.as_str().map(DateFormat::parse) {
                None => self.at(&path("format"), "must be a string"),
                Some(Err(problem)) => self.at(&path("format"), problem),
                Some(Ok(_)) if !field.is_some_and(Field::is_date) => self.at(
                    &path("format"),
                    "applies only to a date field (ordered_at, requested_ship_date, shipped_at)",
                ),
                Some(Ok(_)) => {}
            }
        }
        if let Some(most) = column.get("max_length")
            && !integer(most).is_some_and(|n| (1..=10_000).contains(&n))
        {
            self.at(&path("max_length"), "must be an integer from 1 to 10000");
        }
        if let Some(split) = column.get("split") {
            if split.as_str().is_none_or(str::is_empty) {
                self.at(&path("split"), "must be non-empty text");
            } else if field != Some(Field::TrackingNumber) {
                self.at(&path("split"), "applies only to the tracking_number column");
            }
        }
        Some((header?, field))
    }

    /// A read layout's filters; `headers` are the layout's own (compared as read) when the
    /// files have no header row, so a filter must name one of them.
    fn filters(&mut self, key: &str, filters: &[Value], headers: Option<Vec<String>>) {
        for (i, filter) in filters.iter().enumerate() {
            let at = i.to_string();
            let Value::Object(filter) = filter else {
                self.at(&[key, "filters", &at], "must be an object");
                continue;
            };
            for name in filter.keys().filter(|k| !matches!(k.as_str(), "header" | "equals" | "not_equals")) {
                self.at(&[key, "filters", &at, name], "is not a filter key");
            }
            match filter.get("header") {
                Some(Value::String(header)) if trim(header).is_empty() => {
                    self.at(&[key, "filters", &at, "header"], "must not be empty")
                }
                Some(Value::String(header)) => {
                    if let Some(headers) = &headers
                        && !headers.contains(&header_key(header))
                    {
                        self.at(
                            &[key, "filters", &at, "header"],
                            "is no column's header; without a header row a filter names a column of the layout",
                        );
                    }
                }
                None | Some(Value::Null) => self.at(&[key, "filters", &at, "header"], "is required"),
                Some(_) => self.at(&[key, "filters", &at, "header"], "must be a string"),
            }
            match (filter.get("equals"), filter.get("not_equals")) {
                (Some(Value::String(_)), None) | (None, Some(Value::String(_))) => {}
                (Some(_), None) | (None, Some(_)) => {
                    self.at(&[key, "filters", &at], "the value must be a string")
                }
                _ => self.at(&[key, "filters", &at], "needs exactly one of equals and not_equals"),
            }
        }
    }

    /// Rule 9: the shipments layout's order match field is one the orders layout writes, so
    /// the warehouse can echo it back.
    fn match_field_written(&mut self, summaries: &HashMap<&str, Summary>, adapter: &Fields) {
        let given = |kind: LayoutKind| adapter.peek(kind.key()).is_some_and(|v| !v.is_null());
        let fields = |kind: LayoutKind| match summaries.get(kind.key()) {
            Some(summary) => summary.fields.clone(),
            None if given(kind) => None,
            None => Some(default_fields(kind)),
        };
        let (Some(written), Some(read)) = (fields(LayoutKind::Orders), fields(LayoutKind::Shipments)) else {
            return;
        };
        let own_columns = summaries.get(LayoutKind::Shipments.key()).is_some_and(|s| s.own_columns);
        let matches: Vec<Field> = read.into_iter().filter(|f| f.is_order_match()).collect();
        let problem = match matches.as_slice() {
            [single] if !written.contains(single) => format!(
                "the orders layout must write {}, the field shipment files name their order by",
                single.name()
            ),
            [Field::OrderId, Field::ExternalId]
                if !(written.contains(&Field::OrderId) || written.contains(&Field::ExternalId)) =>
            {
                "the orders layout must write order_id or external_id, the fields shipment files name their order by"
                    .to_string()
            }
            _ => return,
        };
        let at = if own_columns { LayoutKind::Shipments } else { LayoutKind::Orders };
        self.at(&[at.key(), "columns"], problem);
    }
}

/// The fields of today's columns of `kind`.
fn default_fields(kind: LayoutKind) -> Vec<Field> {
    default_columns(kind).iter().filter_map(|c| c.field).collect()
}

/// Today's columns of `kind` (§9).
fn default_columns(kind: LayoutKind) -> Vec<super::Column> {
    super::columns(kind, &super::default_layout(kind))
}

/// One layout setting's value, or why it is wrong (rules 3, 6 and 10).
fn setting(name: &str, value: &Value) -> Result<(), String> {
    let text = value.as_str();
    let one_of = |choices: &[&str], problem: &str| match text {
        Some(t) if choices.contains(&t) => Ok(()),
        _ => Err(problem.to_string()),
    };
    let within = |low: i64, high: i64| match integer(value) {
        Some(n) if (low..=high).contains(&n) => Ok(()),
        _ => Err(format!("must be an integer from {low} to {high}")),
    };
    match name {
        "delimiter" => match text.and_then(delimiter_byte) {
            Some(_) => Ok(()),
            None => Err(r#"must be one of ",", "\t", "|" and ";""#.into()),
        },
        "header" => boolean(value).map(|_| ()).ok_or_else(|| "must be true or false".into()),
        "rows" => one_of(&["item", "order"], r#"must be "item" or "order""#),
        "max_items" => within(1, 50),
        "line_ending" => one_of(&["lf", "crlf"], r#"must be "lf" or "crlf""#),
        "decimal_separator" => one_of(&[".", ","], r#"must be "." or ",""#),
        "decimal_places" => within(0, 4),
        "date_format" => {
            text.ok_or_else(|| "must be a string".to_string()).and_then(|f| DateFormat::parse(f).map(|_| ()))
        }
        "time_zone" => match text.map(TimeZone::get) {
            Some(Ok(_)) => Ok(()),
            _ => Err("must be an IANA time zone name (America/Chicago, UTC)".into()),
        },
        "file_name" => text.ok_or_else(|| "must be a string".to_string()).and_then(file_name),
        "file_pattern" => match text {
            None => Err("must be a string".into()),
            Some("") => Err("must not be empty".into()),
            Some(p) if p.chars().count() > LONGEST_TEXT => {
                Err(format!("must be at most {LONGEST_TEXT} characters"))
            }
            Some(p) if p.contains(['/', '\\']) => Err("must be a file name pattern, without / or \\".into()),
            Some(_) => Ok(()),
        },
        // `columns` and `filters` are checked element by element.
        _ => Ok(()),
    }
}

/// A `file_name` template (rule 10).
fn file_name(template: &str) -> Result<(), String> {
    if template.is_empty() {
        return Err("must not be empty".into());
    }
    if template.chars().count() > LONGEST_TEXT {
        return Err(format!("must be at most {LONGEST_TEXT} characters"));
    }
    if !(template.contains("{connection_id}") && template.contains("{batch}")) {
        return Err("must contain {connection_id} and {batch}, so every file has a name of its own".into());
    }
    let rest = template.replace("{connection_id}", "").replace("{batch}", "").replace("{date}", "");
    if rest.contains(['{', '}']) {
        return Err("takes no placeholder but {connection_id}, {batch} and {date}".into());
    }
    if template.starts_with('.') {
        return Err("must not start with . (a hidden name is the file still being written)".into());
    }
    if template.contains(['/', '\\']) || template.chars().any(char::is_control) {
        return Err("must be a file name, without /, \\ or control characters".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests;
