//! Changes made to a description before it is used: [`Patch`]es at one place each, OpenAPI
//! 3.0's `nullable` in JSON Schema terms, and [`Readings`]: ways of reading a vendor's file
//! where it contradicts itself all over, each refusing to load when the file no longer says
//! what the reading is for (so a fixed file shows it stale).

use serde_json::{Map, Value, json};

/// A change to a description where it contradicts itself: at `pointer` (JSON Pointer into
/// the file), the file says `was` (`None`: nothing) and is read as `now` (`None`: removed).
#[derive(Debug, Clone)]
pub struct Patch {
    pub pointer: &'static str,
    pub was: Option<Value>,
    pub now: Option<Value>,
    pub why: &'static str,
}

/// How a description is read where it contradicts itself in many places at once. The
/// default reads everything literally.
#[derive(Debug, Clone, Default)]
pub struct Readings {
    /// Schemas (names under `components/schemas`) that close themselves
    /// (`additionalProperties: false`) and name a closed base in `allOf`: the base is
    /// inherited (its `properties` and `required` merged in, a property both declare held
    /// to both), and the closure applies to the union.
    pub inherit_closed_bases: &'static [&'static str],
    /// `additionalProperties: false` on a node that declares no `properties` is ignored.
    pub open_without_properties: bool,
    /// Query parameter names are matched without regard to case.
    pub query_names_any_case: bool,
    /// A parameter typed `string` with `items` is comma-separated text, each part valid
    /// against `items`.
    pub comma_lists: bool,
    /// A parameter typed `number` with `format: int32`/`int64` is a whole number in range.
    pub whole_numbers: bool,
    /// 429 and 5xx answers are allowed where undeclared, their bodies unchecked.
    pub undeclared_429_and_5xx: bool,
}

/// Applies `readings` that change the document; an error names a reading the file no longer
/// calls for.
pub(super) fn read(doc: &mut Value, readings: &Readings) -> Result<(), String> {
    for name in readings.inherit_closed_bases {
        inherit(doc, name)?;
    }
    if readings.open_without_properties {
        let mut opened = 0;
        open(doc, &mut opened);
        if opened == 0 {
            return Err(
                "no node without properties is closed: the reading `open_without_properties` is stale".into(),
            );
        }
    }
    Ok(())
}

fn inherit(doc: &mut Value, name: &str) -> Result<(), String> {
    let pointer = format!("/components/schemas/{}", name.replace('~', "~0").replace('/', "~1"));
    let stale = |why: &str| format!("{pointer}: {why}, so the reading that inherits its base is stale");
    let schema = doc.pointer(&pointer).ok_or_else(|| stale("no such schema"))?;
    if schema.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(stale("it no longer closes itself"));
    }
    let base_ref = schema
        .pointer("/allOf/0/$ref")
        .and_then(Value::as_str)
        .filter(|_| schema["allOf"].as_array().is_some_and(|a| a.len() == 1))
        .ok_or_else(|| stale("it no longer names one base in allOf"))?;
    let base = base_ref
        .strip_prefix('#')
        .and_then(|p| doc.pointer(p))
        .cloned()
        .ok_or_else(|| stale("its base is gone"))?;
    if base.get("additionalProperties") != Some(&Value::Bool(false)) {
        return Err(stale("its base no longer closes itself"));
    }
    let schema =
        doc.pointer_mut(&pointer).and_then(Value::as_object_mut).ok_or_else(|| stale("not an object"))?;
    schema.remove("allOf");
    let properties = schema.entry("properties").or_insert_with(|| json!({}));
    if let (Some(own), Some(inherited)) =
        (properties.as_object_mut(), base.get("properties").and_then(Value::as_object))
    {
        for (key, property) in inherited {
            let merged = match own.remove(key) {
                Some(mine) => json!({"allOf": [mine, property]}),
                None => property.clone(),
            };
            own.insert(key.clone(), merged);
        }
    }
    let mut required: Vec<Value> =
        schema.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    for key in base.get("required").and_then(Value::as_array).into_iter().flatten() {
        if !required.contains(key) {
            required.push(key.clone());
        }
    }
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    Ok(())
}

/// Drops `additionalProperties: false` where no `properties` are declared. Only schema
/// positions are visited: a `properties` map's keys are member names, not keywords.
fn open(value: &mut Value, opened: &mut usize) {
    match value {
        Value::Object(map) => {
            if map.get("additionalProperties") == Some(&Value::Bool(false)) && !map.contains_key("properties")
            {
                map.remove("additionalProperties");
                *opened += 1;
            }
            for (key, child) in map.iter_mut() {
                if key == "example" || key == "examples" {
                    continue;
                }
                if key == "properties" {
                    if let Value::Object(members) = child {
                        members.values_mut().for_each(|m| open(m, opened));
                    }
                } else {
                    open(child, opened);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| open(i, opened)),
        _ => {}
    }
}

/// OpenAPI 3.0's `nullable: true` in JSON Schema terms: `null` joins the type (and the enum).
pub(super) fn translate_nullable(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.remove("nullable") == Some(Value::Bool(true)) {
                match map.get("type").cloned() {
                    Some(Value::String(t)) => {
                        map.insert("type".into(), json!([t, "null"]));
                        if let Some(Value::Array(values)) = map.get_mut("enum") {
                            values.push(Value::Null);
                        }
                    }
                    _ => {
                        let inner = Value::Object(std::mem::take(map));
                        map.insert("anyOf".into(), json!([inner, {"type": "null"}]));
                    }
                }
            }
            map.values_mut().for_each(translate_nullable);
        }
        Value::Array(items) => items.iter_mut().for_each(translate_nullable),
        _ => {}
    }
}

/// Applies a patch: the file must say `was` at its pointer. An array takes a new element at
/// its end (`was: None` at the index of its length).
pub(super) fn apply(doc: &mut Value, patch: &Patch) -> Result<(), String> {
    let (parent, last) =
        patch.pointer.rsplit_once('/').ok_or_else(|| format!("{} is no JSON Pointer", patch.pointer))?;
    let key = last.replace("~1", "/").replace("~0", "~");
    let holder = doc.pointer_mut(parent).ok_or_else(|| format!("nothing at {parent} to patch"))?;
    let current = match &*holder {
        Value::Object(map) => map.get(&key).cloned(),
        Value::Array(items) => key.parse::<usize>().ok().and_then(|i| items.get(i).cloned()),
        _ => None,
    };
    if current != patch.was {
        return Err(format!(
            "the patch at {} expected {} but the file says {}; the file changed, so see whether the exception ({}) still holds",
            patch.pointer,
            patch.was.as_ref().map_or("nothing".into(), Value::to_string),
            current.as_ref().map_or("nothing".into(), Value::to_string),
            patch.why
        ));
    }
    match (holder, &patch.now) {
        (Value::Object(map), Some(now)) => {
            map.insert(key, now.clone());
        }
        (Value::Object(map), None) => {
            map.remove(&key);
        }
        (Value::Array(items), now) => {
            let i = key.parse::<usize>().map_err(|_| format!("{} is no index", patch.pointer))?;
            match now {
                Some(now) if i == items.len() => items.push(now.clone()),
                Some(now) if i < items.len() => items[i] = now.clone(),
                None if i < items.len() => {
                    items.remove(i);
                }
                _ => return Err(format!("{} is past the end of its array", patch.pointer)),
            }
        }
        _ => return Err(format!("{parent} holds nothing to patch")),
    }
    Ok(())
}

/// YAML as JSON: keys become text, numbers stay numbers.
pub(super) fn json_of(yaml: yaml_rust2::Yaml) -> Result<Value, String> {
    use yaml_rust2::Yaml;
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("{text} is not a finite number"))?,
        Yaml::String(s) => Value::String(s),
        Yaml::Array(items) => Value::Array(items.into_iter().map(json_of).collect::<Result<_, _>>()?),
        Yaml::Hash(map) => {
            let mut out = Map::with_capacity(map.len());
            for (key, value) in map {
                let key = match key {
                    Yaml::String(s) | Yaml::Real(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    other => return Err(format!("a mapping key that is not text: {other:?}")),
                };
                out.insert(key, json_of(value)?);
            }
            Value::Object(out)
        }
        Yaml::Alias(_) | Yaml::BadValue => return Err("an alias or a value that cannot be read".into()),
    })
}
