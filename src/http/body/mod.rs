//! Request bodies (CONTRACT §3), decided once: JSON, urlencoded and multipart all become the
//! same JSON object; bracket names (`adapter[x]`, `bundle[0][qty]`, `ids[]`) nest; an empty
//! form value is null; a field whose name cannot be placed (not bracket notation) is ignored,
//! as any unknown field (CONTRACT §4). `Fields` then reads typed values out of that object, coercing text
//! forms of numbers and booleans, telling absent from null for PATCH, and collecting one
//! message per bad field for the 422.

use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::form::{self, DataField, Form, FromForm, ValueField};
use rocket::request::Request;
use serde_json::{Map, Value};

use crate::config::Config;
use crate::http::error::{ApiError, stash};

pub use crate::fields::{Blank, Fields, Patch, element_fields, finish};

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
                Outcome::Error((_, errors)) if errors.iter().any(over_limit) => {
                    Err(ApiError::PayloadTooLarge)
                }
                Outcome::Error((_, errors)) => Err(ApiError::bad_request(format!(
                    "The form body could not be parsed: {}",
                    errors.iter().next().map_or_else(|| "malformed".to_string(), cut_off_or_said)
                ))),
                Outcome::Forward(_) => Err(unsupported()),
            }
        }
        _ => Err(unsupported()),
    }
}

/// Whether a form error is a size limit passed. Rocket answers a cut-off multipart body (a
/// part's headers never ending, no closing boundary) with an `InvalidLength` naming no limit,
/// whose status is the same 413: that one is a malformed body, a 400.
fn over_limit(error: &form::Error<'_>) -> bool {
    matches!(error.kind, form::error::ErrorKind::InvalidLength { max: Some(_), .. })
}

fn cut_off_or_said(error: &form::Error<'_>) -> String {
    match error.kind {
        form::error::ErrorKind::InvalidLength { max: None, .. } => {
            "the body ends in the middle of a part".into()
        }
        _ => error.to_string(),
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

/// Brackets a form name may have: more than any body needs, few enough that building and
/// dropping the nested value (both recursive) stay far from the end of a thread's stack.
const MAX_BRACKETS: usize = 32;

/// Splits `a[b][0][]` into `a`, `b`, `0`, append; `None` for a name that is not bracket
/// notation (empty, `[x]`, `a[b`, `a]b[`), which no field of any body has.
fn parse_name(name: &str) -> Result<Option<Vec<Segment<'_>>>, String> {
    let (base, mut rest) = match name.find('[') {
        Some(i) => (&name[..i], &name[i..]),
        None => (name, ""),
    };
    if base.is_empty() {
        return Ok(None);
    }
    let mut segments = vec![Segment::Key(base)];
    while !rest.is_empty() {
        if segments.len() > MAX_BRACKETS {
            return Err(format!("the form name '{base}[...' has more than {MAX_BRACKETS} brackets"));
        }
        let Some(inner) = rest.strip_prefix('[') else { return Ok(None) };
        let Some(close) = inner.find(']') else { return Ok(None) };
        let key = &inner[..close];
        segments.push(if key.is_empty() { Segment::Append } else { Segment::Key(key) });
        rest = &inner[close + 1..];
    }
    // `a[][b]`: an append before other brackets leads nowhere a body reads.
    let appended_then_more = segments.iter().rev().skip(1).any(|s| matches!(s, Segment::Append));
    Ok((!appended_then_more).then_some(segments))
}

/// Builds the JSON object a form stands for. The last field of a name wins: a repeated plain
/// name keeps its last value, and a field that gives a name another shape (`a=1` then
/// `a[b]=2`, or the other way round) replaces what the earlier ones built. A field whose
/// name is not bracket notation is no field of the body, and is ignored as an unknown one
/// (CONTRACT §4); a name nested past [`MAX_BRACKETS`] is refused.
pub fn fields_to_object(fields: &[(String, String)]) -> Result<Map<String, Value>, ApiError> {
    let mut root = Value::Object(Map::new());
    for (name, text) in fields {
        let value = if text.is_empty() { Value::Null } else { Value::String(text.clone()) };
        let Some(segments) = parse_name(name).map_err(ApiError::bad_request)? else { continue };
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
            if !node.is_object() {
                *node = Value::Object(Map::new());
            }
            let map = node.as_object_mut().ok_or("could not be read")?;
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
            if !node.is_array() {
                *node = Value::Array(Vec::new());
            }
            let list = node.as_array_mut().ok_or("could not be read")?;
            list.push(value);
            Ok(())
        }
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
    fn names_that_are_not_bracket_notation_are_ignored_as_unknown_fields() {
        // Issue 35: schemathesis' multipart field `4íH'Nõ[.Ĕ][…][]` reached us named '' and
        // was a 400; CONTRACT §4 ignores unknown fields.
        for name in ["", "[x]", "a[b", "a]b[", "a[][b]", "a[b]c"] {
            let v = form(&[(name, "1"), ("sku", "S")]);
            assert_eq!(v, json!({"sku": "S"}), "name {name:?}");
        }
        // A name nested past any body's need is still refused.
        let deep = vec![(format!("a{}", "[b]".repeat(MAX_BRACKETS + 1)), "1".to_string())];
        assert!(fields_to_object(&deep).is_err());
    }

    #[test]
    fn a_later_field_that_gives_a_name_another_shape_replaces_the_earlier() {
        let cases = [
            (vec![("a", "1"), ("a[b]", "2")], json!({"a": {"b": "2"}})),
            (vec![("a[b]", "2"), ("a", "1")], json!({"a": "1"})),
            (vec![("a[]", "1"), ("a[b]", "2")], json!({"a": {"b": "2"}})),
            (vec![("a[b]", "2"), ("a[]", "1")], json!({"a": ["1"]})),
            (vec![("a[b]", "2"), ("a[b][c]", "3"), ("a[d]", "4")], json!({"a": {"b": {"c": "3"}, "d": "4"}})),
        ];
        for (pairs, want) in cases {
            assert_eq!(form(&pairs), want, "{pairs:?}");
        }
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
        let Err(crate::fields::Invalid(d)) = f.finish() else { panic!("expected 422") };
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
        let Err(crate::fields::Invalid(d)) = f.finish() else { panic!("expected 422") };
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
        let Err(crate::fields::Invalid(d)) = parent.finish() else { panic!("expected 422") };
        assert_eq!(d["store[name]"], "is required");
    }
}
