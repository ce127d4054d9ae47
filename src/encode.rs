//! Chunk samples → baseline JPEG stream, per colour mode.

use jpeg_encoder::{
    ChromaSubsamplingMethod, ColorType, Encoder, EncodingError, QuantizationTableType, RowSource,
    SamplingFactor as EncoderSampling,
};

use crate::chunk::ChunkLayout;
use crate::config::{DecodedColorSpace, EncodedColorSpace, JpegConfig};
use crate::config_value::ConfigValue;
use crate::error::{CodecError, Int, Result};
use crate::rewrite;

/// Where the encoder reads a chunk's samples from (C-order uint8, as for [`encode`]): a byte
/// slice, or storage it cannot borrow as one slice (the wasm boundary's `Uint8Array`). The
/// encoder copies the rows it needs, a band of whole MCU rows (up to 64 KiB, at least one)
/// at a time, into a small buffer it reuses, so no copy of the whole chunk is made; it reads
/// each byte once, in order.
pub trait SampleSource {
    /// Samples (bytes) in the chunk.
    fn sample_count(&self) -> usize;

    /// Copies bytes `offset..offset + out.len()` (always within `sample_count()`) into `out`.
    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()>;
}

impl SampleSource for &[u8] {
    fn sample_count(&self) -> usize {
        self.len()
    }

    fn read(&self, offset: usize, out: &mut [u8]) -> Result<()> {
        let Some(samples) = self.get(offset..offset + out.len()) else {
            return Err(CodecError::data(format!(
                "the chunk data has no bytes {offset}..{}",
                offset + out.len()
            )));
        };
        out.copy_from_slice(samples);
        Ok(())
    }
}

/// How a chunk's stream is written, beyond its configuration (which the spec fixes): choices
/// that change the stream's bytes, not its samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EncodeOptions {
    /// Restart intervals of 64 image rows (whole MCU rows) in chunks taller than that
    /// (default): zarr-jpeg's decoder decodes two intervals at a time, faster than without
    /// them, and libjpeg-turbo and Chromium's own decoder are about as fast; the stream grows
    /// slightly (bench/README.md measures both). Off for the last few bytes of small chunks, or
    /// for readers that do not handle restart markers.
    pub restart_intervals: bool,
    /// Rate–distortion-optimised ("trellis") quantisation of the AC coefficients (off by
    /// default): per 8×8 block, the quantised values that minimise squared error + λ · bits
    /// (mozjpeg's `quantize_trellis` with flat weights, i.e. tuned for PSNR); fewer bytes at
    /// the same quality setting and at equal PSNR, for a slower encode.
    pub trellis: bool,
    /// The quantisation tables `quality` scales (IJG scaling, as libjpeg's and mozjpeg's
    /// `-quant-table`): the Annex K tables by default, or one of mozjpeg's others.
    pub quant_table: QuantTable,
}

impl Default for EncodeOptions {
    fn default() -> Self {
        EncodeOptions {
            restart_intervals: true,
            trellis: false,
            quant_table: QuantTable::AnnexK,
        }
    }
}

/// Base quantisation tables, mozjpeg's set (its `-quant-table 0`–`8`, the same values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantTable {
    /// ITU-T T.81 Annex K (libjpeg's, and every encoder's default).
    AnnexK,
    /// Every coefficient quantised alike: the fewest bytes at equal PSNR on many images
    /// (bench/rd.mjs measures it), since mean squared error weighs every frequency alike.
    Flat,
    /// mozjpeg's table tuned for MS-SSIM.
    MsSsim,
    /// N. Robidoux's table from ImageMagick (mozjpeg's default).
    ImageMagick,
    /// mozjpeg's table tuned for PSNR-HVS.
    PsnrHvs,
    /// Klein, Silverstein and Carney (1992).
    Klein,
    /// Watson, Taylor and Borthwick (1997), tuned on dental X-rays.
    Watson,
    /// Ahumada, Watson and Peterson (1993).
    Ahumada,
    /// Peterson, Ahumada and Watson (1993).
    Peterson,
}

impl QuantTable {
    /// Every table with its option value, in the order of mozjpeg's `-quant-table` index.
    pub const ALL: [(&'static str, QuantTable); 9] = [
        ("annex-k", QuantTable::AnnexK),
        ("flat", QuantTable::Flat),
        ("ms-ssim", QuantTable::MsSsim),
        ("imagemagick", QuantTable::ImageMagick),
        ("psnr-hvs", QuantTable::PsnrHvs),
        ("klein", QuantTable::Klein),
        ("watson", QuantTable::Watson),
        ("ahumada", QuantTable::Ahumada),
        ("peterson", QuantTable::Peterson),
    ];

    /// The table's option value (`"annex-k"`, `"flat"`, …).
    pub fn name(self) -> &'static str {
        Self::ALL.iter().find(|(_, t)| *t == self).map_or("annex-k", |(name, _)| name)
    }

    fn encoder_type(self) -> QuantizationTableType {
        match self {
            QuantTable::AnnexK => QuantizationTableType::Default,
            QuantTable::Flat => QuantizationTableType::Flat,
            QuantTable::MsSsim => QuantizationTableType::CustomMsSsim,
            QuantTable::PsnrHvs => QuantizationTableType::CustomPsnrHvs,
            QuantTable::ImageMagick => QuantizationTableType::ImageMagick,
            QuantTable::Klein => QuantizationTableType::KleinSilversteinCarney,
            QuantTable::Watson => QuantizationTableType::DentalXRays,
            QuantTable::Ahumada => QuantizationTableType::VisualDetectionModel,
            QuantTable::Peterson => QuantizationTableType::ImprovedDetectionModel,
        }
    }
}

impl EncodeOptions {
    /// From a JSON-like object (`{"restartIntervals": false}`); null means the defaults.
    /// Unknown members and values of the wrong type are errors that name them.
    pub fn parse(value: &ConfigValue) -> Result<EncodeOptions> {
        let mut options = EncodeOptions::default();
        let members = match value {
            ConfigValue::Null => return Ok(options),
            ConfigValue::Object(members) => members,
            other => {
                return Err(CodecError::config(format!(
                    "the encode options must be an object, got {}",
                    other.describe()
                )))
            }
        };
        for (name, value) in members {
            match (name.as_str(), value) {
                ("restartIntervals", ConfigValue::Bool(on)) => options.restart_intervals = *on,
                ("trellis", ConfigValue::Bool(on)) => options.trellis = *on,
                ("quantTable", value) => options.quant_table = parse_quant_table(value)?,
                (name @ ("restartIntervals" | "trellis"), other) => {
                    return Err(CodecError::config(format!(
                        "the encode option {name} must be true or false, got {}",
                        other.describe()
                    )))
                }
                (other, _) => {
                    return Err(CodecError::config(format!(
                        "unknown encode option {} (known: restartIntervals, trellis, quantTable)",
                        crate::config_value::quote(other)
                    )))
                }
            }
        }
        Ok(options)
    }
}

fn parse_quant_table(value: &ConfigValue) -> Result<QuantTable> {
    if let ConfigValue::String(name) = value {
        if let Some(&(_, table)) = QuantTable::ALL.iter().find(|(n, _)| n == name) {
            return Ok(table);
        }
    }
    // The names as one literal, not joined from `ALL` (a smaller module);
    // tests/quant_tables.rs checks that the two agree.
    Err(CodecError::config(format!(
        "the encode option quantTable must be one of \"annex-k\", \"flat\", \"ms-ssim\", \
         \"imagemagick\", \"psnr-hvs\", \"klein\", \"watson\", \"ahumada\", \"peterson\", got {}",
        value.describe()
    )))
}

/// Encodes one chunk (C-order uint8 samples of `shape`) as a baseline JPEG stream.
pub fn encode(config: &JpegConfig, data: &[u8], shape: &[u64]) -> Result<Vec<u8>> {
    encode_with(config, &data, shape, false, &EncodeOptions::default())
}

/// [`encode`] with the samples read from `source` as they are needed.
pub fn encode_from(
    config: &JpegConfig,
    source: &dyn SampleSource,
    shape: &[u64],
) -> Result<Vec<u8>> {
    encode_with(config, source, shape, false, &EncodeOptions::default())
}

/// [`encode_from`] with `options`.
pub fn encode_from_with_options(
    config: &JpegConfig,
    source: &dyn SampleSource,
    shape: &[u64],
    options: &EncodeOptions,
) -> Result<Vec<u8>> {
    encode_with(config, source, shape, false, options)
}

/// Image rows per restart interval in the streams we write (rounded down to whole MCU
/// rows): few enough markers to cost under 0.1 % of a 2048² colour chunk at q 50–95, and
/// two intervals in any chunk over 64 rows tall.
const RESTART_ROWS: usize = 64;

/// Checks that an output buffer of `capacity` bytes holds an encoded stream of `len` bytes
/// (`encodeInto` in JavaScript writes the stream into the caller's buffer only then).
pub fn check_stream_fits(len: usize, capacity: usize) -> Result<()> {
    if len > capacity {
        return Err(CodecError::data(format!(
            "the output buffer holds {capacity} bytes but the encoded chunk needs {len}"
        )));
    }
    Ok(())
}

/// `encode` with the encoder's scalar code only, even in a build with SIMD kernels
/// (`-C target-feature=+simd128` on wasm32): the reference the SIMD build's bytes are
/// tested against (`tests/encode_identity`). Not part of the API.
#[doc(hidden)]
#[cfg(feature = "scalar-reference")]
pub fn encode_scalar_reference(config: &JpegConfig, data: &[u8], shape: &[u64]) -> Result<Vec<u8>> {
    encode_with(config, &data, shape, true, &EncodeOptions::default())
}

/// [`encode_scalar_reference`] with `options`. Not part of the API.
#[doc(hidden)]
#[cfg(feature = "scalar-reference")]
pub fn encode_scalar_reference_with_options(
    config: &JpegConfig,
    data: &[u8],
    shape: &[u64],
    options: &EncodeOptions,
) -> Result<Vec<u8>> {
    encode_with(config, &data, shape, true, options)
}

fn encode_with(
    config: &JpegConfig,
    source: &dyn SampleSource,
    shape: &[u64],
    scalar: bool,
    options: &EncodeOptions,
) -> Result<Vec<u8>> {
    let layout = ChunkLayout::for_config(shape, config)?;
    layout.check_data_len(source.sample_count())?;

    // Compressed output is usually far smaller than the samples; this avoids most regrowth.
    let mut stream = Vec::with_capacity(layout.sample_count() / 4 + 1024);
    let mut encoder = Encoder::new(&mut stream, config.quality);
    // Optimised Huffman tables: smaller streams, still baseline. The vendored encoder
    // writes colour as one interleaved scan either way (vendor/PATCHES.md).
    encoder.set_optimized_huffman_tables(true);
    // libjpeg's behaviour: chroma is averaged over the subsampled block, never picked.
    encoder.set_chroma_subsampling_method(ChromaSubsamplingMethod::Average);
    encoder.set_scalar_reference(scalar);
    encoder.set_trellis(options.trellis);
    let tables = options.quant_table.encoder_type();
    encoder.set_quantization_tables(tables.clone(), tables);

    let color_type = match (config.decoded_color_space, config.encoded_color_space) {
        (DecodedColorSpace::Grayscale, EncodedColorSpace::Grayscale) => ColorType::Luma,
        (DecodedColorSpace::Rgb, EncodedColorSpace::Ycbcr) => ColorType::Rgb,
        (DecodedColorSpace::Ycbcr, EncodedColorSpace::Ycbcr) => ColorType::Ycbcr,
        (DecodedColorSpace::Rgb, EncodedColorSpace::Rgb) => {
            // Independent channels: one quantisation table for all three (as libjpeg's RGB
            // mode does); passing the samples as "YCbCr" keeps them unconverted.
            encoder.set_luma_tables(true);
            ColorType::Ycbcr
        }
        (decoded, encoded) => {
            return Err(CodecError::config(format!(
                "decoded_color_space \"{}\" cannot be combined with encoded_color_space \"{}\"",
                decoded.name(),
                encoded.name()
            )))
        }
    };
    let luma = config.luma_sampling();
    let sampling =
        EncoderSampling::from_factors(luma.horizontal, luma.vertical).ok_or_else(|| {
            CodecError::config(format!(
                "subsampling [{}, {}] is not supported by this implementation",
                luma.horizontal, luma.vertical
            ))
        })?;
    encoder.set_sampling_factor(sampling);
    // Restart intervals of whole MCU rows, 64 image rows each (a DRI of the MCUs in that
    // many rows; one component's MCU is one block): zarr-jpeg's decoder then decodes two
    // intervals at a time, two independent chains of Huffman look-ups interleaved
    // (src/baseline/scan.rs, `decode_interval_pair`), for about 5 bytes per interval (the
    // RSTn marker, the last byte's padding bits, each component's first DC in full).
    let (mcu_w, mcu_h) = if color_type == ColorType::Luma {
        (8, 8)
    } else {
        (
            8 * usize::from(luma.horizontal),
            8 * usize::from(luma.vertical),
        )
    };
    let rows_per_interval = (RESTART_ROWS / mcu_h).max(1);
    if options.restart_intervals && usize::from(layout.height) > rows_per_interval * mcu_h {
        let mcu_x = usize::from(layout.width).div_ceil(mcu_w);
        // (width ≤ 65,535: at most 8,192 MCUs per row; fewer rows if the DRI would not fit)
        let rows = rows_per_interval.min(usize::from(u16::MAX) / mcu_x).max(1);
        encoder.set_restart_interval(u16::try_from(rows * mcu_x).unwrap_or(0));
    }
    let mut rows = SourceRows {
        source,
        row_bytes: usize::from(layout.width) * usize::from(layout.components),
        error: None,
    };
    encoder
        .encode_rows(&mut rows, layout.width, layout.height, color_type)
        .map_err(encoding_error)?;
    if let Some(e) = rows.error {
        return Err(e);
    }

    match config.encoded_color_space {
        EncodedColorSpace::Rgb => rewrite::rewrite_as_rgb(&stream),
        EncodedColorSpace::Grayscale => rewrite::drop_unused_chroma_table(&stream),
        EncodedColorSpace::Ycbcr => Ok(stream),
    }
}

/// The encoder's view of a `SampleSource`: rows of `row_bytes`. The encoder cannot stop on
/// a failed read, so the first error is kept (and the rest of the encode wasted) and
/// returned instead of the stream.
struct SourceRows<'a> {
    source: &'a dyn SampleSource,
    row_bytes: usize,
    error: Option<CodecError>,
}

impl RowSource for SourceRows<'_> {
    fn read_rows(&mut self, first_row: u16, out: &mut [u8]) {
        if self.error.is_none() {
            if let Err(e) = self
                .source
                .read(usize::from(first_row) * self.row_bytes, out)
            {
                self.error = Some(e);
            }
        }
    }
}

/// The encoder's error in our words, its integers through [`Int`]: its own `Display` links
/// core's formatting of `u8`, `u16` and `usize` into the writer module (about 0.2 KB gzip).
/// Validation before encoding leaves only `Write` reachable; the rest are kept for safety.
fn encoding_error(e: EncodingError) -> CodecError {
    let detail = match e {
        EncodingError::BadImageData { length, required } => format!(
            "{} bytes of image data, {} needed",
            Int::of(length),
            Int::of(required)
        ),
        EncodingError::ZeroImageDimensions { width, height } => format!(
            "image dimensions {}x{}",
            Int(u64::from(width)),
            Int(u64::from(height))
        ),
        EncodingError::Write(text) => text,
        _ => String::from("an invalid application segment"),
    };
    CodecError::data(format!("the JPEG encoder failed: {detail}"))
}
