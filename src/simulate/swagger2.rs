//! Swagger 2.0 descriptions (Amazon's Selling Partner API models) turned into the OpenAPI 3.0
//! shape that [`super::openapi_check`] reads, so one checker holds both: `definitions` become
//! `components/schemas` (every `$ref` rewritten), `host`/`basePath` a server, a query, path or
//! header parameter's `type`, `format`, `items`, `enum`, ranges and `collectionFormat` a
//! `schema` with its `style`/`explode`, an `in: body` parameter a JSON `requestBody`, and a
//! response's `schema` its `content` for each media type the operation produces.
//!
//! What Swagger 2.0 allows and these models do not use (form parameters, files, arrays
//! separated by anything but commas or repeats) is refused rather than half-converted.

use serde_json::{Map, Value, json};

/// The parameter fields that describe its value, which OpenAPI 3.0 moves into `schema`.
const VALUE_KEYS: [&str; 16] = [
    "type",
    "format",
    "items",
    "enum",
    "default",
    "maximum",
    "minimum",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
];

const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// `doc`, a Swagger 2.0 description, as an OpenAPI 3.0.3 one.
pub fn to_openapi3(doc: &Value) -> Result<Value, String> {
    if doc.get("swagger").and_then(Value::as_str) != Some("2.0") {
        return Err("not a Swagger 2.0 description (no `swagger: \"2.0\"`)".into());
    }
    let consumes = media_types(doc.get("consumes"));
    let produces = media_types(doc.get("produces"));
    let base = doc.get("basePath").and_then(Value::as_str).unwrap_or("");
    let url = match doc.get("host").and_then(Value::as_str) {
        Some(host) => {
            let scheme = doc.pointer("/schemes/0").and_then(Value::as_str).unwrap_or("https");
            format!("{scheme}://{host}{base}")
        }
        None if base.is_empty() => "/".to_string(),
        None => base.to_string(),
    };
    let mut paths = Map::new();
    for (template, item) in doc.get("paths").and_then(Value::as_object).into_iter().flatten() {
        let shared = item.get("parameters").and_then(Value::as_array).map_or(&[][..], Vec::as_slice);
        let (shared_body, shared): (Vec<&Value>, Vec<&Value>) =
            shared.iter().partition(|p| p.get("in") == Some(&json!("body")));
        let mut out = Map::new();
        if !shared.is_empty() {
            let converted = shared.iter().map(|p| parameter(p)).collect::<Result<Vec<_>, _>>();
            out.insert("parameters".into(), Value::Array(converted.map_err(|e| format!("{template}: {e}"))?));
        }
        for method in METHODS {
            let Some(op) = item.get(method) else { continue };
            let converted = operation(op, &shared_body, &consumes, &produces)
                .map_err(|e| format!("{} {template}: {e}", method.to_uppercase()))?;
            out.insert(method.into(), converted);
        }
        paths.insert(template.clone(), Value::Object(out));
    }
    let mut components = Map::new();
    if let Some(definitions) = doc.get("definitions") {
        components.insert("schemas".into(), schema(definitions));
    }
    if let Some(parameters) = doc.get("parameters").and_then(Value::as_object) {
        let mut out = Map::new();
        for (name, p) in parameters {
            if p.get("in") == Some(&json!("body")) {
                return Err(format!("the shared body parameter {name} is not supported"));
            }
            out.insert(name.clone(), parameter(p).map_err(|e| format!("parameter {name}: {e}"))?);
        }
        components.insert("parameters".into(), Value::Object(out));
    }
    if let Some(responses) = doc.get("responses").and_then(Value::as_object) {
        let converted = responses.iter().map(|(k, r)| (k.clone(), response(r, &produces))).collect();
        components.insert("responses".into(), Value::Object(converted));
    }
    if let Some(schemes) = doc.get("securityDefinitions").and_then(Value::as_object) {
        let converted = schemes.iter().map(|(k, s)| security_scheme(s).map(|s| (k.clone(), s)));
        let converted = converted.collect::<Result<Map<_, _>, _>>()?;
        components.insert("securitySchemes".into(), Value::Object(converted));
    }
    let mut out = Map::new();
    out.insert("openapi".into(), json!("3.0.3"));
    out.insert(
        "info".into(),
        doc.get("info").cloned().unwrap_or_else(|| json!({"title": "", "version": ""})),
    );
    out.insert("servers".into(), json!([{"url": url}]));
    out.insert("paths".into(), Value::Object(paths));
    out.insert("components".into(), Value::Object(components));
    if let Some(security) = doc.get("security") {
        out.insert("security".into(), security.clone());
    }
    Ok(Value::Object(out))
}

/// A `consumes`/`produces` list; `application/json` when absent.
fn media_types(list: Option<&Value>) -> Vec<String> {
    let listed: Vec<String> = list
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect();
    if listed.is_empty() { vec!["application/json".into()] } else { listed }
}

fn operation(
    op: &Value,
    shared_body: &[&Value],
    consumes: &[String],
    produces: &[String],
) -> Result<Value, String> {
    let consumes = op.get("consumes").map_or_else(|| consumes.to_vec(), |c| media_types(Some(c)));
    let produces = op.get("produces").map_or_else(|| produces.to_vec(), |p| media_types(Some(p)));
    let mut out = Map::new();
    for key in ["operationId", "summary", "description", "deprecated", "tags", "security"] {
        if let Some(value) = op.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    let mut parameters = Vec::new();
    let mut body: Option<&Value> = shared_body.last().copied();
    for p in op.get("parameters").and_then(Value::as_array).into_iter().flatten() {
        if p.get("in") == Some(&json!("body")) {
            body = Some(p);
        } else {
            parameters.push(parameter(p)?);
        }
    }
    if !parameters.is_empty() {
        out.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(body) = body {
        let body_schema = schema(body.get("schema").ok_or("a body parameter without a schema")?);
        let content: Map<String, Value> =
            consumes.iter().map(|m| (m.clone(), json!({"schema": body_schema.clone()}))).collect();
        let required = body.get("required").cloned().unwrap_or(json!(false));
        out.insert("requestBody".into(), json!({"required": required, "content": content}));
    }
    let responses = op.get("responses").and_then(Value::as_object).ok_or("an operation without responses")?;
    let converted = responses.iter().map(|(k, r)| (k.clone(), response(r, &produces))).collect();
    out.insert("responses".into(), Value::Object(converted));
    Ok(Value::Object(out))
}

/// A query, path or header parameter (or a `$ref` to one).
fn parameter(p: &Value) -> Result<Value, String> {
    if let Some(target) = p.get("$ref").and_then(Value::as_str) {
        return Ok(json!({"$ref": reference(target)}));
    }
    let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
    let place = p.get("in").and_then(Value::as_str).unwrap_or_default();
    if !matches!(place, "query" | "path" | "header") {
        return Err(format!("parameter {name}: `in: {place}` is not supported"));
    }
    let mut out = Map::new();
    for key in ["name", "in", "description", "required", "deprecated", "allowEmptyValue"] {
        if let Some(value) = p.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    let value_schema = value_schema(p).map_err(|e| format!("parameter {name}: {e}"))?;
    if p.get("type") == Some(&json!("array")) {
        let explode = match p.get("collectionFormat").and_then(Value::as_str).unwrap_or("csv") {
            "csv" => false,
            "multi" if place == "query" => true,
            other => return Err(format!("parameter {name}: collectionFormat {other} is not supported")),
        };
        out.insert("style".into(), json!(if place == "query" { "form" } else { "simple" }));
        out.insert("explode".into(), json!(explode));
    }
    out.insert("schema".into(), value_schema);
    Ok(Value::Object(out))
}

/// The value fields of a parameter (or of its `items`) as a schema.
fn value_schema(p: &Value) -> Result<Value, String> {
    let mut out = Map::new();
    for key in VALUE_KEYS {
        let Some(value) = p.get(key) else { continue };
        if key == "items" {
            if value.get("type") == Some(&json!("array")) {
                return Err("arrays of arrays are not supported".into());
            }
            out.insert(key.into(), value_schema(value)?);
        } else {
            out.insert(key.into(), value.clone());
        }
    }
    if out.get("type") == Some(&json!("file")) {
        return Err("`type: file` is not supported".into());
    }
    Ok(Value::Object(out))
}

fn response(r: &Value, produces: &[String]) -> Value {
    if let Some(target) = r.get("$ref").and_then(Value::as_str) {
        return json!({"$ref": reference(target)});
    }
    let mut out = Map::new();
    out.insert("description".into(), r.get("description").cloned().unwrap_or_else(|| json!("")));
    if let Some(s) = r.get("schema") {
        let s = schema(s);
        let content: Map<String, Value> =
            produces.iter().map(|m| (m.clone(), json!({"schema": s.clone()}))).collect();
        out.insert("content".into(), Value::Object(content));
    }
    Value::Object(out)
}

fn security_scheme(s: &Value) -> Result<Value, String> {
    match s.get("type").and_then(Value::as_str) {
        Some("apiKey") => Ok(s.clone()),
        Some("basic") => Ok(json!({"type": "http", "scheme": "basic"})),
        Some("oauth2") => Ok(json!({"type": "oauth2", "flows": {}})),
        other => Err(format!("security scheme type {other:?} is not supported")),
    }
}

/// `#/definitions/X` → `#/components/schemas/X` (and parameters, responses alike).
fn reference(target: &str) -> String {
    let moved = [
        ("#/definitions/", "#/components/schemas/"),
        ("#/parameters/", "#/components/parameters/"),
        ("#/responses/", "#/components/responses/"),
    ];
    for (from, to) in moved {
        if let Some(rest) = target.strip_prefix(from) {
            return format!("{to}{rest}");
        }
    }
    target.to_string()
}

/// A schema with its `$ref`s rewritten and Swagger's `x-nullable` as OpenAPI's `nullable`;
/// examples are dropped (they are not schemas, and a `$ref` inside one is text).
fn schema(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, child) in map {
                match (key.as_str(), child) {
                    ("example" | "x-example" | "examples", _) => {}
                    ("$ref", Value::String(target)) => {
                        out.insert(key.clone(), Value::String(reference(target)));
                    }
                    ("x-nullable", nullable) => {
                        out.insert("nullable".into(), nullable.clone());
                    }
                    _ => {
                        out.insert(key.clone(), schema(child));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(schema).collect()),
        other => other.clone(),
    }
}

/// Closes every object schema of a converted description that declares `properties` and
/// says nothing of `additionalProperties` (`additionalProperties: false`), as Amazon's own
/// validator reads its models: a member the model does not name is almost always a typo.
/// Only schema positions are visited (a `properties` map's keys are member names). Returns
/// how many were closed.
pub fn close_objects(value: &mut Value) -> usize {
    let mut closed = 0;
    match value {
        Value::Object(map) => {
            if map.get("properties").is_some_and(Value::is_object)
                && !map.contains_key("additionalProperties")
            {
                map.insert("additionalProperties".into(), Value::Bool(false));
                closed += 1;
            }
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    ("example" | "examples" | "x-example", _) => {}
                    ("properties", Value::Object(members)) => {
                        closed += members.values_mut().map(close_objects).sum::<usize>();
                    }
                    (_, child) => closed += close_objects(child),
                }
            }
        }
        Value::Array(items) => closed += items.iter_mut().map(close_objects).sum::<usize>(),
        _ => {}
    }
    closed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_swagger_description_converts_to_the_shape_openapi_check_reads() {
        let doc = json!({
            "swagger": "2.0", "host": "api.example.com", "basePath": "/v1",
            "paths": {"/pets/{id}": {"post": {
                "operationId": "tagPet",
                "parameters": [
                    {"name": "id", "in": "path", "required": true, "type": "string"},
                    {"name": "tags", "in": "query", "type": "array", "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b"]}},
                    {"name": "seen", "in": "query", "type": "array", "collectionFormat": "multi",
                     "items": {"type": "integer"}},
                    {"name": "body", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}
                ],
                "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"},
                                      "examples": {"application/json": {"$ref": "text"}}},
                              "204": {"description": "none"}}}}},
            "definitions": {"Pet": {"type": "object", "properties": {"tag": {"type": "string", "x-nullable": true}},
                                    "example": {"tag": "a"}}}
        });
        let out = to_openapi3(&doc).unwrap();
        let op = &out["paths"]["/pets/{id}"]["post"];
        assert_eq!(out["servers"][0]["url"], "https://api.example.com/v1");
        assert_eq!(
            op["parameters"][1],
            json!({"name": "tags", "in": "query", "style": "form", "explode": false,
                   "schema": {"type": "array", "maxItems": 2, "items": {"type": "string", "enum": ["a", "b"]}}})
        );
        assert_eq!(op["parameters"][2]["explode"], true);
        assert_eq!(
            op["requestBody"],
            json!({"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}})
        );
        assert_eq!(
            op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/Pet"
        );
        assert_eq!(op["responses"]["204"], json!({"description": "none"}));
        assert_eq!(
            out["components"]["schemas"]["Pet"],
            json!({"type": "object", "properties": {"tag": {"type": "string", "nullable": true}}})
        );
    }

    #[test]
    fn what_the_converter_cannot_carry_over_is_refused() {
        let with = |p: Value| json!({"swagger": "2.0", "paths": {"/x": {"get": {"parameters": [p], "responses": {}}}}});
        let cases = [
            (json!({"name": "f", "in": "formData", "type": "string"}), "in: formData"),
            (
                json!({"name": "p", "in": "query", "type": "array", "collectionFormat": "pipes", "items": {}}),
                "pipes",
            ),
            (
                json!({"name": "n", "in": "query", "type": "array", "items": {"type": "array"}}),
                "arrays of arrays",
            ),
        ];
        for (p, expected) in cases {
            let error = to_openapi3(&with(p)).unwrap_err();
            assert!(error.contains(expected), "{error}");
        }
        assert!(to_openapi3(&json!({"openapi": "3.0.0"})).unwrap_err().contains("not a Swagger 2.0"));
    }

    #[test]
    fn closing_objects_leaves_open_maps_and_member_names_alone() {
        let mut doc = json!({"components": {"schemas": {
            "A": {"type": "object", "properties": {"properties": {"type": "object", "properties": {"x": {}}}}},
            "Map": {"type": "object", "additionalProperties": {"type": "string"}},
            "Open": {"type": "object", "properties": {}, "additionalProperties": true},
            "Ex": {"type": "string", "example": {"properties": {}}}
        }}});
        assert_eq!(close_objects(&mut doc), 2);
        let schemas = &doc["components"]["schemas"];
        assert_eq!(schemas["A"]["additionalProperties"], false);
        assert_eq!(schemas["A"]["properties"]["properties"]["additionalProperties"], false);
        assert_eq!(schemas["Map"]["additionalProperties"], json!({"type": "string"}));
        assert_eq!(schemas["Open"]["additionalProperties"], true);
        assert!(schemas["Ex"]["example"].get("additionalProperties").is_none());
    }
}
