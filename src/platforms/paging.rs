//! The two ways a store's list is paged by number (CONTRACT §11 step 1), for the stores that
//! page so: by key, oldest change first (BigCommerce, WooCommerce), where each page commits
//! the cursor it reached and the next asks again from it; and in no documented order
//! (Sellbrite), where the cursor moves once the whole list was read. Where the walk stands
//! is the page's continuation ([`Page::next`]), as text the engine hands back.

use serde::{Deserialize, Serialize};

use super::PlatformError;
use super::store::{ListedOrder, Page};

/// Where a walk paged by number stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    /// The time asked from.
    pub since: Option<i64>,
    /// The page (from 1).
    pub page: u32,
    /// The latest change read so far, by a walk in no order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reached: Option<i64>,
}

impl Place {
    /// The first page of the orders since `since`, or the place `at` names.
    pub fn of(since: Option<i64>, at: Option<&str>) -> Result<Place, PlatformError> {
        match at {
            None => Ok(Place { since, page: 1, reached: None }),
            Some(text) => serde_json::from_str(text).map_err(|_| {
                PlatformError::BadData(format!("A page of the order list cannot be read from {text:?}."))
            }),
        }
    }

    /// The page read here of a list walked by key, oldest change first: it commits the latest
    /// change on it, and the next page asks again from that time (page 1), so an order
    /// modified mid-pull cannot shift an unread one onto a page already read — unless every
    /// order on it carries the time asked from, which asking again would only repeat. A page
    /// shorter than `page_size` is the last.
    pub fn by_key(self, orders: Vec<ListedOrder>, page_size: usize) -> Page {
        let latest = orders.iter().map(|o| o.cursor_ms).max();
        let next = latest.filter(|_| orders.len() >= page_size).map(|latest| {
            let all_at_latest = orders.iter().all(|o| o.cursor_ms == latest);
            match (all_at_latest, self.since == Some(latest)) {
                (false, _) => Place { since: Some(latest), page: 1, reached: None },
                (true, true) => Place { page: self.page + 1, ..self },
                // The page asked from `latest` would be this one again.
                (true, false) => Place { since: Some(latest), page: 2, reached: None },
            }
        });
        Page { orders, next: next.map(Place::text), cursor: latest, ..Page::default() }
    }

    /// The page read here of a list in no documented order: the next page is the next by
    /// number, and the cursor moves at the last (shorter than `page_size`) to the latest
    /// change of the whole walk.
    pub fn by_number(self, orders: Vec<ListedOrder>, page_size: usize) -> Page {
        let reached = self.reached.max(orders.iter().map(|o| o.cursor_ms).max());
        if orders.len() < page_size {
            return Page { orders, next: None, cursor: reached, ..Page::default() };
        }
        let next = Place { page: self.page + 1, reached, ..self };
        Page { orders, next: Some(next.text()), cursor: None, ..Page::default() }
    }

    fn text(self) -> String {
        serde_json::to_string(&self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::store::{Disposition, Listed};
    use serde_json::Value;

    fn listed(times: &[i64]) -> Vec<ListedOrder> {
        times
            .iter()
            .enumerate()
            .map(|(i, &t)| ListedOrder {
                external_id: i.to_string(),
                cursor_ms: t,
                version: t,
                disposition: Disposition::Import,
                listed: Listed::Entry(Value::Null),
            })
            .collect()
    }

    fn next(page: &Page) -> (Option<i64>, u32) {
        let place = Place::of(None, page.next.as_deref()).unwrap();
        (place.since, place.page)
    }

    fn at(since: i64, page: u32) -> Place {
        Place { since: Some(since), page, reached: None }
    }

    #[test]
    fn a_page_walked_by_key_asks_again_from_the_latest_time_read_and_commits_it() {
        let page = at(100, 1).by_key(listed(&[100, 200, 300]), 3);
        assert_eq!((next(&page), page.cursor), ((Some(300), 1), Some(300)));
        let last = at(300, 1).by_key(listed(&[300, 400]), 3);
        assert_eq!((last.next, last.cursor), (None, Some(400)));
    }

    #[test]
    fn a_page_all_at_one_time_moves_on_by_number() {
        assert_eq!(next(&at(300, 1).by_key(listed(&[300, 300]), 2)), (Some(300), 2));
        assert_eq!(next(&at(300, 2).by_key(listed(&[300, 300]), 2)), (Some(300), 3));
        // All at a later time: asked from it, page 1 would be this page again.
        assert_eq!(next(&at(100, 1).by_key(listed(&[400, 400]), 2)), (Some(400), 2));
    }

    #[test]
    fn a_list_in_no_order_is_walked_by_number_and_moves_the_cursor_at_its_end() {
        let first = Place::of(Some(100), None).unwrap().by_number(listed(&[100, 900]), 2);
        assert_eq!((next(&first), first.cursor), ((Some(100), 2), None));
        let then = Place::of(Some(100), first.next.as_deref()).unwrap().by_number(listed(&[500]), 2);
        assert_eq!((then.next, then.cursor), (None, Some(900)));
        let empty = Place::of(None, None).unwrap().by_number(Vec::new(), 2);
        assert_eq!((empty.next, empty.cursor), (None, None));
    }

    #[test]
    fn a_continuation_that_is_not_a_place_is_bad_data() {
        assert!(matches!(Place::of(None, Some("page 2")), Err(PlatformError::BadData(_))));
    }
}
