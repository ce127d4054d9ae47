//! Level 0 of a DICOM slide whose frames are not JPEG Baseline (uncompressed, RLE, JPEG
//! 2000): each row of frames read and decoded, then handed to the pipeline as rows. One
//! row of frames is in memory at a time.

use super::super::error::{ConvertError, Result};
use super::super::source::{luma, ImageInfo, RowSource, RowsEnd, TileGrid};
use super::super::tiff::{decode_j2k, decompress};
use super::frames::{read_frame, Frame};
use super::DicomFile;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FrameCoding {
    Native,
    Rle,
    Jpeg2000,
}

pub struct FrameRows<'a> {
    parts: Vec<(DicomFile<'a>, Vec<Frame>)>,
    tiles: Vec<Option<(u32, u32)>>,
    grid: TileGrid,
    /// (rows, columns) of a frame
    frame: (u64, u64),
    samples: usize,
    coding: FrameCoding,
    info: ImageInfo,
    label: String,
    warnings: Vec<String>,
}

impl<'a> FrameRows<'a> {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        parts: Vec<(DicomFile<'a>, Vec<Frame>)>,
        tiles: Vec<Option<(u32, u32)>>,
        grid: TileGrid,
        frame: (u64, u64),
        samples: usize,
        coding: FrameCoding,
        info: ImageInfo,
        label: String,
        warnings: Vec<String>,
    ) -> FrameRows<'a> {
        FrameRows { parts, tiles, grid, frame, samples, coding, info, label, warnings }
    }

    /// Frame `i`'s samples (frame rows × columns × samples), or None where it is absent.
    fn frame_samples(&self, i: u64) -> Result<Option<Vec<u8>>> {
        let Some((part, f)) = self.tiles[i as usize] else {
            return Ok(None);
        };
        let (file, frames) = &self.parts[part as usize];
        let (h, w) = (self.frame.0 as usize, self.frame.1 as usize);
        let size = h * w * self.samples;
        let fail = |m: String| ConvertError::input(format!("{} frame {i} (row {}, column {}): {m}", self.label, i / self.grid.columns, i % self.grid.columns));
        let max = match self.coding {
            FrameCoding::Native => size as u64,
            // compressed: at most twice the raw size and some
            _ => size as u64 * 2 + (1 << 16),
        };
        let bytes = read_frame(file.input, &frames[f as usize], max).map_err(fail)?;
        let samples = match self.coding {
            FrameCoding::Native => bytes,
            FrameCoding::Rle => rle(&bytes, h * w, self.samples).map_err(fail)?,
            FrameCoding::Jpeg2000 => decode_j2k(&bytes, w, h, self.samples, 8).map_err(fail)?.into_iter().map(|v| v as u8).collect(),
        };
        if samples.len() != size {
            return Err(fail(format!("it decodes to {} samples where the frame has {size}", samples.len())));
        }
        Ok(Some(samples))
    }
}

/// DICOM RLE (PS3.5 annex G): a 64-byte header of segment offsets, one PackBits segment
/// per sample plane (8-bit samples), interleaved here.
fn rle(bytes: &[u8], pixels: usize, samples: usize) -> std::result::Result<Vec<u8>, String> {
    if bytes.len() < 64 {
        return Err("its RLE header is shorter than 64 bytes".into());
    }
    let word = |k: usize| u32::from_le_bytes(bytes[4 * k..4 * k + 4].try_into().expect("4 bytes")) as usize;
    let segments = word(0);
    if segments != samples {
        return Err(format!("its RLE header gives {segments} segment(s) for {samples} 8-bit sample(s) per pixel"));
    }
    let mut out = vec![0u8; pixels * samples];
    for s in 0..segments {
        let start = word(1 + s);
        let end = if s + 1 < segments { word(2 + s) } else { bytes.len() };
        if start < 64 || start > end || end > bytes.len() {
            return Err(format!("its RLE segment {s} lies outside the frame ({start}..{end} of {} bytes)", bytes.len()));
        }
        let plane = decompress(32773, &bytes[start..end], pixels)?;
        if plane.len() < pixels {
            return Err(format!("its RLE segment {s} decodes to {} of {pixels} samples", plane.len()));
        }
        for (p, v) in plane.iter().enumerate() {
            out[p * samples + s] = *v;
        }
    }
    Ok(out)
}

impl RowSource for FrameRows<'_> {
    fn info(&self) -> &ImageInfo {
        &self.info
    }

    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }

    fn band_bytes(&self) -> u64 {
        u64::from(self.frame.0) * u64::from(self.info.width) * self.samples as u64
    }

    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        let (fh, fw) = (self.frame.0 as usize, self.frame.1 as usize);
        let (height, width) = (self.info.height as usize, self.info.width as usize);
        let c = self.samples;
        let out_c = if to_gray { 1 } else { c };
        let mut band = vec![0u8; fh * width * out_c];
        for ty in 0..self.grid.rows as usize {
            let rows_here = fh.min(height - ty * fh);
            band.fill(0);
            for tx in 0..self.grid.columns as usize {
                let i = (ty * self.grid.columns as usize + tx) as u64;
                let Some(samples) = self.frame_samples(i)? else { continue };
                let x0 = tx * fw;
                let w = fw.min(width - x0);
                for y in 0..rows_here {
                    let src = &samples[y * fw * c..(y * fw + w) * c];
                    let dst = &mut band[(y * width + x0) * out_c..(y * width + x0 + w) * out_c];
                    if to_gray {
                        for (d, p) in dst.iter_mut().zip(src.chunks_exact(3)) {
                            *d = luma(p[0], p[1], p[2]);
                        }
                    } else {
                        dst.copy_from_slice(src);
                    }
                }
            }
            sink(&band[..rows_here * width * out_c], rows_here)?;
        }
        Ok(RowsEnd::Done(Vec::new()))
    }
}
