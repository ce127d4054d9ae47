//! JS values ⇄ `ConfigValue`, for the wasm boundary. Done by hand rather than through
//! serde-wasm-bindgen: serde's error paths pull core's float formatting into the module
//! (about 30 KB of wasm, a tenth of the decoder), and reading through `Reflect` and `catch`
//! imports turns a throwing getter or Proxy trap into an error instead of an exception
//! unwinding through wasm frames.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::wasm_bindgen;
use wasm_bindgen::{JsCast, JsValue};

use crate::config_value::MAX_DEPTH;
use crate::error::{append, owned, Int};
use crate::ConfigValue;

/// At most this many values (members, items and everything nested in them) are read
/// from a JS value: a jpeg configuration holds about 15. Without a bound, an array of
/// 2^32 − 1 empty slots, or a few hundred bytes of arrays that share their items
/// (`x = [x, x]` thirty times over: 2^30 values), would keep the reader busy for hours or
/// overflow a `Vec`'s capacity (a panic, i.e. a trap in wasm).
const MAX_VALUES: usize = 1024;

/// Reads a JSON-like JS value: null or undefined, a boolean, a number, a BigInt within
/// 64 bits, a string, an array, or a plain object (its own enumerable string keys, in
/// order; a member whose value is `undefined` is left out, as `JSON.stringify` leaves it,
/// so `{ trellis: options.trellis }` means the default when it is unset). Anything else
/// (functions, symbols, Maps, Sets, typed arrays, other iterables) is refused with its
/// type named.
///
/// At most [`MAX_VALUES`] values are read, whatever the arrays' `length`s claim.
pub fn to_config_value(value: &JsValue) -> Result<ConfigValue, String> {
    let mut budget = MAX_VALUES;
    read(value, 0, &mut budget)
}

/// `budget`: how many more values may be read.
fn read(value: &JsValue, depth: usize, budget: &mut usize) -> Result<ConfigValue, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the configuration is nested more than {} levels deep",
            Int::of(MAX_DEPTH)
        ));
    }
    if *budget == 0 {
        return Err(too_many_values());
    }
    *budget -= 1;
    if value.is_null() || value.is_undefined() {
        return Ok(ConfigValue::Null);
    }
    if let Some(b) = value.as_bool() {
        return Ok(ConfigValue::Bool(b));
    }
    if let Some(n) = number(value) {
        return Ok(ConfigValue::Number(n));
    }
    if value.is_bigint() {
        return match i64::try_from(value.clone()) {
            Ok(n) => Ok(ConfigValue::Number(n as f64)),
            Err(v) => u64::try_from(v)
                .map(|n| ConfigValue::Number(n as f64))
                .map_err(|_| owned("a BigInt outside the 64-bit range is not a JSON-like value")),
        };
    }
    if let Some(s) = value.as_string() {
        return Ok(ConfigValue::String(s));
    }
    if Array::is_array(value) {
        let length = array_length(value)? as u32;
        let mut items = Vec::new();
        // (each item takes one value from `budget`: a long array ends with its error)
        for i in 0..length {
            items.push(read(&array_item(value, i)?, depth + 1, budget)?);
        }
        return Ok(ConfigValue::Array(items));
    }
    if value.is_object() && !is_iterable(value)? {
        let mut members = Vec::new();
        let keys = object_keys(value).map_err(threw)?;
        // (the members read take values from `budget`)
        if keys.length() as usize > *budget {
            return Err(too_many_values());
        }
        for key in keys.iter() {
            let Some(name) = key.as_string() else {
                continue;
            }; // (Object.keys gives strings only)
            let member = get(value, &key)?;
            if member.is_undefined() {
                continue;
            }
            let member = read(&member, depth + 1, budget);
            // Name the top-level member (deeper paths would repeat 32 names for the depth error).
            let member = if depth == 0 {
                member.map_err(|e| format!("member {}: {e}", crate::config_value::quote(&name)))?
            } else {
                member?
            };
            members.push((name, member));
        }
        return Ok(ConfigValue::Object(members));
    }
    Err(format!("{} is not a JSON-like value", type_name(value)))
}

#[inline(never)]
fn too_many_values() -> String {
    format!(
        "the configuration holds more than {} values (arrays' items and objects' members, \
         nested ones included); a jpeg configuration holds about 15",
        Int::of(MAX_VALUES)
    )
}

/// Writes a `ConfigValue` as the matching plain JS value (objects keep member order).
pub fn from_config_value(value: &ConfigValue) -> JsValue {
    match value {
        ConfigValue::Null => JsValue::NULL,
        ConfigValue::Bool(b) => JsValue::from_bool(*b),
        ConfigValue::Number(n) => JsValue::from_f64(*n),
        ConfigValue::String(s) => JsValue::from_str(s),
        ConfigValue::Array(items) => items
            .iter()
            .map(from_config_value)
            .collect::<Array>()
            .into(),
        ConfigValue::Object(members) => {
            let object = Object::new();
            for (name, member) in members {
                // Cannot fail: a fresh plain object, string keys.
                let _ = Reflect::set(
                    &object,
                    &JsValue::from_str(name),
                    &from_config_value(member),
                );
            }
            object.into()
        }
    }
}

/// A short name for a JS value's type, for error messages: "null", "a number", "a Map".
pub fn type_name(value: &JsValue) -> String {
    if value.is_null() {
        return owned("null");
    }
    if value.is_undefined() {
        return owned("undefined");
    }
    let constructor_name = if value.is_object() {
        // Through Reflect: a Proxy's get trap may throw.
        get(value, &JsValue::from_str("constructor"))
            .and_then(|constructor| get(&constructor, &JsValue::from_str("name")))
            .ok()
            .and_then(|name| name.as_string())
            .filter(|n| !n.is_empty())
    } else {
        None
    };
    match constructor_name.or_else(|| value.js_typeof().as_string()) {
        // "an Array", "an Int8Array"; "a Uint8Array" (a "you" sound), "a string"
        Some(name) => {
            let article = match name.as_bytes().first() {
                Some(b'A' | b'E' | b'I' | b'O' | b'a' | b'e' | b'i' | b'o') => "an ",
                _ => "a ",
            };
            let mut text = owned(article);
            append(&mut text, &name);
            text
        }
        None => owned("an unknown value"),
    }
}

fn is_iterable(value: &JsValue) -> Result<bool, String> {
    Ok(!get(value, &js_sys::Symbol::iterator().into())?.is_undefined())
}

fn get(target: &JsValue, key: &JsValue) -> Result<JsValue, String> {
    Reflect::get(target, key).map_err(threw)
}

/// An array's `length` (0 if it is not a number), read by a `catch` import: a getter or
/// Proxy trap that throws is an error, not an exception unwinding through wasm frames.
pub(crate) fn array_length(array: &JsValue) -> Result<f64, String> {
    let length = array
        .unchecked_ref::<WithLength>()
        .length_of()
        .map_err(threw)?;
    Ok(number(&length).unwrap_or(0.0))
}

/// A JS number's value, as `JsValue::as_f64`, which passes it back through wasm memory
/// (wasm-bindgen's glue then checks twice whether the memory has grown): a finite number,
/// which is nearly every one read here, is tested and read by two calls returning in
/// registers instead.
pub(crate) fn number(value: &JsValue) -> Option<f64> {
    if js_sys::Number::is_finite(value) {
        Some(value.unchecked_ref::<js_sys::Number>().value_of())
    } else {
        value.as_f64()
    }
}

// Imports that read what the configuration reader needs in one call each, with no key
// string made in wasm and passed to JS (each `JsValue::from_str` runs a `TextDecoder`):
// reading the configuration of a small chunk was a quarter of its decode. `catch`: a
// getter or Proxy trap that throws is an error, as through `Reflect`.
#[wasm_bindgen]
extern "C" {
    type WithLength;

    /// `Object.keys(value)`: the own enumerable string keys, in order (the ones
    /// `JSON.stringify` reads).
    #[wasm_bindgen(catch, js_namespace = Object, js_name = keys)]
    fn object_keys(value: &JsValue) -> Result<Array, JsValue>;

    /// `value.length`.
    #[wasm_bindgen(catch, method, getter, structural, js_name = length)]
    fn length_of(this: &WithLength) -> Result<JsValue, JsValue>;
}

/// Item `i` of an array, read through `Reflect`: a throwing getter or Proxy trap is an
/// error, as in [`array_length`].
pub(crate) fn array_item(array: &JsValue, i: u32) -> Result<JsValue, String> {
    Reflect::get_u32(array, i).map_err(threw)
}

/// A getter or Proxy trap threw while the configuration was read.
fn threw(error: JsValue) -> String {
    let message = error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| type_name(&error));
    format!("reading it threw: {message}")
}
