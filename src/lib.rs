//! The Zarr v3 `jpeg` codec: configuration, chunk layout, colour conversion and
//! baseline JPEG encode/decode for uint8 chunks. Knows nothing of JavaScript; the
//! wasm-bindgen boundary lives in `wasm.rs` and only converts values. The API is what this
//! file re-exports; the modules are the crate's own (map: docs/architecture.md).
//!
//! ```
//! use zarr_jpeg::{ConfigValue, JpegConfig};
//! let config = JpegConfig::parse(&ConfigValue::Object(vec![
//!     ("quality".into(), ConfigValue::Number(90.0)),
//!     ("encoded_color_space".into(), ConfigValue::String("grayscale".into())),
//! ])).unwrap();
//! let samples = vec![128u8; 16 * 16];
//! let jpeg = zarr_jpeg::encode(&config, &samples, &[16, 16]).unwrap();
//! let back = zarr_jpeg::decode(&config, &jpeg, &[16, 16]).unwrap();
//! assert_eq!(back.len(), samples.len());
//! ```

mod baseline;
mod chunk;
// The colour fixes after zune-jpeg (the encoder converts in jpeg-encoder).
#[cfg(feature = "full-decoder")]
mod color;
#[cfg(feature = "converter")]
pub mod convert;
mod config;
mod config_value;
mod decode;
#[cfg(feature = "encoder")]
mod encode;
mod error;
mod inspect;
mod markers;
/// The reshape codec's shape rule.
pub mod reshape;
#[cfg(feature = "encoder")]
mod rewrite;
mod sink;
mod tile_stream;

/// What the test suites need from inside the crate (not part of the API).
#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub mod testing;

/// JS values ⇄ `ConfigValue` for the boundary.
#[cfg(target_arch = "wasm32")]
mod js_value;
/// The wasm-bindgen exports (public so the wasm test suites can call them).
#[cfg(target_arch = "wasm32")]
pub mod wasm;
/// The converter's wasm-bindgen export (the npm CLI's converter module).
#[cfg(all(target_arch = "wasm32", feature = "converter"))]
pub mod wasm_convert;

pub use chunk::ChunkLayout;
pub use config::{DecodedColorSpace, EncodedColorSpace, JpegConfig, SamplingFactor};
pub use config_value::ConfigValue;
pub use decode::{
    check_output, decode, decode_into, decode_to_sink, zeroed_bytes, RowDecoder, Rows,
};
#[cfg(feature = "encoder")]
pub use encode::{
    check_stream_fits, encode, encode_from, encode_from_with_options, EncodeOptions, QuantTable,
    SampleSource,
};
pub use decode::StoredColorSpace;
pub use error::{CodecError, ErrorKind};
pub use sink::SampleSink;
pub use inspect::{inspect_stream, nearest_ijg_quality, FrameComponent, StreamInfo};
pub use tile_stream::complete_tile_stream;

/// The allocator of the decode-only wasm modules (built without `encoder`): talc instead of
/// std's dlmalloc, whose code is about 8 KB of each module (2 KB gzip). Like dlmalloc it
/// takes memory from `memory.grow` as needed and reuses what is freed; an allocation that
/// cannot be met still fails the same way (`handle_alloc_error`, a trap). Decoding is as
/// fast with it; the encoder is not (0.84-0.99x in bench/ab.mjs --encode), so modules with
/// the encoder keep dlmalloc. Single-threaded wasm only (no `atomics`), as built.
#[cfg(all(
    target_arch = "wasm32",
    not(target_feature = "atomics"),
    not(feature = "encoder")
))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
