//! The rules around the examples: the `x12` object's validation, the text and region rules,
//! and the orders a 940 cannot carry.

use super::*;

fn problems_of(adapter: Value) -> Vec<(String, String)> {
    crate::fields::adapter_problems(validate, adapter)
}

/// The paths of the problems found in an x12 adapter whose `x12` is the base plus `patch`.
fn paths_of(patch: Value) -> Vec<String> {
    let mut x12 = json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL"});
    if let (Value::Object(base), Value::Object(patch)) = (&mut x12, patch) {
        base.extend(patch);
    }
    problems_of(json!({"file_format": "x12", "x12": x12})).into_iter().map(|(path, _)| path).collect()
}

#[test]
fn a_valid_x12_object_and_a_csv_adapter_without_one_pass() {
    assert_eq!(paths_of(json!({})), Vec::<String>::new());
    let all = json!({
        "sender_qualifier": "01", "receiver_qualifier": "ZZ", "gs_sender_id": "ACME", "gs_receiver_id": "WH 3",
        "version": "004010", "usage": "T", "element_separator": "|", "component_separator": "^",
        "segment_terminator": "~", "newline": true, "file_extension": "x12", "first_control_number": 999999999,
        "send_997": false, "reference_prefix": "AC-", "depositor_name": "Acme", "depositor_code": "AC",
        "product_qualifier": "VN", "product_qualifiers": ["SK"], "stock_quantity_qualifiers": ["33", "17"],
        "time_zone": "America/New_York", "scac": {"UPS Ground": "UPSN"}, "scac_names": {"UPSN": "UPS"}
    });
    assert_eq!(paths_of(all), Vec::<String>::new());
    assert!(problems_of(json!({"file_format": "csv"})).is_empty());
    assert!(problems_of(json!({})).is_empty());
    assert!(problems_of(json!({"x12": null})).is_empty());
}

#[test]
fn each_rule_of_the_x12_object_names_its_path() {
    let x = |key: &str| format!("adapter[x12][{key}]");
    let cases: Vec<(&str, Value, String)> = vec![
        ("an unknown key", json!({"sender_idd": "X"}), x("sender_idd")),
        ("an id of 1 character", json!({"sender_id": "A"}), x("sender_id")),
        ("an id of 16 characters", json!({"receiver_id": "ABCDEFGHIJKLMNOP"}), x("receiver_id")),
        ("an id outside ASCII", json!({"sender_id": "ACMÉ"}), x("sender_id")),
        ("an id with a leading space", json!({"sender_id": " ACME"}), x("sender_id")),
        ("an id with a separator", json!({"receiver_id": "WH*3"}), x("receiver_id")),
        (
            "an id with a configured separator",
            json!({"element_separator": "|", "receiver_id": "WH|3"}),
            x("receiver_id"),
        ),
        ("a GS id too short", json!({"gs_sender_id": "A"}), x("gs_sender_id")),
        ("a GS id with a trailing space", json!({"gs_receiver_id": "WH "}), x("gs_receiver_id")),
        ("a lower-case qualifier", json!({"sender_qualifier": "zz"}), x("sender_qualifier")),
        ("a qualifier of 3", json!({"receiver_qualifier": "ZZZ"}), x("receiver_qualifier")),
        ("another version", json!({"version": "005010"}), x("version")),
        ("another usage", json!({"usage": "I"}), x("usage")),
        ("a letter as separator", json!({"element_separator": "E"}), x("element_separator")),
        ("two characters as separator", json!({"component_separator": "::"}), x("component_separator")),
        ("a space as terminator", json!({"segment_terminator": " "}), x("segment_terminator")),
        ("a newline as terminator", json!({"segment_terminator": "\n"}), x("segment_terminator")),
        (
            "a terminator equal to the element separator",
            json!({"segment_terminator": "*"}),
            x("segment_terminator"),
        ),
        (
            "a component equal to a custom element separator",
            json!({"element_separator": "^", "component_separator": "^"}),
            x("component_separator"),
        ),
        ("newline not a boolean", json!({"newline": "yes"}), x("newline")),
        ("send_997 not a boolean", json!({"send_997": 2}), x("send_997")),
        ("an extension of 6", json!({"file_extension": "edifac"}), x("file_extension")),
        ("an extension with a dot", json!({"file_extension": ".edi"}), x("file_extension")),
        ("a control number of 0", json!({"first_control_number": 0}), x("first_control_number")),
        (
            "a control number of 10 digits",
            json!({"first_control_number": 1_000_000_000}),
            x("first_control_number"),
        ),
        ("a control number as a fraction", json!({"first_control_number": 1.5}), x("first_control_number")),
        ("a prefix of 13", json!({"reference_prefix": "ABCDEFGHIJKLM"}), x("reference_prefix")),
        ("a prefix with an underscore", json!({"reference_prefix": "AC_"}), x("reference_prefix")),
        ("an empty depositor name", json!({"depositor_name": ""}), x("depositor_name")),
        ("a depositor name of 61", json!({"depositor_name": "N".repeat(61)}), x("depositor_name")),
        (
            "a depositor code of 1",
            json!({"depositor_name": "Acme", "depositor_code": "A"}),
            x("depositor_code"),
        ),
        ("a depositor code without a name", json!({"depositor_code": "AC"}), x("depositor_code")),
        ("a product qualifier of 1", json!({"product_qualifier": "S"}), x("product_qualifier")),
        ("empty product qualifiers", json!({"product_qualifiers": []}), x("product_qualifiers")),
        (
            "a bad stock qualifier",
            json!({"stock_quantity_qualifiers": ["33", "x"]}),
            x("stock_quantity_qualifiers"),
        ),
        (
            "stock qualifiers not an array",
            json!({"stock_quantity_qualifiers": "33"}),
            x("stock_quantity_qualifiers"),
        ),
        ("an unknown zone", json!({"time_zone": "Mars/Olympus"}), x("time_zone")),
        ("scac not an object", json!({"scac": ["UPSN"]}), x("scac")),
        ("a scac value not a SCAC", json!({"scac": {"UPS": "upsn"}}), x("scac")),
        ("a scac value not a string", json!({"scac": {"UPS": 1}}), x("scac")),
        ("a scac_names key not a SCAC", json!({"scac_names": {"UPSNX": "UPS"}}), x("scac_names")),
    ];
    for (what, patch, path) in cases {
        assert_eq!(paths_of(patch), vec![path], "{what}");
    }
    let missing = problems_of(json!({"file_format": "x12", "x12": {}}));
    let paths: Vec<_> = missing.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, vec!["adapter[x12][receiver_id]", "adapter[x12][sender_id]"]);
}

#[test]
fn x12_goes_with_file_format_x12_only() {
    let paths = |adapter: Value| problems_of(adapter).into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert_eq!(paths(json!({"file_format": "x12"})), vec!["adapter[x12]"]);
    assert_eq!(paths(json!({"file_format": "x12", "x12": "yes"})), vec!["adapter[x12]"]);
    assert_eq!(paths(json!({"file_format": "x12", "x12": null})), vec!["adapter[x12]"]);
    assert_eq!(
        paths(json!({"file_format": "csv", "x12": {"sender_id": "AB", "receiver_id": "CD"}})),
        vec!["adapter[x12]"]
    );
    assert_eq!(paths(json!({"x12": {}})), vec!["adapter[x12]"]);
}

#[test]
fn settings_take_the_defaults_of_the_annex() {
    let s = settings();
    assert_eq!((s.gs_sender_id.as_str(), s.gs_receiver_id.as_str()), ("ACMEOB", "WHSE3PL"));
    assert_eq!(
        (s.sender_qualifier.as_str(), s.usage.as_str(), s.file_extension.as_str()),
        ("ZZ", "P", "edi")
    );
    assert_eq!(s.separators, Separators { element: b'*', component: b'>', terminator: b'~' });
    assert!(!s.newline && s.send_997);
    assert_eq!(s.first_control_number, 1);
    assert_eq!(s.product_qualifiers, vec!["SK", "VN"]);
    assert_eq!(s.stock_quantity_qualifiers, vec!["33"]);
    assert!(X12Settings::of(&serde_json::Map::new()).is_none());
}

#[test]
fn text_is_written_as_ascii_without_separators() {
    let seps = settings().separators;
    assert_eq!(text::clean("Café Crème", &seps).as_deref(), Some("Cafe Creme"));
    assert_eq!(text::clean("door*2~", &seps).as_deref(), Some("door 2"));
    assert_eq!(text::clean(" a\tb>c\n ", &seps).as_deref(), Some("a b c"));
    assert_eq!(text::clean("ﬁne 日本", &seps).as_deref(), Some("fine ??"));
    assert_eq!(text::clean("Ｗｉｄｅ", &seps).as_deref(), Some("Wide"));
    assert_eq!(text::clean(" ~*\u{7f} ", &seps), None);
}

#[test]
fn regions_are_two_letters_or_a_us_or_canadian_name() {
    let code = |r: &str| regions::code(r);
    assert_eq!(code("ma").as_deref(), Some("MA"));
    assert_eq!(code("MASSACHUSETTS").as_deref(), Some("MA"));
    assert_eq!(code("district of columbia").as_deref(), Some("DC"));
    assert_eq!(code("U.S. Virgin Islands").as_deref(), Some("VI"));
    assert_eq!(code("Virgin Islands").as_deref(), Some("VI"));
    assert_eq!(code("Newfoundland and Labrador").as_deref(), Some("NL"));
    let seps = settings().separators;
    let quebec = text::clean("Québec", &seps).unwrap_or_default();
    assert_eq!(code(&quebec).as_deref(), Some("QC"));
    assert_eq!(code("Bayern"), None);
    assert_eq!(code("M1"), None);
}

#[test]
fn orders_that_do_not_fit_are_refused_with_the_field_and_the_limit() {
    let s = settings();
    let refused = |change: &dyn Fn(&mut OutgoingOrder)| {
        let mut order = order_1234();
        change(&mut order);
        check_order(&s, &order).err().unwrap_or_default()
    };
    assert_eq!(check_order(&s, &order_1234()), Ok(()));
    assert_eq!(
        refused(&|o| o.ship_to.street1 = Some("S".repeat(60))),
        "shipping_address.street1 is 60 characters; N301 takes at most 55"
    );
    assert_eq!(
        refused(&|o| o.ship_to.region = Some("Bayern".into())),
        "shipping_address.region 'Bayern' is not a 2-letter code or a US or Canadian region name; N402 takes 2 characters"
    );
    assert_eq!(
        refused(&|o| o.ship_to.city = Some("B".into())),
        "shipping_address.city is 1 character; N401 takes at least 2"
    );
    assert_eq!(refused(&|o| o.ship_to.city = None), "shipping_address.city is missing; N401 is required");
    assert_eq!(
        refused(&|o| o.ship_to.postal_code = Some("~*".into())),
        "shipping_address.postal_code is missing; N403 is required"
    );
    assert_eq!(
        refused(&|o| o.ship_to.country = Some("USAX".into())),
        "shipping_address.country is 4 characters; N404 takes at most 3"
    );
    assert_eq!(
        refused(&|o| o.ship_to.street2 = Some("S".repeat(56))),
        "shipping_address.street2 is 56 characters; N302 takes at most 55"
    );
    assert!(
        refused(&|o| {
            o.ship_to.first_name = None;
            o.ship_to.last_name = None
        })
        .contains("N102 is required")
    );
    assert!(refused(&|o| o.ship_to.first_name = Some("G".repeat(60))).contains("N102 takes at most 60"));
    assert!(refused(&|o| o.ship_to.telephone = Some("1".repeat(81))).contains("at most 80"));
    assert!(
        refused(&|o| o.customer_email = Some("e".repeat(81))).contains("customer_email is 81 characters")
    );
    assert!(refused(&|o| o.items.clear()).contains("no items"));
    assert_eq!(refused(&|o| o.items[1].sku = None), "order_items[1].sku is missing; W0105 is required");
    assert_eq!(
        refused(&|o| o.items[0].sku = Some("K".repeat(49))),
        "order_items[0].sku is 49 characters; W0105 takes at most 48"
    );
    // Not address data: cut, or left out, never refused.
    assert_eq!(
        check_order(&s, &OutgoingOrder { external_display_id: Some("D".repeat(31)), ..order_1234() }),
        Ok(())
    );
    let mut long_name = order_1234();
    long_name.items[0].name = Some("N".repeat(100));
    long_name.notes = Some("x".repeat(1000));
    assert_eq!(check_order(&s, &long_name), Ok(()));
    // A region may be absent.
    let mut no_region = order_1234();
    no_region.ship_to.region = None;
    let (bytes, _) = write_940s(&s, 9, 0, &[no_region]);
    assert!(String::from_utf8_lossy(&bytes).contains("~N4*Boston**02110*US~"));
}

#[test]
fn descriptions_are_cut_and_optional_segments_follow_the_order() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "depositor_name": "Acme Goods", "depositor_code": "AC1",
        "reference_prefix": "AC-", "scac": {"fedex": "FDEG"}, "time_zone": "America/New_York"
    }));
    let mut order = order_1234();
    order.external_display_id = Some("D".repeat(31));
    order.customer_email = None;
    order.ordered_at = Some(ms("2024-03-05T03:00:00Z"));
    order.carrier = Some("FedEx".into());
    order.service_level = Some("Home Delivery with a very long name indeed".into());
    order.notes = Some(format!("{}{}", "a".repeat(79), " b"));
    order.gift_message = Some("Happy birthday!".into());
    order.items[0].name = Some(format!("{}   {}", "n".repeat(44), "tail"));
    order.items[0].upc = Some("12345".into());
    let (bytes, _) = write_940s(&s, 3, ms("2026-07-01T03:30:00Z"), &[order]);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    // 03:30 UTC is 23:30 the day before in New York (EDT).
    assert!(text.contains("*260630*2330*"), "{text}");
    assert!(text.contains("~GS*OW*ACMEOB*WHSE3PL*20260630*2330*3*X*004010~"), "{text}");
    assert!(text.contains("~W05*N*AC-1234~N1*DE*Acme Goods*ZZ*AC1~N1*ST*Grace Hopper~"), "{text}");
    assert!(text.contains("~PER*IC**TE*617-555-0199~"), "{text}");
    assert!(!text.contains("~N9*"), "{text}");
    assert!(text.contains("~G62*04*20240304~"), "{text}");
    assert!(
        text.contains(&format!("~NTE*WHI*{}~NTE*WHI*b~NTE*GEN*Happy birthday!~", "a".repeat(79))),
        "{text}"
    );
    assert!(text.contains("~W66*PP*U***FedEx Home Delivery with a very lon*****FDEG~"), "{text}");
    assert!(text.contains(&format!("~W01*2*EA**SK*MUG-CREME~G69*{}~", "n".repeat(44))), "{text}");
    // Neither routing nor SCAC: W66 keeps its two codes.
    let mut plain = order_1234();
    plain.service_level = None;
    let (bytes, _) = write_940s(&settings(), 3, 0, &[plain]);
    assert!(String::from_utf8_lossy(&bytes).contains("~W66*PP*U~"));
}

#[test]
fn a_send_of_several_orders_numbers_its_sets_and_refuses_a_set_of_the_wrong_kind() {
    let s = settings();
    let mut second = order_1234();
    second.order_id = 1235;
    let (bytes, sets) = write_940s(&s, 12, 0, &[order_1234(), second]);
    assert_eq!(sets, vec![1, 2]);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("~ST*940*0002~W05*N*1235~"));
    assert!(text.ends_with("~GE*2*12~IEA*1*000000012~"), "{text}");
    let mut acks = Interchange::new(&s, GroupKind::Acks, 1, 0).expect("a document");
    assert!(acks.set_940(&order_1234()).is_err());
    assert!(Interchange::new(&s, GroupKind::Orders, 0, 0).is_err());
    assert!(Interchange::new(&s, GroupKind::Orders, 1_000_000_000, 0).is_err());
}
