//! The reference orderbridge gives an order at a warehouse (`{prefix}ob-{id}`: ShipBob's
//! `reference_id`, ShipStation's `external_shipment_id`) and its strict inverse, which tells
//! our orders from everyone else's. Each platform's adapter says which prefixes it takes.

/// The references of one adapter: `{prefix}ob-{order id}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct References {
    prefix: String,
}

impl References {
    pub fn with_prefix(prefix: impl Into<String>) -> References {
        References { prefix: prefix.into() }
    }

    /// An order's reference: made only from orderbridge's order id.
    pub fn of(&self, order_id: i64) -> String {
        format!("{}ob-{order_id}", self.prefix)
    }

    /// orderbridge's order id in a reference of ours, if it is one: the prefix exactly, then
    /// `ob-` and the id as [`of`](Self::of) writes it (no sign, no leading zero).
    pub fn order_of(&self, reference: &str) -> Option<i64> {
        let digits = reference.strip_prefix(&self.prefix)?.strip_prefix("ob-")?;
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.starts_with('0') {
            return None;
        }
        digits.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_are_made_and_read_with_the_prefix() {
        let references = References::with_prefix("eu.");
        assert_eq!(references.of(42), "eu.ob-42");
        assert_eq!(references.order_of("eu.ob-42"), Some(42));
        for other in ["ob-42", "eu.ob-", "eu.ob-4x", "eu.ob-042", "EU.ob-42", "eu.ob-99999999999999999999"] {
            assert_eq!(references.order_of(other), None, "{other}");
        }
        assert_eq!(References::default().of(7), "ob-7");
        assert_eq!(References::default().order_of("ob-7"), Some(7));
        assert_eq!(References::default().order_of("ob--7"), None);
    }
}
