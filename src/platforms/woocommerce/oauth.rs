//! OAuth 1.0a "one-legged" signatures as WooCommerce checks them over plain http (annex §11,
//! "Authentication"): every parameter in the query, HMAC-SHA256 keyed with the consumer
//! secret and `&`, no token and no `oauth_version`. The HMAC and the hash are RustCrypto's;
//! only the base string is built here.

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use rand::Rng as _;
use sha2::Sha256;

/// RFC 3986 percent-encoding: everything but `A-Z a-z 0-9 - . _ ~`.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// `text` percent-encoded as RFC 3986 (and OAuth) want it.
pub fn encode(text: &str) -> String {
    utf8_percent_encode(text, UNRESERVED).to_string()
}

/// A query string of `params`, each name and value RFC 3986-encoded: what is signed is
/// exactly what PHP decodes.
pub fn query(params: &[(String, String)]) -> String {
    params.iter().map(|(k, v)| format!("{}={}", encode(k), encode(v))).collect::<Vec<_>>().join("&")
}

/// The signature of a request: `method`, the URL without its query (`url`: scheme, host,
/// port and path as requested), and every query parameter but the signature itself.
pub fn signature(method: &str, url: &str, params: &[(String, String)], secret: &str) -> String {
    let mut encoded: Vec<(String, String)> = params.iter().map(|(k, v)| (encode(k), encode(v))).collect();
    encoded.sort();
    let joined = encoded.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&");
    let base = format!("{}&{}&{}", method.to_ascii_uppercase(), encode(url), encode(&joined));
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(format!("{secret}&").as_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(base.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// Adds the `oauth_*` parameters and the signature to `params` (the route's own).
pub fn sign(
    method: &str,
    url: &str,
    params: &mut Vec<(String, String)>,
    key: &str,
    secret: &str,
    now_secs: i64,
) {
    sign_with(method, url, params, key, secret, now_secs, &nonce());
}

fn sign_with(
    method: &str,
    url: &str,
    params: &mut Vec<(String, String)>,
    key: &str,
    secret: &str,
    now_secs: i64,
    nonce: &str,
) {
    params.push(("oauth_consumer_key".into(), key.into()));
    params.push(("oauth_nonce".into(), nonce.into()));
    params.push(("oauth_signature_method".into(), "HMAC-SHA256".into()));
    params.push(("oauth_timestamp".into(), now_secs.to_string()));
    let signature = signature(method, url, params, secret);
    params.push(("oauth_signature".into(), signature));
}

/// 32 random letters and digits, new for every request (WooCommerce refuses a nonce it saw
/// in the last 15 minutes).
fn nonce() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..32).map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_annexes_worked_example_signs_as_python_computed_it() {
        let mut params =
            vec![("per_page".to_string(), "1".to_string()), ("_fields".to_string(), "id".to_string())];
        sign_with(
            "GET",
            "http://127.0.0.1:8080/wp-json/wc/v3/orders",
            &mut params,
            "ck_test",
            "cs_test",
            1_700_000_000,
            "0123456789abcdef0123456789abcdef",
        );
        let (name, value) = params.last().unwrap();
        assert_eq!(name, "oauth_signature");
        assert_eq!(value, "j6gmk22dGtthp/lbHUJWzQkiW6Ii+/BTvNymvnTD/1Y=");
        assert!(
            query(&params)
                .ends_with("oauth_signature=j6gmk22dGtthp%2FlbHUJWzQkiW6Ii%2B%2FBTvNymvnTD%2F1Y%3D")
        );
    }

    #[test]
    fn values_are_encoded_as_rfc_3986_says() {
        assert_eq!(encode("2024-01-02T03:04:05"), "2024-01-02T03%3A04%3A05");
        assert_eq!(encode("a b+c~d_e.f-g/é"), "a%20b%2Bc~d_e.f-g%2F%C3%A9");
        assert_eq!(encode("processing,on-hold"), "processing%2Con-hold");
    }

    #[test]
    fn nonces_are_new_each_time_and_alphanumeric() {
        let (a, b) = (nonce(), nonce());
        assert_ne!(a, b);
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_alphanumeric()));
    }
}
