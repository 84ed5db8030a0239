//! The GraphQL side of the simulated shop: a request's document is parsed and validated
//! against the part of Shopify's schema the shop serves (`schema.graphql`, checked against
//! Shopify's own by a test), its cost is computed by Shopify's published rules, and it is
//! executed by apollo-compiler's executor over JSON objects the shop builds. So any valid
//! document that reads the same data is answered, whatever its shape, aliases or fragments.
//!
//! Cost (annex B.2, Shopify's rules): a scalar or enum costs 0, an object 1, a connection
//! 2 plus `first` times one node, a mutation field 10 plus its payload; a list given `first`
//! counts that many elements, other lists one. The actual cost counts the nodes returned.

use std::sync::OnceLock;

use apollo_compiler::executable::{self, Operation, Selection, SelectionSet};
use apollo_compiler::resolvers::{FieldError, ObjectValue, ResolveInfo, ResolvedValue};
use apollo_compiler::schema::ExtendedType;
use apollo_compiler::validation::Valid;
use apollo_compiler::{ExecutableDocument, Schema};
use base64::Engine;
use serde_json::{Map, Value, json};

/// Shopify's largest page.
pub const MAX_PAGE: i64 = 250;

/// The schema the simulated shop serves.
pub fn schema() -> &'static Valid<Schema> {
    static SCHEMA: OnceLock<Valid<Schema>> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        Schema::parse_and_validate(include_str!("schema.graphql"), "shopify-subset.graphql")
            .expect("the simulator's schema is valid")
    })
}

/// A request's document, ready to run.
pub struct Prepared {
    pub document: Valid<ExecutableDocument>,
    pub operation_name: Option<String>,
}

impl Prepared {
    pub fn operation(&self) -> &Operation {
        // `prepare` checked that it exists.
        self.document.operations.get(self.operation_name.as_deref()).expect("the operation exists")
    }
}

/// A GraphQL error as Shopify sends it.
pub fn error(message: impl Into<String>, code: Option<&str>) -> Value {
    match code {
        Some(code) => json!({"message": message.into(), "extensions": {"code": code}}),
        None => json!({"message": message.into()}),
    }
}

/// Parses and validates a request's document and picks its operation.
pub fn prepare(query: &str, operation_name: Option<&str>) -> Result<Prepared, Vec<Value>> {
    let document =
        ExecutableDocument::parse_and_validate(schema(), query, "request.graphql").map_err(|e| {
            e.errors
                .iter()
                .map(|d| serde_json::to_value(d.to_json()).unwrap_or_else(|_| error("Invalid query", None)))
                .collect::<Vec<_>>()
        })?;
    if let Err(e) = document.operations.get(operation_name) {
        return Err(vec![error(e.message().to_string(), None)]);
    }
    Ok(Prepared { document, operation_name: operation_name.map(str::to_string) })
}

/// The fields an operation selects, as (parent type, field): for the scope check.
pub fn fields_used(prepared: &Prepared) -> Vec<(String, String)> {
    let mut found = Vec::new();
    collect_fields(&prepared.document, &prepared.operation().selection_set, &mut found, 0);
    found
}

fn collect_fields(
    doc: &ExecutableDocument,
    set: &SelectionSet,
    found: &mut Vec<(String, String)>,
    depth: usize,
) {
    if depth > 32 {
        return;
    }
    for selection in &set.selections {
        match selection {
            Selection::Field(field) => {
                found.push((set.ty.to_string(), field.name.to_string()));
                collect_fields(doc, &field.selection_set, found, depth + 1);
            }
            Selection::FragmentSpread(spread) => {
                if let Some(fragment) = doc.fragments.get(&spread.fragment_name) {
                    collect_fields(doc, &fragment.selection_set, found, depth + 1);
                }
            }
            Selection::InlineFragment(inline) => collect_fields(doc, &inline.selection_set, found, depth + 1),
        }
    }
}

/// How many nodes or elements a field asks for: its `first` (or `last`), a literal or a
/// variable.
fn count_argument(field: &executable::Field, variables: &Map<String, Value>) -> Option<i64> {
    ["first", "last"].iter().find_map(|name| {
        let value = field.specified_argument_by_name(name)?;
        match value.as_variable() {
            Some(var) => variables.get(var.as_str())?.as_i64(),
            None => value.to_i32().map(i64::from),
        }
    })
}

fn is_connection(field: &executable::Field) -> bool {
    field.definition.ty.inner_named_type().as_str().ends_with("Connection")
        && field.definition.argument_by_name("first").is_some()
}

fn is_object(name: &str) -> bool {
    matches!(
        schema().types.get(name),
        Some(ExtendedType::Object(_) | ExtendedType::Interface(_) | ExtendedType::Union(_))
    )
}

/// Shopify's requested cost of the operation, or why it cannot run (a connection without
/// `first` or `last`, or one over 250).
pub fn requested_cost(prepared: &Prepared, variables: &Map<String, Value>) -> Result<u32, String> {
    let op = prepared.operation();
    let mut cost = Cost { doc: &prepared.document, variables, data: None };
    if op.is_mutation() {
        let mut total = 0;
        for selection in &op.selection_set.selections {
            if let Selection::Field(field) = selection {
                total += 10 + cost.selection(&field.selection_set, None, 0)?;
            }
        }
        Ok(total)
    } else {
        cost.selection(&op.selection_set, None, 0)
    }
}

/// What the operation cost, by the nodes `data` holds.
pub fn actual_cost(prepared: &Prepared, variables: &Map<String, Value>, data: &Value) -> u32 {
    let op = prepared.operation();
    let mut cost = Cost { doc: &prepared.document, variables, data: Some(()) };
    if op.is_mutation() {
        let mut total = 0;
        for selection in &op.selection_set.selections {
            if let Selection::Field(field) = selection {
                let payload = data.get(field.response_key().as_str());
                total += 10 + cost.selection(&field.selection_set, payload, 0).unwrap_or(0);
            }
        }
        total
    } else {
        cost.selection(&op.selection_set, Some(data), 0).unwrap_or(0)
    }
}

/// The cost walk. With `data` set, it counts what the answer holds instead of what was
/// asked for.
struct Cost<'a> {
    doc: &'a ExecutableDocument,
    variables: &'a Map<String, Value>,
    data: Option<()>,
}

impl Cost<'_> {
    fn actual(&self) -> bool {
        self.data.is_some()
    }

    fn selection(&mut self, set: &SelectionSet, data: Option<&Value>, depth: usize) -> Result<u32, String> {
        if depth > 32 {
            return Err("The query is nested too deeply.".into());
        }
        let mut total = 0;
        for selection in &set.selections {
            total += match selection {
                Selection::Field(field) => self.field(field, data, depth)?,
                Selection::FragmentSpread(spread) => match self.doc.fragments.get(&spread.fragment_name) {
                    Some(fragment) => self.selection(&fragment.selection_set, data, depth + 1)?,
                    None => 0,
                },
                Selection::InlineFragment(inline) => {
                    self.selection(&inline.selection_set, data, depth + 1)?
                }
            };
        }
        Ok(total)
    }

    fn field(
        &mut self,
        field: &executable::Field,
        parent: Option<&Value>,
        depth: usize,
    ) -> Result<u32, String> {
        let named = field.definition.ty.inner_named_type();
        if field.name.starts_with("__") || !is_object(named.as_str()) {
            return Ok(0);
        }
        let value = parent.and_then(|p| p.get(field.response_key().as_str()));
        if self.actual() && value.is_none_or(Value::is_null) {
            return Ok(0);
        }
        if is_connection(field) {
            let asked = count_argument(field, self.variables).ok_or_else(|| {
                format!("you must provide one of first or last for the {} connection", field.name)
            })?;
            if !(0..=MAX_PAGE).contains(&asked) {
                return Err(format!(
                    "The {} connection takes first or last from 0 to {MAX_PAGE}.",
                    field.name
                ));
            }
            return Ok(2 + self.connection_nodes(field, asked, value, depth)?);
        }
        if field.definition.ty.is_list() {
            if self.actual() {
                let elements = value.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                // Lists without `first` are charged as one element (annex B.2).
                let counted = if count_argument(field, self.variables).is_some() {
                    elements
                } else {
                    &elements[..elements.len().min(1)]
                };
                let mut total = 0;
                for element in counted {
                    total += 1 + self.selection(&field.selection_set, Some(element), depth + 1)?;
                }
                return Ok(total);
            }
            let n = count_argument(field, self.variables).unwrap_or(1).max(0) as u32;
            return Ok(n * (1 + self.selection(&field.selection_set, None, depth + 1)?));
        }
        Ok(1 + self.selection(&field.selection_set, value, depth + 1)?)
    }

    /// The cost of a connection's nodes: `asked` times one node's, or (actual) each node's.
    fn connection_nodes(
        &mut self,
        field: &executable::Field,
        asked: i64,
        value: Option<&Value>,
        depth: usize,
    ) -> Result<u32, String> {
        // One node's selection: under `nodes`, or `edges { node }`; the larger counts.
        let mut node_sets: Vec<(&SelectionSet, &str, Option<&str>)> = Vec::new();
        for selection in &field.selection_set.selections {
            if let Selection::Field(f) = selection {
                if f.name == "nodes" {
                    node_sets.push((&f.selection_set, f.response_key().as_str(), None));
                } else if f.name == "edges" {
                    for inner in &f.selection_set.selections {
                        if let Selection::Field(node) = inner
                            && node.name == "node"
                        {
                            node_sets.push((
                                &node.selection_set,
                                f.response_key().as_str(),
                                Some(node.response_key().as_str()),
                            ));
                        }
                    }
                }
            }
        }
        if !self.actual() {
            let mut one = 1;
            for (set, _, _) in &node_sets {
                one = one.max(1 + self.selection(set, None, depth + 1)?);
            }
            return Ok(asked as u32 * one);
        }
        let mut best = 0;
        for (set, key, node_key) in node_sets {
            let mut total = 0;
            for element in value.and_then(|v| v.get(key)).and_then(Value::as_array).into_iter().flatten() {
                let node = match node_key {
                    Some(k) => element.get(k),
                    None => Some(element),
                };
                total += 1 + self.selection(set, node, depth + 1)?;
            }
            best = best.max(total);
        }
        Ok(best)
    }
}

/// The value of an `@idempotent(key:)` on the operation's root field, if any.
pub fn idempotency_key(prepared: &Prepared, variables: &Map<String, Value>) -> Option<String> {
    prepared.operation().selection_set.selections.iter().find_map(|selection| {
        let Selection::Field(field) = selection else { return None };
        let directive = field.directives.get("idempotent")?;
        let value = directive.specified_argument_by_name("key")?;
        match value.as_variable() {
            Some(var) => variables.get(var.as_str())?.as_str().map(str::to_string),
            None => value.as_str().map(str::to_string),
        }
    })
}

// ---- Resolving JSON objects ----

/// A JSON map, borrowed from its parent or built for the answer.
pub enum Fields<'a> {
    Borrowed(&'a Map<String, Value>),
    Owned(Map<String, Value>),
}

impl Fields<'_> {
    fn map(&self) -> &Map<String, Value> {
        match self {
            Fields::Borrowed(map) => map,
            Fields::Owned(map) => map,
        }
    }
}

/// An object of a schema type whose fields are the keys of a JSON map. A connection field
/// holds every node as an array and is paged here; a field with a `locationId` argument
/// holds its values by that argument.
pub struct Obj<'a> {
    pub ty: &'a str,
    pub fields: Fields<'a>,
}

impl<'a> Obj<'a> {
    pub fn owned(ty: &'a str, map: Map<String, Value>) -> Obj<'a> {
        Obj { ty, fields: Fields::Owned(map) }
    }
}

/// `Value::Object`'s map, or an empty one.
fn as_map(value: &Value) -> Option<&Map<String, Value>> {
    value.as_object()
}

impl ObjectValue for Obj<'_> {
    fn type_name(&self) -> &str {
        self.ty
    }

    fn resolve_field<'b>(&'b self, info: &'b ResolveInfo<'b>) -> Result<ResolvedValue<'b>, FieldError> {
        let name = info.field_name();
        let map = self.fields.map();
        let mut value = map.get(name).unwrap_or(&Value::Null);
        let args = info.arguments();
        if let Some(keyed) = args.get("locationId").and_then(|v| v.as_str()) {
            value = value.get(keyed).unwrap_or(&Value::Null);
        }
        let definition = info.field_definition();
        let named = definition.ty.inner_named_type().as_str();
        if named.ends_with("Connection") && definition.argument_by_name("first").is_some() {
            let all: Vec<&Value> = value.as_array().map(|a| a.iter().collect()).unwrap_or_default();
            let page = paginate(all.len(), &json_args(args))?;
            let node_ty = connection_node_type(named);
            let nodes = page
                .range
                .map(|i| (index_cursor(i), Fields::Borrowed(as_map(all[i]).unwrap_or(empty()))))
                .collect();
            return Ok(ResolvedValue::object(Conn {
                ty: named,
                node_ty,
                nodes,
                has_next: page.has_next,
                has_previous: page.has_previous,
            }));
        }
        Ok(resolve_value(value, named, definition.ty.is_list(), &json_args(args)))
    }
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// The node type of a connection type, from the schema.
pub fn connection_node_type(connection: &str) -> &'static str {
    match schema().types.get(connection) {
        Some(ExtendedType::Object(object)) => {
            object.fields.get("nodes").map_or("", |f| f.ty.inner_named_type().as_str())
        }
        _ => "",
    }
}

/// Arguments as plain JSON.
pub fn json_args(args: &apollo_compiler::response::JsonMap) -> Map<String, Value> {
    args.iter()
        .map(|(k, v)| (k.as_str().to_string(), serde_json::to_value(v).unwrap_or(Value::Null)))
        .collect()
}

/// A value of a field whose type is named `named` (a list of them when `list`).
fn resolve_value<'b>(
    value: &'b Value,
    named: &'b str,
    list: bool,
    args: &Map<String, Value>,
) -> ResolvedValue<'b> {
    if value.is_null() {
        return ResolvedValue::null();
    }
    if list {
        let Some(items) = value.as_array() else { return ResolvedValue::null() };
        let take =
            args.get("first").and_then(Value::as_i64).map_or(items.len(), |n| n.clamp(0, MAX_PAGE) as usize);
        let no_args = Map::new();
        let resolved: Vec<ResolvedValue<'b>> =
            items.iter().take(take).map(|item| resolve_value(item, named, false, &no_args)).collect();
        return ResolvedValue::list(resolved);
    }
    if is_object(named) {
        return match value.as_object() {
            Some(map) => ResolvedValue::object(Obj { ty: named, fields: Fields::Borrowed(map) }),
            None => ResolvedValue::null(),
        };
    }
    ResolvedValue::leaf(value.clone())
}

/// A page of a connection: which nodes, and whether others come before or after.
pub struct Page {
    pub range: std::ops::Range<usize>,
    pub has_next: bool,
    pub has_previous: bool,
}

/// Pages `len` nodes by `first`/`after` or `last`/`before` (cursors from [`index_cursor`]).
pub fn paginate(len: usize, args: &Map<String, Value>) -> Result<Page, FieldError> {
    let cursor = |name: &str| -> Result<Option<usize>, FieldError> {
        match args.get(name).and_then(Value::as_str) {
            None => Ok(None),
            Some(text) => cursor_index(text)
                .map(Some)
                .ok_or_else(|| FieldError { message: format!("Invalid cursor for `{name}`.") }),
        }
    };
    let mut start = cursor("after")?.map_or(0, |i| i + 1).min(len);
    let mut end = cursor("before")?.unwrap_or(len).min(len).max(start);
    let count = |name: &str| args.get(name).and_then(Value::as_i64);
    match (count("first"), count("last")) {
        (Some(n), _) if (0..=MAX_PAGE).contains(&n) => end = end.min(start + n as usize),
        (None, Some(n)) if (0..=MAX_PAGE).contains(&n) => start = start.max(end.saturating_sub(n as usize)),
        _ => {
            return Err(FieldError {
                message: format!("You must provide first or last, from 0 to {MAX_PAGE}."),
            });
        }
    }
    Ok(Page { has_next: end < len, has_previous: start > 0, range: start..end })
}

/// An opaque cursor for the node at `index` of a nested connection.
pub fn index_cursor(index: usize) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("{{\"last_id\":{index}}}"))
}

fn cursor_index(cursor: &str) -> Option<usize> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(cursor).ok()?;
    let value: Value = serde_json::from_slice(&bytes).ok()?;
    value.get("last_id")?.as_u64().map(|i| i as usize)
}

/// A connection page: its nodes with their cursors.
pub struct Conn<'a> {
    pub ty: &'a str,
    pub node_ty: &'a str,
    pub nodes: Vec<(String, Fields<'a>)>,
    pub has_next: bool,
    pub has_previous: bool,
}

impl ObjectValue for Conn<'_> {
    fn type_name(&self) -> &str {
        self.ty
    }

    fn resolve_field<'b>(&'b self, info: &'b ResolveInfo<'b>) -> Result<ResolvedValue<'b>, FieldError> {
        let node_ty = self.node_ty;
        let node = move |fields: &'b Fields<'_>| Obj { ty: node_ty, fields: Fields::Borrowed(fields.map()) };
        match info.field_name() {
            "nodes" => {
                Ok(ResolvedValue::list(self.nodes.iter().map(move |(_, f)| ResolvedValue::object(node(f)))))
            }
            "edges" => {
                let edge_ty = info.field_definition().ty.inner_named_type().as_str();
                Ok(ResolvedValue::list(self.nodes.iter().map(move |(cursor, f)| {
                    ResolvedValue::object(Edge { ty: edge_ty, cursor, node: node(f) })
                })))
            }
            "pageInfo" => Ok(ResolvedValue::object(Obj::owned(
                "PageInfo",
                json!({
                    "hasNextPage": self.has_next,
                    "hasPreviousPage": self.has_previous,
                    "startCursor": self.nodes.first().map(|(c, _)| c.clone()),
                    "endCursor": self.nodes.last().map(|(c, _)| c.clone()),
                })
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ))),
            _ => Err(self.unknown_field_error(info)),
        }
    }
}

struct Edge<'a> {
    ty: &'a str,
    cursor: &'a str,
    node: Obj<'a>,
}

impl ObjectValue for Edge<'_> {
    fn type_name(&self) -> &str {
        self.ty
    }

    fn resolve_field<'b>(&'b self, info: &'b ResolveInfo<'b>) -> Result<ResolvedValue<'b>, FieldError> {
        match info.field_name() {
            "cursor" => Ok(ResolvedValue::leaf(self.cursor)),
            "node" => Ok(ResolvedValue::object(Obj {
                ty: self.node.ty,
                fields: Fields::Borrowed(self.node.fields.map()),
            })),
            _ => Err(self.unknown_field_error(info)),
        }
    }
}

/// Text for a cursor of the shop's own (keyset) pages.
pub fn encode_cursor(value: &Value) -> String {
    base64::engine::general_purpose::STANDARD.encode(value.to_string())
}

pub fn decode_cursor(cursor: &str) -> Option<Value> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(cursor).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// The map of a JSON object built with `json!`.
pub fn owned_map(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[cfg(test)]
#[path = "graphql_tests.rs"]
mod tests;
