//! TIFF, BigTIFF, SVS and OME-TIFF in: the pages read in place (ifd.rs), the image's page
//! chosen or its channel pages joined (image.rs), and its samples decoded as rows
//! (decode.rs, rows.rs) for the one pipeline.

mod decode;
mod ifd;
mod image;
mod ojpeg;
mod rows;
mod tiles;

use super::error::{ConvertError, Result};
use super::options::{ConvertOptions, Rescale};
use super::source::{ImageInfo, ReadAt, RowSource, StackPlanes};
use super::stack::Stack;
use super::tile_copy::TileJob;

pub use ifd::Tiff;
pub use decode::{decode_j2k, decompress};


/// What an opened TIFF is converted as.
pub enum Opened<'a> {
    /// rows of decoded samples, through the pipeline like any image
    Rows(Box<dyn RowSource + 'a>),
    /// the first plane's rows, the rest of the planes, and the stack they make (also for a
    /// single plane whose description names its channels)
    Stack(Box<dyn RowSource + 'a>, Box<dyn StackPlanes<'a> + 'a>, Stack),
    /// JPEG tiles copied into level 0
    Tiles(Box<TileJob<'a>>, Vec<String>),
}

/// Opens a TIFF: the image it holds, as tiles to copy or rows to encode.
pub fn open<'a>(input: &'a dyn ReadAt, file: &str, options: &ConvertOptions, rescale: Option<Rescale>) -> Result<Opened<'a>> {
    let tiff = Tiff::open(input, file)?;
    let mut warnings = Vec::new();
    let chosen = image::choose(&tiff, &mut warnings)?;
    let page = chosen.page.clone();
    if page.compression == 7 && !chosen.stack.is_stack() {
        let job = tiles::prepare(tiff, page, options, &mut warnings)?;
        return Ok(Opened::Tiles(Box::new(job), warnings));
    }
    let pixel = image::pixel_size(&page);
    let info = ImageInfo {
        height: page.height.min(u64::from(u32::MAX)) as u32,
        width: page.width.min(u64::from(u32::MAX)) as u32,
        channels: 1,
        format: "tiff",
        planes: false,
        pixel_size: pixel.map(|p| p.x),
        summary: Some(image::source_summary(&tiff, &page, pixel)),
    };
    if chosen.stack.is_stack() && matches!(page.compression, 6 | 7) {
        return Err(ConvertError::input(format!(
            "{file}: the planes of this stack are JPEG-compressed; this converter reads a z-stack or time series \
             from uncompressed, LZW, Deflate, PackBits or JPEG 2000 pages"
        )));
    }
    if page.compression == 6 {
        let source = ojpeg::open(&tiff, &page)?;
        if rescale.is_some() {
            return Err(ConvertError::argument(format!("rescale applies to 16-bit input; {file}: {} is 8-bit", page.label)));
        }
        return Ok(Opened::Rows(Box::new(ojpeg::OldJpegRows::new(source, info, warnings))));
    }
    let image::Chosen { stack, planes, .. } = chosen;
    if planes.len() == 1 && stack.channels.is_empty() {
        return Ok(Opened::Rows(Box::new(rows::TiffRows::open(tiff, page, info, rescale, warnings)?)));
    }
    let more = rows::TiffPlanes::new(tiff, planes, stack.z, info, rescale)?;
    let first = more.open_plane(0, warnings)?;
    Ok(Opened::Stack(first, Box::new(more), stack))
}
