//! The text rule of every value written (files-x12.md §4.4): what a warehouse's translator
//! takes is ASCII without our separators, so accents are dropped rather than mangled and a
//! separator inside a value can never split it.

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::segments::Separators;

/// `value` as it is written: NFKD, combining marks removed, other non-ASCII as `?`, control
/// characters and separators as spaces, leading and trailing spaces removed. Empty counts as
/// absent (`None`).
pub fn clean(value: &str, separators: &Separators) -> Option<String> {
    let mut out = String::with_capacity(value.len());
    for c in value.nfkd() {
        if is_combining_mark(c) {
            continue;
        }
        let c = if !c.is_ascii() {
            '?'
        } else if c.is_ascii_control() || separators.contains(c as u8) {
            ' '
        } else {
            c
        };
        out.push(c);
    }
    let trimmed = out.trim_matches(' ');
    (!trimmed.is_empty()).then(|| trimmed.to_string())
}

/// An optional value after [`clean`].
pub fn clean_opt(value: Option<&str>, separators: &Separators) -> Option<String> {
    value.and_then(|v| clean(v, separators))
}

/// The first `max` characters of an ASCII text (after [`clean`]), trailing spaces removed.
pub fn cut(value: &str, max: usize) -> &str {
    value.get(..max).unwrap_or(value).trim_end_matches(' ')
}
