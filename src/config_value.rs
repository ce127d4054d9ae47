//! A JSON-like value for the codec configuration, independent of where it came from
//! (a JS object through src/js_value.rs, serde_json in tests). Parsing into this
//! first, then validating by hand, lets every error message name the exact field and
//! rule instead of serde's generic "invalid type" text.

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};
use std::fmt;

use crate::error::{append, owned, Int};

#[derive(Debug, Clone, PartialEq)]
pub enum ConfigValue {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<ConfigValue>),
    /// Members in their original order (duplicates are kept so they can be rejected).
    Object(Vec<(String, ConfigValue)>),
}

impl ConfigValue {
    /// A short description of the value for error messages, e.g. `"90"` (a string) or `90.5`.
    pub fn describe(&self) -> String {
        match self {
            ConfigValue::Null => owned("null"),
            ConfigValue::Bool(b) => owned(if *b { "true" } else { "false" }),
            ConfigValue::Number(n) => format_number(*n),
            ConfigValue::String(s) => format!("{} (a string)", quote(s)),
            ConfigValue::Array(items) => {
                let mut text = owned("[");
                for (i, item) in items.iter().take(8).enumerate() {
                    if i > 0 {
                        append(&mut text, ", ");
                    }
                    append(&mut text, &item.describe_compact());
                }
                append(&mut text, if items.len() > 8 { ", …]" } else { "]" });
                text
            }
            ConfigValue::Object(_) => owned("an object"),
        }
    }

    fn describe_compact(&self) -> String {
        match self {
            ConfigValue::String(s) => quote(s),
            other => other.describe(),
        }
    }
}

/// A string from the input as an error message shows it: in double quotes, cut after 40
/// characters, with quotes, backslashes and control characters escaped as JSON does
/// (`\u001B`), so that a hostile configuration can neither flood a log with megabytes
/// nor write terminal escape sequences or fake lines into it.
pub(crate) fn quote(s: &str) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut text = vec![b'"'];
    // bytes, not chars: every byte escaped is ASCII, so the UTF-8 of the rest is kept whole
    for &b in truncate(s, 40).as_bytes() {
        match b {
            b'"' | b'\\' => text.extend_from_slice(&[b'\\', b]),
            0..=0x1F | 0x7F => text.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]),
            _ => text.push(b),
        }
    }
    text.push(b'"');
    // SAFETY: `s`'s UTF-8 with some ASCII bytes replaced by ASCII (`String::from_utf8`
    // would link its validation, as `Int` notes).
    unsafe { String::from_utf8_unchecked(text) }
}

fn truncate(s: &str, max: usize) -> String {
    // the byte where character `max` starts, if the string is longer than that
    match s.char_indices().nth(max) {
        None => owned(s),
        Some((cut, _)) => format!("{}…", s.get(..cut).unwrap_or(s)),
    }
}

/// Formats a number for an error message: integers exactly, others to 15 significant
/// digits (17 where 15 would show a non-integer as an integer: `90.00000000000001`), in
/// scientific form outside 1e-4..1e15. So a value that is not an integer never looks like
/// one (`quality … got 90.0000001`, not `got 90`), and values with up to 15 significant
/// digits show as written. Written out rather than `{n}`, because core's float formatting
/// costs about 25 KB of wasm in the decode-only module.
fn format_number(n: f64) -> String {
    if n.is_nan() {
        return owned("NaN");
    }
    if n.is_infinite() {
        return owned(if n > 0.0 { "Infinity" } else { "-Infinity" });
    }
    let sign = if n < 0.0 { "-" } else { "" };
    if n.fract() == 0.0 && n.abs() < 1e15 {
        return format!("{sign}{}", Int(n.abs() as u64));
    }
    let a = n.abs();
    if (1e-4..1e15).contains(&a) {
        return format!("{sign}{}", significant_digits(a, a.fract() != 0.0));
    }
    let (mut mantissa, mut exponent) = (a, 0i32);
    while mantissa >= 10.0 {
        mantissa /= 10.0;
        exponent += 1;
    }
    while mantissa < 1.0 {
        mantissa *= 10.0;
        exponent -= 1;
    }
    let exponent_sign = if exponent < 0 { "-" } else { "" };
    format!(
        "{sign}{}e{exponent_sign}{}",
        significant_digits(mantissa, false),
        Int(exponent.unsigned_abs().into())
    )
}

/// `a` (0 ≤ a < 1e15) rounded to 15 significant digits, or to 17 if `fraction` (`a` is
/// not an integer) and 15 leave none after the point; without trailing zeros.
fn significant_digits(a: f64, fraction: bool) -> String {
    let mut integer_digits = 0;
    let mut bound = 1.0;
    while a >= bound {
        integer_digits += 1;
        bound *= 10.0;
    }
    let (text, whole) = decimals(a, 15usize.saturating_sub(integer_digits));
    if fraction && whole {
        return decimals(a, 17usize.saturating_sub(integer_digits)).0;
    }
    text
}

/// `a` (0 ≤ a·10^places < 10^17) rounded to `places` decimals, without trailing zeros, and
/// whether that left no decimal at all.
#[inline(never)]
fn decimals(a: f64, places: usize) -> (String, bool) {
    let unit = 10u64.pow(places.min(17) as u32);
    // (below 10^17 < 2^64: the cast cannot saturate)
    let scaled = (a * unit as f64).round() as u64;
    let (int, frac) = (scaled / unit, scaled % unit);
    // `{int}.{frac:0places}`: the digits of `int`, then those of unit + frac with the
    // leading 1 made the point
    let mut text = format!("{}{}", Int(int), Int(unit + frac)).into_bytes();
    if let Some(point) = text.len().checked_sub(1 + places) {
        text[point] = b'.';
    }
    // the zeros after the last significant decimal, then the point if no decimal is left
    while text.last() == Some(&b'0') {
        text.pop();
    }
    if text.last() == Some(&b'.') {
        text.pop();
    }
    // SAFETY: ASCII digits and a point. (`String::from_utf8` would link its validation.)
    (unsafe { String::from_utf8_unchecked(text) }, frac == 0)
}

/// Deeper nesting is rejected: the visitor recurses once per level, and inside wasm a
/// deep enough value would overflow the stack and trap.
pub const MAX_DEPTH: usize = 32;

impl<'de> Deserialize<'de> for ConfigValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ConfigValueVisitor(0))
    }
}

/// Deserializes one nested value at the given depth.
struct Nested(usize);

impl<'de> DeserializeSeed<'de> for Nested {
    type Value = ConfigValue;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<ConfigValue, D::Error> {
        if self.0 > MAX_DEPTH {
            return Err(D::Error::custom(format!(
                "the configuration is nested more than {} levels deep",
                Int::of(MAX_DEPTH)
            )));
        }
        deserializer.deserialize_any(ConfigValueVisitor(self.0))
    }
}

struct ConfigValueVisitor(usize);

impl<'de> Visitor<'de> for ConfigValueVisitor {
    type Value = ConfigValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E>(self) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Null)
    }
    fn visit_none<E>(self) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<ConfigValue, D::Error> {
        Nested(self.0).deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Number(v as f64))
    }
    fn visit_u64<E>(self, v: u64) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Number(v as f64))
    }
    fn visit_f64<E>(self, v: f64) -> Result<ConfigValue, E> {
        Ok(ConfigValue::Number(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<ConfigValue, E> {
        Ok(ConfigValue::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<ConfigValue, E> {
        Ok(ConfigValue::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ConfigValue, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Nested(self.0 + 1))? {
            items.push(item);
        }
        Ok(ConfigValue::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<ConfigValue, A::Error> {
        let mut members = Vec::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(Nested(self.0 + 1))?;
            members.push((key, value));
        }
        Ok(ConfigValue::Object(members))
    }
}

impl serde::Serialize for ConfigValue {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            ConfigValue::Null => serializer.serialize_unit(),
            ConfigValue::Bool(b) => serializer.serialize_bool(*b),
            ConfigValue::Number(n) if n.fract() == 0.0 && n.abs() < 9.0e15 => {
                serializer.serialize_i64(*n as i64)
            }
            ConfigValue::Number(n) => serializer.serialize_f64(*n),
            ConfigValue::String(s) => serializer.serialize_str(s),
            ConfigValue::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            ConfigValue::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (k, v) in members {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{format_number, quote, truncate};

    #[test]
    fn quoted_strings_are_cut_and_escaped() {
        assert_eq!(quote("rgb"), "\"rgb\"");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(
            quote("x\0\n\u{1b}[31m\u{7f}é"),
            "\"x\\u0000\\u000A\\u001B[31m\\u007Fé\""
        );
        let long = "y".repeat(1_000_000);
        assert_eq!(quote(&long), format!("\"{}…\"", "y".repeat(40)));
    }

    #[test]
    fn long_strings_are_cut_after_max_characters() {
        assert_eq!(truncate("", 3), "");
        assert_eq!(truncate("äbc", 3), "äbc");
        assert_eq!(truncate("äbcd", 3), "äbc…");
        assert_eq!(truncate("ab€😀e", 4), "ab€😀…");
        assert_eq!(truncate("ab€😀", 4), "ab€😀");
        assert_eq!(truncate("abc", 0), "…");
    }

    #[test]
    fn numbers_format_like_javascript_for_the_values_messages_show() {
        for (n, text) in [
            (90.0, "90"),
            (-3.0, "-3"),
            (90.5, "90.5"),
            (0.1, "0.1"),
            (-2.25, "-2.25"),
            (-0.0, "0"),
            (0.05, "0.05"),
            (0.000123, "0.000123"),
            (90.0000001, "90.0000001"),
            (99.99999999, "99.99999999"),
            (2.0000001, "2.0000001"),
            (12.0000001, "12.0000001"),
            (123456789.123, "123456789.123"),
            (1e14, "100000000000000"),
            (-1e15, "-1e15"),
            (1.0 / 3.0, "0.333333333333333"),
            (1e20, "1e20"),
            (1.5e-7, "1.5e-7"),
            (-2.5e300, "-2.5e300"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
            (9_007_199_254_740_993.0, "9.00719925474099e15"),
        ] {
            assert_eq!(format_number(n), text, "{n:?}");
        }
    }

    #[test]
    fn a_number_that_is_not_an_integer_never_shows_as_one() {
        // 17 digits where 15 would round to the integer (the last one inexact beyond 2^53)
        assert!(format_number(100.000_000_000_000_01).starts_with("100.0000000000000"));
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // values near the integers messages are about, down to the last bit
            let n = (state % 300) as f64 - 100.0
                + f64::from_bits(0x3CB0_0000_0000_0000 | (state >> 12 & 0xFFFF))
                    * ((state >> 40) % 3) as f64;
            let text = format_number(n);
            let back: f64 = text.parse().unwrap();
            assert_eq!(
                n.fract() == 0.0,
                !text.contains('.'),
                "{n:?} shows as {text}"
            );
            assert!(
                (back - n).abs() <= 1e-14 * n.abs().max(1.0),
                "{n:?} shows as {text}"
            );
        }
    }
}
