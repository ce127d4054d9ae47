//! The full decoder (the `full-decoder` feature): zune-jpeg, for the streams the baseline
//! decoder defers, with the checks and the memory reservation that keep zune from
//! decoding wrongly or failing inside on what it cannot place or hold.

use zune_jpeg::errors::DecodeErrors;
use zune_jpeg::zune_core::bytestream::ZCursor;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;
use zune_jpeg::JpegDecoder;

use super::{decoded_chunk_buffer, zune_buffer_sizes};
use crate::chunk::ChunkLayout;
use crate::error::{CodecError, Int, Result};
use crate::markers::{self, CodingProcess, StreamHeader};
use crate::sink::{Conversion, Target};

/// Progressive streams with more scans than this are rejected (a cap against streams
/// built from thousands of tiny scans; real encoders write about 10).
pub const MAX_SCANS: usize = 100;

/// Decodes the checked stream into `out` with zune-jpeg, asked for `zune_out`, then
/// `convert`s the samples (a sink gets them as one band).
pub(super) fn decode(
    stream: &[u8],
    layout: &ChunkLayout,
    header: &StreamHeader,
    zune_out: ColorSpace,
    convert: Option<Conversion>,
    out: Target<'_>,
) -> Result<()> {
    if header.separate_scans() && header.process != CodingProcess::Progressive {
        check_separate_scans(stream, header)?;
    }
    let convert = convert.unwrap_or(|_| {});
    // Before anything is allocated (the chunk's buffer too, where the decoder must hold
    // it): an image too large for memory fails at once.
    let whole_chunk = if matches!(out, Target::Sink { .. }) {
        layout.sample_count()
    } else {
        0
    };
    reserve_for_zune(header, whole_chunk)?;
    match out {
        Target::Slice(out) => {
            run_zune(stream, layout, zune_out, out)?;
            convert(out);
            Ok(())
        }
        Target::Sink { sink, .. } => {
            let mut whole = decoded_chunk_buffer(whole_chunk)?;
            run_zune(stream, layout, zune_out, &mut whole)?;
            convert(&mut whole);
            sink.write(0, &whole);
            Ok(())
        }
    }
}

/// zune-jpeg over the whole stream, asked for `zune_out`.
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
        let ids = payload
            .get(1..1 + 2 * count)
            .unwrap_or(&[])
            .iter()
            .step_by(2);
        let scan: Vec<usize> = ids.filter_map(|&id| index_of(id)).collect();
        if first && scan.first() != Some(&0) {
            return Err(CodecError::unsupported(
                "a sequential stream whose first scan does not start with the first component is \
                 not supported by this decoder",
            ));
        }
        let subsampled = |&i: &usize| {
            header
                .components
                .get(i)
                .is_some_and(|c| (c.horizontal, c.vertical) != (1, 1))
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

/// Reserves, and frees, the memory zune-jpeg is about to allocate (after `first` bytes for
/// the decoded chunk, if the caller is about to allocate them), so that an image too large
/// for it is an error that says so rather than an allocation failure inside zune (an
/// abort, which is a trap in wasm, where memory ends at 4 GiB). The allocator keeps the
/// freed memory, and the buffers, allocated in the same order, are served from it.
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

enum RunError {
    Decoder(DecodeErrors),
    Size(Option<usize>),
}

impl From<DecodeErrors> for RunError {
    fn from(e: DecodeErrors) -> Self {
        RunError::Decoder(e)
    }
}

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

fn decoder_error(e: zune_jpeg::errors::DecodeErrors) -> CodecError {
    CodecError::corrupt(format!("the decoder reported: {e}"))
}
