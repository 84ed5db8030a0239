//! The 846 Inventory Inquiry/Advice read (files-x12.md §7.2): per LIN loop a SKU and its
//! available quantity, summed per SKU over the file (one loop per location).

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

use super::X12Settings;
use super::problems::SetCheck;
use super::segments::{self, Read, shown as text};
use crate::platforms::warehouse::StockRow;

/// A LIN loop not used, for the run's `problems` (step `stock`): kind `sku` with the SKU as
/// ref when it has one, else kind `file` with the file's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub sku: Option<String>,
    pub message: String,
}

/// The levels and skipped loops of a file so far.
#[derive(Debug, Default)]
pub(super) struct Stock {
    levels: BTreeMap<String, i64>,
    skipped: Vec<Skipped>,
}

impl Stock {
    pub fn finish(self) -> (Vec<StockRow>, Vec<Skipped>) {
        let rows = self.levels.into_iter().map(|(sku, quantity)| StockRow { sku, quantity }).collect();
        (rows, self.skipped)
    }
}

/// The open LIN loop.
#[derive(Debug)]
struct Lin {
    n: usize,
    name: String,
    sku: Option<String>,
    /// The first QTY of each accepted code: its quantity and unit, its segment number.
    quantities: Vec<(String, Decimal, Option<String>, usize)>,
}

/// An 846 set being read.
#[derive(Debug, Default)]
pub(super) struct Set846 {
    bia: bool,
    lin: Option<Lin>,
    /// The loops read, waiting for the set to end whole.
    loops: Vec<Lin>,
}

impl Set846 {
    pub fn segment(&mut self, settings: &X12Settings, seg: &Read<'_>, pos: usize, check: &mut SetCheck<'_>) {
        match seg.id_bytes() {
            b"BIA" => {
                self.bia = true;
                check.required(seg, pos, &[1, 2, 3, 4]);
                if let Some(date) = seg.el(4)
                    && segments::date(date).is_none()
                {
                    check.element(seg, pos, 4, 8, format!("BIA04 '{}' is not a date (CCYYMMDD)", text(date)));
                }
            }
            b"LIN" => {
                self.loops.extend(self.lin.take());
                let mut pairs = seg.elements().skip(1);
                let mut sku = None;
                while let (Some(qualifier), id) = (pairs.next(), pairs.next()) {
                    let qualifier = String::from_utf8_lossy(qualifier);
                    if settings.product_qualifiers.iter().any(|q| q == qualifier.trim()) {
                        sku = id
                            .map(|id| String::from_utf8_lossy(id).trim().to_string())
                            .filter(|id| !id.is_empty());
                        break;
                    }
                }
                let name = seg.trimmed(1).unwrap_or_else(|| (self.loops.len() + 1).to_string());
                self.lin = Some(Lin { n: seg.n, name, sku, quantities: Vec::new() });
            }
            b"QTY" => {
                check.required(seg, pos, &[1, 2]);
                let Some(quantity) = seg.el(2) else { return };
                let Some(quantity) = segments::number(quantity) else {
                    check.element(seg, pos, 2, 6, format!("QTY02 '{}' is not a number", text(quantity)));
                    return;
                };
                let code = seg.trimmed(1).unwrap_or_default();
                if let Some(lin) = self.lin.as_mut()
                    && settings.stock_quantity_qualifiers.contains(&code)
                    && !lin.quantities.iter().any(|(c, ..)| *c == code)
                {
                    lin.quantities.push((code, quantity, seg.trimmed(3), seg.n));
                }
            }
            _ => {}
        }
    }

    /// The set's SE: its loops into `stock` when the set is whole.
    pub fn end(mut self, settings: &X12Settings, se: &Read<'_>, check: &mut SetCheck<'_>, stock: &mut Stock) {
        if !self.bia {
            check.missing("BIA", 2, se, "the set has no BIA".to_string());
        }
        if check.has_errors() {
            return;
        }
        self.loops.extend(self.lin.take());
        for lin in self.loops {
            let Some(sku) = lin.sku else {
                let qualifiers = settings.product_qualifiers.join(" or ");
                let message = format!("LIN {} (segment {}) has no {qualifiers} product id", lin.name, lin.n);
                stock.skipped.push(Skipped { sku: None, message });
                continue;
            };
            let chosen = settings
                .stock_quantity_qualifiers
                .iter()
                .find_map(|code| lin.quantities.iter().find(|(c, ..)| c == code));
            let Some((_, quantity, unit, n)) = chosen else {
                let codes = settings.stock_quantity_qualifiers.join(" or ");
                let message = format!("LIN {} (segment {}) of {sku} has no QTY {codes}", lin.name, lin.n);
                stock.skipped.push(Skipped { sku: Some(sku), message });
                continue;
            };
            if let Some(unit) = unit.as_ref().filter(|u| *u != "EA") {
                check.business_at(*n, "QTY", format!("unit {unit}: orderbridge counts eaches"));
                continue;
            }
            if !quantity.fract().is_zero() {
                check.business_at(*n, "QTY", format!("QTY02 {quantity} is not a whole number of units"));
                continue;
            }
            let units = if quantity.is_sign_negative() { 0 } else { quantity.to_i64().unwrap_or(i64::MAX) };
            let held = stock.levels.entry(sku).or_default();
            *held = held.saturating_add(units);
        }
    }
}
