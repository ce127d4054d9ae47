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

#[cfg(feature = "full-decoder")]
use zune_jpeg::errors::DecodeErrors;
#[cfg(feature = "full-decoder")]
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
#[cfg(feature = "full-decoder")]
use zune_jpeg::zune_core::options::DecoderOptions;
#[cfg(feature = "full-decoder")]
use zune_jpeg::JpegDecoder;

use crate::baseline;
use crate::chunk::ChunkLayout;
use crate::config::{DecodedColorSpace, JpegConfig};
use crate::error::{owned, CodecError, ErrorKind, Int, Result};
use crate::markers::{self, CodingProcess, StreamHeader};

/// Progressive streams with more scans than this are rejected (a cap against streams
/// built from thousands of tiny scans; real encoders write about 10).
pub const MAX_SCANS: usize = 100;

/// A colour conversion applied to the decoded samples where zune-jpeg's view differs.
type InPlaceConversion = fn(&mut [u8]);

/// Where [`decode_to_sink`] writes a chunk's samples (C-order uint8, as [`decode`] returns
/// them): a byte slice, or storage the decoder cannot borrow as one slice (the wasm
/// boundary's new `Uint8Array`). The baseline decoder hands over one band of whole rows
/// (up to 64 KiB, at least one row) at a time from a small buffer it reuses, still in
/// cache, so no chunk-sized buffer is made; the bands come in order and cover the chunk
/// once. A stream left to zune-jpeg (full-decoder builds) is decoded into a whole buffer
/// and handed over as one band, after whatever bands the baseline decoder wrote before it
/// deferred. On an error the sink's contents are unspecified.
pub trait SampleSink {
    /// Called once, when the stream has been checked against the chunk and before any
    /// `write`: the chunk holds `sample_count` samples.
    fn start(&mut self, sample_count: usize) -> Result<()>;

    /// Writes `band` to bytes `offset..offset + band.len()` (always within the
    /// `sample_count` given to `start`, which is where a sink refuses what it cannot hold).
    fn write(&mut self, offset: usize, band: &[u8]);
}

impl SampleSink for &mut [u8] {
    fn start(&mut self, sample_count: usize) -> Result<()> {
        check_output_len(self.len(), sample_count)
    }

    fn write(&mut self, offset: usize, band: &[u8]) {
        // always within the length `start` checked
        if let Some(out) = self.get_mut(offset..offset + band.len()) {
            out.copy_from_slice(band);
        }
    }
}

/// Where `decode_checked` puts the samples: in place, or through a sink.
enum Out<'a> {
    Slice(&'a mut [u8]),
    Sink(&'a mut dyn SampleSink),
}

/// The colour space of the samples inside the stream, as the stream's markers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredColorSpace {
    Grayscale,
    Ycbcr,
    Rgb,
}

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
        Out::Slice(&mut out),
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
    decode_checked(config, stream, &layout, &header, stored, Out::Sink(sink))
}

fn check_output_len(len: usize, sample_count: usize) -> Result<()> {
    if len != sample_count {
        return Err(CodecError::data(format!(
            "the output buffer holds {} bytes but the chunk shape needs {}",
            Int::of(len),
            Int::of(sample_count)
        )));
    }
    Ok(())
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
    decode_checked(config, stream, &layout, &header, stored, Out::Slice(out))
}

/// Reads the header and checks it against the chunk before anything large is allocated;
/// returns it with the stored colour space its markers give.
pub fn check_stream(
    stream: &[u8],
    layout: &ChunkLayout,
) -> Result<(StreamHeader, StoredColorSpace)> {
    let header = markers::read_header(stream)?;
    markers::check_complete(stream)?;
    if header.width != layout.width || header.height != layout.height {
        return Err(CodecError::mismatch(format!(
            "the stream holds a {} × {} (height × width) image but the chunk is {} × {}",
            Int(header.height.into()),
            Int(header.width.into()),
            Int(layout.height.into()),
            Int(layout.width.into())
        )));
    }
    if header.components.len() != usize::from(layout.components) {
        return Err(CodecError::mismatch(format!(
            "the stream has {} component{} but the chunk shape expects {}",
            Int::of(header.components.len()),
            if header.components.len() == 1 {
                ""
            } else {
                "s"
            },
            Int(layout.components.into())
        )));
    }
    check_sampling(&header)?;
    let stored = stored_color_space(&header)?;
    // Every 8×8 block of the first component (which has the largest sampling factors,
    // so covers the whole image) costs at least one bit of entropy-coded data, its DC
    // code. A shorter stream cannot hold the image it claims (zune-jpeg would pad it
    // with zeros): reject it before the chunk-sized output is allocated, so a few bytes
    // claiming 65535 × 65535 cost nothing whatever chunk shape is given.
    let blocks = u64::from(header.width).div_ceil(8) * u64::from(header.height).div_ceil(8);
    if (stream.len() as u64) * 8 < blocks {
        return Err(CodecError::corrupt(format!(
            "the stream is {} bytes, too short for the {} × {} image its header claims \
             ({} blocks need at least {} bytes)",
            Int::of(stream.len()),
            Int(header.height.into()),
            Int(header.width.into()),
            Int(blocks),
            Int(blocks.div_ceil(8))
        )));
    }
    Ok((header, stored))
}

fn decode_checked(
    config: &JpegConfig,
    stream: &[u8],
    layout: &ChunkLayout,
    header: &StreamHeader,
    stored: StoredColorSpace,
    out: Out<'_>,
) -> Result<()> {
    // zune-jpeg decides by itself that a stream is RGB when it has an Adobe transform 0
    // or component ids 'R','G','B' (libjpeg lets JFIF win). Ask it for the samples as it
    // sees them, then convert here wherever its view and the stream's markers differ.
    let zune_sees_rgb =
        header.components.len() == 3 && (header.adobe_transform == Some(0) || header.ids_are_rgb());
    let zune_raw = if zune_sees_rgb {
        ColorSpace::RGB
    } else {
        ColorSpace::YCbCr
    };
    let (zune_out, fixup): (ColorSpace, Fixup) = match (stored, config.decoded_color_space) {
        (StoredColorSpace::Grayscale, DecodedColorSpace::Grayscale) => {
            (ColorSpace::Luma, Fixup::None)
        }
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Rgb) if !zune_sees_rgb => {
            (ColorSpace::RGB, Fixup::None)
        }
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Rgb) => (zune_raw, Fixup::YcbcrToRgb),
        (StoredColorSpace::Ycbcr, DecodedColorSpace::Ycbcr) => (zune_raw, Fixup::None),
        (StoredColorSpace::Rgb, DecodedColorSpace::Rgb) if zune_sees_rgb => (zune_raw, Fixup::None),
        (StoredColorSpace::Rgb, DecodedColorSpace::Ycbcr) if zune_sees_rgb => {
            (zune_raw, Fixup::RgbToYcbcr)
        }
        (stored, decoded) => {
            // (the names `{stored:?}` gives, without linking the derived `Debug`)
            let stored = match stored {
                StoredColorSpace::Grayscale => "Grayscale",
                StoredColorSpace::Ycbcr => "Ycbcr",
                StoredColorSpace::Rgb => "Rgb",
            };
            return Err(CodecError::mismatch(format!(
                "a stream stored as {stored} cannot be decoded to decoded_color_space \"{}\"",
                decoded.name()
            )));
        }
    };
    let convert = in_place_conversion(fixup)?;
    let out = match out {
        Out::Sink(sink) => {
            sink.start(layout.sample_count())?;
            Out::Sink(sink)
        }
        out => out,
    };
    decode_samples(
        stream,
        layout,
        header,
        zune_out,
        zune_sees_rgb,
        convert,
        out,
    )
}

/// A conversion of the decoded samples where zune-jpeg's view of the stream differs from
/// what its markers say (component ids 'R','G','B' beside a JFIF marker; an RGB stream
/// decoded to YCbCr).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fixup {
    None,
    YcbcrToRgb,
    RgbToYcbcr,
}

/// The conversion for `fixup`. Streams that need one are rare, so the small modules (no
/// `full-decoder`) leave them to the full decoder rather than carry the conversions.
fn in_place_conversion(fixup: Fixup) -> Result<Option<InPlaceConversion>> {
    match fixup {
        Fixup::None => Ok(None),
        #[cfg(feature = "full-decoder")]
        Fixup::YcbcrToRgb => Ok(Some(crate::color::ycbcr_to_rgb_in_place)),
        #[cfg(feature = "full-decoder")]
        Fixup::RgbToYcbcr => Ok(Some(crate::color::rgb_to_ycbcr_in_place)),
        #[cfg(not(feature = "full-decoder"))]
        Fixup::YcbcrToRgb | Fixup::RgbToYcbcr => Err(needs_full_decoder(
            "a colour conversion after decoding, for colour markers that disagree (component \
             ids R,G,B beside a JFIF marker) or RGB samples decoded to YCbCr",
        )),
    }
}

/// The error a build without the `full-decoder` feature returns for a stream only the
/// full decoder decodes; `reason` says why (from the baseline decoder's [`baseline::Defer`]).
pub fn needs_full_decoder(reason: &str) -> CodecError {
    CodecError::new(
        ErrorKind::NeedsFullDecoder,
        format!(
            "this module's baseline decoder leaves this stream to the full decoder ({reason}); \
             JavaScript: `await initFullDecoder()` before decode()/decodeInto(), or use \
             decodeAsync(); register() and the worker pool load it by themselves; Rust: the \
             `full-decoder` cargo feature"
        ),
    )
}

/// Decodes the checked stream into `out` as `zune_out` samples, then `convert`s them: the
/// baseline decoder
/// (src/baseline/) first, byte-identical to the zune-jpeg path on every stream it accepts;
/// it defers everything else (progressive streams, unusual layouts or markers, corrupt
/// data) to zune-jpeg when it is built in (`full-decoder`), else the stream fails with
/// [`ErrorKind::NeedsFullDecoder`]. Without `full-decoder` nothing of zune-jpeg's decoder
/// but the kernels the baseline decoder calls is linked in.
fn decode_samples(
    stream: &[u8],
    layout: &ChunkLayout,
    header: &StreamHeader,
    zune_out: ColorSpace,
    zune_sees_rgb: bool,
    convert: Option<InPlaceConversion>,
    mut out: Out<'_>,
) -> Result<()> {
    let baseline_output = match zune_out {
        ColorSpace::Luma => baseline::Output::Luma,
        ColorSpace::RGB if !zune_sees_rgb => baseline::Output::YcbcrToRgb,
        _ => baseline::Output::Copy,
    };
    let deferred = if header.process == CodingProcess::Progressive {
        baseline::Defer("a progressive stream (SOF2)")
    } else if header.separate_scans() {
        baseline::Defer("components coded in separate scans")
    } else if !baseline_enabled() {
        baseline::Defer("switched off for a test")
    } else {
        let target = match &mut out {
            Out::Slice(out) => baseline::Target::Slice(out),
            Out::Sink(sink) => baseline::Target::Sink {
                sink: *sink,
                len: layout.sample_count(),
            },
        };
        match baseline::decode_to(stream, baseline_output, target, convert) {
            Ok(()) => return Ok(()),
            Err(defer) => defer,
        }
    };
    #[cfg(feature = "full-decoder")]
    {
        let _ = deferred;
        if header.separate_scans() && header.process != CodingProcess::Progressive {
            check_separate_scans(stream, header)?;
        }
        let convert = convert.unwrap_or(|_| {});
        // Before anything is allocated (the chunk's buffer too, where the decoder must hold
        // it): an image too large for memory fails at once.
        let whole_chunk = if matches!(out, Out::Sink(_)) { layout.sample_count() } else { 0 };
        reserve_for_zune(header, whole_chunk)?;
        match out {
            Out::Slice(out) => {
                run_zune(stream, layout, zune_out, out)?;
                convert(out);
                Ok(())
            }
            Out::Sink(sink) => {
                let mut whole = decoded_chunk_buffer(whole_chunk)?;
                run_zune(stream, layout, zune_out, &mut whole)?;
                convert(&mut whole);
                sink.write(0, &whole);
                Ok(())
            }
        }
    }
    #[cfg(not(feature = "full-decoder"))]
    {
        let _ = (layout, convert, out);
        Err(needs_full_decoder(deferred.0))
    }
}

/// zune-jpeg over the whole stream, asked for `zune_out`.
#[cfg(feature = "full-decoder")]
fn run_zune(
    stream: &[u8],
    layout: &ChunkLayout,
    zune_out: ColorSpace,
    out: &mut [u8],
) -> Result<()> {
    let options = DecoderOptions::default()
        .set_max_width(usize::from(layout.width))
        .set_max_height(usize::from(layout.height))
        .set_strict_mode(true)
        .jpeg_set_max_scans(MAX_SCANS)
        .jpeg_set_out_colorspace(zune_out);
    run_decoder(stream, options, out).map_err(|e| match e {
        RunError::Decoder(e) => decoder_error(e),
        RunError::Size(size) => CodecError::mismatch(format!(
            "the decoder would produce {size:?} bytes but the chunk holds {}",
            out.len()
        )),
    })
}

/// The scans of a sequential stream that codes its components in separate scans (as
/// libjpeg's `cjpeg -scans` and the jpeg-encoder crate's optimised colour do), in the forms
/// zune-jpeg decodes rightly (with vendor/PATCHES.md's zune-jpeg section on such scans;
/// `tests/interop.rs` checks them against libjpeg-turbo): the first scan starts with the
/// first component, and a scan of several components has none sampled more finely than
/// the others (zune places such a scan's blocks as if each had factors 1 × 1). Other forms
/// are refused by name rather than decoded wrongly.
#[cfg(feature = "full-decoder")]
fn check_separate_scans(stream: &[u8], header: &StreamHeader) -> Result<()> {
    let index_of = |id: u8| header.components.iter().position(|c| c.id == id);
    let mut pos = 2;
    let mut first = true;
    loop {
        let (marker, after) = markers::next_marker(stream, pos)?;
        match marker {
            0xD9 => return Ok(()),
            0x01 | 0xD0..=0xD7 => {
                pos = after;
                continue;
            }
            _ => {}
        }
        let (payload, next) = markers::segment(stream, after, marker)?;
        pos = next;
        if marker != 0xDA {
            continue;
        }
        let count = usize::from(*payload.first().unwrap_or(&0));
        let ids = payload.get(1..1 + 2 * count).unwrap_or(&[]).iter().step_by(2);
        let scan: Vec<usize> = ids.filter_map(|&id| index_of(id)).collect();
        if first && scan.first() != Some(&0) {
            return Err(CodecError::unsupported(
                "a sequential stream whose first scan does not start with the first component is \
                 not supported by this decoder",
            ));
        }
        let subsampled = |&i: &usize| {
            header.components.get(i).is_some_and(|c| (c.horizontal, c.vertical) != (1, 1))
        };
        if scan.len() > 1 && scan.iter().any(subsampled) {
            return Err(CodecError::unsupported(
                "a sequential stream with a scan that interleaves some of its components, one of \
                 them with sampling factors other than 1 × 1, is not supported by this decoder",
            ));
        }
        first = false;
        pos = markers::entropy_coded_end(stream, pos);
    }
}

/// The sizes in bytes of the largest buffers zune-jpeg allocates for `header`: a
/// progressive stream (or one that codes its components in separate scans) keeps every
/// component's coefficients, as `i16`, until its last scan (`mcu_prog.rs`, `mcu.rs`); the
/// rows of MCUs that every stream needs are small beside the chunk.
#[cfg(feature = "full-decoder")]
pub fn zune_buffer_sizes(header: &StreamHeader) -> Vec<u64> {
    let (width, height) = (u64::from(header.width), u64::from(header.height));
    let largest = |factor: fn(&markers::ComponentSpec) -> u8| {
        header.components.iter().map(|c| u64::from(factor(c))).max().unwrap_or(1).max(1)
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
            (interleaved_width.max(blocks_width), interleaved_height.max(blocks_height))
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

/// Reserves, and frees, the memory zune-jpeg is about to allocate (after `first` bytes for
/// the decoded chunk, if the caller is about to allocate them), so that an image too large
/// for it is an error that says so rather than an allocation failure inside zune (an
/// abort, which is a trap in wasm, where memory ends at 4 GiB). The allocator keeps the
/// freed memory, and the buffers, allocated in the same order, are served from it.
#[cfg(feature = "full-decoder")]
fn reserve_for_zune(header: &StreamHeader, first: usize) -> Result<()> {
    let mut sizes = zune_buffer_sizes(header);
    if first > 0 {
        sizes.insert(0, first as u64);
    }
    let mut held: Vec<Vec<u8>> = Vec::new();
    if held.try_reserve_exact(sizes.len()).is_err() {
        return Err(too_large_for_zune(header, &sizes));
    }
    for &size in &sizes {
        let mut buffer = Vec::new();
        match usize::try_from(size) {
            Ok(size) if buffer.try_reserve_exact(size).is_ok() => held.push(buffer),
            _ => return Err(too_large_for_zune(header, &sizes)),
        }
    }
    Ok(())
}

#[cfg(feature = "full-decoder")]
fn too_large_for_zune(header: &StreamHeader, sizes: &[u64]) -> CodecError {
    let kind = if header.process == CodingProcess::Progressive {
        "progressive stream, whose coefficients the decoder holds until its last scan,"
    } else {
        "stream"
    };
    CodecError::unsupported(format!(
        "decoding this {} × {} (height × width) {kind} needs {} bytes of memory, more than \
         this platform's memory can take (WebAssembly: 4 GiB in all, 2 GiB in one piece)",
        Int(header.height.into()),
        Int(header.width.into()),
        Int(sizes.iter().sum())
    ))
}

/// The Adobe APP14 marker first, as the spec says it indicates the stored colour space:
/// transform 0 → RGB, 1 → YCbCr, 2 (YCCK) and unknown transforms rejected; else JFIF →
/// YCbCr; else ids 'R','G','B' → RGB; else YCbCr. Where this differs from libjpeg-turbo
/// (which lets JFIF win over the Adobe marker, and reads YCCK/unknown transforms on three
/// components as YCbCr with a warning) the stream is rejected: JFIF beside transform 0
/// (decoders disagree on it) and transforms other than 0 and 1 — the spec forbids
/// returning wrongly converted data. tests/colour_markers.rs holds each rule.
pub fn stored_color_space(header: &StreamHeader) -> Result<StoredColorSpace> {
    if header.components.len() == 1 {
        return Ok(StoredColorSpace::Grayscale);
    }
    match header.adobe_transform {
        Some(0) if header.jfif => Err(CodecError::unsupported(
            "the stream has both a JFIF marker (meaning YCbCr) and an Adobe marker with transform 0 \
             (meaning RGB, no transform); decoders disagree on which wins, so it is rejected rather \
             than risk returning wrongly converted colours",
        )),
        Some(0) => Ok(StoredColorSpace::Rgb),
        Some(1) => Ok(StoredColorSpace::Ycbcr),
        Some(2) => Err(CodecError::unsupported(
            "the Adobe marker gives colour transform 2 (YCCK), which this codec cannot honour",
        )),
        Some(t) => Err(CodecError::unsupported(format!(
            "the Adobe marker gives an unknown colour transform {} (known: 0 = none/RGB, 1 = YCbCr, 2 = YCCK)",
            Int(t.into())
        ))),
        None if header.jfif => Ok(StoredColorSpace::Ycbcr),
        None if header.ids_are_rgb() => Ok(StoredColorSpace::Rgb),
        None => Ok(StoredColorSpace::Ycbcr),
    }
}

/// Sampling layouts this decoder reconstructs correctly; the others are rejected by name
/// rather than decoded wrongly:
/// - factors 1, 2 or 4 that divide the largest factor, at most 10 blocks per MCU (T.81 B.2.3);
/// - the first (luma) component has the largest factors (zune-jpeg upsamples relative to it).
///
/// (Sequential streams that code components in separate scans: `check_separate_scans`.)
fn check_sampling(header: &StreamHeader) -> Result<()> {
    if header.components.len() == 1 {
        return Ok(());
    }
    let h_max = header
        .components
        .iter()
        .map(|c| c.horizontal)
        .max()
        .unwrap_or(1);
    let v_max = header
        .components
        .iter()
        .map(|c| c.vertical)
        .max()
        .unwrap_or(1);
    let blocks: u32 = header
        .components
        .iter()
        .map(|c| u32::from(c.horizontal) * u32::from(c.vertical))
        .sum();
    let describe = || {
        use std::fmt::Write;
        let mut text = owned("[");
        for (i, c) in header.components.iter().enumerate() {
            let separator = if i == 0 { "" } else { ", " };
            let _ = write!(
                text,
                "{separator}[{}, {}]",
                Int(c.horizontal.into()),
                Int(c.vertical.into())
            );
        }
        crate::error::append(&mut text, "]");
        text
    };
    if blocks > 10 {
        return Err(CodecError::corrupt(format!(
            "sampling factors {} put {} blocks in a minimum coded unit; JPEG allows at most 10",
            describe(),
            Int(blocks.into())
        )));
    }
    let divides = |f: u8, max: u8| f != 3 && max.is_multiple_of(f);
    if header
        .components
        .iter()
        .any(|c| !divides(c.horizontal, h_max) || !divides(c.vertical, v_max))
    {
        return Err(CodecError::unsupported(format!(
            "sampling factors {} are not supported by this decoder (factors must be 1, 2 or 4 and \
             divide the largest factor)",
            describe()
        )));
    }
    let first = header.components[0];
    if first.horizontal != h_max || first.vertical != v_max {
        return Err(CodecError::unsupported(format!(
            "sampling factors {} are not supported by this decoder: a later component is sampled \
             more finely than the first",
            describe()
        )));
    }
    Ok(())
}

/// Whether decodes try the baseline decoder first: always, except in tests that compare
/// it with the zune-jpeg path (`set_baseline_for_tests`, test builds only).
fn baseline_enabled() -> bool {
    #[cfg(feature = "scalar-reference")]
    return BASELINE.with(|f| f.get());
    #[cfg(not(feature = "scalar-reference"))]
    true
}

#[cfg(feature = "scalar-reference")]
std::thread_local! {
    static BASELINE: core::cell::Cell<bool> = const { core::cell::Cell::new(true) };
}

/// Test hook: `false` makes this thread's decodes skip the baseline decoder (src/baseline/)
/// and use zune-jpeg, so a test can compare both (tests/baseline_decoder.rs). Not part of
/// the API; test builds only.
#[doc(hidden)]
#[cfg(feature = "scalar-reference")]
pub fn set_baseline_for_tests(yes: bool) {
    BASELINE.with(|f| f.set(yes));
}

#[cfg(feature = "full-decoder")]
enum RunError {
    Decoder(DecodeErrors),
    Size(Option<usize>),
}

#[cfg(feature = "full-decoder")]
impl From<DecodeErrors> for RunError {
    fn from(e: DecodeErrors) -> Self {
        RunError::Decoder(e)
    }
}

#[cfg(feature = "full-decoder")]
/// One zune-jpeg decoder over `stream`.
fn run_decoder(
    stream: &[u8],
    options: DecoderOptions,
    out: &mut [u8],
) -> core::result::Result<(), RunError> {
    let mut decoder = JpegDecoder::new_with_options(ZCursor::new(stream), options);
    decoder.decode_headers()?;
    if decoder.output_buffer_size() != Some(out.len()) {
        return Err(RunError::Size(decoder.output_buffer_size()));
    }
    decoder.decode_into(out)?;
    Ok(())
}

#[cfg(feature = "full-decoder")]
fn decoder_error(e: zune_jpeg::errors::DecodeErrors) -> CodecError {
    CodecError::corrupt(format!("the decoder reported: {e}"))
}
