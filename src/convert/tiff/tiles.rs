//! A TIFF page of baseline JPEG tiles (compression 7) as the tiles level 0 copies: the page
//! checked, each tile's bytes made a complete stream (the page's JPEGTables spliced in, the
//! colour markers made to say what the Photometric tag says).

use super::super::error::{ConvertError, Result};
use super::super::options::ConvertOptions;
use super::super::tile_copy::{check_tile_size, TileInput, TileJob, TileSpec};
use super::ifd::{photometric_name, Page, Tiff};
use super::image::{check_uint8, pixel_size, source_summary};
use crate::decode::StoredColorSpace;

/// A page's tiles, read in place.
struct PageTiles<'a> {
    tiff: Tiff<'a>,
    page: Page,
    declared: StoredColorSpace,
}

impl TileInput for PageTiles<'_> {
    fn read(&self, i: u64, label: &str) -> Result<Option<Vec<u8>>> {
        let count = self.page.byte_counts[i as usize];
        if count == 0 {
            return Ok(None);
        }
        let what = label.strip_prefix(&format!("{}: ", self.tiff.file)).unwrap_or(label);
        let bytes = self.tiff.read(self.page.offsets[i as usize], count, what)?;
        crate::tile_stream::complete_tile_stream(&bytes, self.page.jpeg_tables.as_deref(), Some(self.declared))
            .map(Some)
            .map_err(|e| ConvertError::input(format!("{label}: {e}")))
    }
}

/// The page's tiles as a tile job, or a refusal naming what the copy path cannot take.
pub fn prepare<'a>(tiff: Tiff<'a>, page: Page, options: &ConvertOptions, warnings: &mut Vec<String>) -> Result<TileJob<'a>> {
    let file = tiff.file.clone();
    let where_ = format!("{file}: {}", page.label);
    check_uint8(&page, &where_)?;
    let spp = page.samples_per_pixel;
    let (declared, planes) = if page.planar == 2 && spp > 1 && page.photometric.unwrap_or(1) == 1 {
        // several min-is-black channels, each plane of grayscale JPEG tiles: a c axis
        (StoredColorSpace::Grayscale, spp as usize)
    } else {
        if spp != 1 && spp != 3 {
            return Err(ConvertError::input(format!("{where_}: {spp} samples per pixel; JPEG tiles with 1 or 3 are supported")));
        }
        if spp == 3 && page.planar != 1 {
            return Err(ConvertError::input(format!("{where_}: planar (separate) colour planes are not supported for JPEG tiles")));
        }
        let color = match page.photometric {
            Some(1) => Some(StoredColorSpace::Grayscale),
            Some(2) => Some(StoredColorSpace::Rgb),
            Some(6) => Some(StoredColorSpace::Ycbcr),
            _ => None,
        };
        match color {
            Some(c) if (c == StoredColorSpace::Grayscale) == (spp == 1) => (c, 1),
            _ => {
                return Err(ConvertError::input(format!(
                    "{where_}: Photometric {} with {spp} sample(s) is not supported",
                    photometric_name(page.photometric)
                )))
            }
        }
    };
    let kind = if page.tiled { "tile" } else { "strip" };
    check_tile_size(&where_, page.tile_width, page.tile_height, &format!("{kind}s"))?;
    let grid = page.grid(&file)?;
    let counts = &page.byte_counts[..grid.count as usize];
    let first = counts
        .iter()
        .position(|&n| n > 0)
        .ok_or_else(|| ConvertError::input(format!("{where_}: every {kind} is empty (byte count 0)")))? as u64;
    let empty = counts.iter().filter(|&&n| n == 0).count() as u64;
    let pixel = pixel_size(&page);
    let spec = TileSpec {
        file: file.clone(),
        label: page.label.clone(),
        container: "TIFF",
        image_noun: "page",
        height: page.height,
        width: page.width,
        tile_height: page.tile_height,
        tile_width: page.tile_width,
        grid,
        planes,
        components: if planes > 1 { 1 } else { spp as usize },
        first,
        empty,
        pixel,
        summary: source_summary(&tiff, &page, pixel),
        copied_key: "copied_from_tiff_tiles",
        format: "tiff",
        attributes: Vec::new(),
    };
    TileJob::prepare(Box::new(PageTiles { tiff, page, declared }), spec, options, warnings)
}
