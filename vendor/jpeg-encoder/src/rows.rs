//! [zarr-jpeg patch] Images whose samples are not one slice the encoder can borrow: the
//! encoder copies the rows it needs, one band at a time (one MCU row in the usual order),
//! into a small buffer it reuses, and converts each row from there as `Encoder::encode`
//! converts rows of a slice.

use alloc::vec;
use alloc::vec::Vec;
use core::cell::{Cell, RefCell};

use crate::encoder::JpegColorType;
use crate::image_buffer::ImageBuffer;

/// # Image rows copied in on demand
///
/// The input of [Encoder::encode_rows](crate::Encoder::encode_rows): samples laid out as for
/// [Encoder::encode](crate::Encoder::encode) (rows of `width` pixels of the color type, top
/// to bottom, no padding), held where the encoder cannot borrow them as one slice.
pub trait RowSource {
    /// Copies the image rows from `first_row` on into `out`, which holds a whole number of
    /// rows (`out.len()` is a multiple of `width` × bytes per pixel), all within the image.
    fn read_rows(&mut self, first_row: u16, out: &mut [u8]);
}

/// Converts one row of samples (`width` pixels) into the component buffers, as the
/// `ImageBuffer` adapters of `Encoder::encode` do.
pub(crate) type RowFill = fn(&[u8], u16, &mut [Vec<u8>; 4]);

/// An `ImageBuffer` over a `RowSource`: `fill_buffers(y)` copies the band of `band_rows`
/// rows (whole MCU rows) that starts at `y` into `band` when `y` is outside the band held,
/// then converts row `y` from there. The encoder asks for rows in order, from 0 and (after padding rows
/// repeat the last one) within the last band, so every byte is read once.
pub(crate) struct StagedRows<'a> {
    source: RefCell<&'a mut dyn RowSource>,
    band: RefCell<Vec<u8>>,
    /// The rows held in `band`: `first..first + count`.
    first: Cell<u16>,
    count: Cell<u16>,
    band_rows: u16,
    width: u16,
    height: u16,
    bytes_per_pixel: usize,
    color_type: JpegColorType,
    fill: RowFill,
}

/// Bands hold as many MCU rows as fit in this many bytes (at least one): fewer, larger reads
/// for narrow images, while a band stays small enough to be in cache when its rows are
/// converted.
const BAND_BYTES: usize = 64 * 1024;

impl<'a> StagedRows<'a> {
    /// `mcu_rows`: the image rows of one MCU row; a band is a multiple of it.
    pub(crate) fn new(
        source: &'a mut dyn RowSource,
        width: u16,
        height: u16,
        bytes_per_pixel: usize,
        color_type: JpegColorType,
        mcu_rows: u16,
        fill: RowFill,
    ) -> Self {
        let row_bytes = usize::from(width) * bytes_per_pixel;
        let mcu_bytes = usize::from(mcu_rows) * row_bytes;
        let mcus = (BAND_BYTES / mcu_bytes.max(1)).clamp(1, usize::from(u16::MAX));
        let band_rows = (usize::from(mcu_rows) * mcus).clamp(1, usize::from(height.max(1))) as u16;
        StagedRows {
            source: RefCell::new(source),
            band: RefCell::new(vec![0; usize::from(band_rows) * row_bytes]),
            first: Cell::new(0),
            count: Cell::new(0),
            band_rows,
            width,
            height,
            bytes_per_pixel,
            color_type,
            fill,
        }
    }
}

impl ImageBuffer for StagedRows<'_> {
    fn get_jpeg_color_type(&self) -> JpegColorType {
        self.color_type
    }

    fn width(&self) -> u16 {
        self.width
    }

    fn height(&self) -> u16 {
        self.height
    }

    fn fill_buffers(&self, y: u16, buffers: &mut [Vec<u8>; 4]) {
        // The encoder never asks for a row past the last (nor encodes an empty image).
        let y = y.min(self.height.saturating_sub(1));
        let row_bytes = usize::from(self.width) * self.bytes_per_pixel;
        let mut band = self.band.borrow_mut();
        if y < self.first.get() || y - self.first.get() >= self.count.get() {
            let count = self.band_rows.min(self.height - y);
            let rows = &mut band[..usize::from(count) * row_bytes];
            self.source.borrow_mut().read_rows(y, rows);
            self.first.set(y);
            self.count.set(count);
        }
        let start = usize::from(y - self.first.get()) * row_bytes;
        (self.fill)(&band[start..start + row_bytes], self.width, buffers);
    }
}
