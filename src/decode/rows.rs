//! A whole JPEG image decoded a band of rows at a time, pulled by the caller: the
//! converter's JPEG input (src/convert/jpeg.rs), which takes rows when its pyramid is ready
//! for them, so the decoder cannot push every band to it (a queue of bands would grow).
//! [`RowDecoder`] holds the parsed headers, the destuffed scan data and the baseline
//! decoder's state between MCU rows (`baseline::Bands`); each [`RowDecoder::next_rows`]
//! decodes on until it has a band of rows. Memory: the stream (destuffed in place), a few
//! MCU rows of coefficients and up-sampled chroma, and the band: nothing that grows with
//! the image's height.
//!
//! Only streams the baseline decoder takes are decoded in bands. The others
//! (progressive ones, which need every coefficient until the last scan; components in
//! separate scans; what the baseline decoder defers) are [`Rows::Whole`]: the caller
//! decodes them whole ([`decode`](super::decode)), and the `bytes` of [`Rows::Whole`] say
//! beforehand how much memory that takes. The same header checks and colour decisions
//! as [`decode`](super::decode), so the same samples.

use super::checks::check_stream;
use super::{baseline_enabled, colour, zune_buffer_sizes};
use crate::baseline::{self, Bands, Out, Stream};
use crate::chunk::ChunkLayout;
use crate::config::JpegConfig;
use crate::error::{CodecError, ErrorKind, Int, Result};
use crate::markers::CodingProcess;
use crate::sink::SampleSink;

/// What [`RowDecoder::new`] makes of a stream.
pub enum Rows {
    /// The image's rows, a band at a time.
    Bands(RowDecoder),
    /// A stream only a whole-image decode takes (with [`decode`](super::decode)):
    /// `reason` says why (e.g. "a progressive stream (SOF2)"); `bytes` is the memory
    /// that decode needs: the decoded image plus the largest buffers of the full decoder
    /// (for a progressive stream, every coefficient), as it reserves them before decoding.
    Whole { reason: String, bytes: u64 },
}

/// A stream's rows, a band of whole rows at a time, top to bottom (see the module's
/// documentation).
pub struct RowDecoder {
    bands: Bands,
    /// the band buffer the baseline decoder makes bands in
    band: Vec<u8>,
    /// the rows the last `next_rows` hands over
    ready: Vec<u8>,
    row_bytes: usize,
    height: usize,
    rows_done: usize,
    failed: bool,
}

/// The bands of the baseline decoder, appended to `ready`.
struct Collect<'a>(&'a mut Vec<u8>);

impl SampleSink for Collect<'_> {
    fn start(&mut self, _: usize) -> Result<()> {
        Ok(())
    }

    fn write(&mut self, _offset: usize, band: &[u8]) {
        self.0.extend_from_slice(band);
    }
}

impl RowDecoder {
    /// Checks `stream` as [`decode`](super::decode) does for a chunk of `shape` (the
    /// image's own: (H, W) or (H, W, 3)) and `config` (its colour spaces), then either
    /// sets up its decode in bands or says it must be decoded whole. Unlike `decode`, the
    /// image need not fit in memory (on wasm32, 4 GiB).
    pub fn new(config: &JpegConfig, stream: Vec<u8>, shape: &[u64]) -> Result<Rows> {
        let layout = ChunkLayout::for_config_in_bands(shape, config)?;
        let (header, stored) = check_stream(&stream, &layout)?;
        let whole = |reason: &str| Rows::Whole {
            reason: reason.into(),
            bytes: whole_decode_bytes(&layout, &header),
        };
        let plan = match colour::plan(&header, stored, config.decoded_color_space) {
            Ok(plan) => plan,
            // (a colour conversion after decoding that this build leaves to the full decoder)
            Err(e) if e.kind() == ErrorKind::NeedsFullDecoder => return Ok(whole(e.message())),
            Err(e) => return Err(e),
        };
        if header.process == CodingProcess::Progressive {
            return Ok(whole("a progressive stream (SOF2)"));
        }
        if header.separate_scans() {
            return Ok(whole("components coded in separate scans"));
        }
        if !baseline_enabled() {
            return Ok(whole("the baseline decoder is switched off for a test"));
        }
        let output = plan.baseline_output();
        let bands = match Bands::new(Stream::Owned(stream), output, None, plan.convert) {
            Ok(bands) => bands,
            Err(defer) => return Ok(whole(defer.0)),
        };
        let (width, height, bpp) = bands.image();
        if (width, height, bpp)
            != (
                usize::from(layout.width),
                usize::from(layout.height),
                usize::from(layout.components),
            )
        {
            return Ok(whole(baseline::Defer::INTERNAL.0));
        }
        // the band buffer: up to 64 KiB, or one row (at most 196,605 bytes)
        let band = vec![0; bands.band_bytes()];
        let decoder = RowDecoder {
            band,
            ready: Vec::new(),
            row_bytes: width * bpp,
            height,
            rows_done: 0,
            failed: false,
            bands,
        };
        Ok(Rows::Bands(decoder))
    }

    /// Bytes per row: width × samples per pixel.
    pub fn row_bytes(&self) -> usize {
        self.row_bytes
    }

    /// Rows handed over so far.
    pub fn rows_done(&self) -> usize {
        self.rows_done
    }

    /// The next band of whole rows (C order, `row_bytes` each), or `None` after the last
    /// row, once the end of the scan has been checked. A stream whose entropy-coded data
    /// the baseline decoder stops at (corrupt data, which the full decoder may read
    /// otherwise) is an error of kind `NeedsFullDecoder` naming the row: decode it whole.
    /// After an error every call fails.
    pub fn next_rows(&mut self) -> Result<Option<&[u8]>> {
        if self.failed {
            return Err(CodecError::new(
                ErrorKind::NeedsFullDecoder,
                "the decode in bands has already failed",
            ));
        }
        self.ready.clear();
        let mut more = true;
        while self.ready.is_empty() && more {
            let mut out = Out {
                buf: &mut self.band,
                sink: Some(&mut Collect(&mut self.ready)),
            };
            more = match self.bands.step(&mut out) {
                Ok(more) => more,
                Err(defer) => {
                    self.failed = true;
                    return Err(CodecError::new(
                        ErrorKind::NeedsFullDecoder,
                        format!(
                            "the baseline decoder stopped after row {} of {} ({}); decode the \
                             stream whole",
                            Int::of(self.rows_done),
                            Int::of(self.height),
                            defer.0
                        ),
                    ));
                }
            };
        }
        if self.ready.is_empty() {
            return Ok(None);
        }
        self.rows_done += self.ready.len() / self.row_bytes.max(1);
        Ok(Some(&self.ready))
    }
}

/// The memory a whole-image decode of the checked stream takes: the decoded image (held
/// whole, handed over as one band) and the full decoder's largest buffers, as
/// `decode::full` reserves them. (A stream the baseline decoder takes needs only the image;
/// this is its upper bound.)
fn whole_decode_bytes(layout: &ChunkLayout, header: &crate::markers::StreamHeader) -> u64 {
    let zune: u64 = zune_buffer_sizes(header).iter().sum();
    layout.sample_count_u64().saturating_add(zune)
}
