//! A purpose-built decoder for the common case: sequential (SOF0, SOF1) 8-bit Huffman
//! streams whose one scan holds every component (grayscale with factors 1×1, or YCbCr /
//! RGB with luma factors 1, 2 or 4 and chroma 1×1: the eight baseline schemes), restart
//! intervals, any size. It decodes MCU row by MCU row (Huffman → IDCT into per-component
//! row buffers → up-sampling and colour conversion straight into the output) with
//! zune-jpeg's own stages (`zune_jpeg::__kernels`), so its output is byte-identical to
//! the zune-jpeg path in `decode::full`; it links none of zune's marker parser,
//! progressive decoder or general post-processing.
//!
//! Anything it does not handle exactly like zune-jpeg returns [`Defer`] (corrupt
//! entropy data, unexpected markers, other layouts, ...); the caller then decodes with
//! zune-jpeg. It never has to reproduce zune's errors, only its samples.
//!
//! Stages: `headers.rs` (tables, frame, scan), `huffman.rs` (scan data and block
//! decoding), `scan.rs` (MCU loop, restarts), `idct.rs` (the IDCT kernel of each block),
//! `output.rs` (up-sampling, colour, crop).

mod headers;
mod huffman;
mod idct;
mod output;
mod scan;

use zune_jpeg::__kernels as zk;
use zune_jpeg::zune_core::colorspace::ColorSpace;
use zune_jpeg::zune_core::options::DecoderOptions;

use idct::Idct;
use output::{Chroma, Sink, Writer};
use scan::{RowBuffer, Scan};

use crate::sink::{Conversion, SampleSink, Target};

/// Why the baseline decoder left a stream to zune-jpeg.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defer(pub &'static str);

impl Defer {
    /// A header (marker segment) the baseline decoder does not read exactly like zune-jpeg.
    pub const HEADERS: Defer = Defer("markers or segments it does not read");
    /// A size or index check that holds for every stream it accepts (never seen in tests):
    /// kept so that nothing can panic.
    pub const INTERNAL: Defer = Defer("internal check");
}

/// The samples asked for, as `decode_checked` asks zune-jpeg for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// one component, as stored
    Luma,
    /// three components as stored (YCbCr or RGB), interleaved
    Copy,
    /// YCbCr converted to RGB
    YcbcrToRgb,
}

/// Decodes `stream` into `out` (height × width × 1 or 3 samples) or defers (for tests that
/// call the baseline decoder alone).
#[cfg(feature = "test-hooks")]
pub fn decode(stream: &[u8], output: Output, out: &mut [u8]) -> Result<(), Defer> {
    decode_to(stream, output, Target::Slice(out), None)
}

/// The most memory the row buffers of two restart intervals decoded together may take
/// (`Scan::decode_interval_pair`); wider or longer intervals are decoded a row at a time.
const PAIR_BUFFER_BYTES: usize = 4 << 20;

/// [`decode`] into `target`, each band of rows converted by `convert` before it is final
/// (in the slice) or handed to the sink; the bands come in order, contiguous, each row once.
pub(crate) fn decode_to(
    stream: &[u8],
    output: Output,
    target: Target<'_>,
    convert: Option<Conversion>,
) -> Result<(), Defer> {
    let mut frame = headers::parse(stream)?;
    if let [only] = &mut frame.components[..] {
        // zune-jpeg decodes a single component with any factors as 1 × 1 blocks
        // (`reset_params`), as T.81 says for a one-component scan, but first rejects a
        // horizontal factor that is not a power of two (`components.rs`); those defer, so
        // that both decoders give zune's error
        if !matches!(only.h, 1 | 2 | 4) || !(1..=4).contains(&only.v) {
            return Err(Defer("sampling factors"));
        }
        only.h = 1;
        only.v = 1;
    }
    let comps = &frame.components;
    let (width, height) = (frame.width, frame.height);
    let nc = comps.len();
    match (nc, output) {
        (1, Output::Luma) | (3, Output::Copy | Output::YcbcrToRgb) => {}
        _ => return Err(Defer("component count and output")),
    }
    let (h_max, v_max) = (comps[0].h, comps[0].v);
    let layout_ok = if nc == 1 {
        h_max == 1 && v_max == 1
    } else {
        matches!((h_max, v_max), (1 | 2 | 4, 1 | 2 | 4))
            && h_max * v_max <= 8
            && comps[1..].iter().all(|c| c.h == 1 && c.v == 1)
    };
    if !layout_ok {
        return Err(Defer("sampling layout"));
    }
    let bpp = if nc == 1 { 1 } else { 3 };
    if width.checked_mul(height).and_then(|n| n.checked_mul(bpp)) != Some(target.len()) {
        return Err(Defer::INTERNAL);
    }
    let mcu_x = width.div_ceil(8 * h_max);
    let mcu_y = height.div_ceil(8 * v_max);
    // zune's padded width: every plane row is this long (luma width_stride)
    let padded_width = mcu_x * 8 * h_max;

    let options = DecoderOptions::default();
    let idct = Idct::new(&options);
    let (chroma, upsampler): (Chroma, zk::UpSampler) = match (h_max, v_max) {
        _ if nc == 1 => (Chroma::None, zk::generic_sampler()),
        (1, 1) => (Chroma::None, zk::generic_sampler()),
        (2, 1) => (Chroma::Rows, zk::choose_horizontal_samp_function(&options)),
        (1, 2) => (Chroma::Vertical, zk::choose_v_samp_function(&options)),
        (2, 2) => (Chroma::Vertical, zk::choose_hv_samp_function(&options)),
        _ => (Chroma::Rows, zk::generic_sampler()),
    };
    let convert16 =
        zk::choose_ycbcr_to_rgb_convert_func(ColorSpace::RGB, &options).ok_or(Defer::INTERNAL)?;

    let new_rows = || -> Vec<RowBuffer> {
        comps
            .iter()
            .map(|c| {
                let stride = mcu_x * c.h * 8;
                RowBuffer {
                    samples: vec![0; stride * c.v * 8],
                    stride,
                    h: c.h,
                    v: c.v,
                }
            })
            .collect()
    };
    let mut prev = if chroma == Chroma::Vertical {
        new_rows()
    } else {
        Vec::new()
    };
    let up_len = if chroma == Chroma::Vertical {
        2 * padded_width
    } else {
        padded_width
    };
    let up = if nc == 3 {
        [vec![0; up_len], vec![0; up_len]]
    } else {
        [Vec::new(), Vec::new()]
    };
    // zune's up-sampler scratch: the widest component row × 8
    let scratch = if chroma == Chroma::Vertical {
        vec![0; padded_width * 8]
    } else {
        Vec::new()
    };

    let mut scan = Scan::new(stream, &frame, mcu_x, idct)?;
    // the caller checked width × height × bpp against the target's length
    let row_bytes = width * bpp;
    let band_rows = (output::BAND_BYTES / row_bytes.max(1)).min(height).max(1);
    let mut band = Vec::new();
    let (buf, sink): (&mut [u8], Option<&mut dyn SampleSink>) = match target {
        Target::Slice(out) => (out, None),
        Target::Sink { sink, .. } => {
            band.resize(band_rows * row_bytes, 0);
            (&mut band, Some(sink))
        }
    };
    let mut writer = Writer {
        sink: Sink {
            buf,
            sink,
            buf_row: 0,
            band_rows,
            first: 0,
            rows: 0,
            convert,
            row_bytes,
            width,
            height,
            padded_width,
            output,
            convert16,
        },
        chroma,
        upsampler,
        v_max,
        up,
        scratch,
    };
    // Restart intervals of whole MCU rows (our encoder's streams) are decoded two at a
    // time, into `sets` (the first interval's rows, then the second's); other rows one at
    // a time, into `sets[0]`. One call site for each stage keeps each inlined once.
    let k = scan.rows_per_interval();
    // (a stream's DRI can name any interval: no pairs where their rows would take more
    // than PAIR_BUFFER_BYTES; our encoder's take 0.8 MB for a 2048-wide 4:2:0 chunk)
    let set_bytes: usize = comps.iter().map(|c| mcu_x * c.h * 8 * c.v * 8 * 2).sum();
    let pairs = k > 0 && 2 * k <= mcu_y && set_bytes.saturating_mul(2 * k) <= PAIR_BUFFER_BYTES;
    let set_count = if pairs { 2 * k } else { 1 };
    let mut sets: Vec<Vec<RowBuffer>> = (0..set_count).map(|_| new_rows()).collect();
    let mut i = 0;
    while i < mcu_y {
        let count = if set_count > 1 && i + 2 * k <= mcu_y && scan.can_pair() {
            let (first, second) = sets.split_at_mut(k);
            scan.decode_interval_pair(first, second)?;
            set_count
        } else {
            scan.decode_row(sets.first_mut().ok_or(Defer::INTERNAL)?)?;
            1
        };
        let decoded = sets.get(..count).ok_or(Defer::INTERNAL)?;
        for (r, rows) in decoded.iter().enumerate() {
            // the row above: the one before these, then their own
            let above = match r.checked_sub(1) {
                Some(q) => decoded.get(q).ok_or(Defer::INTERNAL)?,
                None => &prev,
            };
            writer.write_row(i + r, i + r + 1 == mcu_y, rows, above)?;
        }
        if chroma == Chroma::Vertical {
            // the last row written is the next one's previous; the others are free
            core::mem::swap(&mut prev, sets.get_mut(count - 1).ok_or(Defer::INTERNAL)?);
        }
        i += count;
    }
    scan.finish()?;
    writer.sink.finish()
}
