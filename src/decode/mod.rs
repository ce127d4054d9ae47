//! JPEG stream → chunk samples: header checks first (nothing is allocated from the
//! stream's claims), then the decoder, then the conversion to `decoded_color_space`.
//!
//! Which decoder: the baseline decoder (src/baseline/) first; it decodes the sequential
//! single-scan streams it can decode exactly like zune-jpeg and defers the rest
//! (progressive streams, unusual layouts or markers, corrupt data). With the
//! `full-decoder` feature (on by default; the npm package's `zarr_jpeg_full_decoder`
//! module) deferred streams go to zune-jpeg. Without it (the package's small reader and
//! writer modules) zune-jpeg's decoder is not linked in, and a deferred stream fails with
//! [`ErrorKind::NeedsFullDecoder`](crate::ErrorKind::NeedsFullDecoder), whose message
//! names the reason, so the caller can retry with the full decoder.
//!
//! Rooms: `checks` (the stream's header against the chunk), `colour` (the colour-marker
//! policy), `full` (zune-jpeg); this module holds the API and the dispatch.

mod checks;
mod colour;
#[cfg(feature = "full-decoder")]
mod full;
mod rows;

use crate::baseline;
use crate::chunk::ChunkLayout;
use crate::config::JpegConfig;
use crate::error::{CodecError, ErrorKind, Int, Result};
use crate::markers::{self, CodingProcess, StreamHeader};
use crate::sink::{check_output_len, SampleSink, Target};
use colour::ColourPlan;
pub use colour::{stored_color_space, StoredColorSpace};

pub use checks::check_stream;
#[cfg(all(feature = "full-decoder", feature = "test-hooks"))]
pub use full::MAX_SCANS;
pub use rows::{RowDecoder, Rows};

/// Decodes `stream` into a new buffer of the chunk's C-order samples.
pub fn decode(config: &JpegConfig, stream: &[u8], shape: &[u64]) -> Result<Vec<u8>> {
    let layout = ChunkLayout::for_config(shape, config)?;
    let (header, stored) = check_stream(stream, &layout)?;
    let mut out = decoded_chunk_buffer(layout.sample_count())?;
    decode_checked(
        config,
        stream,
        &layout,
        &header,
        stored,
        Target::Slice(&mut out),
    )?;
    Ok(out)
}

/// [`decode`] into `sink`, a band of rows at a time (see [`SampleSink`]): the same samples
/// and the same errors, without a chunk-sized buffer on the baseline decoder's path.
pub fn decode_to_sink(
    config: &JpegConfig,
    stream: &[u8],
    shape: &[u64],
    sink: &mut dyn SampleSink,
) -> Result<()> {
    let layout = ChunkLayout::for_config(shape, config)?;
    let (header, stored) = check_stream(stream, &layout)?;
    let len = layout.sample_count();
    decode_checked(
        config,
        stream,
        &layout,
        &header,
        stored,
        Target::Sink { sink, len },
    )
}

/// Checks that an output buffer of `len` bytes holds exactly the chunk's samples, before
/// anything is allocated for it (`decodeInto` stages the samples in wasm memory).
pub fn check_output(config: &JpegConfig, shape: &[u64], len: usize) -> Result<()> {
    check_output_len(len, ChunkLayout::for_config(shape, config)?.sample_count())
}

/// `len` zeroed bytes, or an error naming `what` if memory cannot hold them (`vec!` would
/// panic past `isize::MAX` and abort when the allocation fails: a trap in wasm).
pub fn zeroed_bytes(len: usize, what: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    if bytes.try_reserve_exact(len).is_err() {
        return Err(CodecError::data(format!(
            "{what} holds {} bytes, more than this platform's memory can take",
            Int::of(len)
        )));
    }
    bytes.resize(len, 0);
    Ok(bytes)
}

/// A buffer for a whole decoded chunk, or an error saying it is too large for memory in
/// one piece (where the decoder must hold the whole chunk; `decode_to_sink` on the baseline
/// path does not).
fn decoded_chunk_buffer(len: usize) -> Result<Vec<u8>> {
    zeroed_bytes(len, "").map_err(|_| {
        CodecError::unsupported(format!(
            "decoding this stream holds the whole decoded chunk, {} bytes, in memory, more than \
             this platform's memory can take in one piece (WebAssembly: 2 GiB)",
            Int::of(len)
        ))
    })
}

/// Decodes `stream` into `out`, which must hold exactly the chunk's samples.
pub fn decode_into(
    config: &JpegConfig,
    stream: &[u8],
    shape: &[u64],
    out: &mut [u8],
) -> Result<()> {
    let layout = ChunkLayout::for_config(shape, config)?;
    check_output_len(out.len(), layout.sample_count())?;
    let (header, stored) = check_stream(stream, &layout)?;
    decode_checked(config, stream, &layout, &header, stored, Target::Slice(out))
}

fn decode_checked(
    config: &JpegConfig,
    stream: &[u8],
    layout: &ChunkLayout,
    header: &StreamHeader,
    stored: StoredColorSpace,
    out: Target<'_>,
) -> Result<()> {
    let plan = colour::plan(header, stored, config.decoded_color_space)?;
    let out = match out {
        Target::Sink { sink, len } => {
            sink.start(len)?;
            Target::Sink { sink, len }
        }
        out => out,
    };
    decode_samples(stream, layout, header, plan, out)
}

/// The error a build without the `full-decoder` feature returns for a stream only the
/// full decoder decodes; `reason` says why (from the baseline decoder's [`baseline::Defer`]).
/// How to reach the full decoder is the caller's to say (js/loader.js adds it). (Unused in
/// full-decoder builds but for the wasm boundary's test trap.)
#[cfg_attr(feature = "full-decoder", allow(dead_code))]
pub fn needs_full_decoder(reason: &str) -> CodecError {
    CodecError::new(
        ErrorKind::NeedsFullDecoder,
        format!("this module's baseline decoder leaves this stream to the full decoder ({reason})"),
    )
}

/// Decodes the checked stream into `out` as `plan` says: the baseline decoder (src/baseline/)
/// first, byte-identical to the zune-jpeg path on every stream it accepts;
/// it defers everything else (progressive streams, unusual layouts or markers, corrupt
/// data) to zune-jpeg when it is built in (`full-decoder`), else the stream fails with
/// [`ErrorKind::NeedsFullDecoder`]. Without `full-decoder` nothing of zune-jpeg's decoder
/// but the kernels the baseline decoder calls is linked in.
fn decode_samples(
    stream: &[u8],
    layout: &ChunkLayout,
    header: &StreamHeader,
    plan: ColourPlan,
    mut out: Target<'_>,
) -> Result<()> {
    let deferred = if header.process == CodingProcess::Progressive {
        baseline::Defer("a progressive stream (SOF2)")
    } else if header.separate_scans() {
        baseline::Defer("components coded in separate scans")
    } else if !baseline_enabled() {
        baseline::Defer("switched off for a test")
    } else {
        match baseline::decode_to(stream, plan.baseline_output(), out.reborrow(), plan.convert) {
            Ok(()) => return Ok(()),
            Err(defer) => defer,
        }
    };
    #[cfg(feature = "full-decoder")]
    {
        let _ = deferred;
        full::decode(stream, layout, header, plan.zune_out, plan.convert, out)
    }
    #[cfg(not(feature = "full-decoder"))]
    {
        let _ = (stream, layout, plan, out);
        Err(needs_full_decoder(deferred.0))
    }
}

/// Whether decodes try the baseline decoder first: always, except in tests that compare
/// it with the zune-jpeg path (`set_baseline_for_tests`, `test-hooks` builds only).
fn baseline_enabled() -> bool {
    #[cfg(feature = "test-hooks")]
    return BASELINE.with(|f| f.get());
    #[cfg(not(feature = "test-hooks"))]
    true
}

#[cfg(feature = "test-hooks")]
std::thread_local! {
    static BASELINE: core::cell::Cell<bool> = const { core::cell::Cell::new(true) };
}

/// Test hook: `false` makes this thread's decodes skip the baseline decoder (src/baseline/)
/// and use zune-jpeg, so a test can compare both (tests/baseline_decoder.rs).
#[cfg(feature = "test-hooks")]
pub fn set_baseline_for_tests(yes: bool) {
    BASELINE.with(|f| f.set(yes));
}

/// The sizes in bytes of the largest buffers zune-jpeg allocates for `header`: a
/// progressive stream (or one that codes its components in separate scans) keeps every
/// component's coefficients, as `i16`, until its last scan (`mcu_prog.rs`, `mcu.rs`); the
/// rows of MCUs that every stream needs are small beside the chunk.
pub fn zune_buffer_sizes(header: &StreamHeader) -> Vec<u64> {
    let (width, height) = (u64::from(header.width), u64::from(header.height));
    let largest = |factor: fn(&markers::ComponentSpec) -> u8| {
        header
            .components
            .iter()
            .map(|c| u64::from(factor(c)))
            .max()
            .unwrap_or(1)
            .max(1)
    };
    let (h_max, v_max) = (largest(|c| c.horizontal), largest(|c| c.vertical));
    let whole_image = header.process == CodingProcess::Progressive || header.separate_scans();
    let mut sizes = Vec::new();
    let mut rows = 0;
    for c in &header.components {
        let (h, v) = (u64::from(c.horizontal), u64::from(c.vertical));
        // samples of the component padded to whole MCUs (of the largest factors; a lone
        // component's, which zune reads as 8 × 8 blocks whatever its factors, the larger)
        let interleaved_width = width.div_ceil(8 * h_max) * 8 * h;
        let interleaved_height = height.div_ceil(8 * v_max) * 8 * v;
        let (padded_width, padded_height) = if header.components.len() == 1 {
            let blocks_width = width.div_ceil(8) * 8;
            let blocks_height = height.div_ceil(8) * 8;
            (
                interleaved_width.max(blocks_width),
                interleaved_height.max(blocks_height),
            )
        } else {
            (interleaved_width, interleaved_height)
        };
        if whole_image {
            sizes.push(2 * padded_width * padded_height);
        }
        // a row of MCUs as coefficients, its up-sampled rows and the row above (generously;
        // zune reads a lone component's factors as 1)
        let row_v = if header.components.len() == 1 { 1 } else { v };
        rows += 16 * padded_width * row_v * 8;
    }
    sizes.push(rows);
    sizes
}
