//! The MCU loop: Huffman decoding (`huffman.rs`: destuffed, byte-reversed scan buffer,
//! 10-bit combined tables), restart intervals, and
//! the IDCT of each block into its component's row buffer, with zune's IDCT choice
//! (`mcu.rs`, `decode_mcu_width_fast`): the 1×1 IDCT for DC-only blocks, the 4×4 one
//! when the last coefficient is within the first 10 in zig-zag order, the full one
//! otherwise, and the same partial re-zeroing of the coefficient block.

use zune_jpeg::__kernels::IDCTPtr;

use super::headers::{Component, Frame};
use super::huffman::{decode_block, BlockDecoder, ComponentTables, FastScan, ScanControl, ABANDON};
use super::Defer;

/// One component's MCU row: `rows` = 8 × its vertical factor rows of `stride` samples
/// (zune's `raw_coeff`, `width_stride`).
pub(crate) struct RowBuffer {
    pub samples: Vec<i16>,
    pub stride: usize,
    pub h: usize,
    pub v: usize,
}

pub(crate) struct Idct {
    pub one: IDCTPtr,
    pub four: IDCTPtr,
    pub full: IDCTPtr,
}

pub(crate) struct Scan {
    fast: FastScan,
    tables: Vec<ComponentTables>,
    dc_pred: [i32; 3],
    todo: usize,
    restart_interval: usize,
    tmp: [i32; 64],
    mcu_x: usize,
    idct: Idct,
}

impl Scan {
    pub(crate) fn new(
        stream: &[u8],
        frame: &Frame,
        mcu_x: usize,
        idct: Idct,
    ) -> Result<Scan, Defer> {
        let mut tables: Vec<ComponentTables> = Vec::with_capacity(frame.components.len());
        let slots = |c: &Component| (c.td & 3, c.ta & 3, c.tq & 3);
        let previous = core::iter::once(None).chain(frame.components.iter().map(Some));
        for (c, prev) in frame.components.iter().zip(previous) {
            // Cr as a rule has Cb's tables: copied, not built again (at 256² the tables
            // cost a few per cent of a decode)
            let same = prev.is_some_and(|p| slots(p) == slots(c));
            if let (true, Some(last)) = (same, tables.last()) {
                tables.push(last.clone());
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
            tables.push(ComponentTables::new(dc, ac, qt));
        }
        let data = stream.get(frame.scan_start..).ok_or(Defer::INTERNAL)?;
        let fast = FastScan::new(data)
            .map_err(|_| Defer("scan data with markers other than RSTn, fill bytes or no EOI"))?;
        Ok(Scan {
            fast,
            tables,
            dc_pred: [0; 3],
            todo: frame.todo,
            restart_interval: frame.restart_interval,
            tmp: [0; 64],
            mcu_x,
            idct,
        })
    }

    /// Decodes one MCU row into `rows` (one per component, in frame order).
    pub(crate) fn decode_row(&mut self, rows: &mut [RowBuffer]) -> Result<(), Defer> {
        let corrupt = Defer("entropy-coded data the baseline decoder does not accept");
        let ctl: &mut ScanControl = &mut self.fast.ctl;
        let mut dec = BlockDecoder::new(&self.fast.data, ctl.bits);
        let tmp = &mut self.tmp;
        let (idct_1x1, idct_4x4, idct) = (self.idct.one, self.idct.four, self.idct.full);
        if rows.len() != self.tables.len() {
            return Err(Defer::INTERNAL);
        }
        let mut clobber_more_than_4x4 = true;
        for j in 0..self.mcu_x {
            if ctl.ended() {
                return Err(corrupt);
            }
            let components = rows.iter_mut().zip(&self.tables).zip(&mut self.dc_pred);
            for ((row, t), pred) in components {
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
                        // the block's 8 rows (always inside the row buffer, which is sized
                        // for mcu_x MCUs; checked so that nothing can panic)
                        let at = stride * v * 8 + (j * row.h + h) * 8;
                        let out = row
                            .samples
                            .get_mut(at..at + 7 * stride + 8)
                            .ok_or(Defer::INTERNAL)?;
                        if len <= 1 {
                            idct_1x1(tmp, out, stride);
                        } else if len <= 10 {
                            idct_4x4(tmp, out, stride);
                        } else {
                            idct(tmp, out, stride);
                        }
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

    /// After the last row: every restart interval used, none read past its end.
    pub(crate) fn finish(&self) -> Result<(), Defer> {
        self.fast
            .ctl
            .check_end()
            .map_err(|_| Defer("scan data left over or read past its end"))
    }
}
