//! Typed reads from a decoded record (a request body, an import line, a platform's adapter):
//! text forms of numbers and booleans coerced, absent told from null (PATCH), one message per
//! bad field collected. It knows no HTTP: the problems come back as [`Invalid`], which the
//! API answers as 422 `validation_failed`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::dates;

pub mod slots;

pub use slots::{Schema, Slot, Slots};

/// Problems by field name (`adapter[store_hash]`, `order_items[0][sku]`), one sentence each.
pub type Details = BTreeMap<String, String>;

/// A record that cannot be used, with every problem found in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub Details);

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

/// What a `Fields` reads from: a decoded map, or an import record read into slots.
#[derive(Debug)]
enum Source {
    Map(Map<String, Value>),
    Slots(Slots),
}

/// Typed reads from a body object, collecting a message per bad field.
#[derive(Debug)]
pub struct Fields {
    source: Source,
    /// Name of this object inside its parent (`store`, `bundle[0]`), for error keys.
    prefix: String,
    errors: Details,
}

impl Fields {
    pub fn new(map: Map<String, Value>) -> Self {
        Fields { source: Source::Map(map), prefix: String::new(), errors: Details::new() }
    }

    /// Reads an object read into slots (`slots`): the same reads, the same messages.
    pub fn from_slots(slots: Slots) -> Self {
        Fields { source: Source::Slots(slots), prefix: String::new(), errors: Details::new() }
    }

    /// Reads a nested object whose errors are reported under `name[field]`.
    pub fn child(&self, name: &str, map: Map<String, Value>) -> Fields {
        Fields { source: Source::Map(map), prefix: self.path(name), errors: Details::new() }
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

    /// Records a problem with a value nested inside this object, named by its keys and
    /// indexes from the outside in (`["orders_layout", "columns", "3"]` is
    /// `adapter[orders_layout][columns][3]` in an adapter): a layout's problems sit deep.
    pub fn error_in(&mut self, path: &[String], problem: impl Into<String>) {
        let Some((first, rest)) = path.split_first() else { return };
        let mut key = self.path(first);
        for part in rest {
            key.push_str(&format!("[{part}]"));
        }
        self.errors.entry(key).or_insert_with(|| problem.into());
    }

    /// The value of `key` without taking it, for a check that reads a key another check
    /// also reads (a warehouse's `file_format`). An object read into slots (an import
    /// record) has none to lend.
    pub fn peek(&self, key: &str) -> Option<&Value> {
        match &self.source {
            Source::Map(map) => map.get(key),
            Source::Slots(_) => None,
        }
    }

    pub fn has_errors(&self) -> bool {
        !self.errors.is_empty()
    }

    /// Every collected problem, or Ok.
    pub fn finish(self) -> Result<(), Invalid> {
        if self.errors.is_empty() { Ok(()) } else { Err(Invalid(self.errors)) }
    }

    /// Reads `key` with a custom conversion; a failed conversion is recorded as its problem.
    pub fn read<T>(&mut self, key: &str, convert: impl FnOnce(Value) -> Result<T, String>) -> Patch<T> {
        let value = match &mut self.source {
            Source::Map(map) => map.remove(key),
            Source::Slots(slots) => slots.take(key).map(Slot::into_value),
        };
        self.convert(key, value, convert)
    }

    fn convert<T>(
        &mut self,
        key: &str,
        value: Option<Value>,
        convert: impl FnOnce(Value) -> Result<T, String>,
    ) -> Patch<T> {
        match value {
            None => Patch::Absent,
            Some(Value::Null) => Patch::Null,
            Some(v) => match convert(v) {
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

    /// An array of objects, each as `Fields` reporting under `key[i]`, or why an element is
    /// not one (for the caller to record under `key[i]`).
    pub fn objects(&mut self, key: &str) -> Patch<Vec<Result<Fields, String>>> {
        let list = match &mut self.source {
            Source::Map(_) => self.array(key),
            Source::Slots(slots) => match slots.take(key) {
                // Read into slots as the record was parsed.
                Some(Slot::Objects(list)) => {
                    let children = list.into_iter().enumerate().map(|(i, element)| match element {
                        Ok(slots) => Ok(Fields {
                            source: Source::Slots(slots),
                            prefix: self.path(&format!("{key}[{i}]")),
                            errors: Details::new(),
                        }),
                        Err(_) => Err("must be an object".to_string()),
                    });
                    return Patch::Value(children.collect());
                }
                slot => self.convert(key, slot.map(Slot::into_value), to_array),
            },
        };
        match list {
            Patch::Value(list) => Patch::Value(
                list.into_iter().enumerate().map(|(i, item)| element_fields(self, key, i, item)).collect(),
            ),
            Patch::Null => Patch::Null,
            Patch::Absent => Patch::Absent,
        }
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
    f.finish().map_err(|Invalid(details)| details)
}

/// What `validate` finds wrong with `adapter` checked as a store's or warehouse's adapter:
/// each problem as the API names it (`adapter[key]`), with its message. For the platforms'
/// tests of their adapter rules.
#[cfg(test)]
pub fn adapter_problems(validate: fn(&mut Fields), adapter: Value) -> Vec<(String, String)> {
    let Value::Object(map) = adapter else { panic!("an adapter is an object: {adapter}") };
    let mut fields = Fields::new(Map::new());
    let mut child = fields.child("adapter", map);
    validate(&mut child);
    fields.absorb(child);
    finish(fields).err().unwrap_or_default().into_iter().collect()
}
