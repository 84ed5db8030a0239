//! The raw query string of a listing, parsed by hand so that a repeated parameter (`sort`
//! above all) resolves to its last occurrence, which Rocket's typed query guards cannot say.

use std::collections::HashMap;
use std::convert::Infallible;

use rocket::http::RawStr;
use rocket::request::{FromRequest, Outcome, Request};

use crate::dates;
use crate::http::error::ApiError;

/// The longest value a query parameter may have, in characters once decoded. A filter's
/// text becomes part of the listing caches' keys and of a session's plan; no filter a
/// person types (an order number, a SKU, a name) comes near it.
pub const MAX_PARAMETER_CHARS: usize = 1024;

/// Query parameters, the last occurrence of each name winning.
#[derive(Debug, Clone, Default)]
pub struct Params(HashMap<String, String>);

impl Params {
    pub fn parse(raw: &str) -> Params {
        let mut map = HashMap::new();
        for pair in raw.split('&').filter(|p| !p.is_empty()) {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let name = RawStr::new(name).url_decode_lossy().into_owned();
            let value = RawStr::new(value).url_decode_lossy().into_owned();
            map.insert(name, value);
        }
        Params(map)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    /// 422 `validation_failed` naming every parameter whose value is longer than
    /// [`MAX_PARAMETER_CHARS`] (the value itself is not echoed).
    pub fn check_lengths(&self) -> Result<(), ApiError> {
        let mut long: Vec<&String> =
            self.0.iter().filter(|(_, v)| v.chars().count() > MAX_PARAMETER_CHARS).map(|(k, _)| k).collect();
        if long.is_empty() {
            return Ok(());
        }
        long.sort();
        let problem = format!("must be at most {MAX_PARAMETER_CHARS} characters");
        Err(ApiError::Validation(long.into_iter().map(|name| (name.clone(), problem.clone())).collect()))
    }

    /// A dateString parameter as milliseconds; unparseable is a 400 naming it.
    pub fn date(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.get(name)
            .map(|s| dates::parse_date_string(s).map_err(|e| ApiError::bad_parameter(name, e)))
            .transpose()
    }

    /// A positive integer parameter within `max`.
    pub fn positive(&self, name: &str, max: i64) -> Result<Option<i64>, ApiError> {
        let Some(text) = self.get(name) else { return Ok(None) };
        match text.trim().parse::<i64>() {
            Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
            _ if max == i64::MAX => Err(ApiError::bad_parameter(name, "must be an integer of at least 1")),
            _ => Err(ApiError::bad_parameter(name, format!("must be an integer from 1 to {max}"))),
        }
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Params {
    type Error = Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Infallible> {
        Outcome::Success(req.uri().query().map_or_else(Params::default, |q| Params::parse(q.as_str())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_occurrence_wins_and_values_are_decoded() {
        let p = Params::parse("sort=id&sort=-ordered_at&store_id=My+Store%21&flag&empty=");
        assert_eq!(p.get("sort"), Some("-ordered_at"));
        assert_eq!(p.get("store_id"), Some("My Store!"));
        assert_eq!(p.get("flag"), Some(""));
        assert_eq!(p.get("empty"), Some(""));
        assert_eq!(p.get("absent"), None);
    }

    #[test]
    fn positive_integers_are_checked() {
        let p = Params::parse("limit=1001&page=0&ok=5&text=abc");
        assert!(p.positive("limit", 1000).is_err());
        assert!(p.positive("page", i64::MAX).is_err());
        assert!(p.positive("text", 10).is_err());
        assert_eq!(p.positive("ok", 10).unwrap(), Some(5));
        assert_eq!(p.positive("none", 10).unwrap(), None);
    }
}
