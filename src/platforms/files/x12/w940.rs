//! The 940 of one order (files-x12.md §5): its segments between ST and SE, or why the order
//! cannot be written (§5.3). Nothing of an address is ever cut to fit; descriptions (item
//! names, notes) are.

use jiff::Timestamp;

use super::X12Settings;
use super::regions;
use super::segments::Segment;
use super::text::{clean_opt, cut};
use crate::platforms::warehouse::OutgoingOrder;

/// The largest order id W0502 takes: 10 digits.
const MAX_ORDER_ID: i64 = 9_999_999_999;

/// Whether `order` can be written as a 940 with `settings`; the error is the sentence the
/// order's `last_error` shows (§5.3).
pub fn check_order(settings: &X12Settings, order: &OutgoingOrder) -> Result<(), String> {
    segments(settings, order).map(|_| ())
}

/// An address element's value: required or not, and the lengths it takes.
struct Limit {
    field: &'static str,
    element: &'static str,
    min: usize,
    max: usize,
}

impl Limit {
    const fn new(field: &'static str, element: &'static str, min: usize, max: usize) -> Limit {
        Limit { field, element, min, max }
    }

    /// `value` when it fits; absent is fine only when `min` is 0.
    fn check(&self, value: Option<String>) -> Result<Option<String>, String> {
        let Limit { field, element, min, max } = self;
        match value {
            None if *min > 0 => Err(format!("{field} is missing; {element} is required")),
            None => Ok(None),
            Some(v) if v.len() > *max => {
                Err(format!("{field} is {} characters; {element} takes at most {max}", v.len()))
            }
            Some(v) if v.len() < *min => Err(format!(
                "{field} is {} character{}; {element} takes at least {min}",
                v.len(),
                if v.len() == 1 { "" } else { "s" }
            )),
            Some(v) => Ok(Some(v)),
        }
    }
}

/// The order's segments from W05 to W76, in the order of §5.1.
pub(super) fn segments(settings: &X12Settings, order: &OutgoingOrder) -> Result<Vec<Segment>, String> {
    let seps = &settings.separators;
    let clean = |value: &Option<String>| clean_opt(value.as_deref(), seps);
    let a = &order.ship_to;
    if !(1..=MAX_ORDER_ID).contains(&order.order_id) {
        return Err(format!("the order id {} is not 1 to 10 digits; W0502 takes it", order.order_id));
    }
    let name = match (clean(&a.first_name), clean(&a.last_name)) {
        (Some(first), Some(last)) => Some(format!("{first} {last}")),
        (first, last) => first.or(last),
    };
    let name = Limit::new("shipping_address name (first_name and last_name)", "N102", 1, 60).check(name)?;
    let street1 = Limit::new("shipping_address.street1", "N301", 1, 55).check(clean(&a.street1))?;
    let street2 = Limit::new("shipping_address.street2", "N302", 0, 55).check(clean(&a.street2))?;
    let city = Limit::new("shipping_address.city", "N401", 2, 30).check(clean(&a.city))?;
    let region = match clean(&a.region) {
        None => None,
        Some(region) => Some(regions::code(&region).ok_or_else(|| {
            format!(
                "shipping_address.region '{region}' is not a 2-letter code or a US or Canadian region name; N402 takes 2 characters"
            )
        })?),
    };
    let postal = Limit::new("shipping_address.postal_code", "N403", 3, 15).check(clean(&a.postal_code))?;
    let country = Limit::new("shipping_address.country", "N404", 2, 3).check(clean(&a.country))?;
    let telephone = Limit::new("shipping_address.telephone", "PER04", 0, 80).check(clean(&a.telephone))?;
    let email = Limit::new("customer_email", "PER06", 0, 80).check(clean(&order.customer_email))?;
    if order.items.is_empty() {
        return Err("the order has no items; a 940 takes at least one W01".to_string());
    }
    let mut items = Vec::with_capacity(order.items.len());
    for (i, item) in order.items.iter().enumerate() {
        let field = format!("order_items[{i}].sku");
        let sku = match clean(&item.sku) {
            None => return Err(format!("{field} is missing; W0105 is required")),
            Some(sku) if sku.len() > 48 => {
                return Err(format!("{field} is {} characters; W0105 takes at most 48", sku.len()));
            }
            Some(sku) => sku,
        };
        if item.quantity < 1 {
            return Err(format!(
                "order_items[{i}].quantity is {}; W0101 takes a whole number of at least 1",
                item.quantity
            ));
        }
        items.push((item, sku));
    }

    let mut out =
        vec![Segment::new("W05").el("N").el(format!("{}{}", settings.reference_prefix, order.order_id))];
    if let Some(depositor) = clean_opt(settings.depositor_name.as_deref(), seps) {
        let code = clean_opt(settings.depositor_code.as_deref(), seps);
        let n1 = Segment::new("N1").el("DE").el(depositor);
        out.push(match code {
            Some(code) => n1.el("ZZ").el(code),
            None => n1,
        });
    }
    out.extend(name.map(|name| Segment::new("N1").el("ST").el(name)));
    out.push(Segment::new("N3").opt(street1).opt(street2));
    out.push(Segment::new("N4").opt(city).opt(region).opt(postal).opt(country));
    if telephone.is_some() || email.is_some() {
        let mut per = Segment::new("PER").el("IC").skip(1);
        if let Some(telephone) = telephone {
            per = per.el("TE").el(telephone);
        }
        if let Some(email) = email {
            per = per.el("EM").el(email);
        }
        out.push(per);
    }
    if let Some(display) = clean(&order.external_display_id).filter(|d| d.len() <= 30) {
        out.push(Segment::new("N9").el("CO").el(display));
    }
    if let Some(ordered) = order.ordered_at.and_then(|ms| Timestamp::from_millisecond(ms).ok()) {
        let date = ordered.to_zoned_datetime(settings.time_zone.clone());
        if (1000..=9999).contains(&date.year()) {
            let ccyymmdd = format!("{:04}{:02}{:02}", date.year(), date.month(), date.day());
            out.push(Segment::new("G62").el("04").el(ccyymmdd));
        }
    }
    for (note, code) in [(&order.notes, "WHI"), (&order.gift_message, "GEN")] {
        if let Some(note) = clean(note) {
            out.extend(pieces(&note).map(|piece| Segment::new("NTE").el(code).el(piece)));
        }
    }
    out.push(w66(settings, order));
    for (n, (item, sku)) in items.iter().enumerate() {
        out.push(Segment::new("LX").el((n + 1).to_string()));
        let upc = clean(&item.upc).filter(|u| u.bytes().all(|b| b.is_ascii_digit()));
        let w01 = Segment::new("W01").el(item.quantity.to_string()).el("EA").skip(1);
        let w01 = w01.el(settings.product_qualifier.as_str()).el(sku.as_str());
        out.push(match upc {
            Some(upc) if upc.len() == 12 => w01.el("UP").el(upc),
            Some(upc) if upc.len() == 13 => w01.el("EN").el(upc),
            _ => w01,
        });
        if let Some(name) = clean(&item.name) {
            out.push(Segment::new("G69").el(cut(&name, 45)));
        }
    }
    let total = items.iter().fold(0i64, |sum, (item, _)| sum.saturating_add(item.quantity));
    out.push(Segment::new("W76").el(total.to_string()));
    Ok(out)
}

/// Up to five slices of 80 characters of a cleaned text, trailing spaces removed, empty
/// ones left out.
fn pieces(text: &str) -> impl Iterator<Item = &str> {
    let text = cut(text, 400);
    let bytes = text.as_bytes();
    // The text is ASCII after §4.4, so every 80-byte boundary is a character boundary.
    bytes
        .chunks(80)
        .filter_map(|chunk| std::str::from_utf8(chunk).ok())
        .map(|slice| slice.trim_end_matches(' '))
        .filter(|slice| !slice.is_empty())
}

/// W66: prepaid, private parcel, the routing (carrier and service level) and its SCAC.
fn w66(settings: &X12Settings, order: &OutgoingOrder) -> Segment {
    let seps = &settings.separators;
    let carrier = clean_opt(order.carrier.as_deref(), seps);
    let service = clean_opt(order.service_level.as_deref(), seps);
    let routing = match (&carrier, &service) {
        (Some(c), Some(s)) => Some(format!("{c} {s}")),
        (c, s) => c.clone().or_else(|| s.clone()),
    }
    .map(|r| cut(&r, 35).to_string())
    .filter(|r| !r.is_empty());
    let scac_of = |text: &Option<String>| {
        let text = text.as_deref()?;
        settings.scac.iter().find(|(key, _)| key.eq_ignore_ascii_case(text)).map(|(_, scac)| scac.clone())
    };
    let scac = scac_of(&routing).or_else(|| scac_of(&carrier));
    Segment::new("W66").el("PP").el("U").skip(2).opt(routing).skip(4).opt(scac)
}
