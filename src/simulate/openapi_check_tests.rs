//! Tests of the OpenAPI checker: it passes what the description allows and reports what it
//! does not.

use super::*;

/// A small description with each kind of thing the checker looks at.
const PETS: &str = r#"
openapi: 3.0.3
info: {title: Pets, version: '1'}
servers:
  - url: 'https://api.example.com/shops/{shop}/v1'
security:
  - key: []
paths:
  /pets:
    parameters:
      - {name: Accept, in: header, required: true, schema: {type: string}}
    get:
      operationId: listPets
      parameters:
        - {name: limit, in: query, schema: {type: integer}}
        - {name: sort, in: query, schema: {type: string, enum: [name, age]}}
        - {name: include, in: query, style: form, explode: false, schema: {type: array, items: {type: string, enum: [toys, vets]}}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {type: array, items: {$ref: '#/components/schemas/Pet'}}
        '204': {description: none}
    post:
      operationId: addPet
      requestBody:
        required: true
        content:
          application/json:
            schema: {$ref: '#/components/schemas/Pet'}
      responses:
        '422':
          description: refused
          content:
            application/problem+json:
              schema: {type: object, properties: {title: {type: string}}}
  /pets/{id}:
    get:
      operationId: getPet
      parameters:
        - {name: id, in: path, required: true, schema: {type: integer}}
      responses:
        '200':
          description: ok
          content:
            application/json:
              schema: {$ref: '#/components/schemas/Pet'}
  /pets/count:
    get:
      operationId: countPets
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: integer}}}}
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Key}
  schemas:
    Pet:
      type: object
      required: [name]
      properties:
        name: {type: string, maxLength: 5}
        tag: {type: string, nullable: true}
"#;

fn exchange(method: &str, path: &str, query: &[(&str, &str)], status: u16, answer: &str) -> Exchange {
    let pairs = |p: &[(&str, &str)]| p.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    Exchange {
        method: method.into(),
        path: path.into(),
        query: pairs(query),
        headers: pairs(&[("X-Key", "k"), ("Accept", "application/json")]),
        body: Vec::new(),
        status,
        answer_headers: pairs(&[("Content-Type", "application/json")]),
        answer_body: answer.as_bytes().to_vec(),
    }
}

fn pets() -> Description {
    Description::parse("pets.yml", PETS, &[]).unwrap()
}

#[test]
fn an_exchange_that_follows_the_description_has_nothing_reported() {
    let d = pets();
    let fine = [
        exchange(
            "GET",
            "/shops/s1/v1/pets",
            &[("limit", "2"), ("sort", "age"), ("include", "toys,vets")],
            200,
            r#"[{"name":"Rex","tag":null}]"#,
        ),
        exchange("GET", "/shops/s1/v1/pets", &[], 204, ""),
        exchange("GET", "/shops/s1/v1/pets/7", &[], 200, r#"{"name":"Rex"}"#),
        exchange("GET", "/shops/s1/v1/pets/count", &[], 200, "3"),
    ];
    for e in fine {
        assert_eq!(d.check(&e), Vec::<String>::new(), "{}", e.line());
    }
}

#[test]
fn each_way_of_breaking_the_description_is_reported() {
    let d = pets();
    let base = || exchange("GET", "/shops/s1/v1/pets", &[], 200, "[]");
    let mut no_key = base();
    no_key.headers.retain(|(n, _)| n != "X-Key");
    let mut no_accept = base();
    no_accept.headers.retain(|(n, _)| n != "Accept");
    let mut wrong_type = base();
    wrong_type.answer_headers = vec![("Content-Type".into(), "text/plain".into())];
    let mut post = exchange("POST", "/shops/s1/v1/pets", &[], 422, r#"{"title":"no"}"#);
    post.headers.push(("Content-Type".into(), "application/json".into()));
    post.body = br#"{"name":"Bartholomew"}"#.to_vec();
    post.answer_headers = vec![("Content-Type".into(), "application/problem+json".into())];
    let mut empty_post = post.clone();
    empty_post.body.clear();
    let mut json_422 = post.clone();
    json_422.body = br#"{"name":"Rex"}"#.to_vec();
    json_422.answer_headers = vec![("Content-Type".into(), "application/json".into())];
    let cases = [
        (exchange("GET", "/shops/s1/v1/pets", &[("sort", "size")], 200, "[]"), "sort=size"),
        (exchange("GET", "/shops/s1/v1/pets", &[("limit", "two")], 200, "[]"), "not an integer"),
        (exchange("GET", "/shops/s1/v1/pets", &[("include", "toys,food")], 200, "[]"), "include=toys,food"),
        (exchange("GET", "/shops/s1/v1/pets", &[("color", "red")], 200, "[]"), "color is not declared"),
        (exchange("GET", "/shops/s1/v1/pets", &[("limit", "1"), ("limit", "2")], 200, "[]"), "sent 2 times"),
        (exchange("GET", "/shops/s1/v1/pets/x", &[], 200, r#"{"name":"Rex"}"#), "path parameter id=x"),
        (exchange("GET", "/shops/s1/v1/cats", &[], 200, "[]"), "is no path"),
        (exchange("DELETE", "/shops/s1/v1/pets", &[], 200, "[]"), "declares no DELETE"),
        (exchange("GET", "/shops/s1/v1/pets", &[], 500, ""), "status 500 is not declared"),
        (exchange("GET", "/shops/s1/v1/pets", &[], 200, r#"[{"tag":1}]"#), "does not fit its schema"),
        (exchange("GET", "/shops/s1/v1/pets", &[], 204, "[]"), "has a body but declares none"),
        (no_key, "no security requirement is met"),
        (no_accept, "header parameter Accept is missing"),
        (wrong_type, "\"text/plain\" is not declared"),
        (post, "request body does not fit its schema"),
        (empty_post, "required request body is missing"),
        (json_422, "answer's content type \"application/json\" is not declared"),
    ];
    for (e, expected) in cases {
        let found = d.check(&e);
        assert!(
            found.iter().any(|f| f.contains(expected)),
            "{}: wanted {expected:?} in {found:#?}",
            e.line()
        );
    }
}

#[test]
fn a_patch_changes_the_description_and_a_stale_patch_is_refused() {
    let patch = Patch {
        pointer: "/components/schemas/Pet/properties/name/maxLength",
        was: Some(json!(5)),
        now: None,
        why: "names may be long",
    };
    let d = Description::parse("pets.yml", PETS, std::slice::from_ref(&patch)).unwrap();
    let e = exchange("GET", "/shops/s1/v1/pets/1", &[], 200, r#"{"name":"Bartholomew"}"#);
    assert_eq!(d.check(&e), Vec::<String>::new());
    let stale = Patch { was: Some(json!(6)), ..patch };
    let error = Description::parse("pets.yml", PETS, &[stale]).err().unwrap();
    assert!(error.contains("the file changed") && error.contains("names may be long"), "{error}");
}
