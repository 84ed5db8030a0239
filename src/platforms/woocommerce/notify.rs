//! Telling a WooCommerce store of a shipment (annex §11, "Notify"). WooCommerce has no
//! shipment object: a tracking item of the Shipment Tracking extension when the store has
//! it, else an order note, and the order `completed` once every unit shipped. Each part
//! first looks whether the store already has it, so a lost answer, a crash or a second pass
//! never tells the customer twice.

use std::sync::atomic::{AtomicBool, Ordering};

use reqwest::Method;
use serde_json::{Value, json};

use super::Client;
use super::adapter::Tracking;
use super::api::Answer;
use crate::platforms::PlatformError;
use crate::platforms::retry::{self, Created};
use crate::platforms::store::{Notified, ShipmentNotice};

impl Client {
    pub(super) async fn notify(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        let order = &notice.external_order_id;
        if order.is_empty() || !order.bytes().all(|b| b.is_ascii_digit()) {
            return Err(PlatformError::Rejected {
                status: 0,
                message: format!("Order {order:?} is not a WooCommerce order id."),
            });
        }
        let wanted = self.api.shop.tracking;
        let known = *self.extension.lock().unwrap_or_else(|p| p.into_inner());
        // Once the route answered `rest_no_route`, the rest of the pass does not ask again.
        let told = match (wanted, known) {
            (Tracking::Off, _) | (Tracking::Auto, Some(false)) => self.note(notice).await?,
            (Tracking::Required, Some(false)) => return Err(self.no_extension()),
            _ => match self.tracking_item(notice).await? {
                Some(told) => told,
                None if wanted == Tracking::Required => return Err(self.no_extension()),
                None => self.note(notice).await?,
            },
        };
        if self.api.shop.complete_orders && notice.completes_order {
            self.complete(order).await?;
        }
        Ok(told)
    }

    /// The refusal of a shipment when the adapter requires the extension the store lacks.
    fn no_extension(&self) -> PlatformError {
        PlatformError::Rejected {
            status: 404,
            message: format!(
                "WooCommerce at {} cannot take tracking items: the Shipment Tracking extension is not active (the adapter's shipment_tracking is true).",
                self.api.site()
            ),
        }
    }

    /// A tracking item through the extension; `None` when the store does not have it.
    async fn tracking_item(&self, notice: &ShipmentNotice) -> Result<Option<Notified>, PlatformError> {
        let route = format!("wc-shipment-tracking/v3/orders/{}/shipment-trackings", notice.external_order_id);
        let absent = AtomicBool::new(false);
        let wanted = notice.tracking_number.trim();
        let look = || async {
            let reply = self.api.once(&Method::GET, &route, &[], None).await?;
            if let Answer::NotFound { code, .. } = &reply.answer
                && code == "rest_no_route"
            {
                absent.store(true, Ordering::SeqCst);
                return Err(self.api.no_route(&route));
            }
            let items = reply.json(&self.api, &route)?;
            let there = items.as_array().is_some_and(|items| {
                items.iter().any(|item| {
                    item.get("tracking_number")
                        .and_then(Value::as_str)
                        .is_some_and(|n| n.trim().eq_ignore_ascii_case(wanted))
                })
            });
            Ok(there.then_some(()))
        };
        let body = self.tracking_body(notice).await;
        let post = || async {
            self.api.once(&Method::POST, &route, &[], Some(&body)).await?.json(&self.api, &route).map(|_| ())
        };
        match retry::create(&self.policy, self.account(), look, post).await {
            Ok(created) => {
                *self.extension.lock().unwrap_or_else(|p| p.into_inner()) = Some(true);
                Ok(Some(told(created)))
            }
            Err(_) if absent.load(Ordering::SeqCst) => {
                *self.extension.lock().unwrap_or_else(|p| p.into_inner()) = Some(false);
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// The tracking item: the store's own spelling of a provider it lists, else the carrier
    /// as a custom provider.
    async fn tracking_body(&self, notice: &ShipmentNotice) -> Value {
        let carrier = notice.carrier.as_deref().map(str::trim).filter(|c| !c.is_empty());
        let known = match carrier {
            Some(carrier) => self.providers().await.iter().find(|p| p.eq_ignore_ascii_case(carrier)).cloned(),
            None => None,
        };
        let mut body = json!({"tracking_number": notice.tracking_number});
        match known {
            Some(provider) => body["tracking_provider"] = Value::String(provider),
            None => body["custom_tracking_provider"] = Value::String(carrier.unwrap_or("Other").to_string()),
        }
        if let Some(day) =
            notice.shipped_at.and_then(|at| super::orders::wc_date(at).get(..10).map(str::to_string))
        {
            body["date_shipped"] = Value::String(day);
        }
        body
    }

    /// The extension's provider names (region → name → link), read once per pass; none when
    /// that read fails.
    async fn providers(&self) -> &[String] {
        self.providers
            .get_or_init(|| async {
                let route = "wc-shipment-tracking/v3/shipment-trackings/providers";
                let reply = self.call(Method::GET, route, &[], None).await;
                let Ok(Answer::Json(json)) = reply.map(|r| r.answer) else { return Vec::new() };
                let Ok(Value::Object(regions)) = json.value() else { return Vec::new() };
                regions
                    .values()
                    .filter_map(Value::as_object)
                    .flat_map(|names| names.keys().cloned())
                    .collect()
            })
            .await
    }

    /// An order note for the customer, unless one already names the tracking number.
    async fn note(&self, notice: &ShipmentNotice) -> Result<Notified, PlatformError> {
        let route = format!("wc/v3/orders/{}/notes", notice.external_order_id);
        let marker = format!("Tracking number: {}", notice.tracking_number.trim());
        let look = || async {
            let notes = self.api.once(&Method::GET, &route, &[], None).await?.json(&self.api, &route)?;
            let there = notes.as_array().is_some_and(|notes| {
                notes
                    .iter()
                    .filter_map(|n| n.get("note").and_then(Value::as_str))
                    .any(|text| names(text, &marker))
            });
            Ok(there.then_some(()))
        };
        let body = json!({"note": note_text(notice), "customer_note": self.api.shop.notify_customer});
        let post = || async {
            self.api.once(&Method::POST, &route, &[], Some(&body)).await?.json(&self.api, &route).map(|_| ())
        };
        Ok(told(retry::create(&self.policy, self.account(), look, post).await?))
    }

    /// Completes the order, if its status is still one the adapter imports: any other was
    /// set by the merchant (or by a `PUT` whose answer was lost) and is left alone. The status
    /// is read before every `PUT`, so a `PUT` is never sent again blindly.
    async fn complete(&self, order: &str) -> Result<(), PlatformError> {
        let route = format!("wc/v3/orders/{order}");
        let fields = [("_fields", "id,status".to_string())];
        let look = || async {
            let now = self.api.once(&Method::GET, &route, &fields, None).await?.json(&self.api, &route)?;
            let status = now.get("status").and_then(Value::as_str).unwrap_or_default();
            Ok((!self.api.shop.imports(status)).then_some(()))
        };
        let body = json!({"status": "completed"});
        let put = || async {
            self.api.once(&Method::PUT, &route, &[], Some(&body)).await?.json(&self.api, &route).map(|_| ())
        };
        retry::create(&self.policy, self.account(), look, put).await.map(drop)
    }
}

fn told(created: Created<()>) -> Notified {
    match created {
        Created::AlreadyThere(()) => Notified::AlreadyThere,
        Created::Now(()) => Notified::Posted,
    }
}

/// Whether a note (as WordPress shows it: HTML, character references) names `marker`, with
/// no more of a longer number after it.
fn names(note: &str, marker: &str) -> bool {
    let text = html_escape::decode_html_entities(note);
    text.match_indices(marker).any(|(at, _)| {
        text[at + marker.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric() && c != '-' && c != '_')
    })
}

/// The customer's note: carrier, service, tracking number and the items shipped.
pub fn note_text(notice: &ShipmentNotice) -> String {
    let mut text = String::from("Your order has shipped");
    if let Some(carrier) = notice.carrier.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        text.push_str(&format!(" with {carrier}"));
    }
    if let Some(level) = notice.shipping_method.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
        text.push_str(&format!(" ({level})"));
    }
    text.push_str(&format!(". Tracking number: {}", notice.tracking_number.trim()));
    if !notice.items.is_empty() {
        let items: Vec<String> = notice
            .items
            .iter()
            .map(|i| format!("{} x {}", i.quantity, i.sku.as_deref().unwrap_or("(no SKU)")))
            .collect();
        text.push_str(&format!("\nItems: {}", items.join(", ")));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::store::NoticeItem;

    fn notice() -> ShipmentNotice {
        let items = vec![
            NoticeItem { line: Some("315".into()), sku: Some("WS-1".into()), quantity: 2 },
            NoticeItem { line: Some("316".into()), sku: None, quantity: 1 },
        ];
        ShipmentNotice {
            carrier: Some("UPS".into()),
            shipping_method: Some("Ground".into()),
            completes_order: true,
            ..ShipmentNotice::new("727", "1Z999AA10123456784", items)
        }
    }

    #[test]
    fn the_note_reads_as_the_annex_writes_it() {
        assert_eq!(
            note_text(&notice()),
            "Your order has shipped with UPS (Ground). Tracking number: 1Z999AA10123456784\nItems: 2 x WS-1, 1 x (no SKU)"
        );
        let bare = ShipmentNotice { carrier: None, shipping_method: None, items: vec![], ..notice() };
        assert_eq!(note_text(&bare), "Your order has shipped. Tracking number: 1Z999AA10123456784");
    }

    #[test]
    fn a_note_names_a_tracking_number_only_whole() {
        let marker = "Tracking number: 123";
        assert!(names("<p>Your order has shipped. Tracking number: 123</p>\n", marker));
        assert!(names("Tracking number: 123\nItems: 1 x A", marker));
        assert!(!names("Tracking number: 1234", marker));
        assert!(!names("Tracking number: 12", marker));
        assert!(names("Shipped&#8230; Tracking number: 123.", marker));
    }
}
