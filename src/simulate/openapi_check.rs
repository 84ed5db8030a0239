//! Holds HTTP exchanges (a request and its answer, as they crossed the wire) to a vendor's
//! OpenAPI 3.0 description: the operation (path template and method), the path, query and
//! header parameters with their types and enums, the security scheme's header, the request
//! body, and the answer's status, content type and body. Schemas are checked by the
//! `jsonschema` crate (OpenAPI 3.0's schema objects are JSON Schema draft 4 plus `nullable`,
//! which is translated here); this module finds what to check and coerces parameters from
//! their text, as OpenAPI's `style`/`explode` say.
//!
//! Where a description contradicts itself, the caller patches it ([`Patch`]): each patch
//! names the place, what the file says there (so a fixed file shows the patch is stale) and
//! why.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use jsonschema::{Draft, Registry, Validator};
use serde_json::{Value, json};

pub use super::openapi_readings::{Patch, Readings};
use super::openapi_readings::{apply, json_of, translate_nullable};

/// One request and the answer it got, as they crossed the wire.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub method: String,
    /// The whole path, without the query: `/stores/abc/v2/orders/7/products`.
    pub path: String,
    /// The query's pairs, decoded, in order.
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub status: u16,
    pub answer_headers: Vec<(String, String)>,
    pub answer_body: Vec<u8>,
}

impl Exchange {
    fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
        headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// What a simulator received and answered.
    pub(crate) fn between(request: &super::http::Request, response: &super::http::Response) -> Exchange {
        Exchange {
            method: request.method.clone(),
            path: request.path.clone(),
            query: request.query.clone(),
            headers: request.headers.clone(),
            body: request.body.clone(),
            status: response.status,
            answer_headers: response.headers.clone(),
            answer_body: response.body.clone(),
        }
    }

    /// `GET /stores/abc/v2/orders?sort=id`, for messages.
    pub fn line(&self) -> String {
        let query: Vec<String> = self.query.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let query = if query.is_empty() { String::new() } else { format!("?{}", query.join("&")) };
        format!("{} {}{query} -> {}", self.method, self.path, self.status)
    }
}

/// A vendor's OpenAPI 3.0 description, ready to check exchanges against.
pub struct Description {
    name: String,
    doc: Value,
    /// Where `$ref`s into the document resolve.
    uri: String,
    /// The path of the first server URL, templated: `/stores/{store_hash}/v2`.
    server_path: String,
    registry: Registry<'static>,
    readings: Readings,
    validators: Mutex<HashMap<String, std::sync::Arc<Validator>>>,
}

/// The values of a path's `{variables}`: (name, value).
type PathValues = Vec<(String, String)>;

/// Why a description cannot be used.
pub type LoadError = String;

impl Description {
    /// Reads a YAML or JSON description and applies `patches`; a patch whose `was` is not
    /// what the file says is an error (the file changed: the patch needs a look).
    pub fn load(path: &Path, patches: &[Patch]) -> Result<Description, LoadError> {
        Description::load_read(path, patches, Readings::default())
    }

    /// As [`Description::load`], read as `readings` say where the file contradicts itself.
    pub fn load_read(path: &Path, patches: &[Patch], readings: Readings) -> Result<Description, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = path.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        Description::parse_read(&name, &text, patches, readings)
    }

    pub fn parse(name: &str, text: &str, patches: &[Patch]) -> Result<Description, LoadError> {
        Description::parse_read(name, text, patches, Readings::default())
    }

    /// A JSON file is read as JSON (YAML's reader takes minutes over a large one).
    pub fn parse_read(
        name: &str,
        text: &str,
        patches: &[Patch],
        readings: Readings,
    ) -> Result<Description, LoadError> {
        let mut doc = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| format!("{name}: {e}"))?
        } else {
            let docs = yaml_rust2::YamlLoader::load_from_str(text).map_err(|e| format!("{name}: {e}"))?;
            let yaml = docs.into_iter().next().ok_or_else(|| format!("{name} is empty"))?;
            json_of(yaml).map_err(|e| format!("{name}: {e}"))?
        };
        if !doc.get("openapi").and_then(Value::as_str).is_some_and(|v| v.starts_with("3.0")) {
            return Err(format!("{name} is not an OpenAPI 3.0 description"));
        }
        for patch in patches {
            apply(&mut doc, patch).map_err(|e| format!("{name}: {e}"))?;
        }
        super::openapi_readings::read(&mut doc, &readings).map_err(|e| format!("{name}: {e}"))?;
        translate_nullable(&mut doc);
        let server = doc.pointer("/servers/0/url").and_then(Value::as_str).unwrap_or("/");
        let server_path = match server.split_once("://") {
            Some((_, rest)) => rest.find('/').map_or("", |at| &rest[at..]).to_string(),
            None => server.to_string(),
        };
        let uri =
            format!("https://openapi.invalid/{}", name.replace(|c: char| !c.is_ascii_alphanumeric(), "-"));
        let registry = Registry::new()
            .add(&uri, Draft::Draft4.create_resource(doc.clone()))
            .and_then(|b| b.prepare())
            .map_err(|e| format!("{name}: {e}"))?;
        Ok(Description {
            name: name.to_string(),
            doc,
            uri,
            server_path: server_path.trim_end_matches('/').to_string(),
            registry,
            readings,
            validators: Mutex::new(HashMap::new()),
        })
    }

    /// Everything in `exchange` that the description does not allow; empty when it holds.
    pub fn check(&self, exchange: &Exchange) -> Vec<String> {
        self.check_parts(exchange, true, true)
    }

    /// As [`Description::check`], the request's side, the answer's side, or both (the
    /// operation is always found): for an example of one side, or a request sent to be refused.
    pub fn check_parts(&self, exchange: &Exchange, request: bool, answer: bool) -> Vec<String> {
        let mut found = Vec::new();
        let Some((template, params)) = self.operation_path(&exchange.path) else {
            return vec![format!("{}: {} is no path of {}", exchange.line(), exchange.path, self.name)];
        };
        let method = exchange.method.to_ascii_lowercase();
        let op_pointer = format!("/paths/{}/{method}", escape(&template));
        let Some(operation) = self.doc.pointer(&op_pointer) else {
            return vec![format!(
                "{}: {} declares no {} on {template}",
                exchange.line(),
                self.name,
                exchange.method
            )];
        };
        let name = operation.get("operationId").and_then(Value::as_str).unwrap_or(&template).to_string();
        let mut problem = |what: String| found.push(format!("{} ({name}): {what}", exchange.line()));
        if request {
            self.check_parameters(&template, &op_pointer, exchange, &params, &mut problem);
            self.check_security(operation, exchange, &mut problem);
            self.check_request_body(&op_pointer, operation, exchange, &mut problem);
        }
        if answer {
            self.check_answer(&op_pointer, operation, exchange, &mut problem);
        }
        found
    }

    /// The `operationId` of the operation an exchange reached, if it reached one.
    pub fn operation_id(&self, exchange: &Exchange) -> Option<String> {
        let (template, _) = self.operation_path(&exchange.path)?;
        let method = exchange.method.to_ascii_lowercase();
        let id = self.doc.pointer(&format!("/paths/{}/{method}/operationId", escape(&template)))?;
        id.as_str().map(str::to_string)
    }

    /// The path template an actual path matches (the one with the most literal segments)
    /// and the values of its `{variables}`.
    fn operation_path(&self, path: &str) -> Option<(String, PathValues)> {
        let rest = strip_template_prefix(path, &self.server_path)?;
        let actual: Vec<&str> = rest.split('/').collect();
        let paths = self.doc.get("paths")?.as_object()?;
        let mut best: Option<(usize, String, PathValues)> = None;
        for template in paths.keys() {
            let wanted: Vec<&str> = template.split('/').collect();
            if wanted.len() != actual.len() {
                continue;
            }
            let mut literal = 0;
            let mut vars = Vec::new();
            let fits = wanted.iter().zip(&actual).all(|(w, a)| {
                // A variable may share its segment with text: `{orderId}:cancel`.
                let variable = w
                    .split_once('{')
                    .and_then(|(before, rest)| rest.split_once('}').map(|(var, after)| (before, var, after)));
                match variable {
                    Some((before, var, after)) => {
                        let value = a.strip_prefix(before).and_then(|v| v.strip_suffix(after));
                        literal += usize::from(!before.is_empty() || !after.is_empty());
                        let decoded = |v: &str| {
                            percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned()
                        };
                        vars.push((var.to_string(), value.map(decoded).unwrap_or_default()));
                        value.is_some_and(|v| !v.is_empty())
                    }
                    None => {
                        literal += 1;
                        w == a
                    }
                }
            });
            if fits && best.as_ref().is_none_or(|(l, _, _)| literal > *l) {
                best = Some((literal, template.clone(), vars));
            }
        }
        best.map(|(_, template, vars)| (template, vars))
    }

    /// The operation's parameters (the path's, overridden by the operation's), `$ref`s
    /// followed: (pointer of the parameter object, the object).
    fn parameters(&self, template: &str, op_pointer: &str) -> Vec<(String, &Value)> {
        let mut out: Vec<(String, &Value)> = Vec::new();
        let lists = [format!("/paths/{}/parameters", escape(template)), format!("{op_pointer}/parameters")];
        for list in lists {
            let Some(items) = self.doc.pointer(&list).and_then(Value::as_array) else { continue };
            for i in 0..items.len() {
                let Some((pointer, param)) = self.follow(&format!("{list}/{i}")) else { continue };
                let key = |p: &Value| (p.get("name").cloned(), p.get("in").cloned());
                out.retain(|(_, p)| key(p) != key(param));
                out.push((pointer, param));
            }
        }
        out
    }

    /// The object at `pointer`, through any `$ref` chain: (its own pointer, the object).
    fn follow(&self, pointer: &str) -> Option<(String, &Value)> {
        let mut pointer = pointer.to_string();
        for _ in 0..16 {
            let value = self.doc.pointer(&pointer)?;
            match value.get("$ref").and_then(Value::as_str) {
                Some(target) => pointer = target.strip_prefix('#')?.to_string(),
                None => return Some((pointer, value)),
            }
        }
        None
    }

    fn check_parameters(
        &self,
        template: &str,
        op_pointer: &str,
        exchange: &Exchange,
        path_values: &[(String, String)],
        problem: &mut impl FnMut(String),
    ) {
        let declared = self.parameters(template, op_pointer);
        for (pointer, param) in &declared {
            let name = param.get("name").and_then(Value::as_str).unwrap_or_default();
            let required = param.get("required").and_then(Value::as_bool).unwrap_or(false);
            let values: Vec<&str> = match param.get("in").and_then(Value::as_str) {
                Some("path") => {
                    path_values.iter().filter(|(n, _)| n == name).map(|(_, v)| v.as_str()).collect()
                }
                Some("query") => exchange
                    .query
                    .iter()
                    .filter(|(n, _)| self.same_query_name(n, name))
                    .map(|(_, v)| v.as_str())
                    .collect(),
                Some("header") => exchange
                    .headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.as_str())
                    .collect(),
                _ => continue,
            };
            let place = param.get("in").and_then(Value::as_str).unwrap_or_default();
            if values.is_empty() {
                if required {
                    problem(format!("the required {place} parameter {name} is missing"));
                }
                continue;
            }
            let schema_pointer = format!("{pointer}/schema");
            let Some((_, schema)) = self.follow(&schema_pointer) else { continue };
            let whole = self.readings.whole_numbers
                && schema.get("type") == Some(&json!("number"))
                && matches!(schema.get("format").and_then(Value::as_str), Some("int32" | "int64"));
            let as_integer = json!({"type": "integer"});
            let list = self.readings.comma_lists
                && schema.get("type") == Some(&json!("string"))
                && schema.get("items").is_some();
            if list {
                let items = format!("{schema_pointer}/items");
                let item_schema = self.follow(&items).map_or(Value::Null, |(_, s)| s.clone());
                for part in values.iter().flat_map(|v| v.split(',')) {
                    let checked = scalar(&item_schema, part).map(|v| self.errors(&items, &v));
                    for error in checked.unwrap_or_else(|why| vec![why]) {
                        problem(format!("{place} parameter {name}={part} (a part of a list): {error}"));
                    }
                }
            }
            match coerce(param, if whole { &as_integer } else { schema }, &values) {
                Ok(value) => {
                    let range = whole && schema.get("format") == Some(&json!("int32"));
                    if range && value.as_i64().is_some_and(|n| i32::try_from(n).is_err()) {
                        problem(format!(
                            "{place} parameter {name}={}: out of int32's range",
                            values.join(",")
                        ));
                    }
                    for error in self.errors(&schema_pointer, &value) {
                        problem(format!("{place} parameter {name}={}: {error}", values.join(",")));
                    }
                }
                Err(why) => problem(format!("{place} parameter {name}={}: {why}", values.join(","))),
            }
        }
        for (name, _) in &exchange.query {
            let known = declared.iter().any(|(_, p)| {
                p.get("in").and_then(Value::as_str) == Some("query")
                    && p.get("name").and_then(Value::as_str).is_some_and(|n| self.same_query_name(name, n))
            });
            if !known {
                problem(format!("the query parameter {name} is not declared"));
            }
        }
    }

    /// An `apiKey` scheme in a header (BigCommerce's `X-Auth-Token`), or a bearer token for
    /// `http` bearer and OAuth 2, must be sent.
    fn check_security(&self, operation: &Value, exchange: &Exchange, problem: &mut impl FnMut(String)) {
        let requirements = operation.get("security").or_else(|| self.doc.get("security"));
        let Some(requirements) = requirements.and_then(Value::as_array) else { return };
        let met = |requirement: &Value| {
            requirement.as_object().into_iter().flatten().all(|(scheme, _)| {
                let scheme = self.doc.pointer(&format!("/components/securitySchemes/{}", escape(scheme)));
                match scheme.map(|s| (s.get("type"), s.get("in"), s.get("name").and_then(Value::as_str))) {
                    Some((Some(t), Some(i), Some(header))) if t == "apiKey" && i == "header" => {
                        Exchange::header(&exchange.headers, header).is_some_and(|v| !v.is_empty())
                    }
                    // http bearer, and OAuth 2's tokens, which are sent the same way.
                    Some((Some(t), _, _)) if t == "http" || t == "oauth2" => {
                        Exchange::header(&exchange.headers, "authorization").is_some_and(|v| {
                            v.split_once(' ').is_some_and(|(s, t)| {
                                s.eq_ignore_ascii_case("bearer") && !t.trim().is_empty()
                            })
                        })
                    }
                    _ => true,
                }
            })
        };
        if !requirements.is_empty() && !requirements.iter().any(met) {
            problem("no security requirement is met (its header is missing)".into());
        }
    }

    fn check_request_body(
        &self,
        op_pointer: &str,
        operation: &Value,
        exchange: &Exchange,
        problem: &mut impl FnMut(String),
    ) {
        let Some((body_pointer, body)) =
            operation.get("requestBody").and_then(|_| self.follow(&format!("{op_pointer}/requestBody")))
        else {
            if !exchange.body.is_empty() {
                problem("a body is sent but the operation declares none".into());
            }
            return;
        };
        if exchange.body.is_empty() {
            if body.get("required").and_then(Value::as_bool).unwrap_or(false) {
                problem("the required request body is missing".into());
            }
            return;
        }
        let media = media_type(Exchange::header(&exchange.headers, "content-type"));
        self.check_content(
            &format!("{body_pointer}/content"),
            body,
            &media,
            &exchange.body,
            "request body",
            problem,
        );
    }

    fn check_answer(
        &self,
        op_pointer: &str,
        operation: &Value,
        exchange: &Exchange,
        problem: &mut impl FnMut(String),
    ) {
        let responses = operation.get("responses").and_then(Value::as_object);
        let status = exchange.status.to_string();
        let range = format!("{}XX", exchange.status / 100);
        let Some(key) = [status.as_str(), range.as_str(), "default"]
            .into_iter()
            .find(|k| responses.is_some_and(|r| r.contains_key(*k)))
        else {
            let allowed = exchange.status == 429 || exchange.status >= 500;
            if !(allowed && self.readings.undeclared_429_and_5xx) {
                problem(format!("the answer's status {status} is not declared"));
            }
            return;
        };
        let Some((pointer, response)) = self.follow(&format!("{op_pointer}/responses/{key}")) else { return };
        let declared = response.get("content").and_then(Value::as_object).is_some_and(|c| !c.is_empty());
        if !declared {
            if !exchange.answer_body.is_empty() {
                problem(format!("the {status} answer has a body but declares none"));
            }
            return;
        }
        let media = media_type(Exchange::header(&exchange.answer_headers, "content-type"));
        self.check_content(
            &format!("{pointer}/content"),
            response,
            &media,
            &exchange.answer_body,
            "answer",
            problem,
        );
    }

    /// A body against the `content` of a request body or response object: its media type
    /// declared, and (for JSON) its value valid against that media type's schema.
    fn check_content(
        &self,
        content_pointer: &str,
        holder: &Value,
        media: &str,
        body: &[u8],
        what: &str,
        problem: &mut impl FnMut(String),
    ) {
        let content = holder.get("content").and_then(Value::as_object);
        let Some((declared_media, entry)) = content.and_then(|c| c.get_key_value(media)) else {
            let known: Vec<&String> = content.into_iter().flat_map(|c| c.keys()).collect();
            problem(format!("the {what}'s content type {media:?} is not declared (declared: {known:?})"));
            return;
        };
        if entry.get("schema").is_none() || !(declared_media.ends_with("json")) {
            return;
        }
        let value: Value = match serde_json::from_slice(body) {
            Ok(value) => value,
            Err(e) => return problem(format!("the {what} is not JSON: {e}")),
        };
        let schema_pointer = format!("{content_pointer}/{}/schema", escape(declared_media));
        for error in self.errors(&schema_pointer, &value) {
            problem(format!("the {what} does not fit its schema: {error}"));
        }
    }

    fn same_query_name(&self, sent: &str, declared: &str) -> bool {
        sent == declared || self.readings.query_names_any_case && sent.eq_ignore_ascii_case(declared)
    }

    /// The schema at `pointer`'s complaints about `value`, each with where it is.
    fn errors(&self, pointer: &str, value: &Value) -> Vec<String> {
        let validator = match self.validator(pointer) {
            Ok(validator) => validator,
            Err(e) => return vec![format!("the schema at {pointer} cannot be compiled: {e}")],
        };
        validator.iter_errors(value).map(|e| format!("at {:?}: {e}", e.instance_path().as_str())).collect()
    }

    fn validator(&self, pointer: &str) -> Result<std::sync::Arc<Validator>, String> {
        let mut cache = self.validators.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = cache.get(pointer) {
            return Ok(std::sync::Arc::clone(v));
        }
        let fragment = percent_encoding::utf8_percent_encode(pointer, FRAGMENT).to_string();
        let wrapper = json!({"$ref": format!("{}#{fragment}", self.uri)});
        // OpenAPI's number formats, which JSON Schema leaves unchecked, on text.
        let validator = jsonschema::draft4::options()
            .with_format("int32", |s: &str| s.parse::<i32>().is_ok())
            .with_format("int64", |s: &str| s.parse::<i64>().is_ok())
            .with_format("double", |s: &str| s.parse::<f64>().is_ok_and(f64::is_finite))
            .with_registry(&self.registry)
            .build(&wrapper)
            .map_err(|e| e.to_string())?;
        let validator = std::sync::Arc::new(validator);
        cache.insert(pointer.to_string(), std::sync::Arc::clone(&validator));
        Ok(validator)
    }
}

/// Characters a JSON Pointer may hold that a URI fragment may not.
const FRAGMENT: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'<')
    .add(b'>')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'%')
    .add(b'#');

/// A JSON Pointer segment: `~` as `~0`, `/` as `~1`.
fn escape(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// What follows the server's templated path (`/stores/{store_hash}/v2`) in an actual path.
fn strip_template_prefix<'a>(path: &'a str, server_path: &str) -> Option<&'a str> {
    let mut rest = path;
    for segment in server_path.split('/').filter(|s| !s.is_empty()) {
        rest = rest.strip_prefix('/')?;
        let end = rest.find('/').unwrap_or(rest.len());
        let (actual, after) = rest.split_at(end);
        let variable = segment.starts_with('{') && segment.ends_with('}');
        if !(variable && !actual.is_empty() || actual == segment) {
            return None;
        }
        rest = after;
    }
    Some(rest)
}

/// `application/json; charset=utf-8` → `application/json`; `""` when absent.
fn media_type(header: Option<&str>) -> String {
    header.unwrap_or_default().split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// A parameter's text as the value its schema describes (OpenAPI's `style: form` for the
/// query, `simple` elsewhere: arrays comma-separated unless `explode`d into repeats).
fn coerce(param: &Value, schema: &Value, values: &[&str]) -> Result<Value, String> {
    let kind = schema.get("type").and_then(Value::as_str).unwrap_or("string");
    if kind == "array" {
        let explode =
            param.get("explode").and_then(Value::as_bool).unwrap_or(param.get("in") == Some(&json!("query")));
        let parts: Vec<&str> =
            if explode { values.to_vec() } else { values.iter().flat_map(|v| v.split(',')).collect() };
        if !explode && values.len() > 1 {
            return Err("sent more than once, but the parameter is not exploded".into());
        }
        let item = schema.get("items").cloned().unwrap_or(Value::Null);
        return parts.iter().map(|p| scalar(&item, p)).collect::<Result<Vec<_>, _>>().map(Value::Array);
    }
    match values {
        [one] => scalar(schema, one),
        _ => Err(format!("sent {} times", values.len())),
    }
}

fn scalar(schema: &Value, text: &str) -> Result<Value, String> {
    match schema.get("type").and_then(Value::as_str) {
        Some("integer") => {
            text.parse::<i64>().map(Value::from).map_err(|_| format!("{text:?} is not an integer"))
        }
        Some("number") => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("{text:?} is not a number")),
        Some("boolean") => match text {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => Err(format!("{text:?} is not true or false")),
        },
        _ => Ok(Value::String(text.to_string())),
    }
}

#[cfg(test)]
#[path = "openapi_check_tests.rs"]
mod tests;
