//! A JSON-like value for the codec configuration, independent of where it came from
//! (a JS object through src/js_value.rs, serde_json in tests). Parsing into this
//! first, then validating by hand, lets every error message name the exact field and
//! rule instead of serde's generic "invalid type" text.

use serde::de::{
    Deserialize, DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor,
};
use std::cmp::Ordering;
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

/// Formats a number for an error message as JavaScript's `String(n)` does
/// (ECMA-262 Number::toString): the shortest digits that read back as `n`, so a
/// non-integer never shows as an integer (`90.0000001`, not `90`), in JS's notation
/// (`1e+21`, `1.5e-7`). Written out rather than `{n}`, because core's float formatting
/// costs about 25 KB of wasm in the decode-only module.
fn format_number(n: f64) -> String {
    if n.is_nan() {
        return owned("NaN");
    }
    if n.is_infinite() {
        return owned(if n > 0.0 { "Infinity" } else { "-Infinity" });
    }
    let sign = if n < 0.0 { "-" } else { "" };
    let a = n.abs();
    // safe integers (and ±0) exactly: their shortest digits are their digits
    if a.fract() == 0.0 && a <= 9_007_199_254_740_991.0 {
        return format!("{sign}{}", Int(a as u64));
    }
    let (digits, point) = shortest_digits(a);
    let count = digits.len() as i32;
    let mut text = Vec::with_capacity(digits.len() + 8);
    if count <= point && point <= 21 {
        // an integer of up to 21 digits: the digits, then zeros
        text.extend_from_slice(&digits);
        text.resize(point as usize, b'0');
    } else if 0 < point && point <= 21 {
        let (int, frac) = digits.split_at(point as usize);
        text.extend_from_slice(int);
        text.push(b'.');
        text.extend_from_slice(frac);
    } else if -6 < point && point <= 0 {
        text.extend_from_slice(b"0.");
        text.resize(2 + (-point) as usize, b'0');
        text.extend_from_slice(&digits);
    } else {
        let (first, rest) = digits.split_at(1);
        text.extend_from_slice(first);
        if !rest.is_empty() {
            text.push(b'.');
            text.extend_from_slice(rest);
        }
        text.extend_from_slice(if point > 0 { b"e+" } else { b"e-" });
        text.extend_from_slice(
            Int(u64::from((point - 1).unsigned_abs()))
                .to_string()
                .as_bytes(),
        );
    }
    // SAFETY: ASCII digits, a point, `e`, a sign. (`String::from_utf8` would link its
    // validation, as `Int` notes.)
    format!("{sign}{}", unsafe { String::from_utf8_unchecked(text) })
}

/// The shortest decimal digits `d1 d2 … dk` (ASCII) that read back as `a` (finite,
/// positive), the closest to `a` of those, and the position `n` of the decimal point:
/// `a ≈ 0.d1 d2 … dk × 10^n`. Burger and Dybvig's free-format algorithm ("Printing
/// floating-point numbers quickly and accurately", 1996) in exact integer arithmetic: `r /
/// s` is the value, `m_plus / s` and `m_minus / s` the distances to the midpoints between
/// it and its neighbouring doubles, which bound the digits that still read back as `a`.
#[inline(never)]
fn shortest_digits(a: f64) -> (Vec<u8>, i32) {
    let bits = a.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as u32;
    let fraction = bits & ((1 << 52) - 1);
    // a = f × 2^(shift − 1075)
    let (f, shift) = if biased == 0 {
        (fraction, 1)
    } else {
        (fraction | (1 << 52), biased)
    };
    // the neighbour below is nearer when `a` is a power of two above the subnormals
    let uneven = u32::from(f == 1 << 52 && biased > 1);
    // r / s = a, m_plus / s and m_minus / s the half-gaps to the neighbours, all × 2^(1 + uneven)
    let mut r = Big::from(f);
    let mut s = Big::from(1);
    let mut m_plus = Big::from(1);
    let mut m_minus = Big::from(1);
    r.double(1 + uneven);
    m_plus.double(uneven);
    if shift >= 1075 {
        let e = shift - 1075;
        r.double(e);
        m_plus.double(e);
        m_minus.double(e);
        s.double(1 + uneven);
    } else {
        s.double(1075 - shift + 1 + uneven);
    }
    // Round-half-even reading: the midpoints themselves read back as `a` when `f` is even.
    let even = f % 2 == 0;
    // the point: the high bound below 10^point, at or above 10^(point - 1)
    let mut point = 0i32;
    while r.plus(&m_plus).reaches(&s, even) {
        s.times(10);
        point += 1;
    }
    loop {
        let mut high = r.plus(&m_plus);
        high.times(10);
        if high.reaches(&s, even) {
            break;
        }
        r.times(10);
        m_plus.times(10);
        m_minus.times(10);
        point -= 1;
    }
    let mut digits = Vec::with_capacity(17);
    // (17 digits always suffice; the bound only keeps the loop finite by construction)
    for _ in 0..20 {
        r.times(10);
        m_plus.times(10);
        m_minus.times(10);
        let mut digit = b'0';
        while r.compare(&s) != Ordering::Less {
            r.subtract(&s);
            digit += 1;
        }
        let low = m_minus.reaches(&r, even); // rounding down to `digit` reads back as `a`
        let high = r.plus(&m_plus).reaches(&s, even); // so does rounding up to `digit + 1`
        if !low && !high {
            digits.push(digit);
            continue;
        }
        // both: the closer one (ties to even)
        let up = !low || (high && r.plus(&r).compare(&s) as i8 + i8::from(digit % 2 == 1) > 0);
        digits.push(digit + u8::from(up));
        break;
    }
    (digits, point)
}

/// A non-negative integer below 2^1152 as little-endian 32-bit limbs: the arithmetic
/// `shortest_digits` needs (its values stay below 2^1100).
#[derive(Clone)]
struct Big(Vec<u32>);

impl Big {
    fn from(v: u64) -> Big {
        let mut limbs = vec![0; 36];
        limbs[0] = v as u32;
        limbs[1] = (v >> 32) as u32;
        Big(limbs)
    }

    /// `self ×= 2^count`.
    #[inline(never)]
    fn double(&mut self, count: u32) {
        for _ in 0..count {
            self.times(2);
        }
    }

    #[inline(never)]
    fn times(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in self.0.iter_mut() {
            let t = u64::from(*limb) * u64::from(m) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
    }

    #[inline(never)]
    fn plus(&self, other: &Big) -> Big {
        let mut sum = self.clone();
        let mut carry = 0u64;
        for (limb, &b) in sum.0.iter_mut().zip(other.0.iter()) {
            let t = u64::from(*limb) + u64::from(b) + carry;
            *limb = t as u32;
            carry = t >> 32;
        }
        sum
    }

    /// `self -= other`, for `self ≥ other`.
    #[inline(never)]
    fn subtract(&mut self, other: &Big) {
        let mut borrow = 0u64;
        for (limb, &b) in self.0.iter_mut().zip(other.0.iter()) {
            let t = u64::from(*limb)
                .wrapping_sub(u64::from(b))
                .wrapping_sub(borrow);
            *limb = t as u32;
            borrow = t >> 63;
        }
    }

    #[inline(never)]
    fn compare(&self, other: &Big) -> Ordering {
        self.0.iter().rev().cmp(other.0.iter().rev())
    }

    /// `self > other`, or `self == other` when `inclusive`.
    fn reaches(&self, other: &Big, inclusive: bool) -> bool {
        let order = self.compare(other);
        order == Ordering::Greater || (inclusive && order == Ordering::Equal)
    }
}

/// Deeper nesting is rejected: the visitor recurses once per level, and inside wasm a
/// deep enough value would overflow the stack and trap.
pub const MAX_DEPTH: usize = 32;

/// At most this many values (members, items and everything nested in them) are read
/// from a JS value: a jpeg configuration holds about 15. Without a bound, an array of
/// 2^32 − 1 empty slots, or a few hundred bytes of arrays that share their items
/// (`x = [x, x]` thirty times over: 2^30 values), would keep the reader busy for hours or
/// overflow a `Vec`'s capacity (a panic, i.e. a trap in wasm).
pub const MAX_VALUES: usize = 1024;

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
    use super::{format_number, quote, shortest_digits, truncate};

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
    fn numbers_format_like_javascript() {
        // each `text` is node's String(n)
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
            (100.00000000000001, "100.00000000000001"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e14, "100000000000000"),
            (-1e15, "-1000000000000000"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (1e20, "100000000000000000000"),
            (2f64.powi(66), "73786976294838210000"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (1e-7, "1e-7"),
            (0.000001, "0.000001"),
            (-2.5e300, "-2.5e+300"),
            (123456789.123, "123456789.123"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (f64::EPSILON, "2.220446049250313e-16"),
            (9_007_199_254_740_993.0, "9007199254740992"),
            (9_007_199_254_740_994.0, "9007199254740994"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ] {
            assert_eq!(format_number(n), text, "{n:?}");
        }
    }

    #[test]
    fn shortest_digits_agree_with_rusts_own_shortest_formatting() {
        // Rust's `{:e}` also prints the shortest digits that read back, the closest of them
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let check = |a: f64| {
            let (digits, point) = shortest_digits(a);
            let expected = format!("{a:e}");
            let (mantissa, exponent) = expected.split_once('e').unwrap();
            let expected_digits = mantissa.replace('.', "");
            let got = std::str::from_utf8(&digits).unwrap();
            // (at an exact tie Rust rounds the last digit up, JavaScript to even:
            // 184682136014194.625 is "…94.62" in JS, "…94.63" in Rust)
            let tie = got.len() == expected_digits.len()
                && got[..got.len() - 1] == expected_digits[..got.len() - 1]
                && (digits[digits.len() - 1] - b'0').is_multiple_of(2)
                && expected_digits.as_bytes()[got.len() - 1] == digits[digits.len() - 1] + 1;
            assert!(got == expected_digits || tie, "{a:e}: {got}");
            assert_eq!(point - 1, exponent.parse::<i32>().unwrap(), "{a:e}");
        };
        for _ in 0..20_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let a = f64::from_bits(state >> 1); // positive
            if a.is_finite() && a > 0.0 {
                check(a);
            }
            // and values near the integers messages are about
            check(
                f64::from((state % 200) as u32)
                    + f64::from_bits(0x3CB0_0000_0000_0000 | (state & 0xFFFF)),
            );
        }
        for bits in [
            1u64,
            2,
            0x000F_FFFF_FFFF_FFFF,
            0x0010_0000_0000_0000,
            0x0020_0000_0000_0000,
            0x7FEF_FFFF_FFFF_FFFF,
        ] {
            check(f64::from_bits(bits));
        }
    }
}
