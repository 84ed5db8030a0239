//! Request bodies (CONTRACT §3), decided once: JSON, urlencoded and multipart all become the
//! same JSON object; bracket names (`adapter[x]`, `bundle[0][qty]`, `ids[]`) nest; an empty
//! form value is null. `Fields` then reads typed values out of that object, coercing text
//! forms of numbers and booleans, telling absent from null for PATCH, and collecting one
//! message per bad field for the 422.

use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::form::{self, DataField, Form, FromForm, ValueField};
use rocket::request::Request;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::dates;
use crate::error::{ApiError, Details, stash};

/// A decoded request body: always a JSON object. An empty body is an empty object.
#[derive(Debug, Clone, Default)]
pub struct Body(pub Map<String, Value>);

impl Body {
    pub fn fields(self) -> Fields {
        Fields::new(self.0)
    }
}

#[rocket::async_trait]
impl<'r> FromData<'r> for Body {
    type Error = ApiError;

    async fn from_data(req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        match decode(req, data).await {
            Ok(body) => Outcome::Success(body),
            Err(e) => Outcome::Error(stash(req, e)),
        }
    }
}

fn body_limit(req: &Request<'_>) -> u64 {
    req.rocket().state::<Config>().map_or(Config::default().body_limit, |c| c.body_limit)
}

async fn decode<'r>(req: &'r Request<'_>, mut data: Data<'r>) -> Result<Body, ApiError> {
    let limit = body_limit(req);
    let peek = data.peek(1).await;
    if peek.is_empty() && data.peek_complete() {
        return Ok(Body::default());
    }
    match req.content_type() {
        Some(ct) if ct.is_json() => {
            let text = data
                .open(limit.bytes())
                .into_string()
                .await
                .map_err(|_| ApiError::bad_request("The body could not be read as UTF-8 text."))?;
            if !text.is_complete() {
                return Err(ApiError::PayloadTooLarge);
            }
            parse_json_object(&text)
        }
        Some(ct) if ct.is_form() || ct.is_form_data() => {
            match Form::<RawFields>::from_data(req, data).await {
                Outcome::Success(form) => fields_to_object(&form.into_inner().0).map(Body),
                Outcome::Error((status, errors)) if status.code == 413 => {
                    let _ = errors;
                    Err(ApiError::PayloadTooLarge)
                }
                Outcome::Error((_, errors)) => Err(ApiError::bad_request(format!(
                    "The form body could not be parsed: {}",
                    errors.iter().next().map_or_else(|| "malformed".to_string(), |e| e.to_string())
                ))),
                Outcome::Forward(_) => Err(unsupported()),
            }
        }
        _ => Err(unsupported()),
    }
}

fn unsupported() -> ApiError {
    ApiError::UnsupportedMediaType(
        "Send the body as application/json, application/x-www-form-urlencoded or multipart/form-data."
            .to_string(),
    )
}

/// Parses a JSON body that must be an object; whitespace alone counts as `{}`.
pub fn parse_json_object(text: &str) -> Result<Body, ApiError> {
    if text.trim().is_empty() {
        return Ok(Body::default());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(Body(map)),
        Ok(_) => Err(ApiError::bad_request("The JSON body must be an object.")),
        Err(e) => Err(ApiError::bad_request(format!("The body is not valid JSON: {e}."))),
    }
}

/// Every form field as (full name, text value), in order, urlencoded or multipart alike.
struct RawFields(Vec<(String, String)>);

struct RawContext<'r> {
    fields: Vec<(String, String)>,
    errors: form::Errors<'r>,
}

#[rocket::async_trait]
impl<'r> FromForm<'r> for RawFields {
    type Context = RawContext<'r>;

    fn init(_: form::Options) -> Self::Context {
        RawContext { fields: Vec::new(), errors: form::Errors::new() }
    }

    fn push_value(ctxt: &mut Self::Context, field: ValueField<'r>) {
        ctxt.fields.push((field.name.source().to_string(), field.value.to_string()));
    }

    async fn push_data(ctxt: &mut Self::Context, field: DataField<'r, '_>) {
        // Multipart parts are read as text; the whole form is already capped by `data-form`.
        let name = field.name.source().to_string();
        let limit = field.request.limits().get("data-form").unwrap_or(1.mebibytes());
        match field.data.open(limit).into_string().await {
            Ok(text) if text.is_complete() => ctxt.fields.push((name, text.into_inner())),
            Ok(_) => ctxt.errors.push(form::Error::from(form::error::ErrorKind::InvalidLength {
                min: None,
                max: Some(limit.as_u64()),
            })),
            Err(e) => ctxt.errors.push(form::Error::from(e)),
        }
    }

    fn push_error(ctxt: &mut Self::Context, error: form::Error<'r>) {
        ctxt.errors.push(error);
    }

    fn finalize(ctxt: Self::Context) -> form::Result<'r, Self> {
        if ctxt.errors.is_empty() { Ok(RawFields(ctxt.fields)) } else { Err(ctxt.errors) }
    }
}

enum Segment<'a> {
    Key(&'a str),
    Append,
}

/// Splits `a[b][0][]` into `a`, `b`, `0`, append.
fn parse_name(name: &str) -> Result<Vec<Segment<'_>>, String> {
    let bad = || format!("the form name '{name}' is not valid bracket notation");
    let (base, mut rest) = match name.find('[') {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    if base.is_empty() {
        return Err(bad());
    }
    let mut segments = vec![Segment::Key(base)];
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[').ok_or_else(bad)?;
        let close = inner.find(']').ok_or_else(bad)?;
        let key = &inner[..close];
        segments.push(if key.is_empty() { Segment::Append } else { Segment::Key(key) });
        rest = &inner[close + 1..];
    }
    Ok(segments)
}

/// Builds the JSON object a form stands for. Repeated plain names keep the last value.
fn fields_to_object(fields: &[(String, String)]) -> Result<Map<String, Value>, ApiError> {
    let mut root = Value::Object(Map::new());
    for (name, text) in fields {
        let value = if text.is_empty() { Value::Null } else { Value::String(text.clone()) };
        let segments = parse_name(name).map_err(ApiError::bad_request)?;
        insert(&mut root, &segments, value)
            .map_err(|e| ApiError::bad_request(format!("The form field '{name}' {e}.")))?;
    }
    match root {
        Value::Object(map) => Ok(map),
        _ => unreachable!("the root is built as an object"),
    }
}

fn insert(node: &mut Value, segments: &[Segment<'_>], value: Value) -> Result<(), &'static str> {
    let Some((first, rest)) = segments.split_first() else {
        *node = value;
        return Ok(());
    };
    match first {
        Segment::Key(key) => {
            let map = node.as_object_mut().ok_or("conflicts with another field of the same name")?;
            if rest.is_empty() {
                map.insert((*key).to_string(), value);
                return Ok(());
            }
            let child = map.entry((*key).to_string()).or_insert_with(|| match rest[0] {
                Segment::Key(_) => Value::Object(Map::new()),
                Segment::Append => Value::Array(Vec::new()),
            });
            insert(child, rest, value)
        }
        Segment::Append => {
            if !rest.is_empty() {
                return Err("uses [] before other brackets; give indices like [0]");
            }
            let list = node.as_array_mut().ok_or("conflicts with another field of the same name")?;
            list.push(value);
            Ok(())
        }
    }
}

/// A field of a request body: absent, present as null, or present with a value. PATCH
/// changes only present fields, and null clears a nullable one.
#[derive(Debug, Clone, PartialEq)]
pub enum Patch<T> {
    Absent,
    Null,
    Value(T),
}

impl<T> Patch<T> {
    pub fn is_absent(&self) -> bool {
        matches!(self, Patch::Absent)
    }

    /// `None` when absent; `Some(None)` when null.
    pub fn present(self) -> Option<Option<T>> {
        match self {
            Patch::Absent => None,
            Patch::Null => Some(None),
            Patch::Value(v) => Some(Some(v)),
        }
    }

    /// The value when given, else `None` (absent and null alike).
    pub fn value(self) -> Option<T> {
        match self {
            Patch::Value(v) => Some(v),
            _ => None,
        }
    }
}

/// Values for which "required" also means "not blank".
pub trait Blank {
    fn is_blank(&self) -> bool;
}

impl Blank for String {
    fn is_blank(&self) -> bool {
        self.trim().is_empty()
    }
}

impl<T> Blank for Vec<T> {
    fn is_blank(&self) -> bool {
        self.is_empty()
    }
}

impl Blank for i64 {
    fn is_blank(&self) -> bool {
        false
    }
}

impl Blank for bool {
    fn is_blank(&self) -> bool {
        false
    }
}

impl Blank for Map<String, Value> {
    fn is_blank(&self) -> bool {
        false
    }
}

/// Typed reads from a body object, collecting a message per bad field.
#[derive(Debug)]
pub struct Fields {
    map: Map<String, Value>,
    /// Name of this object inside its parent (`store`, `bundle[0]`), for error keys.
    prefix: String,
    errors: Details,
}

impl Fields {
    pub fn new(map: Map<String, Value>) -> Self {
        Fields { map, prefix: String::new(), errors: Details::new() }
    }

    /// Reads a nested object whose errors are reported under `name[field]`.
    pub fn child(&self, name: &str, map: Map<String, Value>) -> Fields {
        Fields { map, prefix: self.path(name), errors: Details::new() }
    }

    /// Takes over a child's errors.
    pub fn absorb(&mut self, child: Fields) {
        self.errors.extend(child.errors);
    }

    /// The error key of `key` inside this object.
    pub fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() { key.to_string() } else { format!("{}[{key}]", self.prefix) }
    }

    /// Records a problem with `key` (the first one recorded for a key is kept).
    pub fn error(&mut self, key: &str, problem: impl Into<String>) {
        self.errors.entry(self.path(key)).or_insert_with(|| problem.into());
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    pub fn is_present(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    /// 422 with every collected problem, or Ok.
    pub fn finish(self) -> Result<(), ApiError> {
        if self.errors.is_empty() { Ok(()) } else { Err(ApiError::Validation(self.errors)) }
    }

    fn raw(&mut self, key: &str) -> Patch<Value> {
        match self.map.remove(key) {
            None => Patch::Absent,
            Some(Value::Null) => Patch::Null,
            Some(v) => Patch::Value(v),
        }
    }

    /// Reads `key` with a custom conversion; a failed conversion is recorded as its problem.
    pub fn read<T>(&mut self, key: &str, convert: impl FnOnce(Value) -> Result<T, String>) -> Patch<T> {
        match self.raw(key) {
            Patch::Absent => Patch::Absent,
            Patch::Null => Patch::Null,
            Patch::Value(v) => match convert(v) {
                Ok(t) => Patch::Value(t),
                Err(problem) => {
                    self.error(key, problem);
                    Patch::Absent
                }
            },
        }
    }

    /// A required field: absent, null or blank is an error.
    pub fn required<T: Blank>(
        &mut self,
        key: &str,
        read: impl FnOnce(&mut Self, &str) -> Patch<T>,
    ) -> Option<T> {
        let errors_before = self.errors.len();
        match read(self, key) {
            Patch::Value(v) if !v.is_blank() => Some(v),
            Patch::Value(_) => {
                self.error(key, "must not be empty");
                None
            }
            _ if self.errors.len() > errors_before => None,
            _ => {
                self.error(key, "is required");
                None
            }
        }
    }

    /// A PATCH of a field that may change but never become null or blank.
    pub fn not_null<T: Blank>(
        &mut self,
        key: &str,
        read: impl FnOnce(&mut Self, &str) -> Patch<T>,
    ) -> Option<T> {
        match read(self, key) {
            Patch::Absent => None,
            Patch::Null => {
                self.error(key, "cannot be null");
                None
            }
            Patch::Value(v) if v.is_blank() => {
                self.error(key, "must not be empty");
                None
            }
            Patch::Value(v) => Some(v),
        }
    }

    pub fn text(&mut self, key: &str) -> Patch<String> {
        self.read(key, |v| match v {
            Value::String(s) => Ok(s),
            _ => Err("must be a string".to_string()),
        })
    }

    /// An id: a positive integer, or its digits as a string.
    pub fn id(&mut self, key: &str) -> Patch<i64> {
        self.read(key, to_id)
    }

    pub fn integer(&mut self, key: &str) -> Patch<i64> {
        self.read(key, to_integer)
    }

    pub fn boolean(&mut self, key: &str) -> Patch<bool> {
        self.read(key, |v| match v {
            Value::Bool(b) => Ok(b),
            Value::String(s) => match s.as_str() {
                "true" | "1" => Ok(true),
                "false" | "0" => Ok(false),
                _ => Err("must be true or false".to_string()),
            },
            Value::Number(n) if n.as_i64() == Some(1) => Ok(true),
            Value::Number(n) if n.as_i64() == Some(0) => Ok(false),
            _ => Err("must be true or false".to_string()),
        })
    }

    /// A dateString (ISO 8601 or natural language), as stored milliseconds.
    pub fn date(&mut self, key: &str) -> Patch<i64> {
        self.read(key, |v| match v {
            Value::String(s) => dates::parse_date_string(&s),
            _ => Err("must be a date string".to_string()),
        })
    }

    pub fn object(&mut self, key: &str) -> Patch<Map<String, Value>> {
        self.read(key, |v| match v {
            Value::Object(m) => Ok(m),
            _ => Err("must be an object".to_string()),
        })
    }

    /// An array; a form's indexed object (`x[0]=..&x[1]=..`) counts, ordered by index.
    pub fn array(&mut self, key: &str) -> Patch<Vec<Value>> {
        self.read(key, to_array)
    }

    /// An array of ids; a bad element is reported as `key[i]`.
    pub fn ids(&mut self, key: &str) -> Patch<Vec<i64>> {
        let items = match self.array(key) {
            Patch::Value(items) => items,
            Patch::Null => return Patch::Null,
            Patch::Absent => return Patch::Absent,
        };
        let mut ids = Vec::with_capacity(items.len());
        let mut all_good = true;
        for (i, item) in items.into_iter().enumerate() {
            match to_id(item) {
                Ok(id) => ids.push(id),
                Err(problem) => {
                    all_good = false;
                    self.error(&format!("{key}[{i}]"), problem);
                }
            }
        }
        if all_good { Patch::Value(ids) } else { Patch::Absent }
    }
}

fn to_id(v: Value) -> Result<i64, String> {
    match to_integer(v) {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err("must be a positive integer id".to_string()),
    }
}

fn to_integer(v: Value) -> Result<i64, String> {
    let problem = || "must be an integer".to_string();
    match v {
        Value::Number(n) => n.as_i64().ok_or_else(problem),
        Value::String(s) => {
            let digits = s.strip_prefix('-').unwrap_or(&s);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(problem());
            }
            s.parse().map_err(|_| problem())
        }
        _ => Err(problem()),
    }
}

fn to_array(v: Value) -> Result<Vec<Value>, String> {
    match v {
        Value::Array(items) => Ok(items),
        Value::Object(map) => {
            let mut indexed = Vec::with_capacity(map.len());
            for (k, v) in map {
                let index: usize = k
                    .parse()
                    .ok()
                    .filter(|_| k.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| "must be an array".to_string())?;
                indexed.push((index, v));
            }
            indexed.sort_by_key(|(i, _)| *i);
            Ok(indexed.into_iter().map(|(_, v)| v).collect())
        }
        _ => Err("must be an array".to_string()),
    }
}

/// Reads an element of an array of objects as `Fields` reporting under `key[i]`.
pub fn element_fields(parent: &Fields, key: &str, index: usize, item: Value) -> Result<Fields, String> {
    match item {
        Value::Object(map) => Ok(parent.child(&format!("{key}[{index}]"), map)),
        _ => Err("must be an object".to_string()),
    }
}

/// The collected problems of an import record, or Ok.
pub fn finish(f: Fields) -> Result<(), Details> {
    match f.finish() {
        Ok(()) => Ok(()),
        Err(ApiError::Validation(details)) => Err(details),
        Err(other) => Err(Details::from([("record".to_string(), format!("{other:?}"))])),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form(pairs: &[(&str, &str)]) -> Value {
        let owned: Vec<(String, String)> =
            pairs.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect();
        Value::Object(fields_to_object(&owned).unwrap())
    }

    #[test]
    fn brackets_nest_objects_and_arrays() {
        let v = form(&[
            ("adapter[access_token]", "x"),
            ("bundle[0][product_id]", "1"),
            ("bundle[0][qty]", "2"),
            ("bundle[1][product_id]", "3"),
            ("product_ids[]", "1"),
            ("product_ids[]", "2"),
            ("enabled_at", ""),
            ("name", "a"),
            ("name", "b"),
        ]);
        assert_eq!(
            v,
            json!({
                "adapter": {"access_token": "x"},
                "bundle": {"0": {"product_id": "1", "qty": "2"}, "1": {"product_id": "3"}},
                "product_ids": ["1", "2"],
                "enabled_at": null,
                "name": "b"
            })
        );
    }

    #[test]
    fn malformed_names_are_refused() {
        for name in ["[x]", "a[b", "a]b[", "a[][b]"] {
            let owned = vec![(name.to_string(), "1".to_string())];
            assert!(fields_to_object(&owned).is_err(), "name {name}");
        }
        let clash = vec![("a".to_string(), "1".to_string()), ("a[b]".to_string(), "2".to_string())];
        assert!(fields_to_object(&clash).is_err());
    }

    #[test]
    fn form_and_json_read_the_same() {
        let from_form = form(&[("ids[1]", "7"), ("ids[0]", "5"), ("n", "12"), ("b", "true")]);
        let from_json = json!({"ids": [5, 7], "n": 12, "b": true});
        for v in [from_form, from_json] {
            let mut f = Fields::new(v.as_object().unwrap().clone());
            assert_eq!(f.ids("ids"), Patch::Value(vec![5, 7]));
            assert_eq!(f.integer("n"), Patch::Value(12));
            assert_eq!(f.boolean("b"), Patch::Value(true));
            f.finish().unwrap();
        }
    }

    #[test]
    fn absent_null_and_wrong_types_are_told_apart() {
        let mut f =
            Fields::new(json!({"a": null, "n": "12x", "s": 5, "ids": [1, "x"]}).as_object().unwrap().clone());
        assert_eq!(f.text("missing"), Patch::Absent);
        assert_eq!(f.text("a"), Patch::Null);
        assert_eq!(f.integer("n"), Patch::Absent);
        assert_eq!(f.text("s"), Patch::Absent);
        assert_eq!(f.ids("ids"), Patch::Absent);
        assert_eq!(f.required("name", Fields::text), None);
        let Err(ApiError::Validation(d)) = f.finish() else { panic!("expected 422") };
        assert_eq!(d["n"], "must be an integer");
        assert_eq!(d["s"], "must be a string");
        assert_eq!(d["ids[1]"], "must be a positive integer id");
        assert_eq!(d["name"], "is required");
    }

    #[test]
    fn required_text_must_not_be_blank_and_wrong_type_is_not_reported_twice() {
        let mut f = Fields::new(json!({"name": "  ", "n": []}).as_object().unwrap().clone());
        assert_eq!(f.required("name", Fields::text), None);
        assert_eq!(f.required("n", Fields::text), None);
        let Err(ApiError::Validation(d)) = f.finish() else { panic!("expected 422") };
        assert_eq!(d["name"], "must not be empty");
        assert_eq!(d["n"], "must be a string");
    }

    #[test]
    fn child_errors_are_named_under_the_parent() {
        let parent = Fields::new(Map::new());
        let mut child = parent.child("store", json!({}).as_object().unwrap().clone());
        child.required("name", Fields::text);
        let mut parent = parent;
        parent.absorb(child);
        let Err(ApiError::Validation(d)) = parent.finish() else { panic!("expected 422") };
        assert_eq!(d["store[name]"], "is required");
    }
}
