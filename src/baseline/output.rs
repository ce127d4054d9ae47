//! Up-sampling, colour conversion and cropping of each MCU row into the output, with
//! zune-jpeg's own kernels (`zune_jpeg::__kernels`) on the same row slices as its
//! `post_process`/`worker::upsample`, so the samples are zune's:
//!
//! - every plane row is `padded_width` samples (luma `width_stride`, chroma up-sampled
//!   to it); each output row converts one such row per component, and rows past the
//!   image height are not written (zune's `chunks_exact_mut(..).take(..)`);
//! - horizontal-only (`H`) and 4×-factor (`Generic`, nearest) chroma is up-sampled row
//!   by row with no vertical context;
//! - vertically sampled chroma (`V`, `HV`) is up-sampled per chroma row with the rows
//!   above and below over the whole (MCU-padded) chroma plane, the first and last plane
//!   rows using themselves: what zune's carried `row`/`row_up`/`first_row_upsample_dest`
//!   amount to. The last chroma row of an MCU row needs the next MCU row's first, so it
//!   (and its two luma rows) is written one MCU row late, from the previous buffers.

use zune_jpeg::__kernels::{
    color_convert_ycbcr, copy_removing_padding, ColorConvert16Ptr, UpSampler,
};
use zune_jpeg::zune_core::colorspace::ColorSpace;

use super::scan::RowBuffer;
use super::{Defer, Output};
use crate::sink::{Conversion, SampleSink};

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chroma {
    /// luma-only stream, or all factors 1
    None,
    /// horizontal ×2 only, or nearest-neighbour ×(h, v) (`Generic`): no vertical context
    Rows,
    /// vertical ×2 (with or without horizontal ×2): rows above and below
    Vertical,
}

/// Bytes of output rows per band (at least one row): small enough to still be in cache
/// when the band is converted and handed to the sink.
pub(crate) const BAND_BYTES: usize = 64 * 1024;

/// Where a band of rows is made and handed over: the whole output (no sink), or the band
/// buffer the sink's bands are made in, with the sink. Lent to each call, so that the
/// decoder's own state (`Sink`, `Writer`) borrows nothing and can be kept between calls
/// (`baseline::Bands`).
pub(crate) struct Out<'o> {
    pub buf: &'o mut [u8],
    pub sink: Option<&'o mut dyn SampleSink>,
}

/// Where converted rows go: output rows in order, gathered into bands of whole rows; each
/// finished band gets the in-place colour conversion, then (for a sink) is handed over.
pub(crate) struct Sink {
    /// the row `Out::buf` starts with (always 0 without a sink)
    pub buf_row: usize,
    /// rows per band
    pub band_rows: usize,
    /// first row of the band, and rows in it so far
    pub first: usize,
    pub rows: usize,
    pub convert: Option<Conversion>,
    /// bytes per output row
    pub row_bytes: usize,
    pub width: usize,
    pub height: usize,
    pub padded_width: usize,
    pub output: Output,
    pub convert16: ColorConvert16Ptr,
}

impl Sink {
    /// Converts output rows `y..y + count` (the next ones; those past the image height are
    /// not written) from `count` rows of each component (`padded_width` samples each), in
    /// as few kernel calls as the bands allow: one call per row costs as much as the
    /// conversion itself on small chunks.
    fn emit_rows(
        &mut self,
        out: &mut Out<'_>,
        y: usize,
        count: usize,
        rows: [&[i16]; 3],
    ) -> Result<(), Defer> {
        let count = count.min(self.height.saturating_sub(y));
        let pw = self.padded_width;
        let n = self.row_bytes;
        let used = if self.output == Output::Luma { 1 } else { 3 };
        let mut done = 0;
        while done < count {
            if self.rows == self.band_rows {
                self.flush(out)?;
            }
            let m = (count - done).min(self.band_rows - self.rows);
            if y + done != self.first + self.rows {
                return Err(Defer::INTERNAL);
            }
            let at = (y + done - self.buf_row) * n;
            let dst = out.buf.get_mut(at..at + m * n).ok_or(Defer::INTERNAL)?;
            self.rows += m;
            let mut r: [&[i16]; 4] = [&[], &[], &[], &[]];
            for (dst, src) in r.iter_mut().zip(rows) {
                *dst = src.get(done * pw..(done + m) * pw).unwrap_or(&[]);
            }
            if r[..used].iter().any(|s| s.len() != m * pw) {
                return Err(Defer::INTERNAL);
            }
            match self.output {
                Output::Luma => luma_rows(r[0], self.width, pw, dst),
                Output::Copy => copy_removing_padding(&r, self.width, pw, dst),
                Output::YcbcrToRgb => {
                    color_convert_ycbcr(&r, self.width, pw, ColorSpace::RGB, self.convert16, dst)
                }
            }
            done += m;
        }
        Ok(())
    }

    /// Converts the band's rows and hands them to the sink; the next band starts after them.
    #[inline(never)]
    fn flush(&mut self, out: &mut Out<'_>) -> Result<(), Defer> {
        let n = self.row_bytes;
        let from = (self.first - self.buf_row) * n;
        let band = out
            .buf
            .get_mut(from..from + self.rows * n)
            .ok_or(Defer::INTERNAL)?;
        if let Some(convert) = self.convert {
            convert(band);
        }
        self.first += self.rows;
        self.rows = 0;
        if let Some(sink) = &mut out.sink {
            // (wrapping: an image handed over in bands, `decode::RowDecoder`'s, can hold
            // more bytes than a wasm32 usize counts; its sink does not read the offset)
            sink.write(self.buf_row.wrapping_mul(n).wrapping_add(from), band);
            self.buf_row = self.first;
        }
        Ok(())
    }

    /// Flushes the last band; every row of the image must have been written.
    pub(crate) fn finish(&mut self, out: &mut Out<'_>) -> Result<(), Defer> {
        self.flush(out)?;
        if self.first != self.height {
            return Err(Defer::INTERNAL);
        }
        Ok(())
    }
}

pub(crate) struct Writer {
    pub sink: Sink,
    pub chroma: Chroma,
    pub upsampler: UpSampler,
    pub v_max: usize,
    /// up-sampled rows of Cb and Cr (`padded_width` × 1, or × 2 for vertical chroma)
    pub up: [Vec<i16>; 2],
    pub scratch: Vec<i16>,
}

fn row(buf: &RowBuffer, r: usize) -> &[i16] {
    rows(buf, r, 1)
}

/// Rows `r..r + n` of `buf`, contiguous.
fn rows(buf: &RowBuffer, r: usize, n: usize) -> &[i16] {
    buf.samples
        .get(r * buf.stride..(r + n) * buf.stride)
        .unwrap_or(&[])
}

impl Writer {
    /// Writes MCU row `i` (`cur`, one buffer per component); `prev` holds MCU row `i - 1`
    /// (used for vertical chroma only). (Inlined in the modules without the encoder, as
    /// it was in the loop before `baseline::Bands`.)
    #[cfg_attr(not(feature = "encoder"), inline(always))]
    pub(crate) fn write_row(
        &mut self,
        out: &mut Out<'_>,
        i: usize,
        last: bool,
        cur: &[RowBuffer],
        prev: &[RowBuffer],
    ) -> Result<(), Defer> {
        // (1, 2 or 4; `max` so that no division below can be by zero, now that the value is
        // read from the decoder's state rather than known from the checks before it)
        let v_max = self.v_max.max(1);
        let rows_per_mcu = 8 * v_max;
        let y0 = i * rows_per_mcu;
        match self.chroma {
            Chroma::None => {
                // every plane row is `padded_width` long here, so the MCU row's rows are
                // one contiguous slice per component
                let get = |k: usize| cur.get(k).map(|b| rows(b, 0, rows_per_mcu)).unwrap_or(&[]);
                self.sink
                    .emit_rows(out, y0, rows_per_mcu, [get(0), get(1), get(2)])?;
            }
            Chroma::Rows => {
                let [y, cb, cr] = cur else {
                    return Err(Defer::INTERNAL);
                };
                for r in 0..rows_per_mcu {
                    if r % v_max == 0 {
                        for (up, buf) in self.up.iter_mut().zip([cb, cr]) {
                            let src = row(buf, r / v_max);
                            if src.is_empty() || up.len() != self.sink.padded_width {
                                return Err(Defer::INTERNAL);
                            }
                            (self.upsampler)(src, &[], &[], &mut [], up);
                        }
                    }
                    self.sink
                        .emit_rows(out, y0 + r, 1, [row(y, r), &self.up[0], &self.up[1]])?;
                }
            }
            Chroma::Vertical => {
                let [y, cb, cr] = cur else {
                    return Err(Defer::INTERNAL);
                };
                if i > 0 {
                    // the previous MCU row's last chroma row: its row below is our first
                    let [py, pcb, pcr] = prev else {
                        return Err(Defer::INTERNAL);
                    };
                    self.upsample(
                        [row(pcb, 7), row(pcr, 7)],
                        [row(pcb, 6), row(pcr, 6)],
                        [row(cb, 0), row(cr, 0)],
                    )?;
                    self.emit_pair(out, y0 - 2, rows(py, 14, 2))?;
                }
                let end = if last { 8 } else { 7 };
                for c in 0..end {
                    let above = if c > 0 {
                        [row(cb, c - 1), row(cr, c - 1)]
                    } else if i > 0 {
                        let [_, pcb, pcr] = prev else {
                            return Err(Defer::INTERNAL);
                        };
                        [row(pcb, 7), row(pcr, 7)]
                    } else {
                        [row(cb, 0), row(cr, 0)]
                    };
                    let below = [row(cb, (c + 1).min(7)), row(cr, (c + 1).min(7))];
                    self.upsample([row(cb, c), row(cr, c)], above, below)?;
                    self.emit_pair(out, y0 + 2 * c, rows(y, 2 * c, 2))?;
                }
            }
        }
        Ok(())
    }

    fn upsample(
        &mut self,
        src: [&[i16]; 2],
        above: [&[i16]; 2],
        below: [&[i16]; 2],
    ) -> Result<(), Defer> {
        for k in 0..2 {
            let n = src[k].len();
            let up = &mut self.up[k];
            if n == 0
                || above[k].len() != n
                || below[k].len() != n
                || up.len() != 2 * self.sink.padded_width
            {
                return Err(Defer::INTERNAL);
            }
            (self.upsampler)(src[k], above[k], below[k], &mut self.scratch, up);
        }
        Ok(())
    }

    /// The two output rows of one vertically up-sampled chroma row, from `luma`'s two rows.
    fn emit_pair(&mut self, out: &mut Out<'_>, y: usize, luma: &[i16]) -> Result<(), Defer> {
        let pw = self.sink.padded_width;
        let [c0, c1] = &self.up;
        self.sink.emit_rows(
            out,
            y,
            2,
            [
                luma,
                c0.get(..2 * pw).unwrap_or(&[]),
                c1.get(..2 * pw).unwrap_or(&[]),
            ],
        )
    }
}

/// `ycbcr_to_grayscale` (zune's `*y as u8` per sample, dropping the padding) written so
/// that LLVM turns each 16 samples into one byte shuffle instead of 16 lane moves.
fn luma_rows(src: &[i16], width: usize, padded_width: usize, out: &mut [u8]) {
    for (src, out) in src
        .chunks_exact(padded_width)
        .zip(out.chunks_exact_mut(width))
    {
        let src = src.get(..width).unwrap_or(&[]);
        let mut src16 = src.chunks_exact(16);
        let mut out16 = out.chunks_exact_mut(16);
        for (s, o) in (&mut src16).zip(&mut out16) {
            for (o, s) in o.iter_mut().zip(s) {
                *o = *s as u8;
            }
        }
        for (o, s) in out16.into_remainder().iter_mut().zip(src16.remainder()) {
            *o = *s as u8;
        }
    }
}
