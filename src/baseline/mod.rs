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
pub(crate) use output::Out;
use output::{Chroma, Sink, Writer};
pub(crate) use scan::Stream;
use scan::{RowBuffer, Scan};

use crate::sink::{Conversion, Target};

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
    let mut bands = Bands::new(
        Stream::Borrowed(stream),
        output,
        Some(target.len()),
        convert,
    )?;
    let mut band = Vec::new();
    let mut out = match target {
        Target::Slice(buf) => Out { buf, sink: None },
        Target::Sink { sink, .. } => {
            band.resize(bands.band_bytes(), 0);
            Out {
                buf: &mut band,
                sink: Some(sink),
            }
        }
    };
    while bands.step(&mut out)? {}
    Ok(())
}

/// A baseline decode in progress, between MCU rows: what [`decode_to`] runs to the end at
/// once, and what `decode::RowDecoder` runs a step at a time, so that its caller takes the
/// image a band of rows at a time. It owns everything but where the rows go ([`Out`]):
/// the tables, the (destuffed) scan data, the MCU row buffers and the up-sampler's rows.
pub(crate) struct Bands {
    scan: Scan,
    writer: Writer,
    /// the MCU rows being decoded: the first interval's rows, then the second's, when
    /// intervals are decoded in pairs; else one
    sets: Vec<Vec<RowBuffer>>,
    /// the MCU row before them (vertical chroma only)
    prev: Vec<RowBuffer>,
    chroma: Chroma,
    /// MCU rows per restart interval (0: not whole rows)
    k: usize,
    mcu_y: usize,
    /// the next MCU row to decode
    next: usize,
    finished: bool,
}

impl Bands {
    /// Reads the headers and sets up the decode of `stream` to `output`, or defers. `len`:
    /// the samples of the target, which must be the image's (None: rows handed over in
    /// bands, whose caller has checked the frame's size). (Inlined in the modules without
    /// the encoder, as `step`: `decode_to` is then one function with its state in locals,
    /// and the decode-only module no larger than when its loop was written out there; the
    /// whole codec, which also runs them for `decode::RowDecoder`, keeps one copy.)
    #[cfg_attr(not(feature = "encoder"), inline(always))]
    pub(crate) fn new(
        stream: Stream<'_>,
        output: Output,
        len: Option<usize>,
        convert: Option<Conversion>,
    ) -> Result<Bands, Defer> {
        let mut frame = headers::parse(stream.bytes())?;
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
        if let Some(len) = len {
            if width.checked_mul(height).and_then(|n| n.checked_mul(bpp)) != Some(len) {
                return Err(Defer::INTERNAL);
            }
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
        let convert16 = zk::choose_ycbcr_to_rgb_convert_func(ColorSpace::RGB, &options)
            .ok_or(Defer::INTERNAL)?;

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
        let prev = if chroma == Chroma::Vertical {
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

        // Restart intervals of whole MCU rows (our encoder's streams) are decoded two at a
        // time, into `sets` (the first interval's rows, then the second's); other rows one at
        // a time, into `sets[0]`. (a stream's DRI can name any interval: no pairs where their
        // rows would take more than PAIR_BUFFER_BYTES; our encoder's take 0.8 MB for a
        // 2048-wide 4:2:0 chunk)
        let set_bytes: usize = comps.iter().map(|c| mcu_x * c.h * 8 * c.v * 8 * 2).sum();
        let sets_of = |k: usize| {
            let pairs =
                k > 0 && 2 * k <= mcu_y && set_bytes.saturating_mul(2 * k) <= PAIR_BUFFER_BYTES;
            if pairs {
                2 * k
            } else {
                1
            }
        };
        let row_bytes = width * bpp;
        let band_rows = (output::BAND_BYTES / row_bytes.max(1)).min(height).max(1);
        let scan = Scan::new(stream, &frame, mcu_x, idct)?;
        let k = scan.rows_per_interval();
        let sets: Vec<Vec<RowBuffer>> = (0..sets_of(k)).map(|_| new_rows()).collect();
        let writer = Writer {
            sink: Sink {
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
        Ok(Bands {
            scan,
            writer,
            sets,
            prev,
            chroma,
            k,
            mcu_y,
            next: 0,
            finished: false,
        })
    }

    /// The image's width, height and samples per pixel, as the frame says.
    pub(crate) fn image(&self) -> (usize, usize, usize) {
        let sink = &self.writer.sink;
        (sink.width, sink.height, sink.row_bytes / sink.width.max(1))
    }

    /// The bytes of the band buffer a sink's bands are made in (`Out::buf`).
    pub(crate) fn band_bytes(&self) -> usize {
        let sink = &self.writer.sink;
        sink.band_rows * sink.row_bytes
    }

    /// Decodes the next MCU row (or pair of restart intervals) and writes the rows it
    /// completes to `out` (a sink gets those of the bands they fill); after the last, checks
    /// the scan's end and writes the last band. Returns whether there is more to decode.
    #[cfg_attr(not(feature = "encoder"), inline(always))]
    pub(crate) fn step(&mut self, out: &mut Out<'_>) -> Result<bool, Defer> {
        if self.finished {
            return Ok(false);
        }
        let (i, k, mcu_y) = (self.next, self.k, self.mcu_y);
        if i >= mcu_y {
            self.scan.finish()?;
            self.writer.sink.finish(out)?;
            self.finished = true;
            return Ok(false);
        }
        // (the whole codec also decodes in bands, `decode::RowDecoder`, scans of any length:
        // the bytes read so far are dropped, so bit positions stay small)
        #[cfg(feature = "encoder")]
        self.scan.drop_consumed();
        let set_count = self.sets.len();
        let count = if set_count > 1 && i + 2 * k <= mcu_y && self.scan.can_pair() {
            let (first, second) = self.sets.split_at_mut(k);
            self.scan.decode_interval_pair(first, second)?;
            set_count
        } else {
            self.scan
                .decode_row(self.sets.first_mut().ok_or(Defer::INTERNAL)?)?;
            1
        };
        let decoded = self.sets.get(..count).ok_or(Defer::INTERNAL)?;
        for (r, rows) in decoded.iter().enumerate() {
            // the row above: the one before these, then their own
            let above = match r.checked_sub(1) {
                Some(q) => decoded.get(q).ok_or(Defer::INTERNAL)?,
                None => &self.prev,
            };
            self.writer
                .write_row(out, i + r, i + r + 1 == mcu_y, rows, above)?;
        }
        if self.chroma == Chroma::Vertical {
            // the last row written is the next one's previous; the others are free
            core::mem::swap(
                &mut self.prev,
                self.sets.get_mut(count - 1).ok_or(Defer::INTERNAL)?,
            );
        }
        self.next = i + count;
        Ok(true)
    }
}
