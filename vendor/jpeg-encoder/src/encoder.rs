use crate::fdct::fdct;
use crate::huffman::{CodingClass, HuffmanTable};
use crate::image_buffer::*;
use crate::marker::Marker;
use crate::quantization::{QuantizationTable, QuantizationTableType};
use crate::rows::{RowFill, RowSource, StagedRows};
use crate::trellis::{self, Trellis};
use crate::writer::{JfifWrite, JfifWriter, ZIGZAG, get_code};
use crate::{EncodingError, PixelDensity};

use alloc::vec;
use alloc::vec::Vec;

#[cfg(feature = "std")]
use std::io::BufWriter;

#[cfg(feature = "std")]
use std::fs::File;

#[cfg(feature = "std")]
use std::path::Path;

/// # Color types used in encoding
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum JpegColorType {
    /// One component grayscale colorspace
    Luma,

    /// Three component YCbCr colorspace
    Ycbcr,

    /// 4 Component CMYK colorspace
    Cmyk,

    /// 4 Component YCbCrK colorspace
    Ycck,
}

#[derive(Copy, Clone)]
#[repr(C, align(32))]
pub(crate) struct AlignedBlock {
    pub data: [i16; 64],
}

impl AlignedBlock {
    pub const fn new(data: [i16; 64]) -> Self {
        AlignedBlock { data }
    }
}

impl Default for AlignedBlock {
    fn default() -> Self {
        AlignedBlock { data: [0i16; 64] }
    }
}

impl JpegColorType {
    pub(crate) fn get_num_components(self) -> usize {
        use JpegColorType::*;

        match self {
            Luma => 1,
            Ycbcr => 3,
            Cmyk | Ycck => 4,
        }
    }
}

/// # Color types for input images
///
/// Available color input formats for [Encoder::encode]. Other types can be used
/// by implementing an [ImageBuffer](crate::ImageBuffer).
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
pub enum ColorType {
    /// Grayscale with 1 byte per pixel
    Luma,

    /// RGB with 3 bytes per pixel
    Rgb,

    /// Red, Green, Blue with 4 bytes per pixel. The alpha channel will be ignored during encoding.
    Rgba,

    /// RGB with 3 bytes per pixel
    Bgr,

    /// RGBA with 4 bytes per pixel. The alpha channel will be ignored during encoding.
    Bgra,

    /// YCbCr with 3 bytes per pixel.
    Ycbcr,

    /// CMYK with 4 bytes per pixel.
    Cmyk,

    /// CMYK with 4 bytes per pixel. Encoded as YCCK (YCbCrK)
    CmykAsYcck,

    /// YCCK (YCbCrK) with 4 bytes per pixel.
    Ycck,
}

impl ColorType {
    pub(crate) fn get_bytes_per_pixel(self) -> usize {
        use ColorType::*;

        match self {
            Luma => 1,
            Rgb | Bgr | Ycbcr => 3,
            Rgba | Bgra | Cmyk | CmykAsYcck | Ycck => 4,
        }
    }
}

#[repr(u8)]
#[derive(Copy, Clone, Debug, Eq, PartialEq)]
/// # Sampling factors for chroma subsampling
///
/// ## Warning
/// Sampling factor of 4 are not supported by all decoders or applications
#[allow(non_camel_case_types)]
pub enum SamplingFactor {
    F_1_1 = 1 << 4 | 1,
    F_2_1 = 2 << 4 | 1,
    F_1_2 = 1 << 4 | 2,
    F_2_2 = 2 << 4 | 2,
    F_4_1 = 4 << 4 | 1,
    F_4_2 = 4 << 4 | 2,
    F_1_4 = 1 << 4 | 4,
    F_2_4 = 2 << 4 | 4,

    /// Alias for F_1_1
    R_4_4_4 = 0x80 | 1 << 4 | 1,

    /// Alias for F_1_2
    R_4_4_0 = 0x80 | 1 << 4 | 2,

    /// Alias for F_1_4
    R_4_4_1 = 0x80 | 1 << 4 | 4,

    /// Alias for F_2_1
    R_4_2_2 = 0x80 | 2 << 4 | 1,

    /// Alias for F_2_2
    R_4_2_0 = 0x80 | 2 << 4 | 2,

    /// Alias for F_2_4
    R_4_2_1 = 0x80 | 2 << 4 | 4,

    /// Alias for F_4_1
    R_4_1_1 = 0x80 | 4 << 4 | 1,

    /// Alias for F_4_2
    R_4_1_0 = 0x80 | 4 << 4 | 2,
}

impl SamplingFactor {
    /// Get variant for supplied factors or None if not supported
    pub fn from_factors(horizontal: u8, vertical: u8) -> Option<SamplingFactor> {
        use SamplingFactor::*;

        match (horizontal, vertical) {
            (1, 1) => Some(F_1_1),
            (1, 2) => Some(F_1_2),
            (1, 4) => Some(F_1_4),
            (2, 1) => Some(F_2_1),
            (2, 2) => Some(F_2_2),
            (2, 4) => Some(F_2_4),
            (4, 1) => Some(F_4_1),
            (4, 2) => Some(F_4_2),
            _ => None,
        }
    }

    pub(crate) fn get_sampling_factors(self) -> (u8, u8) {
        let value = self as u8;
        ((value >> 4) & 0x07, value & 0xf)
    }

    pub(crate) fn supports_interleaved(self) -> bool {
        use SamplingFactor::*;

        // Interleaved mode is only supported with h/v sampling factors of 1 or 2.
        // Sampling factors of 4 needs sequential encoding
        matches!(
            self,
            F_1_1 | F_2_1 | F_1_2 | F_2_2 | R_4_4_4 | R_4_4_0 | R_4_2_2 | R_4_2_0
        )
    }
}

/// Method for reducing each chroma block to a single sample when subsampling
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChromaSubsamplingMethod {
    /// Use the top-left pixel of each block (fastest, default)
    Nearest,
    /// Box-average each block, matching libjpeg's `h2v2_downsample`
    Average,
}

pub(crate) struct Component {
    pub id: u8,
    pub quantization_table: u8,
    pub dc_huffman_table: u8,
    pub ac_huffman_table: u8,
    pub horizontal_sampling_factor: u8,
    pub vertical_sampling_factor: u8,
}

macro_rules! add_component {
    ($components:expr, $id:expr, $dest:expr, $h_sample:expr, $v_sample:expr) => {
        $components.push(Component {
            id: $id,
            quantization_table: $dest,
            dc_huffman_table: $dest,
            ac_huffman_table: $dest,
            horizontal_sampling_factor: $h_sample,
            vertical_sampling_factor: $v_sample,
        });
    };
}

/// # The JPEG encoder
pub struct Encoder<W: JfifWrite> {
    writer: JfifWriter<W>,
    density: PixelDensity,
    quality: u8,

    components: Vec<Component>,
    quantization_tables: [QuantizationTableType; 2],
    huffman_tables: [(HuffmanTable, HuffmanTable); 2],

    sampling_factor: SamplingFactor,
    chroma_subsampling_method: ChromaSubsamplingMethod,

    progressive_scans: Option<u8>,

    restart_interval: Option<u16>,

    optimize_huffman_table: bool,

    app_segments: Vec<(u8, Vec<u8>)>,

    // [zarr-jpeg patch] use the scalar code even where SIMD kernels are compiled in
    scalar_reference: bool,

    // [zarr-jpeg patch] rate–distortion-optimised quantisation (`set_trellis`)
    trellis: bool,

    // [zarr-jpeg patch] the chroma slot's table type gives its luma table (`set_luma_tables`)
    luma_tables: bool,
}

impl<W: JfifWrite> Encoder<W> {
    /// Create a new encoder with the given quality
    ///
    /// The quality must be between 1 and 100 where 100 is the highest image quality.<br>
    /// By default, quality settings below 90 use a chroma subsampling (2x2 / 4:2:0) which can
    /// be changed with [set_sampling_factor](Encoder::set_sampling_factor)
    pub fn new(w: W, quality: u8) -> Encoder<W> {
        let huffman_tables = [
            (
                HuffmanTable::default_luma_dc(),
                HuffmanTable::default_luma_ac(),
            ),
            (
                HuffmanTable::default_chroma_dc(),
                HuffmanTable::default_chroma_ac(),
            ),
        ];

        let quantization_tables = [
            QuantizationTableType::Default,
            QuantizationTableType::Default,
        ];

        let sampling_factor = if quality < 90 {
            SamplingFactor::F_2_2
        } else {
            SamplingFactor::F_1_1
        };

        Encoder {
            writer: JfifWriter::new(w),
            density: PixelDensity::default(),
            quality,
            components: vec![],
            quantization_tables,
            huffman_tables,
            sampling_factor,
            chroma_subsampling_method: ChromaSubsamplingMethod::Nearest,
            progressive_scans: None,
            restart_interval: None,
            optimize_huffman_table: false,
            app_segments: Vec::new(),
            scalar_reference: false,
            trellis: false,
            luma_tables: false,
        }
    }

    /// Set pixel density for the image
    ///
    /// By default, this value is None which is equal to "1 pixel per pixel".
    pub fn set_density(&mut self, density: PixelDensity) {
        self.density = density;
    }

    /// Return pixel density
    pub fn density(&self) -> PixelDensity {
        self.density
    }

    /// Set quality setting. Quality must be between 1 and 100 where 100 is the highest image quality.
    pub fn set_quality(&mut self, quality: u8) {
        self.quality = quality;
    }

    /// Get quality setting
    pub fn quality(&self) -> u8 {
        self.quality
    }

    /// Set chroma subsampling factor
    pub fn set_sampling_factor(&mut self, sampling: SamplingFactor) {
        self.sampling_factor = sampling;
    }

    /// Get chroma subsampling factor
    pub fn sampling_factor(&self) -> SamplingFactor {
        self.sampling_factor
    }

    /// Set the chroma subsampling method
    pub fn set_chroma_subsampling_method(&mut self, method: ChromaSubsamplingMethod) {
        self.chroma_subsampling_method = method;
    }

    /// Get the chroma subsampling method
    pub fn chroma_subsampling_method(&self) -> ChromaSubsamplingMethod {
        self.chroma_subsampling_method
    }

    /// Set quantization tables for luma and chroma components
    pub fn set_quantization_tables(
        &mut self,
        luma: QuantizationTableType,
        chroma: QuantizationTableType,
    ) {
        self.quantization_tables = [luma, chroma];
    }

    /// [zarr-jpeg patch] Quantise every component with the luma table of its slot's type
    /// (unconverted RGB data: three alike channels), without a `Custom` table.
    pub fn set_luma_tables(&mut self, luma_tables: bool) {
        self.luma_tables = luma_tables;
    }

    /// Get configured quantization tables
    pub fn quantization_tables(&self) -> &[QuantizationTableType; 2] {
        &self.quantization_tables
    }

    /// Controls if progressive encoding is used.
    ///
    /// By default, progressive encoding uses 4 scans.<br>
    /// Use [set_progressive_scans](Encoder::set_progressive_scans) to use a different number of scans
    pub fn set_progressive(&mut self, progressive: bool) {
        self.progressive_scans = if progressive { Some(4) } else { None };
    }

    /// Set number of scans per component for progressive encoding
    ///
    /// Number of scans must be between 2 and 64.
    /// There is at least one scan for the DC coefficients and one for the remaining 63 AC coefficients.
    ///
    /// # Panics
    /// If number of scans is not within valid range
    pub fn set_progressive_scans(&mut self, scans: u8) {
        assert!(
            (2..=64).contains(&scans),
            "Invalid number of scans: {}",
            scans
        );
        self.progressive_scans = Some(scans);
    }

    /// Return number of progressive scans if progressive encoding is enabled
    pub fn progressive_scans(&self) -> Option<u8> {
        self.progressive_scans
    }

    /// Set restart interval
    ///
    /// Set numbers of MCUs between restart markers.
    pub fn set_restart_interval(&mut self, interval: u16) {
        self.restart_interval = if interval == 0 { None } else { Some(interval) };
    }

    /// Return the restart interval
    pub fn restart_interval(&self) -> Option<u16> {
        self.restart_interval
    }

    /// Set if optimized huffman table should be created
    ///
    /// Optimized tables result in slightly smaller file sizes but decrease encoding performance.
    pub fn set_optimized_huffman_tables(&mut self, optimize_huffman_table: bool) {
        self.optimize_huffman_table = optimize_huffman_table;
    }

    /// Returns if optimized huffman table should be generated
    pub fn optimized_huffman_tables(&self) -> bool {
        self.optimize_huffman_table
    }

    /// Appends a custom app segment to the JFIF file
    ///
    /// Segment numbers need to be in the range between 1 and 15<br>
    /// The maximum allowed data length is 2^16 - 2 bytes.
    ///
    /// # Errors
    ///
    /// Returns an error if the segment number is invalid or data exceeds the allowed size
    pub fn add_app_segment(&mut self, segment_nr: u8, data: Vec<u8>) -> Result<(), EncodingError> {
        if segment_nr == 0 || segment_nr > 15 {
            Err(EncodingError::InvalidAppSegment(segment_nr))
        } else if data.len() > 65533 {
            Err(EncodingError::AppSegmentTooLarge(data.len()))
        } else {
            self.app_segments.push((segment_nr, data));
            Ok(())
        }
    }

    /// Add an ICC profile
    ///
    /// The maximum allowed data length is 16,707,345 bytes.
    ///
    /// # Errors
    ///
    /// Returns an Error if the data exceeds the maximum size for the ICC profile
    pub fn add_icc_profile(&mut self, data: &[u8]) -> Result<(), EncodingError> {
        // Based on https://www.color.org/ICC_Minor_Revision_for_Web.pdf
        // B.4  Embedding ICC profiles in JFIF files

        const MARKER: &[u8; 12] = b"ICC_PROFILE\0";
        const MAX_CHUNK_LENGTH: usize = 65535 - 2 - 12 - 2;

        let num_chunks = data.len().div_ceil(MAX_CHUNK_LENGTH);

        // Sequence number is stored as a byte and starts with 1
        if num_chunks >= 255 {
            return Err(EncodingError::IccTooLarge(data.len()));
        }

        for (i, data) in data.chunks(MAX_CHUNK_LENGTH).enumerate() {
            let mut chunk_data = Vec::with_capacity(MAX_CHUNK_LENGTH);
            chunk_data.extend_from_slice(MARKER);
            chunk_data.push(i as u8 + 1);
            chunk_data.push(num_chunks as u8);
            chunk_data.extend_from_slice(data);

            self.add_app_segment(2, chunk_data)?;
        }

        Ok(())
    }

    /// Embeds Exif metadata into the image
    ///
    /// The maximum allowed data length is 65,528 bytes.
    ///
    /// # Errors
    ///
    /// Returns an Error if the data exceeds the maximum size for the Exif metadata
    pub fn add_exif_metadata(&mut self, data: &[u8]) -> Result<(), EncodingError> {
        // E x i f \0 \0
        /// The header for an EXIF APP1 segment
        const EXIF_HEADER: [u8; 6] = [0x45, 0x78, 0x69, 0x66, 0x00, 0x00];

        let mut formatted = EXIF_HEADER.to_vec();
        formatted.extend_from_slice(data);

        self.add_app_segment(1, formatted)
    }

    /// [zarr-jpeg patch] Encode with the scalar code even in builds with SIMD kernels
    /// (WebAssembly `simd128`, x86-64 with the feature `simd`), so tests can check that both
    /// write the same bytes. In `simd128` builds it has an effect only with the feature
    /// `scalar-reference`; x86-64 builds keep the scalar code anyway (for CPUs without SSE4.1).
    #[doc(hidden)]
    pub fn set_scalar_reference(&mut self, scalar: bool) {
        self.scalar_reference = scalar;
    }

    /// [zarr-jpeg patch] Whether this encode runs the x86-64 SSE4.1 kernels: the CPU has
    /// SSE4.1 (std caches the answer) and the scalar reference was not asked for.
    #[cfg(all(feature = "simd", target_arch = "x86_64"))]
    fn x86_simd(&self) -> bool {
        !self.scalar_reference && crate::x86_simd::available()
    }

    /// [zarr-jpeg patch] Rate–distortion-optimised ("trellis") quantisation of the AC
    /// coefficients (`trellis.rs`): fewer bytes at the same quality setting, and at equal
    /// PSNR. Takes effect where the image is written as one interleaved scan with optimised
    /// Huffman tables (`set_optimized_huffman_tables(true)`, at most 10 blocks per MCU).
    pub fn set_trellis(&mut self, trellis: bool) {
        self.trellis = trellis;
    }

    /// Encode an image
    ///
    /// Data format and length must conform to specified width, height and color type.
    pub fn encode(
        self,
        data: &[u8],
        width: u16,
        height: u16,
        color_type: ColorType,
    ) -> Result<(), EncodingError> {
        let required_data_len = width as usize * height as usize * color_type.get_bytes_per_pixel();

        if data.len() < required_data_len {
            return Err(EncodingError::BadImageData {
                length: data.len(),
                required: required_data_len,
            });
        }

        // [zarr-jpeg patch] x86-64 SSE4.1 kernels (feature `simd`, chosen at run time) and
        // their row adapters; other colour types take the scalar adapters with the block
        // kernels (`encode_image`). Upstream's AVX2 path wrote other bytes than the scalar code.
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if self.x86_simd() {
            use crate::x86_simd::*;
            match color_type {
                ColorType::Luma => return self.encode_image(GrayImageSimd(data, width, height)),
                ColorType::Rgb => return self.encode_image(RgbImageSimd(data, width, height)),
                ColorType::Ycbcr => return self.encode_image(YCbCrImageSimd(data, width, height)),
                _ => {}
            }
        }

        // [zarr-jpeg patch] WebAssembly simd128 kernels (compile-time feature). The image
        // adapters are passed as `&dyn ImageBuffer` (one call per row), so the encoder is
        // compiled twice (SIMD and scalar reference) rather than once per colour type.
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        {
            use crate::wasm_simd::*;
            let simd = !self.scalar_reference;
            return match color_type {
                ColorType::Luma if simd => self.encode_dyn(&GrayImageSimd(data, width, height)),
                ColorType::Rgb if simd => self.encode_dyn(&RgbImageSimd(data, width, height)),
                ColorType::Ycbcr if simd => self.encode_dyn(&YCbCrImageSimd(data, width, height)),
                ColorType::Luma => self.encode_dyn(&GrayImage(data, width, height)),
                ColorType::Rgb => self.encode_dyn(&RgbImage(data, width, height)),
                ColorType::Ycbcr => self.encode_dyn(&YCbCrImage(data, width, height)),
                ColorType::Rgba => self.encode_dyn(&RgbaImage(data, width, height)),
                ColorType::Bgr => self.encode_dyn(&BgrImage(data, width, height)),
                ColorType::Bgra => self.encode_dyn(&BgraImage(data, width, height)),
                ColorType::Cmyk => self.encode_dyn(&CmykImage(data, width, height)),
                ColorType::CmykAsYcck => self.encode_dyn(&CmykAsYcckImage(data, width, height)),
                ColorType::Ycck => self.encode_dyn(&YcckImage(data, width, height)),
            };
        }

        #[allow(unreachable_code)]
        match color_type {
            ColorType::Luma => self.encode_image(GrayImage(data, width, height))?,
            ColorType::Rgb => self.encode_image(RgbImage(data, width, height))?,
            ColorType::Rgba => self.encode_image(RgbaImage(data, width, height))?,
            ColorType::Bgr => self.encode_image(BgrImage(data, width, height))?,
            ColorType::Bgra => self.encode_image(BgraImage(data, width, height))?,
            ColorType::Ycbcr => self.encode_image(YCbCrImage(data, width, height))?,
            ColorType::Cmyk => self.encode_image(CmykImage(data, width, height))?,
            ColorType::CmykAsYcck => self.encode_image(CmykAsYcckImage(data, width, height))?,
            ColorType::Ycck => self.encode_image(YcckImage(data, width, height))?,
        }

        Ok(())
    }

    /// [zarr-jpeg patch] Encode an image whose samples (laid out as for
    /// [encode](Self::encode)) are copied in from `source` as they are needed, one band of
    /// rows at a time (whole MCU rows, as many as fit in 64 KiB, at least one), into a
    /// buffer the encoder reuses: no copy of the whole image is made. Writes the same bytes
    /// as `encode` with the same samples.
    pub fn encode_rows(
        self,
        source: &mut dyn RowSource,
        width: u16,
        height: u16,
        color_type: ColorType,
    ) -> Result<(), EncodingError> {
        // Grayscale has one 8×8 block per MCU; colour MCUs are 8 × the luma factor high.
        let mcu_rows = match color_type {
            ColorType::Luma => 8,
            _ => 8 * u16::from(self.sampling_factor.get_sampling_factors().1),
        };
        let image = StagedRows::new(
            source,
            width,
            height,
            color_type.get_bytes_per_pixel(),
            match color_type {
                ColorType::Luma => JpegColorType::Luma,
                ColorType::Cmyk => JpegColorType::Cmyk,
                ColorType::CmykAsYcck | ColorType::Ycck => JpegColorType::Ycck,
                _ => JpegColorType::Ycbcr,
            },
            mcu_rows,
            self.row_fill(color_type),
        );
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        return self.encode_dyn(&image);
        #[allow(unreachable_code)]
        self.encode_image(image)
    }

    /// [zarr-jpeg patch] The row conversion `encode` uses for `color_type` (the same
    /// adapter, given one row as the whole image), for `encode_rows`.
    fn row_fill(&self, color_type: ColorType) -> RowFill {
        macro_rules! fill {
            ($image:ident) => {
                |line: &[u8], width: u16, buffers: &mut [Vec<u8>; 4]| {
                    $image(line, width, 1).fill_buffers(0, buffers)
                }
            };
        }

        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if self.x86_simd() {
            use crate::x86_simd::*;
            match color_type {
                ColorType::Luma => return fill!(GrayImageSimd),
                ColorType::Rgb => return fill!(RgbImageSimd),
                ColorType::Ycbcr => return fill!(YCbCrImageSimd),
                _ => {}
            }
        }

        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if !self.scalar_reference {
            use crate::wasm_simd::*;
            match color_type {
                ColorType::Luma => return fill!(GrayImageSimd),
                ColorType::Rgb => return fill!(RgbImageSimd),
                ColorType::Ycbcr => return fill!(YCbCrImageSimd),
                _ => {}
            }
        }

        match color_type {
            ColorType::Luma => fill!(GrayImage),
            ColorType::Rgb => fill!(RgbImage),
            ColorType::Rgba => fill!(RgbaImage),
            ColorType::Bgr => fill!(BgrImage),
            ColorType::Bgra => fill!(BgraImage),
            ColorType::Ycbcr => fill!(YCbCrImage),
            ColorType::Cmyk => fill!(CmykImage),
            ColorType::CmykAsYcck => fill!(CmykAsYcckImage),
            ColorType::Ycck => fill!(YcckImage),
        }
    }

    /// Encode an image
    pub fn encode_image<I: ImageBuffer>(self, image: I) -> Result<(), EncodingError> {
        #[cfg(all(feature = "simd", target_arch = "x86_64"))]
        if self.x86_simd() {
            return self.encode_image_internal::<_, crate::x86_simd::X86SimdOperations>(image);
        }
        #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
        if !self.scalar_reference {
            return self.encode_image_internal::<_, crate::wasm_simd::WasmSimdOperations>(image);
        }
        self.encode_image_internal::<_, DefaultOperations>(image)
    }

    /// [zarr-jpeg patch] The SIMD kernels, or the scalar code with `scalar_reference`
    /// (feature `scalar-reference`; without it the scalar code is not compiled in).
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    fn encode_dyn(self, image: &dyn ImageBuffer) -> Result<(), EncodingError> {
        #[cfg(feature = "scalar-reference")]
        if self.scalar_reference {
            return self.encode_image_internal::<_, DefaultOperations>(DynImage(image));
        }
        self.encode_image_internal::<_, crate::wasm_simd::WasmSimdOperations>(DynImage(image))
    }

    fn encode_image_internal<I: ImageBuffer, OP: Operations>(
        mut self,
        image: I,
    ) -> Result<(), EncodingError> {
        if image.width() == 0 || image.height() == 0 {
            return Err(EncodingError::ZeroImageDimensions {
                width: image.width(),
                height: image.height(),
            });
        }

        // [zarr-jpeg patch] the dead zone (quantization.rs): luma, and chroma at full resolution
        let full_chroma = self.luma_tables || self.sampling_factor.get_sampling_factors() == (1, 1);
        let q_tables = [
            QuantizationTable::new_with_quality(&self.quantization_tables[0], self.quality, true, true),
            QuantizationTable::new_with_quality(
                &self.quantization_tables[1],
                self.quality,
                self.luma_tables,
                full_chroma,
            ),
        ];

        let jpeg_color_type = image.get_jpeg_color_type();
        self.init_components(jpeg_color_type);

        self.writer.write_marker(Marker::SOI)?;

        self.writer.write_header(&self.density)?;

        if jpeg_color_type == JpegColorType::Cmyk {
            //Set ColorTransform info to "Unknown"
            let app_14 = b"Adobe\0\0\0\0\0\0\0";
            self.writer
                .write_segment(Marker::APP(14), app_14.as_ref())?;
        } else if jpeg_color_type == JpegColorType::Ycck {
            //Set ColorTransform info to YCCK
            let app_14 = b"Adobe\0\0\0\0\0\0\x02";
            self.writer
                .write_segment(Marker::APP(14), app_14.as_ref())?;
        }

        for (nr, data) in &self.app_segments {
            self.writer.write_segment(Marker::APP(*nr), data)?;
        }

        if let Some(scans) = self.progressive_scans {
            self.encode_image_progressive::<_, OP>(image, scans, &q_tables)?;
        } else if (self.components.len() > 1
            && (self.optimize_huffman_table || !self.sampling_factor.supports_interleaved())
            || self.components.len() == 1 && self.optimize_huffman_table)
            && self.blocks_per_mcu() <= 10
        {
            // [zarr-jpeg patch] one interleaved scan, as libjpeg writes, instead of one scan
            // per component (which some decoders, e.g. zune-jpeg 0.5.15, misread). A single
            // component's scan is the same either way (its MCU is one block); this path
            // keeps the image as symbols rather than blocks (PATCHES.md, section 3).
            self.encode_image_interleaved_buffered::<_, OP>(image, &q_tables)?;
        } else if self.optimize_huffman_table || !self.sampling_factor.supports_interleaved() {
            self.encode_image_sequential::<_, OP>(image, &q_tables)?;
        } else {
            self.encode_image_interleaved::<_, OP>(image, &q_tables)?;
        }

        self.writer.write_marker(Marker::EOI)?;

        Ok(())
    }

    fn init_components(&mut self, color: JpegColorType) {
        let (horizontal_sampling_factor, vertical_sampling_factor) =
            self.sampling_factor.get_sampling_factors();

        match color {
            JpegColorType::Luma => {
                add_component!(self.components, 0, 0, 1, 1);
            }
            JpegColorType::Ycbcr => {
                add_component!(
                    self.components,
                    0,
                    0,
                    horizontal_sampling_factor,
                    vertical_sampling_factor
                );
                add_component!(self.components, 1, 1, 1, 1);
                add_component!(self.components, 2, 1, 1, 1);
            }
            JpegColorType::Cmyk => {
                add_component!(self.components, 0, 1, 1, 1);
                add_component!(self.components, 1, 1, 1, 1);
                add_component!(self.components, 2, 1, 1, 1);
                add_component!(
                    self.components,
                    3,
                    0,
                    horizontal_sampling_factor,
                    vertical_sampling_factor
                );
            }
            JpegColorType::Ycck => {
                add_component!(
                    self.components,
                    0,
                    0,
                    horizontal_sampling_factor,
                    vertical_sampling_factor
                );
                add_component!(self.components, 1, 1, 1, 1);
                add_component!(self.components, 2, 1, 1, 1);
                add_component!(
                    self.components,
                    3,
                    0,
                    horizontal_sampling_factor,
                    vertical_sampling_factor
                );
            }
        }
    }

    fn get_max_sampling_size(&self) -> (usize, usize) {
        let max_h_sampling = self.components.iter().fold(1, |value, component| {
            value.max(component.horizontal_sampling_factor)
        });

        let max_v_sampling = self.components.iter().fold(1, |value, component| {
            value.max(component.vertical_sampling_factor)
        });

        (usize::from(max_h_sampling), usize::from(max_v_sampling))
    }

    fn write_frame_header<I: ImageBuffer>(
        &mut self,
        image: &I,
        q_tables: &[QuantizationTable; 2],
    ) -> Result<(), EncodingError> {
        self.writer.write_frame_header(
            image.width(),
            image.height(),
            &self.components,
            self.progressive_scans.is_some(),
        )?;

        self.writer.write_quantization_segment(0, &q_tables[0])?;
        self.writer.write_quantization_segment(1, &q_tables[1])?;

        self.writer
            .write_huffman_segment(CodingClass::Dc, 0, &self.huffman_tables[0].0)?;

        self.writer
            .write_huffman_segment(CodingClass::Ac, 0, &self.huffman_tables[0].1)?;

        if image.get_jpeg_color_type().get_num_components() >= 3 {
            self.writer
                .write_huffman_segment(CodingClass::Dc, 1, &self.huffman_tables[1].0)?;

            self.writer
                .write_huffman_segment(CodingClass::Ac, 1, &self.huffman_tables[1].1)?;
        }

        if let Some(restart_interval) = self.restart_interval {
            self.writer.write_dri(restart_interval)?;
        }

        Ok(())
    }

    fn init_rows(&mut self, buffer_size: usize) -> [Vec<u8>; 4] {
        // To simplify the code and to give the compiler more infos to optimize stuff we always initialize 4 components
        // Resource overhead should be minimal because an empty Vec doesn't allocate

        match self.components.len() {
            1 => [
                Vec::with_capacity(buffer_size),
                Vec::new(),
                Vec::new(),
                Vec::new(),
            ],
            3 => [
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::new(),
            ],
            4 => [
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
            ],
            len => unreachable!("Unsupported component length: {}", len),
        }
    }

    /// Encode all components with one scan
    ///
    /// This is only valid for sampling factors of 1 and 2
    fn encode_image_interleaved<I: ImageBuffer, OP: Operations>(
        &mut self,
        image: I,
        q_tables: &[QuantizationTable; 2],
    ) -> Result<(), EncodingError> {
        self.write_frame_header(&image, q_tables)?;
        self.writer
            .write_scan_header(&self.components.iter().collect::<Vec<_>>(), None)?;

        let (max_h_sampling, max_v_sampling) = self.get_max_sampling_size();

        let width = image.width();
        let height = image.height();

        let num_cols = usize::from(width).div_ceil(8 * max_h_sampling);
        let num_rows = usize::from(height).div_ceil(8 * max_v_sampling);

        let buffer_width = num_cols * 8 * max_h_sampling;
        let buffer_size = buffer_width * 8 * max_v_sampling;

        let mut row: [Vec<_>; 4] = self.init_rows(buffer_size);

        let mut prev_dc = [0i16; 4];

        let restart_interval = self.restart_interval.unwrap_or(0);
        let mut restarts = 0;
        let mut restarts_to_go = restart_interval;

        for block_y in 0..num_rows {
            for r in &mut row {
                r.clear();
            }

            for y in 0..(8 * max_v_sampling) {
                let y = y + block_y * 8 * max_v_sampling;
                let y = (y.min(height as usize - 1)) as u16;

                image.fill_buffers(y, &mut row);

                for _ in usize::from(width)..buffer_width {
                    for channel in &mut row {
                        if !channel.is_empty() {
                            channel.push(channel[channel.len() - 1]);
                        }
                    }
                }
            }

            for block_x in 0..num_cols {
                if restart_interval > 0 && restarts_to_go == 0 {
                    self.writer.finalize_bit_buffer()?;
                    self.writer
                        .write_marker(Marker::RST((restarts % 8) as u8))?;

                    prev_dc[0] = 0;
                    prev_dc[1] = 0;
                    prev_dc[2] = 0;
                    prev_dc[3] = 0;
                }

                for (i, component) in self.components.iter().enumerate() {
                    let h_stride = max_h_sampling / component.horizontal_sampling_factor as usize;
                    let v_stride = max_v_sampling / component.vertical_sampling_factor as usize;
                    let average = self.chroma_subsampling_method
                        == ChromaSubsamplingMethod::Average
                        && (h_stride > 1 || v_stride > 1);

                    for v_offset in 0..component.vertical_sampling_factor as usize {
                        for h_offset in 0..component.horizontal_sampling_factor as usize {
                            let bx = block_x * 8 * max_h_sampling + (h_offset * 8);
                            let by = v_offset * 8;
                            let mut block = if average {
                                get_block_averaged(
                                    &row[i],
                                    bx,
                                    by,
                                    h_stride,
                                    v_stride,
                                    buffer_width,
                                )
                            } else {
                                get_block(&row[i], bx, by, h_stride, v_stride, buffer_width)
                            };

                            OP::fdct(&mut block);

                            let mut q_block = AlignedBlock::default();

                            OP::quantize_block(
                                &block,
                                &mut q_block,
                                &q_tables[component.quantization_table as usize],
                            );

                            self.writer.write_block(
                                &q_block,
                                prev_dc[i],
                                &self.huffman_tables[component.dc_huffman_table as usize].0,
                                &self.huffman_tables[component.ac_huffman_table as usize].1,
                            )?;

                            prev_dc[i] = q_block.data[0];
                        }
                    }
                }

                if restart_interval > 0 {
                    if restarts_to_go == 0 {
                        restarts_to_go = restart_interval;
                        restarts += 1;
                        restarts &= 7;
                    }
                    restarts_to_go -= 1;
                }
            }
        }

        self.writer.finalize_bit_buffer()?;

        Ok(())
    }

    /// Encode components with one scan per component
    fn encode_image_sequential<I: ImageBuffer, OP: Operations>(
        &mut self,
        image: I,
        q_tables: &[QuantizationTable; 2],
    ) -> Result<(), EncodingError> {
        let blocks = self.encode_blocks::<_, OP>(&image, q_tables);

        if self.optimize_huffman_table {
            self.optimize_huffman_table::<OP>(&blocks);
        }

        self.write_frame_header(&image, q_tables)?;

        for (i, component) in self.components.iter().enumerate() {
            let restart_interval = self.restart_interval.unwrap_or(0);
            let mut restarts = 0;
            let mut restarts_to_go = restart_interval;

            self.writer.write_scan_header(&[component], None)?;

            let mut prev_dc = 0;

            for block in &blocks[i] {
                if restart_interval > 0 && restarts_to_go == 0 {
                    self.writer.finalize_bit_buffer()?;
                    self.writer
                        .write_marker(Marker::RST((restarts % 8) as u8))?;

                    prev_dc = 0;
                }

                self.writer.write_block_mask(
                    block,
                    OP::nonzero_ac_mask(block),
                    prev_dc,
                    &self.huffman_tables[component.dc_huffman_table as usize].0,
                    &self.huffman_tables[component.ac_huffman_table as usize].1,
                )?;

                prev_dc = block.data[0];

                if restart_interval > 0 {
                    if restarts_to_go == 0 {
                        restarts_to_go = restart_interval;
                        restarts += 1;
                        restarts &= 7;
                    }
                    restarts_to_go -= 1;
                }
            }

            self.writer.finalize_bit_buffer()?;
        }

        Ok(())
    }

    /// Encode image in progressive mode
    ///
    /// This only support spectral selection for now
    fn encode_image_progressive<I: ImageBuffer, OP: Operations>(
        &mut self,
        image: I,
        scans: u8,
        q_tables: &[QuantizationTable; 2],
    ) -> Result<(), EncodingError> {
        let blocks = self.encode_blocks::<_, OP>(&image, q_tables);

        if self.optimize_huffman_table {
            self.optimize_huffman_table::<OP>(&blocks);
        }

        self.write_frame_header(&image, q_tables)?;

        // Phase 1: DC Scan
        //          Only the DC coefficients can be transfer in the first component scans
        for (i, component) in self.components.iter().enumerate() {
            self.writer.write_scan_header(&[component], Some((0, 0)))?;

            let restart_interval = self.restart_interval.unwrap_or(0);
            let mut restarts = 0;
            let mut restarts_to_go = restart_interval;

            let mut prev_dc = 0;

            for block in &blocks[i] {
                if restart_interval > 0 && restarts_to_go == 0 {
                    self.writer.finalize_bit_buffer()?;
                    self.writer
                        .write_marker(Marker::RST((restarts % 8) as u8))?;

                    prev_dc = 0;
                }

                self.writer.write_dc(
                    block.data[0],
                    prev_dc,
                    &self.huffman_tables[component.dc_huffman_table as usize].0,
                )?;

                prev_dc = block.data[0];

                if restart_interval > 0 {
                    if restarts_to_go == 0 {
                        restarts_to_go = restart_interval;
                        restarts += 1;
                        restarts &= 7;
                    }
                    restarts_to_go -= 1;
                }
            }

            self.writer.finalize_bit_buffer()?;
        }

        // Phase 2: AC scans
        let scans = scans as usize - 1;

        let values_per_scan = 64 / scans;

        for scan in 0..scans {
            let start = (scan * values_per_scan).max(1);
            let end = if scan == scans - 1 {
                // ensure last scan is always transfers the remaining coefficients
                64
            } else {
                (scan + 1) * values_per_scan
            };

            for (i, component) in self.components.iter().enumerate() {
                let restart_interval = self.restart_interval.unwrap_or(0);
                let mut restarts = 0;
                let mut restarts_to_go = restart_interval;

                self.writer
                    .write_scan_header(&[component], Some((start as u8, end as u8 - 1)))?;

                for block in &blocks[i] {
                    if restart_interval > 0 && restarts_to_go == 0 {
                        self.writer.finalize_bit_buffer()?;
                        self.writer
                            .write_marker(Marker::RST((restarts % 8) as u8))?;
                    }

                    self.writer.write_ac_block(
                        block,
                        start,
                        end,
                        &self.huffman_tables[component.ac_huffman_table as usize].1,
                    )?;

                    if restart_interval > 0 {
                        if restarts_to_go == 0 {
                            restarts_to_go = restart_interval;
                            restarts += 1;
                            restarts &= 7;
                        }
                        restarts_to_go -= 1;
                    }
                }

                self.writer.finalize_bit_buffer()?;
            }
        }

        Ok(())
    }

    /// [zarr-jpeg patch] Blocks per MCU of an interleaved scan (T.81 B.2.3 allows 10).
    fn blocks_per_mcu(&self) -> usize {
        self.components
            .iter()
            .map(|c| usize::from(c.horizontal_sampling_factor) * usize::from(c.vertical_sampling_factor))
            .sum()
    }

    /// [zarr-jpeg patch] All components in one interleaved scan, so Huffman tables can be
    /// optimised and factors of 4 used (libjpeg's behaviour). The image is read one MCU
    /// row at a time (as `encode_image_interleaved` does), its blocks are made in coding
    /// order and kept only as the symbols the scan codes (`TokenRow`), counted as they are
    /// made; then the tables are built and the symbols coded.
    fn encode_image_interleaved_buffered<I: ImageBuffer, OP: Operations>(
        &mut self,
        image: I,
        q_tables: &[QuantizationTable; 2],
    ) -> Result<(), EncodingError> {
        let (max_h, max_v) = self.get_max_sampling_size();
        let width = usize::from(image.width());
        let height = usize::from(image.height());
        let mcu_x = width.div_ceil(8 * max_h);
        let mcu_y = height.div_ceil(8 * max_v);
        let buffer_width = mcu_x * 8 * max_h;

        let mut row: [Vec<_>; 4] = self.init_rows(buffer_width * 8 * max_v);
        // Room for the most a block can write (see `tokenize_block`), for one MCU row.
        let row_blocks = mcu_x * self.blocks_per_mcu();
        let mut scratch = TokenScratch {
            tokens: vec![0u8; row_blocks * 3 * 64 + 1],
            raw: vec![0i16; row_blocks * 63],
            freq: [0u32; 1024],
            prev_dc: [0i16; 4],
            ac_codes: ac_size_and_bits(),
        };
        let mut coded: Vec<TokenRow> = Vec::with_capacity(mcu_y);
        let trellis = self.trellis_state(q_tables, max_h, max_v);

        for mcu_row in 0..mcu_y {
            for r in &mut row {
                r.clear();
            }
            for y in 0..8 * max_v {
                let y = (mcu_row * 8 * max_v + y).min(height - 1) as u16;
                image.fill_buffers(y, &mut row);
                for _ in width..buffer_width {
                    for channel in &mut row {
                        if !channel.is_empty() {
                            channel.push(channel[channel.len() - 1]);
                        }
                    }
                }
            }

            coded.push(self.tokenize_mcu_row::<OP>(&row, mcu_row, mcu_x, buffer_width, q_tables, &mut scratch, &trellis)?);
        }
        drop((row, scratch.tokens, scratch.raw));

        if self.optimize_huffman_table {
            for table in 0..self.components.len().min(2) {
                let mut dc_freq = [0u32; 257];
                let mut ac_freq = [0u32; 257];
                dc_freq[..256].copy_from_slice(&scratch.freq[table * 512..][..256]);
                ac_freq[..256].copy_from_slice(&scratch.freq[table * 512 + 256..][..256]);
                dc_freq[256] = 1;
                ac_freq[256] = 1;
                self.huffman_tables[table] =
                    (HuffmanTable::new_optimized(dc_freq), HuffmanTable::new_optimized(ac_freq));
            }
        }

        self.write_frame_header(&image, q_tables)?;
        self.writer
            .write_scan_header(&self.components.iter().collect::<Vec<_>>(), None)?;

        self.write_token_scan(&coded)
    }

    /// [zarr-jpeg patch] Trellis quantisation's λ and rate model (`trellis.rs`),
    /// off unless `set_trellis(true)`: λ is `TRELLIS_LAMBDA` times a squared AC quantiser
    /// of the first table (see `TRELLIS_HARMONIC`), one for the whole image (the error of
    /// every component counts alike in PSNR), divided for subsampled components by the
    /// pixels each of their samples covers (an error there is spread over as many pixels);
    /// the rate model is the current tables' code lengths (Annex K's) for the whole image.
    #[inline(never)]
    fn trellis_state(&self, q_tables: &[QuantizationTable; 2], max_h: usize, max_v: usize) -> Trellis {
        // (in f64: a float sum is not vectorised, which keeps this set-up code small)
        let (mut squares, mut inverses) = (0.0, 0.0);
        for i in 1..64 {
            let step = f64::from(q_tables[0].step(i));
            squares += step * step;
            inverses += 1.0 / step;
        }
        let harmonic = 63.0 / inverses;
        let squared = (squares / 63.0).max(TRELLIS_HARMONIC * harmonic * harmonic);
        let lambda_base = squared * TRELLIS_LAMBDA;
        // λ per AC table, from the first component coded with it
        let mut lambda = [0i64; 2];
        for c in self.components.iter().rev() {
            let area = (max_h / usize::from(c.horizontal_sampling_factor).max(1))
                * (max_v / usize::from(c.vertical_sampling_factor).max(1));
            lambda[usize::from(c.ac_huffman_table & 1)] = (lambda_base / area as f64) as i64;
        }
        Trellis::new(self.trellis, lambda, [&self.huffman_tables[0].1, &self.huffman_tables[1].1])
    }

    /// [zarr-jpeg patch] Tokens of one MCU row (see `TokenRow`): its blocks in coding
    /// order from the sample rows `row`, each turned into tokens at once, its symbols
    /// counted in `scratch.freq`. Generic over the kernels only, not the image type.
    fn tokenize_mcu_row<OP: Operations>(
        &self,
        row: &[Vec<u8>; 4],
        mcu_row: usize,
        mcu_x: usize,
        buffer_width: usize,
        q_tables: &[QuantizationTable; 2],
        scratch: &mut TokenScratch,
        trellis: &Trellis,
    ) -> Result<TokenRow, EncodingError> {
        let (max_h, max_v) = self.get_max_sampling_size();
        let restart_interval = usize::from(self.restart_interval.unwrap_or(0));
        let TokenScratch { tokens, raw, freq, prev_dc, ac_codes } = scratch;
        let (mut nt, mut nr) = (0, 0);
        let mut mcu_ends = Vec::new();
        for mcu in 0..mcu_x {
            // The writer resets the DC prediction at each restart marker.
            if restart_interval > 0 && (mcu_row * mcu_x + mcu) % restart_interval == 0 {
                *prev_dc = [0; 4];
            }
            for (i, component) in self.components.iter().enumerate() {
                let h = usize::from(component.horizontal_sampling_factor);
                let v = usize::from(component.vertical_sampling_factor);
                let h_scale = max_h / h;
                let v_scale = max_v / v;
                let average = self.chroma_subsampling_method == ChromaSubsamplingMethod::Average
                    && (h_scale > 1 || v_scale > 1);
                let table = &q_tables[usize::from(component.quantization_table)];
                let tables = TokenTables::of(component);
                let block_trellis = trellis.block(component.ac_huffman_table);
                for dv in 0..v {
                    for dh in 0..h {
                        let bx = (mcu * h + dh) * 8 * h_scale;
                        let by = dv * 8 * v_scale;
                        let block = encode_block::<OP>(&row[i], bx, by, h_scale, v_scale, buffer_width, average, table, block_trellis);
                        let (Some(t), Some(r)) = (window(tokens, 3 * nt), window(raw, nr)) else {
                            return Err(EncodingError::Write("token buffer too small".into()));
                        };
                        let (n_tokens, n_raw) = tokenize_block::<OP>(&block, prev_dc[i], tables, t, r, freq, ac_codes);
                        nt += n_tokens;
                        nr += n_raw;
                        prev_dc[i] = block.data[0];
                    }
                }
            }
            if restart_interval > 0 {
                mcu_ends.push(nt);
            }
        }
        // One byte more: the coder reads each token as 4 bytes.
        Ok(TokenRow {
            tokens: try_copy(&tokens[..3 * nt + 1])?,
            raw: try_copy(&raw[..nr])?,
            mcu_ends,
        })
    }

    /// [zarr-jpeg patch] The entropy-coded data of the scan from its tokens, with the
    /// current Huffman tables and restart markers.
    fn write_token_scan(&mut self, coded: &[TokenRow]) -> Result<(), EncodingError> {
        let restart_interval = usize::from(self.restart_interval.unwrap_or(0));
        let codes = token_codes(&self.huffman_tables);
        if restart_interval == 0 {
            for row in coded {
                self.writer.reserve(row.max_code_bytes())?;
                self.writer.write_tokens(&row.tokens, &mut row.raw.chunks_exact(63), &codes)?;
            }
        } else {
            let mut restarts = 0;
            let mut restarts_to_go = restart_interval;
            for row in coded {
                self.writer.reserve(row.max_code_bytes())?;
                let mut raw = row.raw.chunks_exact(63);
                let mut start = 0;
                for &end in &row.mcu_ends {
                    if restarts_to_go == 0 {
                        self.writer.finalize_bit_buffer()?;
                        self.writer.write_marker(Marker::RST((restarts % 8) as u8))?;
                        restarts_to_go = restart_interval;
                        restarts += 1;
                        restarts &= 7;
                    }
                    restarts_to_go -= 1;
                    let Some(tokens) = row.tokens.get(3 * start..3 * end + 1) else {
                        break;
                    };
                    self.writer.write_tokens(tokens, &mut raw, &codes)?;
                    start = end;
                }
            }
        }

        self.writer.finalize_bit_buffer()?;
        Ok(())
    }

    fn encode_blocks<I: ImageBuffer, OP: Operations>(
        &mut self,
        image: &I,
        q_tables: &[QuantizationTable; 2],
    ) -> [Vec<AlignedBlock>; 4] {
        let width = image.width();
        let height = image.height();

        let (max_h_sampling, max_v_sampling) = self.get_max_sampling_size();

        let num_cols = usize::from(width).div_ceil(8 * max_h_sampling) * max_h_sampling;
        let num_rows = usize::from(height).div_ceil(8 * max_v_sampling) * max_v_sampling;

        debug_assert!(num_cols > 0);
        debug_assert!(num_rows > 0);

        let buffer_width = num_cols * 8;
        let buffer_size = num_cols * num_rows * 64;

        let mut row: [Vec<_>; 4] = self.init_rows(buffer_size);

        for y in 0..num_rows * 8 {
            let y = (y.min(usize::from(height) - 1)) as u16;

            image.fill_buffers(y, &mut row);

            for _ in usize::from(width)..num_cols * 8 {
                for channel in &mut row {
                    if !channel.is_empty() {
                        channel.push(channel[channel.len() - 1]);
                    }
                }
            }
        }

        let num_cols = usize::from(width).div_ceil(8);
        let num_rows = usize::from(height).div_ceil(8);

        debug_assert!(num_cols > 0);
        debug_assert!(num_rows > 0);

        let mut blocks: [Vec<_>; 4] = self.init_block_buffers(buffer_size / 64);

        for (i, component) in self.components.iter().enumerate() {
            let h_scale = max_h_sampling / component.horizontal_sampling_factor as usize;
            let v_scale = max_v_sampling / component.vertical_sampling_factor as usize;

            let cols = num_cols.div_ceil(h_scale);
            let rows = num_rows.div_ceil(v_scale);

            debug_assert!(cols > 0);
            debug_assert!(rows > 0);

            let average = self.chroma_subsampling_method == ChromaSubsamplingMethod::Average
                && (h_scale > 1 || v_scale > 1);

            for block_y in 0..rows {
                for block_x in 0..cols {
                    let bx = block_x * 8 * h_scale;
                    let by = block_y * 8 * v_scale;
                    blocks[i].push(encode_block::<OP>(
                        &row[i],
                        bx,
                        by,
                        h_scale,
                        v_scale,
                        buffer_width,
                        average,
                        &q_tables[component.quantization_table as usize],
                        None,
                    ));
                }
            }
        }
        blocks
    }

    fn init_block_buffers(&mut self, buffer_size: usize) -> [Vec<AlignedBlock>; 4] {
        // To simplify the code and to give the compiler more infos to optimize stuff we always initialize 4 components
        // Resource overhead should be minimal because an empty Vec doesn't allocate

        match self.components.len() {
            1 => [
                Vec::with_capacity(buffer_size),
                Vec::new(),
                Vec::new(),
                Vec::new(),
            ],
            3 => [
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::new(),
            ],
            4 => [
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
                Vec::with_capacity(buffer_size),
            ],
            len => unreachable!("Unsupported component length: {}", len),
        }
    }

    // Create new huffman tables optimized for this image
    fn optimize_huffman_table<OP: Operations>(&mut self, blocks: &[Vec<AlignedBlock>; 4]) {
        // TODO: Find out if it's possible to reuse some code from the writer

        let max_tables = self.components.len().min(2) as u8;

        for table in 0..max_tables {
            let mut dc_freq = [0u32; 257];
            dc_freq[256] = 1;
            let mut ac_freq = [0u32; 257];
            ac_freq[256] = 1;

            let mut had_ac = false;
            let mut had_dc = false;

            for (i, component) in self.components.iter().enumerate() {
                if component.dc_huffman_table == table {
                    had_dc = true;

                    let mut prev_dc = 0;

                    debug_assert!(!blocks[i].is_empty());

                    for block in &blocks[i] {
                        let value = block.data[0];
                        let diff = value - prev_dc;
                        let num_bits = get_num_bits(diff);

                        dc_freq[num_bits as usize] += 1;

                        prev_dc = value;
                    }
                }

                if component.ac_huffman_table == table {
                    had_ac = true;

                    if let Some(scans) = self.progressive_scans {
                        let scans = scans as usize - 1;

                        let values_per_scan = 64 / scans;

                        for scan in 0..scans {
                            let start = (scan * values_per_scan).max(1);
                            let end = if scan == scans - 1 {
                                // Due to rounding we might need to transfer more than values_per_scan values in the last scan
                                64
                            } else {
                                (scan + 1) * values_per_scan
                            };

                            debug_assert!(!blocks[i].is_empty());

                            for block in &blocks[i] {
                                let mut zero_run = 0;

                                for &value in &block.data[start..end] {
                                    if value == 0 {
                                        zero_run += 1;
                                    } else {
                                        while zero_run > 15 {
                                            ac_freq[0xF0] += 1;
                                            zero_run -= 16;
                                        }
                                        let num_bits = get_num_bits(value);
                                        let symbol = (zero_run << 4) | num_bits;

                                        ac_freq[symbol as usize] += 1;

                                        zero_run = 0;
                                    }
                                }

                                if zero_run > 0 {
                                    ac_freq[0] += 1;
                                }
                            }
                        }
                    } else {
                        for block in &blocks[i] {
                            if count_ac_symbols::<OP>(block, &mut ac_freq) {
                                continue;
                            }
                            let mut zero_run = 0;

                            for &value in &block.data[1..] {
                                if value == 0 {
                                    zero_run += 1;
                                } else {
                                    while zero_run > 15 {
                                        ac_freq[0xF0] += 1;
                                        zero_run -= 16;
                                    }
                                    let num_bits = get_num_bits(value);
                                    let symbol = (zero_run << 4) | num_bits;

                                    ac_freq[symbol as usize] += 1;

                                    zero_run = 0;
                                }
                            }

                            if zero_run > 0 {
                                ac_freq[0] += 1;
                            }
                        }
                    }
                }
            }

            assert!(had_dc, "Missing DC data for table {}", table);
            assert!(had_ac, "Missing AC data for table {}", table);

            self.huffman_tables[table as usize] = (
                HuffmanTable::new_optimized(dc_freq),
                HuffmanTable::new_optimized(ac_freq),
            );
        }
    }
}

#[cfg(feature = "std")]
impl Encoder<BufWriter<File>> {
    /// Create a new decoder that writes into a file
    ///
    /// See [new](Encoder::new) for further information.
    ///
    /// # Errors
    ///
    /// Returns an `IoError(std::io::Error)` if the file can't be created
    pub fn new_file<P: AsRef<Path>>(
        path: P,
        quality: u8,
    ) -> Result<Encoder<BufWriter<File>>, EncodingError> {
        let file = File::create(path)?;
        let buf = BufWriter::new(file);
        Ok(Self::new(buf, quality))
    }
}

pub(crate) fn get_block(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    col_stride: usize,
    row_stride: usize,
    width: usize,
) -> AlignedBlock {
    let mut block = [0i16; 64];

    for y in 0..8 {
        for x in 0..8 {
            let ix = start_x + (x * col_stride);
            let iy = start_y + (y * row_stride);

            block[y * 8 + x] = (data[iy * width + ix] as i16) - 128;
        }
    }

    AlignedBlock::new(block)
}

pub(crate) fn get_block_averaged(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    col_stride: usize,
    row_stride: usize,
    width: usize,
) -> AlignedBlock {
    let mut block = [0i16; 64];
    let n = col_stride * row_stride;
    // Alternate the rounding bias per column as libjpeg does (see jcsample.c)
    let bias_even = (n - 1) / 2;
    let bias_odd = n / 2;

    for y in 0..8 {
        for x in 0..8 {
            let ix = start_x + (x * col_stride);
            let iy = start_y + (y * row_stride);

            let mut sum = 0usize;
            for dy in 0..row_stride {
                for dx in 0..col_stride {
                    sum += data[(iy + dy) * width + (ix + dx)] as usize;
                }
            }

            let bias = if x & 1 == 0 { bias_even } else { bias_odd };
            block[y * 8 + x] = ((sum + bias) / n) as i16 - 128;
        }
    }

    AlignedBlock::new(block)
}

/// [zarr-jpeg patch] One MCU row of an interleaved scan, as the symbols it codes, in
/// coding order. A token is one coded symbol in 3 bytes (24 bits, little-endian): bits
/// 0..7 the symbol, bits 8..9 its code table slot (0..3 = DC table 0, AC table 0, DC
/// table 1, AC table 1), bit 10 the raw-block flag (DC tokens only), bits 11..23 its
/// magnitude bits (DC difference or AC coefficient; 0 for ZRL and EOB). A block is its DC
/// token, an AC token (`run << 4 | size`) per non-zero AC coefficient, ZRLs, and EOB
/// unless coefficient 63 is non-zero. Magnitudes take at most 12 bits: 8-bit samples give
/// coefficients within ±1024 and DC differences within ±2048 (quantisers are ≥ 1).
///
/// A block with more than `MAX_BLOCK_TOKENS` tokens is stored raw: its DC token, with
/// the flag, and its 63 AC coefficients in `raw` (coded as `write_block` codes them). So a
/// block takes at most 129 bytes here; the old buffer held 128 per block, and the whole
/// image as samples besides.
struct TokenRow {
    /// 3 bytes per token, and one more byte (the coder reads 4 bytes per token).
    tokens: Vec<u8>,
    raw: Vec<i16>,
    /// With restart intervals, where each MCU's tokens end (in tokens).
    mcu_ends: Vec<usize>,
}

impl TokenRow {
    /// [zarr-jpeg patch] The most bytes its code can take: a token codes at most 27 bits, a
    /// raw coefficient 26, and each byte may be stuffed.
    fn max_code_bytes(&self) -> usize {
        3 * self.tokens.len() + 7 * self.raw.len() + 16
    }
}

/// [zarr-jpeg patch] A copy of `s`, or an error where memory cannot hold it: the tokens of a
/// whole image are kept until its Huffman tables are built, and an allocation that fails
/// aborts (a trap in wasm).
fn try_copy<T: Copy>(s: &[T]) -> Result<Vec<T>, EncodingError> {
    let mut v = Vec::new();
    v.try_reserve_exact(s.len()).map_err(|_| EncodingError::Write(OUT_OF_MEMORY.into()))?;
    v.extend_from_slice(s);
    Ok(v)
}

/// [zarr-jpeg patch] The message of the error above.
pub(crate) const OUT_OF_MEMORY: &str = "out of memory";

/// [zarr-jpeg patch] `OP::encode_block`, compiled once for all its callers (the SIMD
/// kernel is large; a call per block costs little beside it); with `trellis` (the AC code
/// lengths and λ), the FDCT output trellis-quantised instead (`trellis.rs`).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
fn encode_block<OP: Operations>(
    data: &[u8],
    start_x: usize,
    start_y: usize,
    col_stride: usize,
    row_stride: usize,
    width: usize,
    average: bool,
    table: &QuantizationTable,
    trellis: BlockTrellis,
) -> AlignedBlock {
    OP::encode_block(data, start_x, start_y, col_stride, row_stride, width, average, table, trellis)
}

/// [zarr-jpeg patch] Trellis quantisation of a block (`trellis.rs`): the rate costs of its
/// AC table's symbols; `None`: the usual quantisation.
pub(crate) type BlockTrellis<'a> = Option<&'a trellis::Costs>;

/// [zarr-jpeg patch] λ of trellis quantisation as a fraction of the first table's mean
/// squared AC quantiser (both scaled by 8 as the FDCT is; chosen by measurement, PATCHES.md
/// section 9).
const TRELLIS_LAMBDA: f64 = 0.007;

/// [zarr-jpeg patch] The squared AC quantiser λ scales is the larger of the mean squared
/// step and this times the squared harmonic mean of the steps (the ratio of the two for the
/// Annex K tables, 3.90–4.10 across qualities, so their λ is the one chosen by measurement).
/// The mean square follows a table's largest steps, the harmonic mean its smallest: tables
/// with flat or slowly growing steps (`Flat`, mozjpeg's MS-SSIM, Ahumada, Peterson) get a
/// larger λ than their mean square gives, which measured better on every sample image
/// (PATCHES.md section 9); tables with steep high-frequency steps keep the mean square.
const TRELLIS_HARMONIC: f64 = 3.95;

/// [zarr-jpeg patch] Scratch space of `tokenize_mcu_row`, and what carries over from
/// one MCU row to the next.
struct TokenScratch {
    /// Room for one MCU row's tokens, 64 per block at most, and the byte after them.
    tokens: Vec<u8>,
    raw: Vec<i16>,
    /// Symbol counts, indexed `slot << 8 | symbol` (see `TokenRow`).
    freq: [u32; 1024],
    prev_dc: [i16; 4],
    ac_codes: [u32; 2 * AC_TABLE_OFFSET as usize],
}

/// [zarr-jpeg patch] Blocks with more tokens are stored raw (see `TokenRow`).
const MAX_BLOCK_TOKENS: usize = 43;

/// [zarr-jpeg patch] Fields of a token (see `TokenRow`).
pub(crate) const TOKEN_ENTRY: u32 = 0x3FF;
pub(crate) const TOKEN_RAW: u32 = 1 << 10;
pub(crate) const TOKEN_MAGNITUDE_SHIFT: u32 = 11;
const TOKEN_MAGNITUDE: u16 = 0x1FFF;

/// [zarr-jpeg patch] A coefficient's magnitude size and bits as token fields (see
/// `TokenRow`): `get_code`'s two results, `size | bits << TOKEN_MAGNITUDE_SHIFT`.
#[inline(always)]
fn size_and_bits(value: i16) -> u32 {
    let (size, bits) = get_code(value);
    u32::from(size) | u32::from(bits & TOKEN_MAGNITUDE) << TOKEN_MAGNITUDE_SHIFT
}

/// [zarr-jpeg patch] `size_and_bits` of the AC coefficients from −`AC_TABLE_OFFSET` to
/// `AC_TABLE_OFFSET` − 1 (nearly all of them at usual qualities; `tokenize_block` computes
/// the rest), indexed by value + `AC_TABLE_OFFSET`: one load per coefficient instead of
/// the sign, magnitude and size arithmetic. Made per image (a static table of all ±1024
/// would add 5 KB of gzipped module).
fn ac_size_and_bits() -> [u32; 2 * AC_TABLE_OFFSET as usize] {
    let mut table = [0u32; 2 * AC_TABLE_OFFSET as usize];
    for (value, entry) in (-AC_TABLE_OFFSET..).zip(&mut table) {
        *entry = size_and_bits(value as i16);
    }
    table
}
const AC_TABLE_OFFSET: i32 = 256;

/// [zarr-jpeg patch] A component's token slots (see `TokenRow`), shifted into place.
#[derive(Clone, Copy)]
struct TokenTables {
    dc: u32,
    ac: u32,
    /// Raw blocks are coded with the AC table after the DC one.
    raw_ok: bool,
}

impl TokenTables {
    fn of(component: &Component) -> Self {
        let dc = u32::from(component.dc_huffman_table & 1);
        let ac = u32::from(component.ac_huffman_table & 1);
        TokenTables {
            dc: (2 * dc) << 8,
            ac: (2 * ac + 1) << 8,
            raw_ok: dc == ac,
        }
    }
}

/// [zarr-jpeg patch] For each table slot and symbol (`slot << 8 | symbol`, see
/// `TokenRow`): bits 0..31 its code shifted left by the symbol's magnitude size, bits
/// 32..39 code length plus size, bits 40..47 the code length alone (0: the symbol has no
/// code); so a token codes as `code | magnitude` in `length + size` bits, as
/// `JfifWriter::write_block` writes it.
fn token_codes(tables: &[(HuffmanTable, HuffmanTable); 2]) -> [u64; 1024] {
    let mut codes = [0u64; 1024];
    for (slot, codes) in codes.chunks_exact_mut(256).enumerate() {
        let (dc, ac) = &tables[slot >> 1];
        let table = if slot & 1 == 0 { dc } else { ac };
        for (symbol, entry) in codes.iter_mut().enumerate() {
            let size = if slot & 1 == 0 { symbol.min(16) } else { symbol & 15 } as u8;
            let &(length, code) = table.lookup(symbol as u8);
            let shifted = u64::from(u32::from(code) << size);
            *entry = shifted | u64::from(length.wrapping_add(size)) << 32 | u64::from(length) << 40;
        }
    }
    codes
}

/// [zarr-jpeg patch] The `N` elements of `buffer` from `at`, if there are as many.
#[inline(always)]
fn window<T, const N: usize>(buffer: &mut [T], at: usize) -> Option<&mut [T; N]> {
    buffer.get_mut(at..at.checked_add(N)?)?.try_into().ok()
}

/// [zarr-jpeg patch] Bit `i` set when AC coefficient `i` (1..63) is non-zero.
#[inline(always)]
fn nonzero_ac_mask_scalar(block: &AlignedBlock) -> u64 {
    let mut mask = 0;
    for i in 1..64 {
        mask |= u64::from(block.data[i] != 0) << i;
    }
    mask
}

/// [zarr-jpeg patch] Writes one block's tokens (see `TokenRow`) to `tokens` (and, for a
/// raw block, its AC coefficients to `raw`), counts its symbols in `freq` (indexed by
/// the token's bits 0..9), and returns how many tokens and raw coefficients it wrote.
/// Each AC token covers at least one of the 63 AC positions (a ZRL 16) and EOB follows
/// only an unused one, so a block has at most 64 tokens; each is stored as 4 bytes at
/// 3-byte steps, the next one overwriting the fourth.
#[inline(always)]
fn tokenize_block<OP: Operations>(
    block: &AlignedBlock,
    prev_dc: i16,
    tables: TokenTables,
    tokens: &mut [u8; 3 * 64 + 1],
    raw: &mut [i16; 63],
    freq: &mut [u32; 1024],
    ac_codes: &[u32; 2 * AC_TABLE_OFFSET as usize],
) -> (usize, usize) {
    #[inline(always)]
    fn put(tokens: &mut [u8; 3 * 64 + 1], n: usize, token: u32) {
        let at = 3 * (n & 63);
        tokens[at..at + 4].copy_from_slice(&token.to_le_bytes());
    }
    let magnitude = |bits: u16| u32::from(bits & TOKEN_MAGNITUDE) << TOKEN_MAGNITUDE_SHIFT;

    let (size, bits) = get_code(block.data[0].wrapping_sub(prev_dc));
    debug_assert!(size <= 13);
    let dc = tables.dc | u32::from(size);
    freq[dc as usize & 1023] += 1;
    put(tokens, 0, dc | magnitude(bits));
    let mut mask = OP::nonzero_ac_mask(block).unwrap_or_else(|| nonzero_ac_mask_scalar(block));
    let mut n = 1;
    let mut last = 0;
    while mask != 0 {
        let i = mask.trailing_zeros();
        let mut run = i - last - 1;
        while run > 15 {
            put(tokens, n, tables.ac | 0xF0);
            freq[(tables.ac | 0xF0) as usize & 1023] += 1;
            n += 1;
            run -= 16;
        }
        let coefficient = block.data[i as usize & 63];
        let size_and_bits = ac_codes
            .get((i32::from(coefficient) + AC_TABLE_OFFSET) as usize)
            .copied()
            .unwrap_or_else(|| size_and_bits(coefficient));
        let ac = tables.ac | run << 4 | size_and_bits;
        put(tokens, n, ac);
        freq[ac as usize & 1023] += 1;
        n += 1;
        last = i;
        mask &= mask - 1;
    }
    if last < 63 {
        put(tokens, n, tables.ac);
        freq[tables.ac as usize & 1023] += 1;
        n += 1;
    }
    if n > MAX_BLOCK_TOKENS && tables.raw_ok {
        // The symbols are counted; the tokens past the DC one are dropped.
        tokens[1] |= (TOKEN_RAW >> 8) as u8;
        raw.copy_from_slice(&block.data[1..]);
        return (1, 63);
    }
    (n, 0)
}

/// [zarr-jpeg patch] AC symbol counts of one block from the operation's non-zero mask
/// (the same symbols the scalar loops count); `false` when `OP` has no mask.
#[inline(always)]
fn count_ac_symbols<OP: Operations>(block: &AlignedBlock, ac_freq: &mut [u32; 257]) -> bool {
    let Some(mut mask) = OP::nonzero_ac_mask(block) else {
        return false;
    };
    let mut last = 0;
    while mask != 0 {
        let i = mask.trailing_zeros();
        let mut run = i - last - 1;
        while run > 15 {
            ac_freq[0xF0] += 1;
            run -= 16;
        }
        let bits = 16 - block.data[i as usize].unsigned_abs().leading_zeros();
        ac_freq[((run << 4) | bits) as usize] += 1;
        last = i;
        mask &= mask - 1;
    }
    if last < 63 {
        ac_freq[0] += 1;
    }
    true
}

fn get_num_bits(mut value: i16) -> u8 {
    if value < 0 {
        value = -value;
    }

    let mut num_bits = 0;

    while value > 0 {
        num_bits += 1;
        value >>= 1;
    }

    num_bits
}

pub(crate) trait Operations {
    #[inline(always)]
    fn fdct(data: &mut AlignedBlock) {
        fdct(data);
    }

    /// [zarr-jpeg patch] Block extraction, replaceable by SIMD kernels.
    #[inline(always)]
    fn get_block(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
    ) -> AlignedBlock {
        get_block(data, start_x, start_y, col_stride, row_stride, width)
    }

    /// [zarr-jpeg patch] Averaged block extraction, replaceable by SIMD kernels.
    #[inline(always)]
    fn get_block_averaged(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
    ) -> AlignedBlock {
        get_block_averaged(data, start_x, start_y, col_stride, row_stride, width)
    }

    /// [zarr-jpeg patch] Block extraction, FDCT and quantisation of one block, which SIMD
    /// kernels can do without storing the intermediate blocks; with `trellis`, the FDCT
    /// output trellis-quantised instead (`trellis.rs`).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn encode_block(
        data: &[u8],
        start_x: usize,
        start_y: usize,
        col_stride: usize,
        row_stride: usize,
        width: usize,
        average: bool,
        table: &QuantizationTable,
        trellis: BlockTrellis,
    ) -> AlignedBlock {
        let mut block = if average {
            Self::get_block_averaged(data, start_x, start_y, col_stride, row_stride, width)
        } else {
            Self::get_block(data, start_x, start_y, col_stride, row_stride, width)
        };

        Self::fdct(&mut block);
        if let Some(costs) = trellis {
            return trellis::quantize(&block, table, costs);
        }

        let mut q_block = AlignedBlock::default();

        Self::quantize_block(&block, &mut q_block, table);

        q_block
    }

    /// [zarr-jpeg patch] Bit `i` set when AC coefficient `i` (zig-zag order, 1..63) is
    /// non-zero, where a kernel computes it cheaply; `None` keeps the scalar loops.
    #[inline(always)]
    fn nonzero_ac_mask(_block: &AlignedBlock) -> Option<u64> {
        None
    }

    #[inline(always)]
    fn quantize_block(block: &AlignedBlock, q_block: &mut AlignedBlock, table: &QuantizationTable) {
        for i in 0..64 {
            let z = ZIGZAG[i] as usize & 0x3f;
            q_block.data[i] = table.quantize(block.data[z], z);
        }
    }
}

pub(crate) struct DefaultOperations;

/// [zarr-jpeg patch] An image adapter behind a reference to the trait object.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
struct DynImage<'a>(&'a dyn ImageBuffer);

#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
impl ImageBuffer for DynImage<'_> {
    fn get_jpeg_color_type(&self) -> JpegColorType {
        self.0.get_jpeg_color_type()
    }

    fn width(&self) -> u16 {
        self.0.width()
    }

    fn height(&self) -> u16 {
        self.0.height()
    }

    fn fill_buffers(&self, y: u16, buffers: &mut [Vec<u8>; 4]) {
        self.0.fill_buffers(y, buffers)
    }
}

impl Operations for DefaultOperations {}

#[cfg(test)]
mod tests {
    use alloc::vec;

    use crate::encoder::{get_block, get_block_averaged, get_num_bits};
    use crate::writer::get_code;
    use crate::{Encoder, SamplingFactor};

    #[test]
    fn test_get_block_averaged_2x2() {
        // Every 2x2 block is {0, 252, 0, 252}; averages to 126.
        let width = 16;
        let mut data = vec![0u8; width * 16];
        for (i, v) in data.iter_mut().enumerate() {
            *v = if (i % width) % 2 == 0 { 0 } else { 252 };
        }

        let nearest = get_block(&data, 0, 0, 2, 2, width);
        let averaged = get_block_averaged(&data, 0, 0, 2, 2, width);

        assert!(nearest.data.iter().all(|&v| v == -128));
        assert!(averaged.data.iter().all(|&v| v == 126 - 128));
    }

    #[test]
    fn test_get_block_averaged_dithers_bias() {
        // Every 2x2 block averages to 1.5; bias dither rounds to 1 on even cols, 2 on odd.
        let width = 16;
        let mut data = vec![0u8; width * 16];
        for (i, v) in data.iter_mut().enumerate() {
            *v = if (i % width) % 2 == 0 { 1 } else { 2 };
        }

        let averaged = get_block_averaged(&data, 0, 0, 2, 2, width);
        assert_eq!(averaged.data[0], 1 - 128);
        assert_eq!(averaged.data[1], 2 - 128);
        assert_eq!(averaged.data[8], 1 - 128);
    }

    #[test]
    fn test_get_num_bits() {
        let min_max = 2i16.pow(13);

        for value in -min_max..=min_max {
            let num_bits1 = get_num_bits(value);
            let (num_bits2, _) = get_code(value);

            assert_eq!(
                num_bits1, num_bits2,
                "Difference in num bits for value {}: {} vs {}",
                value, num_bits1, num_bits2
            );
        }
    }

    #[test]
    fn sampling_factors() {
        assert_eq!(SamplingFactor::F_1_1.get_sampling_factors(), (1, 1));
        assert_eq!(SamplingFactor::F_2_1.get_sampling_factors(), (2, 1));
        assert_eq!(SamplingFactor::F_1_2.get_sampling_factors(), (1, 2));
        assert_eq!(SamplingFactor::F_2_2.get_sampling_factors(), (2, 2));
        assert_eq!(SamplingFactor::F_4_1.get_sampling_factors(), (4, 1));
        assert_eq!(SamplingFactor::F_4_2.get_sampling_factors(), (4, 2));
        assert_eq!(SamplingFactor::F_1_4.get_sampling_factors(), (1, 4));
        assert_eq!(SamplingFactor::F_2_4.get_sampling_factors(), (2, 4));

        assert_eq!(SamplingFactor::R_4_4_4.get_sampling_factors(), (1, 1));
        assert_eq!(SamplingFactor::R_4_4_0.get_sampling_factors(), (1, 2));
        assert_eq!(SamplingFactor::R_4_4_1.get_sampling_factors(), (1, 4));
        assert_eq!(SamplingFactor::R_4_2_2.get_sampling_factors(), (2, 1));
        assert_eq!(SamplingFactor::R_4_2_0.get_sampling_factors(), (2, 2));
        assert_eq!(SamplingFactor::R_4_2_1.get_sampling_factors(), (2, 4));
        assert_eq!(SamplingFactor::R_4_1_1.get_sampling_factors(), (4, 1));
        assert_eq!(SamplingFactor::R_4_1_0.get_sampling_factors(), (4, 2));
    }

    #[test]
    fn test_set_progressive() {
        let mut encoder = Encoder::new(vec![], 100);
        encoder.set_progressive(true);
        assert_eq!(encoder.progressive_scans(), Some(4));

        encoder.set_progressive(false);
        assert_eq!(encoder.progressive_scans(), None);
    }
}
