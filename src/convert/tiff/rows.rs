//! A TIFF page whose tiles or strips are not JPEG (none, LZW, Deflate, PackBits) as rows:
//! each row of blocks read and decoded in turn, into a band the pyramid takes. Grey
//! (min-is-black or min-is-white), RGB, subsampled or full YCbCr, or several channels that
//! become a `c` axis of grayscale chunks; 8-bit, or 16-bit through a rescale window.

use super::super::error::{ConvertError, Result};
use super::super::options::{Rescale, Window};
use super::super::source::{luma, ImageInfo, RowSource, RowsEnd, StackPlanes, TileGrid};
use super::super::stack::PlaneIndex;
use super::decode::{decode_j2k, decoded_compression, decompress, j2k_compression, samples16, undo_predictor8, ycbcr_block_bytes, YcbcrToRgb};
use super::ifd::{compression_name, photometric_name, Page, Tiff};
use super::image::{check_uint8, join_pages};

/// The largest tile or strip: 64 Mi samples' bytes (8192² 8-bit pixels).
const MAX_TILE_BYTES: u64 = 1 << 26;

/// How a block's samples become the rows' pixels.
enum Layout {
    /// one sample; min-is-white inverted
    Gray { invert: bool },
    Rgb,
    /// subsampled (or not) YCbCr data units, turned into RGB
    Ycbcr { h: usize, v: usize, table: Box<YcbcrToRgb> },
    /// several channels, copied as they are (a c axis)
    Channels,
}

pub struct TiffRows<'a> {
    tiff: Tiff<'a>,
    page: Page,
    grid: TileGrid,
    info: ImageInfo,
    layout: Layout,
    sixteen: bool,
    window: Option<Window>,
    /// samples per pixel in one block (1 when the samples are planar)
    per_block: usize,
    warnings: Vec<String>,
}

impl<'a> TiffRows<'a> {
    pub fn open(tiff: Tiff<'a>, page: Page, mut info: ImageInfo, rescale: Option<Rescale>, warnings: Vec<String>) -> Result<TiffRows<'a>> {
        let file = tiff.file.clone();
        let where_ = format!("{file}: {}", page.label);
        let sixteen = page.sample_format == 1 && page.bits_per_sample.iter().all(|&b| b == 16);
        if sixteen && rescale.is_none() {
            return Err(ConvertError::input(format!(
                "{where_}: the samples are uint16; the jpeg codec stores uint8 (8-bit) samples only: pass --rescale auto \
                 (map the image's own min–max to 0–255) or --rescale MIN:MAX"
            )));
        }
        if !sixteen {
            check_uint8(&page, &where_)?;
            if rescale.is_some() {
                return Err(ConvertError::argument(format!("rescale applies to 16-bit input; {where_} is 8-bit")));
            }
        }
        if decoded_compression(page.compression).is_none() && j2k_compression(page.compression).is_none() {
            return Err(ConvertError::input(format!(
                "{where_}: {} is not supported; this converter reads JPEG (its tiles copied) and none, LZW, Deflate, \
                 PackBits, JPEG 2000, JPEG 2000 (Aperio, RGB) TIFF pages",
                compression_name(page.compression)
            )));
        }
        let spp = page.samples_per_pixel;
        let photometric = page.photometric.unwrap_or(if spp == 3 { 2 } else { 1 });
        let layout = match (spp, photometric) {
            (1, 0 | 1) => Layout::Gray { invert: photometric == 0 },
            (3, 2) => Layout::Rgb,
            (3, 6) => {
                let (h, v) = page.ycbcr_subsampling;
                if ![1, 2, 4].contains(&h) || ![1, 2, 4].contains(&v) || v > h {
                    return Err(ConvertError::input(format!(
                        "{where_}: YCbCrSubSampling {h}, {v} is not one TIFF allows (1, 2 or 4, vertical ≤ horizontal)"
                    )));
                }
                if page.planar == 2 {
                    return Err(ConvertError::input(format!(
                        "{where_}: planar (separate) YCbCr planes are not supported; store them interleaved (chunky)"
                    )));
                }
                if page.predictor != 1 {
                    return Err(ConvertError::input(format!("{where_}: predictor {} with YCbCr data units is not supported", page.predictor)));
                }
                let table = Box::new(YcbcrToRgb::new(page.ycbcr_coefficients, page.reference_black_white));
                Layout::Ycbcr { h: h as usize, v: v as usize, table }
            }
            (2..=64, 1) => Layout::Channels,
            _ => {
                return Err(ConvertError::input(format!(
                    "{where_}: Photometric {} with {spp} sample(s) per pixel is not supported (1 sample min-is-black/min-is-white, \
                     3 samples RGB or YCbCr, or several min-is-black channels)",
                    photometric_name(Some(photometric))
                )))
            }
        };
        if ![1, 2].contains(&page.predictor) && !matches!(layout, Layout::Ycbcr { .. }) {
            return Err(ConvertError::input(format!("{where_}: predictor {} is not supported (1 none, 2 horizontal)", page.predictor)));
        }
        let bytes_per = if sixteen { 2 } else { 1 };
        if page.tile_width * page.tile_height * bytes_per > MAX_TILE_BYTES {
            return Err(ConvertError::input(format!(
                "{where_}: {} of {} × {} pixels are larger than this converter accepts (2^26 pixels)",
                if page.tiled { "tiles" } else { "strips" },
                page.tile_width,
                page.tile_height
            )));
        }
        let grid = page.grid(&file)?;
        info.channels = spp as usize;
        info.planes = matches!(layout, Layout::Channels);
        let per_block = if grid.planes > 1 { 1 } else { spp as usize };
        let mut rows = TiffRows { tiff, page, grid, info, layout, sixteen, window: None, per_block, warnings };
        rows.window = match rescale {
            None => None,
            Some(Rescale::Window(w)) => Some(w),
            Some(Rescale::Auto) => {
                // a first pass over every block for the image's own range
                let (min, max) = rows.sample_range()?;
                Some(Window::of_range(min, max))
            }
        };
        Ok(rows)
    }

    fn label(&self, i: u64, ty: u64, tx: u64, plane: Option<u64>) -> String {
        let plane = plane.map_or(String::new(), |p| format!(", plane {p}"));
        format!("{}: {} {} {i} (row {ty}, column {tx}{plane})", self.tiff.file, self.page.label, self.grid.kind)
    }

    /// Block `i`'s decoded bytes: `rows_here` rows of `tile_width` pixels of `per_block`
    /// samples (RGB for YCbCr), 16-bit ones as u16 in this machine's order. None: empty.
    fn block(&self, i: u64, label: &str, rows_here: usize) -> Result<Option<Block>> {
        let (offset, count) = (self.page.offsets[i as usize], self.page.byte_counts[i as usize]);
        if count == 0 {
            return Ok(None);
        }
        let what = label.strip_prefix(&format!("{}: ", self.tiff.file)).unwrap_or(label);
        let raw = self.tiff.read(offset, count, what)?;
        let tw = self.page.tile_width as usize;
        let block_rows = if self.page.tiled { self.page.tile_height as usize } else { rows_here };
        let bytes_per = if self.sixteen { 2 } else { 1 };
        let (limit, need) = match &self.layout {
            Layout::Ycbcr { h, v, .. } => (ycbcr_block_bytes(tw, block_rows, *h, *v), ycbcr_block_bytes(tw, rows_here, *h, *v)),
            _ => (tw * block_rows * self.per_block * bytes_per, tw * rows_here * self.per_block * bytes_per),
        };
        if j2k_compression(self.page.compression).is_some() {
            let bits = if self.sixteen { 16 } else { 8 };
            let samples = decode_j2k(&raw, tw, block_rows, self.per_block, bits)
                .map_err(|e| ConvertError::input(format!("{label}: cannot decode its JPEG 2000 data: {e}")))?;
            return Ok(Some(if self.sixteen {
                Block::Sixteen(samples)
            } else {
                Block::Eight(samples.into_iter().map(|v| v as u8).collect())
            }));
        }
        let name = decoded_compression(self.page.compression).unwrap_or("");
        let mut bytes = decompress(self.page.compression, &raw, limit)
            .map_err(|e| ConvertError::input(format!("{label}: cannot decode its {name} data: {e}")))?;
        if bytes.len() < need {
            return Err(ConvertError::input(format!(
                "{label}: decodes to {} bytes; {need} needed (corrupt or truncated)",
                bytes.len()
            )));
        }
        let predictor = self.page.predictor == 2;
        Ok(Some(match &self.layout {
            Layout::Ycbcr { h, v, table } => Block::Eight(table.unpack(&bytes, tw, rows_here, *h, *v)),
            _ if self.sixteen => Block::Sixteen(samples16(&bytes, self.tiff.little_endian, predictor, tw, self.per_block)),
            _ => {
                if predictor {
                    undo_predictor8(&mut bytes, tw, self.per_block);
                }
                Block::Eight(bytes)
            }
        }))
    }

    fn sample_range(&self) -> Result<(u16, u16)> {
        let (mut min, mut max) = (u16::MAX, 0u16);
        let (th, tw) = (self.page.tile_height, self.page.tile_width);
        for ty in 0..self.grid.rows {
            let rows_here = th.min(self.page.height - ty * th) as usize;
            for tx in 0..self.grid.columns {
                let w = tw.min(self.page.width - tx * tw) as usize;
                for p in 0..self.grid.planes {
                    let i = p * self.grid.rows * self.grid.columns + ty * self.grid.columns + tx;
                    let label = format!("{}: {} {} {i}", self.tiff.file, self.page.label, self.grid.kind);
                    if let Some(Block::Sixteen(block)) = self.block(i, &label, rows_here)? {
                        for y in 0..rows_here {
                            let at = y * tw as usize * self.per_block;
                            for &v in &block[at..at + w * self.per_block] {
                                min = min.min(v);
                                max = max.max(v);
                            }
                        }
                    }
                }
            }
        }
        Ok((min, max))
    }
}

enum Block {
    Eight(Vec<u8>),
    Sixteen(Vec<u16>),
}

impl Block {
    fn at(&self, k: usize, window: Option<&Window>) -> u8 {
        match self {
            Block::Eight(b) => b[k],
            Block::Sixteen(b) => window.map_or(0, |w| w.map(b[k])),
        }
    }
}

impl RowSource for TiffRows<'_> {
    fn info(&self) -> &ImageInfo {
        &self.info
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn rescaled(&self) -> Option<(&'static str, Window)> {
        self.window.map(|w| ("uint16", w))
    }

    fn band_bytes(&self) -> u64 {
        self.page.tile_height * self.page.width * u64::from(self.page.samples_per_pixel)
    }

    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        let spp = self.page.samples_per_pixel as usize;
        let c_out = if to_gray { 1 } else { spp };
        let (th, tw) = (self.page.tile_height, self.page.tile_width);
        let width = self.page.width as usize;
        let window = self.window;
        let mut band = vec![0u8; th as usize * width * c_out];
        for ty in 0..self.grid.rows {
            let rows_here = th.min(self.page.height - ty * th) as usize;
            for tx in 0..self.grid.columns {
                let w = tw.min(self.page.width - tx * tw) as usize;
                let mut blocks = Vec::with_capacity(self.grid.planes as usize);
                for p in 0..self.grid.planes {
                    let i = p * self.grid.rows * self.grid.columns + ty * self.grid.columns + tx;
                    let label = self.label(i, ty, tx, (self.grid.planes > 1).then_some(p));
                    blocks.push(self.block(i, &label, rows_here)?);
                }
                let planar = blocks.len() > 1;
                let tw = tw as usize;
                // the sample of channel c at pixel (y, x) of the block (0 where it is empty)
                let sample = |c: usize, at: usize| -> u8 {
                    let (block, k) = if planar { (&blocks[c], at) } else { (&blocks[0], at * spp + c) };
                    block.as_ref().map_or(0, |b| b.at(k, window.as_ref()))
                };
                for y in 0..rows_here {
                    let mut o = (y * width + tx as usize * tw) * c_out;
                    for x in 0..w {
                        let at = y * tw + x;
                        match &self.layout {
                            Layout::Channels => {
                                for c in 0..spp {
                                    band[o] = sample(c, at);
                                    o += 1;
                                }
                            }
                            Layout::Gray { invert } => {
                                let v = sample(0, at);
                                band[o] = if *invert { 255 - v } else { v };
                                o += 1;
                            }
                            Layout::Rgb | Layout::Ycbcr { .. } => {
                                let (r, g, b) = (sample(0, at), sample(1, at), sample(2, at));
                                if to_gray {
                                    band[o] = luma(r, g, b);
                                    o += 1;
                                } else {
                                    band[o..o + 3].copy_from_slice(&[r, g, b]);
                                    o += 3;
                                }
                            }
                        }
                    }
                }
            }
            sink(&band[..rows_here * width * c_out], rows_here)?;
        }
        Ok(RowsEnd::Done(Vec::new()))
    }
}

/// The planes of a stack, each read as [`TiffRows`] over its own pages, one at a time.
pub struct TiffPlanes<'a> {
    tiff: Tiff<'a>,
    /// per plane, time points outermost: the page index of each channel
    planes: Vec<Vec<usize>>,
    z: u32,
    info: ImageInfo,
    /// the same for every plane: `--rescale auto` becomes the whole stack's range
    rescale: Option<Rescale>,
}

impl<'a> TiffPlanes<'a> {
    pub fn new(tiff: Tiff<'a>, planes: Vec<Vec<usize>>, z: u32, info: ImageInfo, rescale: Option<Rescale>) -> Result<TiffPlanes<'a>> {
        let mut stack = TiffPlanes { tiff, planes, z, info, rescale };
        if rescale == Some(Rescale::Auto) {
            // a first pass over every plane for the stack's own range
            let (mut min, mut max) = (u16::MAX, 0u16);
            for i in 0..stack.planes.len() {
                let rows = stack.rows(i, Some(Rescale::Window(Window { min: 0, max: 1 })), Vec::new())?;
                let (lo, hi) = rows.sample_range()?;
                (min, max) = (min.min(lo), max.max(hi));
            }
            stack.rescale = Some(Rescale::Window(Window::of_range(min, max)));
        }
        Ok(stack)
    }

    fn rows(&self, i: usize, rescale: Option<Rescale>, warnings: Vec<String>) -> Result<TiffRows<'a>> {
        let page = join_pages(&self.tiff, &self.planes[i], "the description")?;
        // the pages are not needed to read a page's blocks
        let t = &self.tiff;
        let tiff = Tiff { input: t.input, file: t.file.clone(), size: t.size, big: t.big, little_endian: t.little_endian, pages: Vec::new() };
        TiffRows::open(tiff, page, self.info.clone(), rescale, warnings)
    }

    /// Plane `i` (in stack order) as rows, with the warnings known before reading.
    pub fn open_plane(&self, i: usize, warnings: Vec<String>) -> Result<Box<dyn RowSource + 'a>> {
        Ok(Box::new(self.rows(i, self.rescale, warnings)?))
    }
}

impl<'a> StackPlanes<'a> for TiffPlanes<'a> {
    fn open(&self, at: PlaneIndex) -> Result<Box<dyn RowSource + 'a>> {
        self.open_plane((at.t * self.z + at.z) as usize, Vec::new())
    }
}
