//! The wasm-bindgen boundary: converts JS values to Rust and `CodecError`s to JS
//! `Error`s. No codec logic lives here.

use js_sys::{Array, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::js_value::{from_config_value, to_config_value, type_name};
use crate::{CodecError, JpegConfig};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// A panic (a bug: the codec must not panic on any input) traps the instance; this logs
/// its message and source location first, for the bug report. console_error_panic_hook
/// logged the same plus a JS stack, which the trap's `RuntimeError` (the `cause` of the
/// loader's error) already carries; its formatting code cost ~0.6 KB gzip per module.
#[wasm_bindgen(start)]
fn start() {
    std::panic::set_hook(Box::new(|info| {
        // (`payload_as_str` does this from Rust 1.91)
        let payload = info.payload();
        let message = (payload.downcast_ref::<&str>().copied())
            .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
            .unwrap_or("");
        match info.location() {
            Some(at) => console_error(&format!("zarr-jpeg panicked at {at}: {message}")),
            None => console_error(&format!("zarr-jpeg panicked: {message}")),
        }
    }));
}

/// Validates a codec configuration; returns its normalised form or throws.
#[wasm_bindgen(js_name = validateConfig)]
pub fn validate_config(config: JsValue) -> Result<JsValue, JsValue> {
    // Test builds only (tests/js/trap-recovery.test.mjs): trap on purpose.
    #[cfg(feature = "test-trap")]
    match config.as_string().as_deref() {
        Some("__zarr_jpeg_test_trap__:panic") => panic!("test-trap: a panic on purpose"),
        Some("__zarr_jpeg_test_trap__:oom") => {
            std::alloc::handle_alloc_error(std::alloc::Layout::new::<[u8; 1 << 20]>())
        }
        _ => {}
    }
    Ok(from_config_value(&parse_config(config)?.to_value()))
}

/// Encodes one chunk: `data` holds the C-order uint8 samples of `shape`.
#[cfg(feature = "encoder")]
#[wasm_bindgen]
pub fn encode(
    config: JsValue,
    data: JsValue,
    shape: JsValue,
    options: JsValue,
) -> Result<Uint8Array, JsValue> {
    let config = parse_config(config)?;
    let shape = parse_shape(&shape)?;
    let data = uint8_array(&data, "data")?;
    let options = parse_encode_options(&options)?;
    let stream =
        crate::encode_from_with_options(&config, data, &shape, &options).map_err(codec_error)?;
    Ok(Uint8Array::from(stream.as_slice()))
}

/// Encodes one chunk into `out`, a `Uint8Array` the caller reuses, and returns the stream's
/// length; `out` is written only if the whole stream fits (an error says how many bytes it
/// needs otherwise).
#[cfg(feature = "encoder")]
#[wasm_bindgen(js_name = encodeInto)]
pub fn encode_into(
    config: JsValue,
    data: JsValue,
    shape: JsValue,
    out: JsValue,
    options: JsValue,
) -> Result<u32, JsValue> {
    let config = parse_config(config)?;
    let shape = parse_shape(&shape)?;
    let data = uint8_array(&data, "data")?;
    let out = uint8_array(&out, "the output buffer")?;
    let options = parse_encode_options(&options)?;
    let stream =
        crate::encode_from_with_options(&config, data, &shape, &options).map_err(codec_error)?;
    crate::check_stream_fits(stream.len(), out.length() as usize).map_err(codec_error)?;
    // wasm32: the stream's length is a `usize`, i.e. a `u32`
    let len = stream.len() as u32;
    // (a `subarray` the caller replaced could return another length: an error, not
    // `copy_from`'s panic, as for the samples' band reads below)
    let target = out.subarray(0, len);
    if target.length() != len {
        return Err(codec_error(CodecError::data(
            "the output buffer changed during encoding",
        )));
    }
    target.copy_from(&stream);
    Ok(len)
}

/// The caller's samples, read where they are: the encoder copies a band of MCU rows at a
/// time into wasm memory instead of the whole chunk up front. Only reads; the array is never
/// written.
///
/// Can JS code see or change the array between the length check and the last band read?
/// Not on this thread: wasm runs synchronously, and `length`, `subarray` and the copy are
/// the engine's own functions. Two cases are the caller's own doing: a `SharedArrayBuffer`
/// that another thread writes meanwhile gives a stream of whatever each band held when it
/// was copied (as a whole-chunk copy taken during such writes would); and if the caller
/// replaced `subarray` or `length` on the array, that code runs here, and a range it gets
/// wrong is refused below as an error rather than a panic in `copy_to` (an exception it
/// throws passes through the wasm frames, as one from `to_vec` did before). In every case
/// the encoder reads only the rows it asks for.
#[cfg(feature = "encoder")]
impl crate::SampleSource for Uint8Array {
    fn sample_count(&self) -> usize {
        self.length() as usize
    }

    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), CodecError> {
        // `sample_count()` is at most 2^32 - 1 (a u32), so the range fits in u32.
        let rows = self.subarray(offset as u32, (offset + out.len()) as u32);
        if rows.length() as usize != out.len() {
            return Err(CodecError::data(format!(
                "the chunk data changed during encoding: bytes {}..{} are gone",
                crate::error::Int::of(offset),
                crate::error::Int::of(offset + out.len())
            )));
        }
        rows.copy_to(out);
        Ok(())
    }
}

/// Decodes one chunk's JPEG stream to the C-order uint8 samples of `shape`.
#[wasm_bindgen]
pub fn decode(config: JsValue, stream: JsValue, shape: JsValue) -> Result<Uint8Array, JsValue> {
    let config = parse_config(config)?;
    let shape = parse_shape(&shape)?;
    let stream = bytes(&stream, "the encoded chunk")?;
    // Test builds only (tests/js/trap-recovery.test.mjs): the small modules leave this
    // sentinel stream to the full decoder, which traps on it.
    #[cfg(feature = "test-trap")]
    if stream == b"__zarr_jpeg_test_trap__:full-decoder" {
        #[cfg(feature = "full-decoder")]
        panic!("test-trap: a panic in the full decoder on purpose");
        #[cfg(not(feature = "full-decoder"))]
        return Err(codec_error(crate::decode::needs_full_decoder("test-trap")));
    }
    let mut samples = NewArray(Uint8Array::new_with_length(0));
    crate::decode_to_sink(&config, &stream, &shape, &mut samples).map_err(codec_error)?;
    Ok(samples.0)
}

/// The `Uint8Array` `decode` returns, made once the stream has been checked against the
/// chunk and written a band of rows at a time as the decoder finishes them, instead of
/// from a chunk-sized buffer in wasm memory copied whole at the end. The decoder writes
/// only within the `sample_count` it was given (a range past the end would be a
/// `RangeError` thrown by `set`, not a panic).
struct NewArray(Uint8Array);

impl crate::SampleSink for NewArray {
    fn start(&mut self, sample_count: usize) -> Result<(), CodecError> {
        // wasm32: `usize` is `u32`
        self.0 = Uint8Array::new_with_length(sample_count as u32);
        Ok(())
    }

    fn write(&mut self, offset: usize, band: &[u8]) {
        // The view of wasm memory is used before anything can allocate (and grow the
        // memory); `set` copies it. wasm32: `usize` is `u32`.
        self.0
            .set(unsafe { &Uint8Array::view(band) }, offset as u32);
    }
}

/// Decodes one chunk's JPEG stream into `out`, a `Uint8Array` of exactly the chunk's
/// byte length: a caller that reuses its buffers avoids allocating a new one per chunk.
/// `out` is written only when decoding succeeds.
#[wasm_bindgen(js_name = decodeInto)]
pub fn decode_into(
    config: JsValue,
    stream: JsValue,
    shape: JsValue,
    out: JsValue,
) -> Result<(), JsValue> {
    let config = parse_config(config)?;
    let shape = parse_shape(&shape)?;
    let stream = bytes(&stream, "the encoded chunk")?;
    let out = uint8_array(&out, "the output buffer")?;
    // checked before the staging buffer is allocated: a huge `out` is an error, not a trap
    let len = out.length() as usize;
    crate::check_output(&config, &shape, len).map_err(codec_error)?;
    let mut samples = crate::zeroed_bytes(len, "the output buffer").map_err(codec_error)?;
    crate::decode_into(&config, &stream, &shape, &mut samples).map_err(codec_error)?;
    out.copy_from(&samples);
    Ok(())
}

/// The complete stream of a TIFF tile's JPEG data: the page's JPEGTables (`tables`,
/// optional) spliced in, and colour markers for the colour space the container declares
/// (`colorSpace`: "grayscale", "rgb", "ycbcr", or absent to leave the markers alone).
#[wasm_bindgen(js_name = completeTileStream)]
pub fn complete_tile_stream(
    tile: JsValue,
    tables: JsValue,
    color_space: JsValue,
) -> Result<Uint8Array, JsValue> {
    let tile = bytes(&tile, "the tile")?;
    let tables = if tables.is_undefined() || tables.is_null() {
        None
    } else {
        Some(bytes(&tables, "the JPEG tables")?)
    };
    let declared = if color_space.is_undefined() || color_space.is_null() {
        None
    } else {
        Some(match color_space.as_string().as_deref() {
            Some("grayscale") => crate::StoredColorSpace::Grayscale,
            Some("rgb") => crate::StoredColorSpace::Rgb,
            Some("ycbcr") => crate::StoredColorSpace::Ycbcr,
            _ => {
                return Err(codec_error(CodecError::config(format!(
                    "the declared colour space must be \"grayscale\", \"rgb\" or \"ycbcr\", got {}",
                    type_name(&color_space)
                ))))
            }
        })
    };
    let stream =
        crate::complete_tile_stream(&tile, tables.as_deref(), declared).map_err(codec_error)?;
    Ok(Uint8Array::from(stream.as_slice()))
}

fn parse_config(config: JsValue) -> Result<JpegConfig, JsValue> {
    // (to_config_value reads a top-level undefined as null, which the message would name)
    if config.is_undefined() {
        return Err(codec_error(crate::config::not_an_object("undefined")));
    }
    let value = to_config_value(&config).map_err(|e| {
        codec_error(CodecError::config(format!(
            "the configuration is not a JSON-like object: {e}"
        )))
    })?;
    JpegConfig::parse(&value).map_err(codec_error)
}

/// `encode`'s optional last argument: absent (`undefined`) or null for the defaults.
#[cfg(feature = "encoder")]
fn parse_encode_options(options: &JsValue) -> Result<crate::EncodeOptions, JsValue> {
    if options.is_undefined() {
        return Ok(crate::EncodeOptions::default());
    }
    let value = to_config_value(options).map_err(|e| {
        codec_error(CodecError::config(format!(
            "the encode options are not a JSON-like object: {e}"
        )))
    })?;
    crate::EncodeOptions::parse(&value).map_err(codec_error)
}

/// More dimensions than this are refused without reading them (the codec takes 2 or 3).
const MAX_SHAPE_LENGTH: u32 = 32;

/// A chunk shape: an array of non-negative integers. Read through `Reflect`, like the
/// configuration: a getter or Proxy trap that throws is an error, not an exception
/// unwinding through wasm frames, and a `length` of billions is refused unread.
fn parse_shape(shape: &JsValue) -> Result<Vec<u64>, JsValue> {
    let shape_error = |message: String| codec_error(CodecError::shape(message));
    if !Array::is_array(shape) {
        return Err(shape_error(format!(
            "the chunk shape must be an array of integers, got {}",
            type_name(shape)
        )));
    }
    let unreadable = |e: String| shape_error(format!("the chunk shape could not be read: {e}"));
    let length = crate::js_value::array_length(shape).map_err(unreadable)?;
    if length > f64::from(MAX_SHAPE_LENGTH) {
        return Err(shape_error(format!(
            "the chunk shape has {} dimensions; the jpeg codec accepts 2-D or 3-D chunks",
            crate::error::Int(length as u64)
        )));
    }
    // A loop rather than `collect::<Result<_>>()`, whose adapter costs ~0.7 KB of wasm.
    let mut sizes = Vec::new();
    for i in 0..length as u32 {
        let v = crate::js_value::array_item(shape, i).map_err(unreadable)?;
        match crate::js_value::number(&v) {
            Some(n) if n >= 0.0 && n.fract() == 0.0 && n <= 9_007_199_254_740_991.0 => {
                sizes.push(n as u64)
            }
            _ => {
                return Err(shape_error(format!(
                    "shape[{}] must be a non-negative integer, got {}",
                    crate::error::Int(i.into()),
                    describe_value(&v)
                )))
            }
        }
    }
    Ok(sizes)
}

/// Copies a `Uint8Array` into wasm memory; anything else is rejected as [`uint8_array`] does.
/// (Not `to_vec`, which panics on an array larger than wasm memory can hold.)
/// An empty array is not copied: `copy_to` throws (a `TypeError` unwinding through wasm
/// frames) for a view of a detached `ArrayBuffer` (one transferred to a worker) or one
/// out of bounds of a shrunk resizable buffer, whose length reads as 0.
fn bytes(value: &JsValue, what: &str) -> Result<Vec<u8>, JsValue> {
    let array = uint8_array(value, what)?;
    let mut bytes = crate::zeroed_bytes(array.length() as usize, what).map_err(codec_error)?;
    if !bytes.is_empty() {
        array.copy_to(&mut bytes);
    }
    Ok(bytes)
}

/// A `Uint8Array`; anything else (other typed arrays included) is rejected rather than
/// silently converted.
fn uint8_array<'a>(value: &'a JsValue, what: &str) -> Result<&'a Uint8Array, JsValue> {
    value.dyn_ref::<Uint8Array>().ok_or_else(|| {
        codec_error(CodecError::data(format!(
            "{what} must be a Uint8Array, got {}",
            type_name(value)
        )))
    })
}

fn describe_value(value: &JsValue) -> String {
    if value.as_f64().is_some() {
        // JavaScript's own number formatting (and no float formatting code in the wasm).
        return value
            .unchecked_ref::<js_sys::Number>()
            .to_string_with_radix(10)
            .map(String::from)
            .unwrap_or_default();
    }
    if let Some(s) = value.as_string() {
        return format!("{} (a string)", crate::config_value::quote(&s));
    }
    type_name(value)
}

fn codec_error(e: CodecError) -> JsValue {
    js_error(&format!("{e}"), e.kind().name())
}

/// A JS `Error` with a `kind` property callers can branch on.
pub(crate) fn js_error(message: &str, kind: &str) -> JsValue {
    let error = js_sys::Error::new(message);
    let _ = Reflect::set(&error, &JsValue::from_str("kind"), &JsValue::from_str(kind));
    error.into()
}
