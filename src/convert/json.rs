//! JSON text of a [`ConfigValue`] exactly as JavaScript's `JSON.stringify` writes it (compact,
//! or indented by two spaces), so that the metadata this crate writes is the byte-for-byte
//! text the npm package has always written, and messages quote values as JS does.

use crate::ConfigValue;

/// `JSON.stringify(value)`.
pub fn compact(value: &ConfigValue) -> String {
    let mut out = String::new();
    write(value, None, 0, &mut out);
    out
}

/// `JSON.stringify(value, null, 2)`.
pub fn pretty(value: &ConfigValue) -> String {
    let mut out = String::new();
    write(value, Some(2), 0, &mut out);
    out
}

fn write(value: &ConfigValue, indent: Option<usize>, depth: usize, out: &mut String) {
    match value {
        ConfigValue::Null => out.push_str("null"),
        ConfigValue::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        ConfigValue::Number(n) => out.push_str(&number(*n)),
        ConfigValue::String(s) => string(s, out),
        ConfigValue::Array(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                write(item, indent, depth + 1, out);
            }
            newline(indent, depth, out);
            out.push(']');
        }
        ConfigValue::Object(members) => {
            if members.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push('{');
            for (i, (name, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(indent, depth + 1, out);
                string(name, out);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write(item, indent, depth + 1, out);
            }
            newline(indent, depth, out);
            out.push('}');
        }
    }
}

fn newline(indent: Option<usize>, depth: usize, out: &mut String) {
    if let Some(step) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', step * depth));
    }
}

/// A number as JS's `String(n)`: integers without a fraction, the shortest digits that
/// round-trip, exponent form from 1e21 and below 1e-6; NaN and infinities are `null` in JSON.
pub fn number(n: f64) -> String {
    if !n.is_finite() {
        return "null".into();
    }
    if n == 0.0 {
        return "0".into();
    }
    let a = n.abs();
    if (1e-6..1e21).contains(&a) {
        // Rust's Display: shortest round-trip digits, never an exponent, "1" for 1.0
        return format!("{n}");
    }
    let e = format!("{n:e}"); // e.g. "1.5e-7", "1e21"
    match e.split_once('e') {
        Some((mantissa, exp)) if !exp.starts_with('-') => format!("{mantissa}e+{exp}"),
        _ => e,
    }
}

fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use ConfigValue as V;

    #[test]
    fn numbers_read_as_javascript_writes_them() {
        for (n, text) in [
            (1.0, "1"),
            (0.5, "0.5"),
            (-3.0, "-3"),
            (0.1 + 0.2, "0.30000000000000004"),
            (1e21, "1e+21"),
            (1.5e-7, "1.5e-7"),
            (123456789012.0, "123456789012"),
            (f64::INFINITY, "null"),
        ] {
            assert_eq!(number(n), text);
        }
    }

    #[test]
    fn pretty_matches_json_stringify_with_two_spaces() {
        let v = V::Object(vec![
            ("a".into(), V::Array(vec![V::Number(1.0), V::Number(2.0)])),
            ("b".into(), V::Object(vec![])),
            ("c".into(), V::Array(vec![])),
            ("d".into(), V::String("x\"\u{1}×".into())),
        ]);
        assert_eq!(
            pretty(&v),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {},\n  \"c\": [],\n  \"d\": \"x\\\"\\u0001×\"\n}"
        );
        assert_eq!(compact(&v), "{\"a\":[1,2],\"b\":{},\"c\":[],\"d\":\"x\\\"\\u0001×\"}");
    }
}
