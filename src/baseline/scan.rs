//! The MCU loop: Huffman decoding (`huffman.rs`: destuffed, byte-reversed scan buffer,
//! 11-bit combined tables), restart intervals, and
//! the IDCT of each block into its component's row buffer, with zune's IDCT choice
//! (`idct.rs`) and the same partial re-zeroing of the coefficient block. Restart intervals
//! of whole MCU rows (our encoder writes 64 image rows each) are decoded two at a time,
//! their blocks in pairs: two independent Huffman chains where one would wait on itself.

use super::headers::{Component, Frame};
use super::huffman::{
    decode_block, decode_block_pair, BlockDecoder, ComponentTables, FastScan, ScanControl, ABANDON,
};
use super::idct::Idct;
use super::Defer;

/// One component's MCU row: `rows` = 8 × its vertical factor rows of `stride` samples
/// (zune's `raw_coeff`, `width_stride`).
pub(crate) struct RowBuffer {
    pub samples: Vec<i16>,
    pub stride: usize,
    pub h: usize,
    pub v: usize,
}

pub(crate) struct Scan {
    fast: FastScan,
    /// The distinct tables, and each component's index into them.
    tables: Vec<ComponentTables>,
    table_of: Vec<usize>,
    dc_pred: [i32; 3],
    todo: usize,
    restart_interval: usize,
    tmp: [i32; 64],
    /// the second interval's coefficient block in `decode_interval_pair`
    tmp_pair: [i32; 64],
    mcu_x: usize,
    idct: Idct,
}

/// The stream a scan is decoded from: borrowed (its scan data is copied to be destuffed)
/// or owned (destuffed in place).
pub(crate) enum Stream<'s> {
    Borrowed(&'s [u8]),
    Owned(Vec<u8>),
}

impl Stream<'_> {
    pub(crate) fn bytes(&self) -> &[u8] {
        match self {
            Stream::Borrowed(s) => s,
            Stream::Owned(s) => s,
        }
    }
}

impl Scan {
    /// (Inlined in the modules without the encoder, which borrow the stream only: the
    /// owned case is then not linked in.)
    #[cfg_attr(not(feature = "encoder"), inline(always))]
    pub(crate) fn new(
        stream: Stream<'_>,
        frame: &Frame,
        mcu_x: usize,
        idct: Idct,
    ) -> Result<Scan, Defer> {
        let mut tables: Vec<ComponentTables> = Vec::with_capacity(frame.components.len());
        let mut table_of = Vec::with_capacity(frame.components.len());
        let slots = |c: &Component| (c.td & 3, c.ta & 3, c.tq & 3);
        let previous = core::iter::once(None).chain(frame.components.iter().map(Some));
        for (c, prev) in frame.components.iter().zip(previous) {
            // Cr as a rule has Cb's tables: shared, not built again (at 256² the tables
            // cost a few per cent of a decode)
            let same = prev.is_some_and(|p| slots(p) == slots(c));
            if let (true, Some(&k)) = (same, table_of.last()) {
                table_of.push(k);
                continue;
            }
            let dc = frame.dc[c.td & 3]
                .as_ref()
                .ok_or(Defer("missing DC table"))?;
            let ac = frame.ac[c.ta & 3]
                .as_ref()
                .ok_or(Defer("missing AC table"))?;
            let qt = frame.qt[c.tq & 3]
                .as_ref()
                .ok_or(Defer("missing quantisation table"))?;
            table_of.push(tables.len());
            ComponentTables::push(&mut tables, dc, ac, qt);
        }
        // FastScan's bit positions (8 per byte, plus what a broken row may read past the
        // end) must fit a usize with room to spare: 256 MiB of scan data on wasm32 (checked
        // before the copy, which could otherwise take the rest of memory). The row decoder
        // (an owned stream, in the whole codec) drops the bytes it has read after every MCU
        // row (`drop_consumed`), so its positions stay small whatever the scan's length.
        let owned_in_bands = cfg!(feature = "encoder") && matches!(stream, Stream::Owned(_));
        if !owned_in_bands
            && stream.bytes().len().saturating_sub(frame.scan_start) >= usize::MAX / 16
        {
            return Err(Defer("scan data of 256 MiB or more"));
        }
        let fast = match stream {
            Stream::Borrowed(stream) => {
                FastScan::new(stream.get(frame.scan_start..).ok_or(Defer::INTERNAL)?)
            }
            Stream::Owned(stream) => FastScan::from_stream(stream, frame.scan_start),
        }
        .map_err(|_| Defer("scan data with markers other than RSTn, fill bytes or no EOI"))?;
        Ok(Scan {
            fast,
            tables,
            table_of,
            dc_pred: [0; 3],
            todo: frame.todo,
            restart_interval: frame.restart_interval,
            tmp: [0; 64],
            tmp_pair: [0; 64],
            mcu_x,
            idct,
        })
    }

    /// Decodes one MCU row into `rows` (one per component, in frame order).
    pub(crate) fn decode_row(&mut self, rows: &mut [RowBuffer]) -> Result<(), Defer> {
        let corrupt = Defer("entropy-coded data the baseline decoder does not accept");
        // the three IDCTs in locals, not loaded from `self` for every block
        let idct = self.idct;
        let ctl: &mut ScanControl = &mut self.fast.ctl;
        let mut dec = BlockDecoder::new(&self.fast.data, ctl.bits);
        let tmp = &mut self.tmp;
        if rows.len() != self.table_of.len() {
            return Err(Defer::INTERNAL);
        }
        let mut clobber_more_than_4x4 = true;
        for j in 0..self.mcu_x {
            if ctl.ended() {
                return Err(corrupt);
            }
            let components = rows.iter_mut().zip(&self.table_of).zip(&mut self.dc_pred);
            for ((row, &k), pred) in components {
                let t = self.tables.get(k).ok_or(Defer::INTERNAL)?;
                let stride = row.stride;
                for v in 0..row.v {
                    for h in 0..row.h {
                        let clobber_len = if clobber_more_than_4x4 { 64 } else { 32 };
                        tmp[..clobber_len].fill(0);
                        let len = decode_block(&mut dec, t, tmp, pred);
                        if len == ABANDON {
                            return Err(corrupt);
                        }
                        clobber_more_than_4x4 = len > 10;
                        let at = stride * v * 8 + (j * row.h + h) * 8;
                        idct.block(tmp, len, &mut row.samples, at, stride)?;
                    }
                }
            }
            self.todo = self.todo.wrapping_sub(1);
            if self.todo == 0 {
                if ctl
                    .restart(&mut dec.bits)
                    .map_err(|_| Defer("restart interval"))?
                {
                    self.dc_pred = [0; 3];
                }
                self.todo = self.restart_interval;
            }
        }
        ctl.bits = dec.bits;
        ctl.check_row(&ctl.bits).map_err(|_| corrupt)
    }

    /// Drops the scan bytes read so far (between MCU rows; see `FastScan::drop_consumed`).
    #[cfg(feature = "encoder")]
    pub(crate) fn drop_consumed(&mut self) {
        self.fast.drop_consumed();
    }

    /// MCU rows per restart interval when every interval is a whole number of MCU rows
    /// (the DRI a multiple of the MCUs per row, as our encoder writes), else 0: such
    /// intervals can be decoded two at a time (`decode_interval_pair`).
    pub(crate) fn rows_per_interval(&self) -> usize {
        match self.restart_interval.checked_div(self.mcu_x) {
            Some(rows) if rows * self.mcu_x == self.restart_interval => rows,
            _ => 0,
        }
    }

    /// Whether the next two restart intervals can be decoded together: the next MCU row
    /// starts an interval of whole rows and the interval after it exists.
    pub(crate) fn can_pair(&self) -> bool {
        self.rows_per_interval() > 0
            && self.todo == self.restart_interval
            && self.fast.ctl.next_start().is_some()
    }

    /// Decodes the next two restart intervals (`can_pair`) into `first` and `second`
    /// (`rows_per_interval` MCU rows each), their blocks in pairs (`decode_block_pair`):
    /// two independent chains of table look-ups interleaved, where one interval alone is a
    /// single chain. Same coefficients, IDCTs, checks and result as `decode_row` on each
    /// row in turn: the second interval starts where the first one's restart moves the
    /// reader, with its DC predictions reset, and both intervals are checked as `restart`
    /// checks them (a row that reads past its interval's end leaves the position past it,
    /// so checking at the interval's end catches what `decode_row`'s check would).
    pub(crate) fn decode_interval_pair(
        &mut self,
        first: &mut [Vec<RowBuffer>],
        second: &mut [Vec<RowBuffer>],
    ) -> Result<(), Defer> {
        let corrupt = Defer("entropy-coded data the baseline decoder does not accept");
        let rows = self.rows_per_interval();
        if !self.can_pair() || first.len() != rows || second.len() != rows {
            return Err(Defer::INTERNAL);
        }
        // the three IDCTs in locals, not loaded from `self` for every block
        let idct = self.idct;
        let ctl: &mut ScanControl = &mut self.fast.ctl;
        let start_b = ctl.next_start().ok_or(Defer::INTERNAL)?;
        let (mut bits_a, mut bits_b) = (ctl.bits, start_b);
        let data = &self.fast.data[..];
        let (tmp_a, tmp_b) = (&mut self.tmp, &mut self.tmp_pair);
        let mut preds_b = [0; 3];
        let mut clobber = [true; 2];
        for (row_set_a, row_set_b) in first.iter_mut().zip(second.iter_mut()) {
            if row_set_a.len() != self.table_of.len() || row_set_b.len() != self.table_of.len() {
                return Err(Defer::INTERNAL);
            }
            for j in 0..self.mcu_x {
                let components = row_set_a
                    .iter_mut()
                    .zip(row_set_b.iter_mut())
                    .zip(&self.table_of)
                    .zip(self.dc_pred.iter_mut().zip(&mut preds_b));
                for (((row_a, row_b), &k), (pred_a, pred_b)) in components {
                    let t = self.tables.get(k).ok_or(Defer::INTERNAL)?;
                    let stride = row_a.stride;
                    if row_b.stride != stride || (row_b.h, row_b.v) != (row_a.h, row_a.v) {
                        return Err(Defer::INTERNAL);
                    }
                    for v in 0..row_a.v {
                        for h in 0..row_a.h {
                            tmp_a[..if clobber[0] { 64 } else { 32 }].fill(0);
                            tmp_b[..if clobber[1] { 64 } else { 32 }].fill(0);
                            let [len_a, len_b] = decode_block_pair(
                                data,
                                [&mut bits_a, &mut bits_b],
                                t,
                                [&mut *tmp_a, &mut *tmp_b],
                                [&mut *pred_a, &mut *pred_b],
                            );
                            if len_a == ABANDON || len_b == ABANDON {
                                return Err(corrupt);
                            }
                            clobber = [len_a > 10, len_b > 10];
                            let at = stride * v * 8 + (j * row_a.h + h) * 8;
                            idct.block(tmp_a, len_a, &mut row_a.samples, at, stride)?;
                            idct.block(tmp_b, len_b, &mut row_b.samples, at, stride)?;
                        }
                    }
                }
            }
        }
        // the first interval ends where the second starts (it exists: DC is reset)
        let (mut end_a, mut end_b) = (bits_a, bits_b);
        if !ctl
            .restart(&mut end_a)
            .map_err(|_| Defer("restart interval"))?
            || end_a.pos != start_b.pos
        {
            return Err(Defer::INTERNAL);
        }
        self.dc_pred = preds_b;
        if ctl
            .restart(&mut end_b)
            .map_err(|_| Defer("restart interval"))?
        {
            self.dc_pred = [0; 3];
        }
        ctl.bits = end_b;
        self.todo = self.restart_interval;
        ctl.check_row(&ctl.bits).map_err(|_| corrupt)
    }

    /// After the last row: every restart interval used, none read past its end.
    pub(crate) fn finish(&self) -> Result<(), Defer> {
        self.fast
            .ctl
            .check_end()
            .map_err(|_| Defer("scan data left over or read past its end"))
    }
}
