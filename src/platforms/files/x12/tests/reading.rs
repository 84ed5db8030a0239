//! Reading: any separators, the envelope's checks and their 997 codes, 945, 846 and 997 sets,
//! and hostile input.

use super::*;

/// The annex's 945 with other separators: element `|`, component `^`, terminator `t`.
fn with_separators(annex: &str, element: char, component: char, terminator: &str) -> Vec<u8> {
    annex
        .lines()
        .map(|line| {
            let line = line.trim_end().trim_end_matches('~').replace('*', &element.to_string());
            let line = match line.strip_suffix('>') {
                Some(isa) if line.starts_with("ISA") => format!("{isa}{component}"),
                _ => line,
            };
            format!("{line}{terminator}")
        })
        .collect::<String>()
        .into_bytes()
}

/// The shipments of a file read from `shipments_dir`, or its problems as lines.
fn shipments_of(s: &X12Settings, bytes: &[u8]) -> Result<Vec<Shipment945>, Vec<String>> {
    match read(s, bytes, Inbox::Shipments).outcome {
        Ok(Contents::Shipments { shipments, .. }) => Ok(shipments),
        Ok(other) => panic!("{other:?}"),
        Err(problems) => Err(lines(&problems)),
    }
}

#[test]
fn any_separators_the_isa_declares_are_read_with_or_without_newlines() {
    let s = settings();
    let expected = shipments_of(&s, &file(EXAMPLE_945)).expect("the annex's 945");
    for (element, component, terminator) in
        [('|', '^', "~"), ('^', ':', "'"), ('*', '>', "\n"), ('*', '>', "~\r\n"), ('!', '>', "\r")]
    {
        let bytes = with_separators(EXAMPLE_945, element, component, terminator);
        assert_eq!(shipments_of(&s, &bytes), Ok(expected.clone()), "{element} {component} {terminator:?}");
    }
    // A byte order mark, whitespace around segments, and a last line without its line feed.
    let mut bytes = b"\xEF\xBB\xBF \r\n".to_vec();
    bytes.extend(with_separators(EXAMPLE_945, '*', '>', "\n  "));
    assert_eq!(shipments_of(&s, &bytes), Ok(expected.clone()));
    let bytes = with_separators(EXAMPLE_945, '*', '>', "\n");
    assert_eq!(shipments_of(&s, bytes.strip_suffix(b"\n").unwrap_or_default()), Ok(expected));
}

#[test]
fn what_we_write_with_other_separators_and_newlines_reads_back() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "element_separator": "|", "component_separator": "^",
        "segment_terminator": "!", "newline": true
    }));
    let (bytes, _) = write_940s(&s, 7, ms("2026-03-08T14:30:00Z"), &[order_1234()]);
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("ISA|00|          |00|          |ZZ|ACMEOB         |ZZ|WHSE3PL        |260308|1430|U|00401|000000007|0|P|^!\nGS|OW|"), "{text}");
    assert!(text.contains("\nNTE|WHI|Leave at the *blue* door~ please!\n"), "{text}");
    assert_eq!(text.lines().count(), 22);
    assert!(text.lines().all(|l| l.ends_with('!')));
    assert_eq!(text.lines().next().map(str::len), Some(106));
    // Read as the warehouse would (its ids swapped): a 940 group is no group a shipments
    // folder takes, but the envelope and its counts are right.
    let warehouse = settings_of(json!({"sender_id": "WHSE3PL", "receiver_id": "ACMEOB"}));
    let reading = read(&warehouse, &bytes, Inbox::Shipments);
    let Err(problems) = reading.outcome else { panic!("a 940 is not a shipment") };
    assert_eq!(
        lines(&problems),
        vec!["segment 2 (GS): GS01 is 'OW'; shipments_dir takes groups SW (945) and FA (997)"]
    );
    let ack = reading.ack.expect("a 997 accepting the syntax");
    assert!(ack.groups[0].accepted && ack.groups[0].sets[0].accepted);
}

#[test]
fn the_isa_must_be_there_whole_and_for_this_warehouse_else_no_997() {
    let s = settings();
    let whole = file(EXAMPLE_945);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("nothing", Vec::new(), "the file does not start with an ISA segment"),
        ("another document", b"order_id,sku\n1,A\n".to_vec(), "the file does not start with an ISA segment"),
        ("an ISA cut short", whole[..60].to_vec(), "the file ends inside its ISA segment"),
        ("an ISA cut before its terminator", whole[..105].to_vec(), "the file ends inside its ISA segment"),
        (
            "separators not distinct",
            String::from_utf8_lossy(&whole).replacen("*>~", "*~~", 1).into_bytes(),
            "the ISA's separators '*', '~' and '~' are not three different characters",
        ),
        (
            "another receiver",
            String::from_utf8_lossy(&whole).replacen("ACMEOB         ", "SOMEONE        ", 1).into_bytes(),
            "segment 1 (ISA): the interchange is not for this warehouse: ISA08 is 'SOMEONE', not the sender_id 'ACMEOB'",
        ),
        (
            "a test interchange",
            String::from_utf8_lossy(&whole).replacen("*0*P*>~", "*0*T*>~", 1).into_bytes(),
            "segment 1 (ISA): the interchange is not for this warehouse: ISA15 is 'T', not the usage 'P'",
        ),
        ("no IEA", whole[..whole.len() - 16].to_vec(), "the file ends without an IEA segment"),
        (
            "an IEA cut short",
            whole[..whole.len() - 3].to_vec(),
            "segment 15 (IEA): the file ends inside this segment (no terminator)",
        ),
        (
            "IEA02 not ISA13",
            String::from_utf8_lossy(&whole).replace("IEA*1*000000512", "IEA*1*000000513").into_bytes(),
            "segment 15 (IEA): IEA02 is '000000513'; ISA13 is '000000512'",
        ),
    ];
    for (what, bytes, first) in cases {
        let reading = read(&s, &bytes, Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{what}: read") };
        assert_eq!(lines(&problems).first().map(String::as_str), Some(first), "{what}");
        assert!(reading.ack.is_none(), "{what}: no 997");
    }
}

#[test]
fn group_and_set_counts_are_checked_and_answered_in_the_997() {
    let s = settings();
    let answer = |annex: &str| {
        let reading = read(&s, &file(annex), Inbox::Shipments);
        let problems = reading.outcome.err().map(|p| lines(&p)).unwrap_or_default();
        let ack = reading.ack.map(|ack| write_997(&s, 8, 0, &ack)).unwrap_or_default();
        let ack = String::from_utf8_lossy(&ack).into_owned();
        let body = ack.split_once("ST*997*0001~").map(|(_, b)| b.to_string()).unwrap_or_default();
        (problems, body.split_once("~SE*").map(|(b, _)| b.to_string()).unwrap_or_default())
    };
    assert_eq!(
        answer(&EXAMPLE_945.replace("GE*1*512", "GE*2*512")),
        (
            vec!["segment 14 (GE): GE01 is '2'; the group has 1 set".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*2*1*0*5".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("GE*1*512", "GE*1*511")),
        (
            vec!["segment 14 (GE): GE02 is '511'; GS06 is '512'".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*1*1*0*4".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("*X*004010~", "*X*005010~")),
        (
            vec!["segment 2 (GS): GS08 is '005010'; orderbridge reads version 004010".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R~AK9*R*1*1*0*2".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("SE*11*0001", "SE*11*0002")),
        (
            vec!["segment 13 (SE), set 0001: SE02 is 0002; ST02 is 0001".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R*3~AK9*R*1*1*0".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("ST*945*0001", "ST*846*0001")),
        (
            vec!["segment 3 (ST), set 0001: ST01 is '846'; a SW group holds 945 sets".into()],
            "AK1*SW*512~AK2*846*0001~AK5*R*1~AK9*R*1*1*0".into()
        )
    );
    assert_eq!(
        answer(&EXAMPLE_945.replace("SE*11*0001~\n", "")),
        (
            vec!["segment 13 (GE): set 0001 (segment 3) has no SE".into()],
            "AK1*SW*512~AK2*945*0001~AK5*R*2~AK9*R*1*1*0".into()
        )
    );
    // §6.2: an element missing, a quantity not a number, a date and a time that are none.
    let (problems, body) = answer(
        &EXAMPLE_945
            .replace("W12*CC*3*3**EA", "W12*CC*3*x**EA")
            .replace("MAN*CP*1Z", "MAN**1Z")
            .replace("G62*11*20260308*8*1430", "G62*11*20260231*8*2460"),
    );
    assert_eq!(
        problems,
        vec![
            "segment 6 (G62), set 0001: G6202 '20260231' is not a date (CCYYMMDD)",
            "segment 6 (G62), set 0001: G6204 '2460' is not a time (HHMM or HHMMSS)",
            "segment 9 (MAN), set 0001: MAN01 is missing",
            "segment 11 (W12), set 0001: W1203 'x' is not a number",
        ]
    );
    assert_eq!(
        body,
        "AK1*SW*512~AK2*945*0001~AK3*G62*4**8~AK4*2**8*20260231~AK4*4**9*2460~AK3*MAN*7**8~AK4*1**1~AK3*W12*9**8~AK4*3**6*x~AK5*R*5~AK9*R*1*1*0"
    );
    let (problems, body) =
        answer(&EXAMPLE_945.replace("W06*F*1234*20260308*SHIP1234~\n", "").replace("SE*11", "SE*10"));
    assert_eq!(problems, vec!["segment 12 (SE), set 0001: the set has no W06"]);
    assert_eq!(body, "AK1*SW*512~AK2*945*0001~AK3*W06*2**3~AK5*R*5~AK9*R*1*1*0");
}

/// The annex's 945 with its set's body (W06 to W03) replaced, the counts kept right.
fn shipment_file(body: &str) -> Vec<u8> {
    let count = body.matches('~').count() + 2;
    let head = EXAMPLE_945.lines().take(3).collect::<String>();
    format!("{head}{body}SE*{count}*0001~GE*1*512~IEA*1*000000512~").into_bytes()
}

#[test]
fn a_945_names_its_order_its_tracking_and_its_units() {
    let s = settings_of(json!({
        "sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "reference_prefix": "AC-",
        "scac_names": {"ZZZZ": "Zeta Freight"}, "time_zone": "Europe/Berlin"
    }));
    let one = |body: &str| shipments_of(&s, &shipment_file(body));
    // Two packages, one by bill of lading, one tracking number twice; W0603's date at
    // midnight in the zone; a package without W12 ships everything left.
    let shipments = one(
        "W06*F*AC-77*20260308~N9*BM*BOL1~W27*M*ZZZZ~LX*1~W12*CC*1*1**EA**VN*A~LX*2~MAN*CP*T2~\
         W12*CC*1*2**EA**ZZ*x*********SK*B~LX*3~MAN*GM*x~MAN*CP*T2~W12*CC*1*1**EA**SK*B~W12*CC*0*0**EA**SK*C~LX*4~MAN*CP*T3~W03*9*2.5*LB~",
    )
    .expect("shipments");
    let summary: Vec<_> = shipments
        .iter()
        .map(|s| (s.order_id, s.tracking_number.as_str(), s.items.clone(), s.weight))
        .collect();
    assert_eq!(
        summary,
        vec![
            (77, "BOL1", Some(vec![("A".into(), 1)]), None),
            (77, "T2", Some(vec![("B".into(), 3)]), None),
            (77, "T3", None, None),
        ]
    );
    assert_eq!(shipments[0].carrier_name.as_deref(), Some("Zeta Freight"));
    assert_eq!(shipments[0].service_level, None);
    assert_eq!(shipments[0].shipped_at, Some(ms("2026-03-07T23:00:00Z")));
    // A set with no date ships when the file is read.
    let shipments = one("W06*F*AC-77~W27*M*FDXE*2DAY~LX*1~MAN*CP*T~").expect("a shipment");
    assert_eq!((shipments[0].shipped_at, shipments[0].carrier_name.as_deref()), (None, Some("FedEx")));
    assert_eq!(shipments[0].service_level.as_deref(), Some("2DAY"));
    let shipments =
        one("W06*F*AC-77~W27*M*ABCD~LX*1~MAN*CP*T~G62*11*20260308*8*143015~").expect("a shipment");
    assert_eq!(shipments[0].carrier_name.as_deref(), Some("ABCD"));
    assert_eq!(shipments[0].shipped_at, None, "a G62 inside a package is not the heading's");
    // Business problems: the file fails, its 997 accepts.
    for (body, problem) in [
        (
            "W06*F*77~LX*1~MAN*CP*T~",
            "segment 4 (W06), set 0001: unknown order: W0602 '77' names no order orderbridge sent",
        ),
        (
            "W06*F*AC-077~LX*1~MAN*CP*T~",
            "segment 4 (W06), set 0001: unknown order: W0602 'AC-077' names no order orderbridge sent",
        ),
        ("W06*F*AC-7~LX*1~W12*CC*1*1**EA**SK*A~", "segment 7 (SE), set 0001: no tracking number for LX 1"),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1**CA**SK*A~",
            "segment 7 (W12), set 0001: unit CA: orderbridge counts eaches",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1**EA**UP*123~",
            "segment 7 (W12), set 0001: W12 has no SK or VN product id",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*0*0**EA**SK*A~",
            "segment 8 (SE), set 0001: no units shipped for tracking number T",
        ),
        (
            "W06*F*AC-7~LX*1~MAN*CP*T~W12*CC*1*1.5**EA**SK*A~",
            "segment 7 (W12), set 0001: W1203 1.5 is not a whole number of units of 0 or more",
        ),
    ] {
        let reading = read(&s, &shipment_file(body), Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{body}: read") };
        assert_eq!(lines(&problems), vec![problem], "{body}");
        assert!(problems[0].business);
        assert!(reading.ack.is_some_and(|a| a.groups[0].accepted), "{body}");
    }
}

#[test]
fn a_file_of_945s_and_997s_reads_both_and_answers_only_the_945s() {
    let s = settings();
    let annex = String::from_utf8_lossy(&file(EXAMPLE_945)).into_owned();
    let (head, _) = annex.split_once("GE*1*512~").unwrap_or_default();
    let both = format!(
        "{head}GE*1*512~GS*FA*WHSE3PL*ACMEOB*20260308*1500*513*X*004010~ST*997*0001~AK1*OW*7~AK2*940*0001~AK5*A~\
         AK2*940*0002~AK5*R*5~AK9*P*3*3*2~SE*8*0001~GE*1*513~IEA*2*000000512~"
    );
    let reading = read(&s, both.as_bytes(), Inbox::Shipments);
    let Ok(Contents::Shipments { shipments, acks }) = reading.outcome else {
        panic!("{:?}", reading.outcome)
    };
    assert_eq!(shipments.len(), 1);
    assert_eq!(acks[0].sets[1], ReceivedSet { set: 2, rejected: Some("AK5 R 5".into()) });
    assert_eq!(reading.ack.map(|a| a.groups.len()), Some(1));
    // An 846 has no place among shipments, nor a 945 among stock.
    let reading = read(&s, &file(EXAMPLE_846), Inbox::Shipments);
    assert!(reading.outcome.is_err());
    let reading = read(&s, &file(EXAMPLE_945), Inbox::Stock);
    let Err(problems) = reading.outcome else { panic!("read") };
    assert_eq!(lines(&problems), vec!["segment 2 (GS): GS01 is 'SW'; inventory_dir takes groups IB (846)"]);
}

#[test]
fn an_846_skips_loops_without_sku_or_quantity_and_fails_on_fractions_and_other_units() {
    let s = settings();
    let stock = |body: &str| {
        let count = body.matches('~').count() + 2;
        let head = EXAMPLE_846.lines().take(3).collect::<String>();
        let bytes = format!("{head}{body}SE*{count}*0001~GE*1*513~IEA*1*000000513~").into_bytes();
        match read(&s, &bytes, Inbox::Stock).outcome {
            Ok(Contents::Stock { levels, skipped }) => Ok((levels, skipped)),
            Ok(other) => panic!("{other:?}"),
            Err(problems) => Err(lines(&problems)),
        }
    };
    let (levels, skipped) = stock(
        "BIA*00*MM*INV1*20260308~LIN*1*UP*123~QTY*33*4~LIN*2*UP*1*SK*A~QTY*17*5~LIN*3*SK*B~QTY*33*-3*EA~LIN*4*SK*C~QTY*33*1~QTY*33*9~",
    )
    .expect("levels");
    assert_eq!(
        levels,
        vec![StockRow { sku: "B".into(), quantity: 0 }, StockRow { sku: "C".into(), quantity: 1 }]
    );
    assert_eq!(
        skipped,
        vec![
            Skipped { sku: None, message: "LIN 1 (segment 5) has no SK or VN product id".into() },
            Skipped { sku: Some("A".into()), message: "LIN 2 (segment 7) of A has no QTY 33".into() },
        ]
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*20260308~LIN*1*SK*A~QTY*33*1.5~"),
        Err(vec!["segment 6 (QTY), set 0001: QTY02 1.5 is not a whole number of units".into()])
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*20260308~LIN*1*SK*A~QTY*33*2*CA~"),
        Err(vec!["segment 6 (QTY), set 0001: unit CA: orderbridge counts eaches".into()])
    );
    assert_eq!(
        stock("BIA*00*MM*INV1*2026~LIN*1*SK*A~QTY*33*two~"),
        Err(vec![
            "segment 4 (BIA), set 0001: BIA04 '2026' is not a date (CCYYMMDD)".into(),
            "segment 6 (QTY), set 0001: QTY02 'two' is not a number".into()
        ])
    );
    assert_eq!(
        stock("LIN*1*SK*A~QTY*33*2~"),
        Err(vec!["segment 6 (SE), set 0001: the set has no BIA".into()])
    );
}

#[test]
fn huge_and_endless_input_is_a_problem_never_a_panic() {
    let s = settings();
    // One segment of 10 MB inside a set.
    let big = shipment_file(&format!("W06*F*{}~LX*1~MAN*CP*T~", "9".repeat(10 << 20)));
    let Err(problems) = shipments_of(&s, &big) else { panic!("read") };
    assert!(problems[0].starts_with("segment 4 (W06), set 0001: unknown order"), "{}", &problems[0][..80]);
    assert!(problems[0].len() < 400);
    // 64 MiB of one segment after the ISA, never ended.
    let mut endless = file(EXAMPLE_945)[..106].to_vec();
    endless.extend(std::iter::repeat_n(b'A', 64 << 20));
    let Err(problems) = shipments_of(&s, &endless) else { panic!("read") };
    assert_eq!(problems, vec!["segment 2 (AAAAAAAA): the file ends inside this segment (no terminator)"]);
    // 64 MiB of one element separator-free ISA.
    let mut no_isa_end = b"ISA*".to_vec();
    no_isa_end.extend(std::iter::repeat_n(b'0', 64 << 20));
    assert_eq!(shipments_of(&s, &no_isa_end), Err(vec!["the file ends inside its ISA segment".into()]));
}

mod hostile {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let _ = read(&settings(), &bytes, Inbox::Shipments);
            let _ = read(&settings(), &bytes, Inbox::Stock);
        }

        #[test]
        fn a_damaged_945_never_panics(at in 0usize..700, cut in 0usize..40, junk in proptest::collection::vec(any::<u8>(), 0..8)) {
            let mut bytes = file(EXAMPLE_945);
            let at = at.min(bytes.len());
            let end = (at + cut).min(bytes.len());
            bytes.splice(at..end, junk);
            let reading = read(&settings(), &bytes, Inbox::Shipments);
            if let Some(ack) = reading.ack {
                let _ = write_997(&settings(), 1, 0, &ack);
            }
        }

        #[test]
        fn a_damaged_846_or_997_never_panics(at in 0usize..500, junk in proptest::collection::vec(any::<u8>(), 1..6)) {
            for (annex, inbox) in [(EXAMPLE_846, Inbox::Stock), (EXAMPLE_997, Inbox::Shipments)] {
                let mut bytes = file(annex);
                let at = at.min(bytes.len());
                bytes.splice(at..at, junk.iter().copied());
                let _ = read(&settings(), &bytes, inbox);
            }
        }
    }
}

/// A second opinion: the independent X12 004010 parser of the `x12-types` crate reads what we
/// write, and the annex's 945, as we do. It takes only `*` and `~` with a line feed or none.
mod second_opinion {
    use x12_types::util::Parser;
    use x12_types::v004010::{_940, _945, _997, Transmission};

    use super::*;

    #[test]
    fn our_940_parses_with_its_order_and_items() {
        let (bytes, _) =
            write_940s(&settings(), 7, ms("2026-03-08T14:30:00Z"), &[order_1234(), order_1234()]);
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_940>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let group = &parsed.functional_group[0];
        assert_eq!(group.segments.len(), 2);
        let set = &group.segments[0];
        assert_eq!(set._020._02.to_string(), "1234");
        let items: Vec<_> = set
            ._0300_loop
            .iter()
            .flat_map(|lx| &lx._0310_loop)
            .map(|w| (w._020._01.to_string(), w._020._05.as_ref().map(ToString::to_string)))
            .collect();
        assert_eq!(
            items,
            vec![("2".to_string(), Some("MUG-CREME".to_string())), ("3".into(), Some("TWL-BGE".into()))]
        );
        assert_eq!(set._0500._01.to_string(), "18");
        assert_eq!(parsed.iea._02.to_string(), "000000007");
    }

    #[test]
    fn our_997s_parse_and_the_annexs_945_reads_the_same() {
        let s = settings();
        let reading = read(&s, &file(EXAMPLE_945), Inbox::Shipments);
        let bytes = write_997(&s, 8, 0, &reading.ack.expect("a 997"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_997>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let set = &parsed.functional_group[0].segments[0];
        assert_eq!((set.ak1._01.to_string(), set.ak1._02.to_string()), ("SW".to_string(), "512".to_string()));
        assert_eq!(set.loop_ak2[0].ak5._01.to_string(), "A");

        // A rejecting 997 with AK3 and AK4, a line feed after each segment.
        let damaged = EXAMPLE_945.replace("W12*CC*3*3**EA", "W12*CC*3*x**EA");
        let reading = read(&s, &file(&damaged), Inbox::Shipments);
        let newline = settings_of(json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "newline": true}));
        let bytes = write_997(&newline, 9, 0, &reading.ack.expect("a 997"));
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let parsed = Transmission::<_997>::parse(&text);
        let Ok((rest, parsed)) = parsed else { panic!("{parsed:?}") };
        assert!(rest.is_empty(), "{rest}");
        let set = &parsed.functional_group[0].segments[0];
        let ak2 = &set.loop_ak2[0];
        assert_eq!(ak2.ak5._01.to_string(), "R");
        assert_eq!(ak2.loop_ak3[0].ak3._01.to_string(), "W12");
        assert_eq!(set.ak9._01.to_string(), "R");

        let annex = String::from_utf8_lossy(&file(EXAMPLE_945)).into_owned();
        let parsed = Transmission::<_945>::parse(&annex);
        let Ok((_, parsed)) = parsed else { panic!("{parsed:?}") };
        let set = &parsed.functional_group[0].segments[0];
        let Ok(Contents::Shipments { shipments, .. }) = read(&s, annex.as_bytes(), Inbox::Shipments).outcome
        else {
            panic!("read")
        };
        assert_eq!(set.w06._02.to_string(), shipments[0].order_id.to_string());
        let lx = &set.loop_lx[0];
        assert_eq!(
            lx.man[0]._02.as_ref().map(ToString::to_string),
            Some(shipments[0].tracking_number.clone())
        );
        let units: Vec<_> = lx
            .loop_w12
            .iter()
            .map(|w| w.w12._03.as_ref().map(ToString::to_string).unwrap_or_default())
            .collect();
        let ours: Vec<_> = shipments[0].items.iter().flatten().map(|(_, n)| n.to_string()).collect();
        assert_eq!(units, ours);
    }
}

#[test]
fn no_997_when_send_997_is_off_and_envelope_nesting_is_checked() {
    let quiet = settings_of(json!({"sender_id": "ACMEOB", "receiver_id": "WHSE3PL", "send_997": false}));
    let reading = read(&quiet, &file(EXAMPLE_945), Inbox::Shipments);
    assert!(reading.outcome.is_ok() && reading.ack.is_none());
    let s = settings();
    let cases = [
        (
            EXAMPLE_945.replace("IEA*1*", "IEA*2*"),
            "segment 15 (IEA): IEA01 is '2'; the interchange has 1 group",
        ),
        (EXAMPLE_945.replace("GE*1*512~\n", ""), "segment 14 (IEA): the group of segment 2 has no GE"),
        (
            EXAMPLE_945.replace("GS*SW*WHSE3PL*ACMEOB*20260308*1430*512*X*004010~\n", ""),
            "segment 2 (ST): ST outside a functional group (no GS before it)",
        ),
        (format!("{EXAMPLE_945}\nST*945*0002~"), "segment 16 (ST): the file goes on after its IEA"),
    ];
    for (annex, first) in cases {
        let reading = read(&s, &file(&annex), Inbox::Shipments);
        let Err(problems) = reading.outcome else { panic!("{first}: read") };
        assert_eq!(lines(&problems).first().map(String::as_str), Some(first));
        assert!(reading.ack.is_none(), "{first}: no 997");
    }
}
