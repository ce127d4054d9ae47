//! Old-style JPEG pages (compression 6, TIFF 6.0's first JPEG scheme, which TIFF Technical
//! Note 2 replaced). What can be recovered is what most such files hold: the image as one whole
//! JPEG stream, at JPEGInterchangeFormat (tag 513) or as the page's only strip or tile. That
//! stream is converted as a JPEG file is, a band of rows at a time. Pages whose strips are
//! bare scans with their tables only in JPEGQTables/JPEGDCTables/JPEGACTables are refused by
//! name, with the libtiff command that rewrites them.

use super::super::error::{ConvertError, Result};
use super::super::jpeg::JpegSource;
use super::super::source::{read_bytes, ImageInfo, RowSource, RowsEnd, Within};
use super::ifd::{Page, Tiff};

/// The page's JPEG stream as rows, with what was found choosing the page.
pub struct OldJpegRows<'a> {
    source: JpegSource<'a>,
    warnings: Vec<String>,
}

impl<'a> OldJpegRows<'a> {
    pub fn new(mut source: JpegSource<'a>, info: ImageInfo, warnings: Vec<String>) -> OldJpegRows<'a> {
        // the stream's own channels stand; where the file and its size come from is the TIFF's
        source.info = ImageInfo { channels: source.info.channels, ..info };
        OldJpegRows { source, warnings }
    }
}

impl RowSource for OldJpegRows<'_> {
    fn info(&self) -> &ImageInfo {
        self.source.info()
    }
    fn warnings(&self) -> Vec<String> {
        self.warnings.clone()
    }
    fn read_rows(&mut self, to_gray: bool, sink: &mut dyn FnMut(&[u8], usize) -> Result<()>) -> Result<RowsEnd> {
        self.source.read_rows(to_gray, sink)
    }
    fn streamed(&self) -> bool {
        self.source.streamed()
    }
}


/// The page's whole JPEG stream, opened; or a refusal naming why there is none.
pub fn open<'a>(tiff: &Tiff<'a>, page: &Page) -> Result<JpegSource<'a>> {
    let where_ = format!("{}: {}", tiff.file, page.label);
    let refuse = |why: &str| {
        ConvertError::input(format!(
            "{where_}: old-style JPEG (compression 6) {why}; rewrite the file with JPEG compression 7 first \
             (e.g. tiffcp -c jpeg, which reads old-style JPEG)"
        ))
    };
    let (offset, length) = match page.jpeg_interchange {
        Some((at, length)) if at > 0 => (at, if length > 0 { length } else { tiff.size.saturating_sub(at) }),
        _ if page.offsets.len() == 1 && page.byte_counts.len() == 1 => (page.offsets[0], page.byte_counts[0]),
        _ => return Err(refuse("without a whole JPEG stream of the image (JPEGInterchangeFormat) cannot be read here: its tables are not recovered")),
    };
    if offset >= tiff.size || length > tiff.size - offset {
        return Err(ConvertError::input(format!(
            "{where_}: the old-style JPEG stream ({length} bytes at offset {offset}) runs past the end of the {}-byte file (truncated?)",
            tiff.size
        )));
    }
    let head = read_bytes(tiff.input, offset, 2).map_err(|e| ConvertError::input(format!("cannot read {}: {e}", tiff.file)))?;
    if head != [0xff, 0xd8] {
        return Err(refuse(&format!("has no JPEG stream at offset {offset} (no start-of-image marker there)")));
    }
    let source = JpegSource::open_within(Within { input: tiff.input, offset, length }, &format!("{where_} (old-style JPEG)"))?;
    let (h, w) = (u64::from(source.info.height), u64::from(source.info.width));
    if (h, w) != (page.height, page.width) {
        return Err(ConvertError::input(format!(
            "{where_}: the old-style JPEG stream is {h} × {w} pixels (height × width), the page {} × {}",
            page.height, page.width
        )));
    }
    Ok(source)
}
