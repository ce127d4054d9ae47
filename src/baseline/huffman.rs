//! Huffman decoding of the scan (moved here from the vendored zune-jpeg, where it began as
//! a patch of ours).
//!
//! The scan's entropy-coded bytes are first copied, with the `0xFF00` stuffing removed,
//! into one buffer (`FastScan`, stored byte-reversed), which records where each restart
//! interval's bytes end. Blocks are then decoded from that buffer by a function with no
//! calls inside, its state in locals: a 64-bit buffer loaded at the block's bit position
//! (one 8-byte load, shifted into place: at least 56 bits, then a marker bit that tells
//! how many are left and so the position) and reloaded whenever fewer bits are left than
//! the next look-up may take (11, or 31 for a code with its magnitude bits); one look-up
//! per code in an 11-bit table (10-bit for DC) whose entries give length, zero run and
//! value (or the number of magnitude bits still to read), end-of-block and ZRL included;
//! longer codes go through zune's own code-length search. AC entries hold a second symbol
//! too wherever it fits in the 11 bits, so that short symbols take one look-up per pair.
//! Each look-up waits for the previous code's length, so a block is one chain of dependent
//! loads; where two restart intervals are decoded together (`scan.rs`), their blocks are
//! decoded in pairs (`decode_block_pair`), the two chains' steps interleaved.
//!
//! It is built so that whenever it finishes, zune-jpeg's standard path would have decoded
//! the same coefficients into the same places and produced the same output: it accepts a
//! scan only if the data up to the first marker other than RSTn ends in EOI, no 0xFF fill
//! bytes occur, no code is invalid, no coefficient lands past position 63, no restart
//! interval and no scan reads past its own bytes, and every restart interval leaves fewer
//! than 8 bits of its bytes unread. Everything else (and any error at all) returns
//! [`Abandon`]; the baseline decoder then defers the stream to zune-jpeg, so errors and
//! results on unusual or corrupt streams are exactly zune-jpeg's.
//! The decoded values come from zune's own tables (`lookup`, `maxcode`, `offset`,
//! `values`), the code lengths of every 10- or 11-bit prefix computed with the same search
//! as `decode_huff!`.

use zune_jpeg::__kernels::{huff_extend, HuffmanTable, HUFF_LOOKAHEAD, UN_ZIGZAG};

use crate::markers::find_ff;

/// The Huffman stage gave up; the stream is left to zune-jpeg.
#[derive(Debug)]
pub(crate) struct Abandon;

/// Bits of look-ahead of the AC tables. 11 rather than 10: more symbols pair up and fewer
/// codes have magnitude bits past the look-ahead, so a block's chain of dependent look-ups
/// is shorter, for tables twice the size, built for every chunk (bench/HISTORY.md,
/// 2026-12-01, "An 11-bit Huffman look-ahead").
const FAST_BITS: u32 = 11;
const FAST_SIZE: usize = 1 << FAST_BITS;
/// Bits of look-ahead of the DC tables: one look-up per block, so a larger table would
/// only cost building.
const DC_BITS: u32 = 10;
const DC_SIZE: usize = 1 << DC_BITS;

// Single entries (u32; the DC table and `ac_single`):
//   bits 0-4   bits consumed by the entry (code length, plus the magnitude bits when the
//              value is in the entry)
//   bit 5      EXTRA: the value is not in the entry; bits 16-19 give the number of
//              magnitude bits that follow the code
//   bit 6      LONG: the code is longer than FAST_BITS (or invalid): zune's search, from
//              the code length in bits 8-15
//   bits 8-15  zero run before the coefficient; 128 for end of block
//   bits 16-31 the coefficient (i16) unless EXTRA
const EXTRA: u32 = 1 << 5;
const LONG: u32 = 1 << 6;
const EOB_RUN: u32 = 128;

// The AC table holds, wherever the look-ahead starts with a complete symbol (a value,
// ZRL or EOB), that symbol and, after a value or ZRL, the next complete one too if it
// follows within the look-ahead (EOB included, value in -16..=15): the block loop then
// takes one or two symbols per look-up with no branch between the cases, halving the
// chain of dependent look-ups (which bounds the Huffman stage) wherever symbols are short.
// Each entry is a first coefficient and a second one at a distance from it, both written:
//   bits 0-3   bits consumed by the symbols (codes and magnitude bits)
//   bits 4-9   zero run before the first coefficient (15 with value 0: ZRL; 0 for EOB,
//              which writes a zero at the position itself, still zero); SLOW_RUN where the
//              look-ahead does not start with such a symbol (EXTRA, LONG, a value outside
//              the i9), so that the run passes the block's end and the loop takes the
//              single entry (`ac_single`) instead
//   bits 10-17 from the first coefficient's position to the second's: 1 + its zero run;
//              0 when there is no second symbol (the second value is then 0, written at
//              the first's position before the first); EOB_RUN after an EOB first and
//              1 + EOB_RUN for an EOB second, so that end of block leaves the position
//              past 128, as in the single entries (the zero lands on the position after
//              the last coefficient, still zero)
//   bits 18-26 first coefficient (i9)
//   bits 27-31 second coefficient (i5)
// `ac_single` is the table of single entries (the first format above), for the block's
// last position and the SLOW_RUN entries.
const SLOW_RUN: u32 = 63;

/// What `build_table` writes where no code of up to the look-ahead's bits starts: a LONG
/// entry with the code length the search starts from.
const NO_CODE: u32 = LONG | ((HUFF_LOOKAHEAD as u32 + 1) << 8);
/// What `build_ac_table` writes where the look-ahead does not start with a symbol it pairs.
const NO_PAIR: u32 = SLOW_RUN << 4;
const SECOND_EOB: u32 = 1 + EOB_RUN;

/// Zig-zag position → natural position.
const NATURAL: [u8; 64] = {
    let mut n = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        n[i] = UN_ZIGZAG[i] as u8;
        i += 1;
    }
    n
};

/// What `decode_huff!` needs for codes longer than `FAST_BITS`.
#[derive(Clone)]
pub(crate) struct LongCodes {
    maxcode: [i32; 18],
    offset: [i32; 18],
    values: [u8; 256],
}

impl LongCodes {
    fn of(table: &HuffmanTable) -> LongCodes {
        LongCodes {
            maxcode: *table.maxcode(),
            offset: *table.offset(),
            values: *table.values(),
        }
    }
}

/// The tables of one component. `ac` first (`repr(C)`): the address of its entry is then
/// the table's address plus 4 × index, which V8 computes with a 2-operand `lea` (1 cycle),
/// not a 3-operand one with the field's offset (3 cycles on many x86-64 cores), in the
/// chain of dependent look-ups that bounds the block loop.
#[derive(Clone)]
#[repr(C)]
pub(crate) struct ComponentTables {
    ac: [u32; FAST_SIZE],
    dc: [u32; DC_SIZE],
    ac_single: [u32; FAST_SIZE],
    /// Quantisation table in zig-zag order.
    qt_zz: [i32; 64],
    dc_long: LongCodes,
    ac_long: LongCodes,
}

/// The search of `decode_huff!` from code length `start` (`HUFF_LOOKAHEAD + 1`, where it
/// starts whenever the 9-bit look-up fails): `length << 8 | symbol`, or 0 for a bad code.
/// Inlined: a call in the block loop would make V8 keep the bit reader on the stack. The
/// start comes from the table entry so that LLVM cannot unroll the search into constant
/// offsets and hoist its loads out of the loop (their registers would push the bit reader
/// onto V8's stack).
#[inline(always)]
fn decode_long(long: &LongCodes, peek16: u32, start: u32) -> u32 {
    let symbol = peek16 as i32;
    // (entries hold 10; the clamp leaves no out-of-bounds index, so no panic path)
    let mut code_length = start.min(17) as i32;
    while code_length < 17 {
        if symbol < long.maxcode[code_length as usize] {
            break;
        }
        code_length += 1;
    }
    if code_length == 17 {
        return 0;
    }
    let code = symbol >> (16 - code_length);
    let value = long.values[((code + long.offset[code_length as usize]) & 0xFF) as usize];
    ((code_length as u32) << 8) | u32::from(value)
}

/// The `s` (1..=15) magnitude bits at the top of `buf`, extended.
#[inline(always)]
fn magnitude(buf: u64, s: u32) -> i32 {
    huff_extend((buf >> (64 - s)) as i32, s as i32)
}

/// One fill loop for the table builders, out of line: inlined, LLVM vectorises each
/// call site into its own loop (about 100 B of wasm apiece).
#[inline(never)]
fn fill(slots: &mut [u32], value: u32) {
    slots.fill(value);
}

/// The AC table with one or two symbols per entry, and the single-symbol table. Walks the
/// single table's runs of equal entries (a code with its magnitude bits spans
/// 2^(FAST_BITS - its bits) indices), and within each the runs of the second symbol that
/// the rest of the index holds, filling each run of equal pair entries at once: the same
/// table as building each entry on its own (`tests::build_ac_table_per_entry`), in less
/// time (the tables are built for every chunk). Writes every entry of both.
fn build_ac_table(table: &HuffmanTable, out: &mut [u32; FAST_SIZE], single: &mut [u32; FAST_SIZE]) {
    build_table(table, false, single);
    let mut i = 0;
    while i < FAST_SIZE {
        let e = single[i];
        if e & LONG != 0 {
            if let Some(slot) = out.get_mut(i) {
                *slot = NO_PAIR;
            }
            i += 1;
            continue;
        }
        // bits of the first symbol: its code (EXTRA), or its code and magnitude bits
        let n1 = (e & 31).min(FAST_BITS);
        let start = i;
        i = (i + (1 << (FAST_BITS - n1))).min(FAST_SIZE);
        let Some(slots) = out.get_mut(start..i) else {
            break;
        };
        let run = (e >> 8) & 0xFF;
        let value = (e as i32) >> 16;
        if e & EXTRA != 0 {
            fill(slots, NO_PAIR);
            continue;
        }
        if run == EOB_RUN {
            // nothing follows in this block; a zero written at the position itself (still
            // zero) and at 128 on, leaving the position past 128
            fill(slots, n1 | (EOB_RUN << 10));
            continue;
        }
        // (a value wider than the i9, from a 1-bit code, stays a single entry)
        if !(-256..=255).contains(&value) {
            fill(slots, NO_PAIR);
            continue;
        }
        let first = n1 | (run << 4) | (((value as u32) & 0x1FF) << 18);
        let room = FAST_BITS - n1;
        // the rest of each index, top-aligned, is the second symbol's look-up; its entries
        // come in runs too, so each run of equal pair entries is filled at once
        let mut j = 0;
        while j < slots.len() {
            let second = single[(j << n1) & (FAST_SIZE - 1)];
            let (n2, run2, v2) = (second & 31, (second >> 8) & 0xFF, (second as i32) >> 16);
            let fits = second & (EXTRA | LONG) == 0 && n2 <= room && (-16..=15).contains(&v2);
            if !fits {
                // (one entry: most of them, for a long first code; no call)
                if let Some(slot) = slots.get_mut(j) {
                    *slot = first;
                }
                j += 1;
                continue;
            }
            let distance = if run2 == EOB_RUN {
                SECOND_EOB
            } else {
                1 + run2
            };
            let entry = (first + n2) | (distance << 10) | ((v2 as u32) << 27);
            let end = (j + (1 << (room - n2))).min(slots.len());
            if let Some(run) = slots.get_mut(j..end) {
                fill(run, entry);
            }
            j = end;
        }
    }
}

// The fast tables are built from zune's 9-bit look-up, its search deciding the longer codes.
const _: () = assert!(FAST_BITS > HUFF_LOOKAHEAD as u32 && FAST_BITS <= 15);
const _: () = assert!(DC_BITS > HUFF_LOOKAHEAD as u32 && DC_BITS <= FAST_BITS);

/// A single-entry table (the first format above): the entries `decode_huff!` implies
/// for every look-ahead of `out`'s bits (its length is 2^bits). Walks the canonical codes
/// of up to that many bits, each filling the 2^(bits - length) consecutive indices it
/// prefixes (zune has checked that the
/// codes form a prefix code), instead of decoding every index: the tables are built for
/// every chunk, and decoding each index was half the fixed cost of a small chunk.
/// Identical to decoding each index (`tests::build_table_by_decoding`).
/// Writes every entry of `out`.
fn build_table(table: &HuffmanTable, is_dc: bool, out: &mut [u32]) {
    // the look-ahead: FAST_BITS, or DC_BITS for a DC table
    let entries = out.len();
    let bits = entries.trailing_zeros();
    let lookup = table.lookup();
    let (maxcode, offset) = (table.maxcode(), table.offset());
    let mut i = 0;
    while i < entries {
        let entry = lookup[(i >> (bits - u32::from(HUFF_LOOKAHEAD))) & ((1 << HUFF_LOOKAHEAD) - 1)];
        let mut len = (entry >> HUFF_LOOKAHEAD) as u32;
        let mut symbol = (entry & ((1 << HUFF_LOOKAHEAD) - 1)) as u32;
        if len > u32::from(HUFF_LOOKAHEAD) {
            // no code of up to 9 bits: `decode_huff!`'s search from length 10 to
            // bits (maxcode is left-aligned, so the index's top bits decide it);
            // none: a longer code
            let peek = (i as i32) << (16 - bits);
            let mut l = usize::from(HUFF_LOOKAHEAD) + 1;
            while l <= bits as usize && peek >= maxcode[l] {
                l += 1;
            }
            if l > bits as usize {
                if let Some(slot) = out.get_mut(i) {
                    *slot = NO_CODE;
                }
                i += 1;
                continue;
            }
            len = l as u32;
            let code = peek >> (16 - l);
            symbol = u32::from(table.values()[((code + offset[l]) & 0xFF) as usize]);
        }
        if len == 0 {
            if let Some(slot) = out.get_mut(i) {
                *slot = NO_CODE;
            }
            i += 1;
            continue;
        }
        let span = 1 << (bits - len);
        let end = (i + span).min(entries);
        let (run, size) = if is_dc {
            (0, symbol)
        } else {
            (symbol >> 4, symbol & 15)
        };
        let start = i;
        i = end;
        let Some(slots) = out.get_mut(start..end) else {
            break;
        };
        if size > 15 {
            // not for DC tables, which zune validates; kept out of the fast path
            fill(slots, NO_CODE);
            continue;
        }
        if size == 0 {
            fill(
                slots,
                if is_dc {
                    len // a zero difference
                } else if run == 15 {
                    len | (15 << 8) // ZRL: a zero written 15 places on
                } else {
                    len | (EOB_RUN << 8) // end of block (zune treats any run but 15 as EOB)
                },
            );
        } else if len + size <= bits {
            // the magnitude bits follow the code within the index: they count up across
            // the code's indices, each value repeated 2^(bits - len - size) times
            let repeat = bits - len - size;
            for (index, slot) in (start as u32..).zip(slots.iter_mut()) {
                let raw = (index >> repeat) & ((1 << size) - 1);
                let value = huff_extend(raw as i32, size as i32);
                *slot = (len + size) | (run << 8) | ((value as u32) << 16);
            }
        } else {
            fill(slots, len | EXTRA | (run << 8) | (size << 16));
        }
    }
}

impl ComponentTables {
    /// Builds the tables of one component as a new last element of `tables`, zeroed and
    /// then built where they stay: returned by value, the 21 KB of tables were copied a few
    /// times over, which cost about 3 µs per chunk (they are built for every chunk).
    #[inline(never)]
    pub(crate) fn push(
        tables: &mut Vec<ComponentTables>,
        dc: &HuffmanTable,
        ac: &HuffmanTable,
        qt: &[i32; 64],
    ) {
        let empty = LongCodes {
            maxcode: [0; 18],
            offset: [0; 18],
            values: [0; 256],
        };
        tables.push(ComponentTables {
            ac: [0; FAST_SIZE],
            dc: [0; DC_SIZE],
            ac_single: [0; FAST_SIZE],
            qt_zz: [0; 64],
            dc_long: empty.clone(),
            ac_long: empty,
        });
        if let Some(t) = tables.last_mut() {
            for (z, q) in t.qt_zz.iter_mut().enumerate() {
                *q = qt[usize::from(NATURAL[z]) & 63];
            }
            build_ac_table(ac, &mut t.ac, &mut t.ac_single);
            build_table(dc, true, &mut t.dc);
            t.dc_long = LongCodes::of(dc);
            t.ac_long = LongCodes::of(ac);
        }
    }
}

/// Position of the bit reader: bits of the scan buffer consumed so far. The bit buffer
/// itself is loaded from it at the start of every block, so nothing else is carried.
#[derive(Clone, Copy)]
pub(crate) struct Bits {
    pub(crate) pos: usize,
}

/// The 8 bytes at forward position `p` as a big-endian u64, from the byte-reversed
/// buffer `rev` (where they are a little-endian u64 at `rev.len() - 8 - p`: wasm has no
/// byte swap, and LLVM expands one into ~20 shifts and masks). 0 past the end, which
/// only streams read past their end reach; they are abandoned.
#[inline(always)]
fn load_be(rev: &[u8], p: usize) -> u64 {
    let q = rev.len().wrapping_sub(8).wrapping_sub(p);
    match rev.get(q..q.wrapping_add(8)) {
        Some(s) => match <[u8; 8]>::try_from(s) {
            Ok(a) => u64::from_le_bytes(a),
            Err(_) => 0,
        },
        None => 0,
    }
}

/// The destuffed entropy-coded data of one scan, and where its restart intervals end.
pub(crate) struct FastScan {
    /// Destuffed bytes of all restart intervals, then 8 zero bytes, all in reverse
    /// order (see `load_be`).
    pub(crate) data: Vec<u8>,
    pub(crate) ctl: ScanControl,
}

/// Restart-interval bookkeeping of a `FastScan`.
pub(crate) struct ScanControl {
    /// End (exclusive, in `data`) of each restart interval's bytes; the last one is
    /// followed by EOI, the others by RSTn.
    seg_ends: Vec<usize>,
    /// Restart interval being decoded.
    seg: usize,
    /// The last interval ended at a restart boundary: no MCU may follow.
    ended: bool,
    /// Bit reader state between MCU rows.
    pub(crate) bits: Bits,
    /// Bytes of the scan's start dropped from `data` (`FastScan::drop_consumed`): positions
    /// count from there, `seg_ends` from the scan's start.
    #[cfg(feature = "encoder")]
    consumed: usize,
}

impl FastScan {
    /// Destuffs the scan data `scan` (the bytes after the SOS header, to the end of the
    /// stream); `Abandon` unless it ends in EOI with only RSTn markers and `FF00` before.
    /// Bit positions (8 per byte, plus what a broken row may read past the end) must fit a
    /// usize with room to spare: `Scan::new` checks the scan's length before it is copied.
    #[inline(never)]
    pub(crate) fn new(scan: &[u8]) -> Result<FastScan, Abandon> {
        FastScan::destuff(scan.to_vec(), 0)
    }

    /// [`FastScan::new`] of `stream[start..]`, destuffed in place in the stream's own
    /// buffer (the row decoder owns the stream: no second copy of it is made).
    pub(crate) fn from_stream(stream: Vec<u8>, start: usize) -> Result<FastScan, Abandon> {
        FastScan::destuff(stream, start)
    }

    /// Destuffs `data[start..]` to the front of `data`.
    fn destuff(mut data: Vec<u8>, start: usize) -> Result<FastScan, Abandon> {
        let mut seg_ends = Vec::new();
        let (mut r, mut w) = (start, 0);
        loop {
            let at = r + find_ff(data.get(r..).ok_or(Abandon)?).ok_or(Abandon)?;
            data.copy_within(r..at, w);
            w += at - r;
            match data.get(at + 1) {
                Some(0x00) => {
                    if let Some(b) = data.get_mut(w) {
                        *b = 0xFF;
                    }
                    w += 1;
                }
                Some(0xD0..=0xD7) => seg_ends.push(w),
                Some(0xD9) => {
                    seg_ends.push(w);
                    break;
                }
                _ => return Err(Abandon), // other markers, fill bytes, end of data
            }
            r = at + 2;
        }
        data.truncate(w);
        data.extend_from_slice(&[0; 8]);
        data.reverse();
        Ok(FastScan {
            data,
            ctl: ScanControl {
                seg_ends,
                seg: 0,
                ended: false,
                bits: Bits { pos: 0 },
                #[cfg(feature = "encoder")]
                consumed: 0,
            },
        })
    }

    /// Drops the bytes before the bit reader's position (between MCU rows) from `data`, the
    /// end of the reversed buffer (a truncation, no copy), so that bit positions stay small
    /// however long the scan: a row decoder's scan (`decode::RowDecoder`, a whole image's)
    /// may hold more bits than a wasm32 `usize` counts.
    #[cfg(feature = "encoder")]
    pub(crate) fn drop_consumed(&mut self) {
        let k = self.ctl.bits.pos >> 3;
        if let Some(len) = self.data.len().checked_sub(k) {
            self.data.truncate(len);
            self.ctl.consumed += k;
            self.ctl.bits.pos -= 8 * k;
        }
    }
}

impl ScanControl {
    fn seg_end_bits(&self) -> Result<usize, Abandon> {
        Ok(self.end_bits(*self.seg_ends.get(self.seg).ok_or(Abandon)?))
    }

    /// The bit position of `end` (a byte offset from the scan's start). With bytes dropped
    /// (`FastScan::drop_consumed`), an end too far ahead to count in bits (a long interval
    /// of a huge scan) saturates to a position no row reaches, with room to add a row's bits.
    #[inline(always)]
    fn end_bits(&self, end: usize) -> usize {
        #[cfg(feature = "encoder")]
        return end
            .saturating_sub(self.consumed)
            .saturating_mul(8)
            .min(usize::MAX / 4);
        #[cfg(not(feature = "encoder"))]
        return end * 8;
    }

    /// After an MCU row: `Abandon` if the current interval was read past its end.
    pub(crate) fn check_row(&self, bits: &Bits) -> Result<(), Abandon> {
        if bits.pos > self.seg_end_bits()? {
            return Err(Abandon);
        }
        Ok(())
    }

    /// At the end of the scan: every interval used, none read past its end.
    pub(crate) fn check_end(&self) -> Result<(), Abandon> {
        self.check_row(&self.bits)?;
        if self.seg + 1 != self.seg_ends.len() {
            return Err(Abandon);
        }
        Ok(())
    }

    /// At a restart boundary (zune's `handle_rst_main`): the interval's bytes must be used
    /// up to fewer than 8 bits; then the next interval (DC predictions reset by the
    /// caller), or, after the last one, no more MCUs. Returns whether to reset DC.
    pub(crate) fn restart(&mut self, bits: &mut Bits) -> Result<bool, Abandon> {
        let end = self.seg_end_bits()?;
        let used = bits.pos;
        if used > end || end - used >= 8 {
            return Err(Abandon);
        }
        if self.seg + 1 == self.seg_ends.len() {
            self.ended = true;
            return Ok(false);
        }
        *bits = Bits { pos: end };
        self.seg += 1;
        Ok(true)
    }

    pub(crate) fn ended(&self) -> bool {
        self.ended
    }

    /// Where the next restart interval starts, if there is one: the position `restart`
    /// moves to at the end of the current one.
    pub(crate) fn next_start(&self) -> Option<Bits> {
        if self.ended || self.seg + 1 >= self.seg_ends.len() {
            return None;
        }
        Some(Bits {
            pos: self.end_bits(*self.seg_ends.get(self.seg)?),
        })
    }
}

/// A block decoder over the bytes of a `FastScan`.
pub(crate) struct BlockDecoder<'a> {
    data: &'a [u8],
    pub(crate) bits: Bits,
}

impl<'a> BlockDecoder<'a> {
    #[inline(always)]
    pub(crate) fn new(data: &'a [u8], bits: Bits) -> BlockDecoder<'a> {
        BlockDecoder { data, bits }
    }
}

/// The bit buffer at bit position `pos`: the next 56 to 63 bits top-aligned, then a 1
/// (the marker), then zeros. The marker moves up with every shift, so the bits left
/// are 63 - trailing_zeros and the position is `pos & !7` + trailing_zeros: the block
/// loop updates no count and no position per code (V8 kept them on the stack).
#[inline(always)]
fn refill(data: &[u8], pos: usize) -> u64 {
    let s = (pos & 7) as u32;
    (load_be(data, pos >> 3) << s) | (1 << s)
}

// The stages of one block's decoding, as macros over the caller's locals (a lane: `base`,
// `buf`, `pos`, `block`), so that `decode_block` and `decode_block_pair` share them and
// keep every lane's state in locals (the bit buffer in a register in V8's code).

/// A code longer than `FAST_BITS` (LONG entry `$e`): zune's search from the length the
/// entry gives, `(code length, symbol)`; a bad code abandons the scan.
macro_rules! long_code {
    ($long:expr, $buf:ident, $e:ident) => {{
        let packed = decode_long($long, ($buf >> 48) as u32, ($e >> 8) & 31);
        if packed == 0 {
            return Err(Abandon);
        }
        (packed >> 8, packed & 0xFF)
    }};
}

/// DC: decodes the difference (at most 31 bits of the 56 or more in `buf`), updates the
/// prediction and writes the dequantised coefficient.
macro_rules! dc {
    ($t:expr, $buf:ident, $block:expr, $pred:ident) => {{
        let t: &ComponentTables = $t;
        let e = t.dc[($buf >> (64 - DC_BITS)) as usize & (DC_SIZE - 1)];
        let diff = if e & (EXTRA | LONG) == 0 {
            $buf <<= e & 31;
            (e as i32) >> 16
        } else {
            let (len, s) = if e & LONG != 0 {
                long_code!(&t.dc_long, $buf, e)
            } else {
                (e & 31, (e >> 16) & 15)
            };
            if s > 15 {
                return Err(Abandon);
            }
            $buf <<= len;
            if s == 0 {
                0
            } else {
                let v = magnitude($buf, s);
                $buf <<= s;
                v
            }
        };
        $pred = $pred.wrapping_add(diff);
        $block[0] = $pred.wrapping_mul(t.qt_zz[0]);
    }};
}

/// Reloads a lane's bit buffer at its position (`base` + the marker's trailing zeros).
macro_rules! reload {
    ($data:expr, $base:ident, $buf:ident) => {{
        let p = $base + $buf.trailing_zeros() as usize;
        $base = p & !7;
        $buf = refill($data, p);
    }};
}

/// One step of the AC loop (`$pos < 64`): one or two symbols from the paired table, or
/// one from the single table (EXTRA, LONG, the block's last position).
macro_rules! ac_step {
    ($t:expr, $data:expr, $base:ident, $buf:ident, $pos:ident, $block:expr) => {{
        let t: &ComponentTables = $t;
        // fewer than FAST_BITS bits left (the marker in the top FAST_BITS + 1): reload
        if $buf << FAST_BITS == 0 {
            reload!($data, $base, $buf);
        }
        let index = ($buf >> (64 - FAST_BITS)) as usize & (FAST_SIZE - 1);
        let e = t.ac[index];
        let first = $pos + ((e >> 4) & 63) as usize;
        // the first coefficient lands before position 63, so the block has another
        // symbol, and the second symbol (if any) is it
        if first < 63 {
            $buf <<= e & 15;
            // the second first (see the entry format): a second past 63 leaves pos in
            // 65..=79, EOB leaves it past 128, as for single entries
            let second = first + ((e >> 10) & 0xFF) as usize;
            let z = second & 63;
            $block[usize::from(NATURAL[z]) & 63] = ((e as i32) >> 27).wrapping_mul(t.qt_zz[z]);
            $block[usize::from(NATURAL[first]) & 63] =
                (((e << 5) as i32) >> 23).wrapping_mul(t.qt_zz[first]);
            $pos = second + 1;
        } else {
            let e = t.ac_single[index];
            // fewer than 32 bits left (the marker in the top half): reload, so that the
            // longest code with its magnitude bits (31) fits (the look-ahead is the same)
            if $buf as u32 == 0 {
                reload!($data, $base, $buf);
            }
            let (run, value);
            if e & (EXTRA | LONG) == 0 {
                $buf <<= e & 31;
                run = (e >> 8) & 0xFF;
                value = (e as i32) >> 16;
            } else {
                let (len, rs) = if e & LONG != 0 {
                    long_code!(&t.ac_long, $buf, e)
                } else {
                    (e & 31, ((e >> 4) & 0xF0) | ((e >> 16) & 15))
                };
                let s = rs & 15;
                let r = rs >> 4;
                $buf <<= len;
                if s == 0 {
                    run = if r == 15 { 15 } else { EOB_RUN };
                    value = 0;
                } else {
                    run = r;
                    value = magnitude($buf, s);
                    $buf <<= s;
                }
            }
            // EOB writes a zero at the current position (still zero) and leaves pos ≥ 129;
            // ZRL writes a zero 15 places on; a run past 63 leaves pos in 65..=79.
            $pos += run as usize;
            let z = $pos & 63;
            $block[usize::from(NATURAL[z]) & 63] = value.wrapping_mul(t.qt_zz[z]);
            $pos += 1;
        }
    }};
}

/// The block's result from its final AC position: zune's `decode_mcu_block` result (the
/// zig-zag index after the last coefficient: EOB position, or 64), or `Abandon` for a
/// coefficient past position 63.
#[inline(always)]
fn block_len(pos: usize) -> Result<usize, Abandon> {
    match pos {
        64 => Ok(64),
        p if p > 128 => Ok(p - 129),
        _ => Err(Abandon),
    }
}

/// Decodes one block into `block` (zeroed by the caller, natural order, dequantised)
/// from bit position `bits` and updates `dc_pred`; returns zune's `decode_mcu_block`
/// result (see `block_len`).
#[inline(always)]
fn decode_block_inner(
    data: &[u8],
    bits: &mut Bits,
    t: &ComponentTables,
    block: &mut [i32; 64],
    dc_pred: &mut i32,
) -> Result<usize, Abandon> {
    // bit position of the buffer's byte: the position is `base + buf.trailing_zeros()`
    let mut base = bits.pos & !7;
    let mut buf = refill(data, bits.pos);
    let mut pred = *dc_pred;
    dc!(t, buf, block, pred);
    *dc_pred = pred;
    let mut pos = 1_usize;
    while pos < 64 {
        ac_step!(t, data, base, buf, pos, block);
    }
    bits.pos = base + buf.trailing_zeros() as usize;
    block_len(pos)
}

/// Two blocks of the same component from two independent bit positions (two restart
/// intervals), their steps interleaved: each code's table look-up waits for the previous
/// code's length, so one block's decoding is a chain of dependent loads, and a second,
/// independent chain fills the time the first one waits.
#[inline(always)]
fn decode_block_pair_inner(
    data: &[u8],
    bits: [&mut Bits; 2],
    t: &ComponentTables,
    blocks: [&mut [i32; 64]; 2],
    dc_preds: [&mut i32; 2],
) -> Result<[usize; 2], Abandon> {
    let [bits_a, bits_b] = bits;
    let [block_a, block_b] = blocks;
    let [pred_a, pred_b] = dc_preds;
    let (mut base_a, mut base_b) = (bits_a.pos & !7, bits_b.pos & !7);
    let (mut buf_a, mut buf_b) = (refill(data, bits_a.pos), refill(data, bits_b.pos));
    let (mut dc_a, mut dc_b) = (*pred_a, *pred_b);
    dc!(t, buf_a, block_a, dc_a);
    dc!(t, buf_b, block_b, dc_b);
    *pred_a = dc_a;
    *pred_b = dc_b;
    let (mut pos_a, mut pos_b) = (1_usize, 1_usize);
    while pos_a < 64 && pos_b < 64 {
        ac_step!(t, data, base_a, buf_a, pos_a, block_a);
        ac_step!(t, data, base_b, buf_b, pos_b, block_b);
    }
    // the block that has not ended (if any) goes on alone, in one loop for either lane
    // (a loop per lane made the decode-only module larger, one out of line slower)
    let a_left = pos_a < 64;
    let (mut base, mut buf, mut pos, block) = if a_left {
        (base_a, buf_a, pos_a, block_a)
    } else {
        (base_b, buf_b, pos_b, block_b)
    };
    while pos < 64 {
        ac_step!(t, data, base, buf, pos, block);
    }
    if a_left {
        (base_a, buf_a, pos_a) = (base, buf, pos);
    } else {
        (base_b, buf_b, pos_b) = (base, buf, pos);
    }
    bits_a.pos = base_a + buf_a.trailing_zeros() as usize;
    bits_b.pos = base_b + buf_b.trailing_zeros() as usize;
    Ok([block_len(pos_a)?, block_len(pos_b)?])
}

/// `decode_block` result for a stream the fast path gives up on.
pub(crate) const ABANDON: u32 = 255;

/// One block (`decode_block_inner`), a function with no calls inside: the zig-zag index
/// after the last coefficient, or `ABANDON`. (wasm-opt inlines it into the row loop;
/// keeping it out of line there measured the same.)
#[inline(never)]
pub(crate) fn decode_block(
    dec: &mut BlockDecoder<'_>,
    t: &ComponentTables,
    block: &mut [i32; 64],
    dc_pred: &mut i32,
) -> u32 {
    let mut bits = dec.bits;
    let mut pred = *dc_pred;
    let result = decode_block_inner(dec.data, &mut bits, t, block, &mut pred);
    dec.bits = bits;
    *dc_pred = pred;
    match result {
        Ok(len) => len as u32,
        Err(Abandon) => ABANDON,
    }
}

/// Two blocks (`decode_block_pair_inner`) of one component from the scan buffer `data`,
/// one at each bit position (two restart intervals of the same scan): each block's
/// zig-zag length, or `ABANDON` for both if either is given up on.
#[inline(never)]
pub(crate) fn decode_block_pair(
    data: &[u8],
    bits: [&mut Bits; 2],
    t: &ComponentTables,
    blocks: [&mut [i32; 64]; 2],
    dc_preds: [&mut i32; 2],
) -> [u32; 2] {
    let [bits_a, bits_b] = bits;
    let (mut a, mut b) = (*bits_a, *bits_b);
    let [pred_a, pred_b] = dc_preds;
    let (mut pa, mut pb) = (*pred_a, *pred_b);
    let result = decode_block_pair_inner(data, [&mut a, &mut b], t, blocks, [&mut pa, &mut pb]);
    *bits_a = a;
    *bits_b = b;
    *pred_a = pa;
    *pred_b = pb;
    match result {
        Ok([a, b]) => [a as u32, b as u32],
        Err(Abandon) => [ABANDON; 2],
    }
}

// native only: the tests read the fixtures from disk
#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;

    /// `decode_huff!` on a 16-bit look-ahead: (code length, symbol), or `None` for a bad code.
    fn decode_symbol(table: &HuffmanTable, peek16: i32) -> Option<(u32, u32)> {
        let entry = table.lookup()
            [(peek16 >> (16 - HUFF_LOOKAHEAD)) as usize & ((1 << HUFF_LOOKAHEAD) - 1)];
        let code_length = entry >> HUFF_LOOKAHEAD;
        if code_length > i32::from(HUFF_LOOKAHEAD) {
            let long = LongCodes::of(table);
            let packed = decode_long(&long, peek16 as u32, u32::from(HUFF_LOOKAHEAD) + 1);
            if packed == 0 {
                return None;
            }
            return Some((packed >> 8, packed & 0xFF));
        }
        Some((
            code_length as u32,
            (entry & ((1 << HUFF_LOOKAHEAD) - 1)) as u32,
        ))
    }

    /// The construction `build_table` replaced: `decode_huff!` on every index.
    pub(super) fn build_table_by_decoding(
        table: &HuffmanTable,
        is_dc: bool,
        bits: u32,
    ) -> Vec<u32> {
        // LONG entries hold the code length the search starts from
        let mut out = vec![NO_CODE; 1 << bits];
        for (i, slot) in out.iter_mut().enumerate() {
            let peek16 = (i << (16 - bits)) as i32;
            let Some((len, symbol)) = decode_symbol(table, peek16) else {
                continue;
            };
            if len == 0 || len > bits {
                continue;
            }
            let (run, size) = if is_dc {
                (0, symbol)
            } else {
                (symbol >> 4, symbol & 15)
            };
            if size > 15 {
                continue; // not for DC tables, which zune validates; kept out of the fast path
            }
            *slot = if size == 0 {
                if is_dc {
                    len // a zero difference
                } else if run == 15 {
                    len | (15 << 8) // ZRL: a zero written 15 places on
                } else {
                    len | (EOB_RUN << 8) // end of block (zune treats any run but 15 as EOB)
                }
            } else if len + size <= bits {
                let raw = ((i as u32) >> (bits - len - size)) & ((1 << size) - 1);
                let value = huff_extend(raw as i32, size as i32);
                (len + size) | (run << 8) | ((value as u32) << 16)
            } else {
                len | EXTRA | (run << 8) | (size << 16)
            };
        }
        out
    }

    /// The construction `build_ac_table` replaced: each entry from its own index.
    fn build_ac_table_per_entry(single: &[u32; FAST_SIZE]) -> [u32; FAST_SIZE] {
        let mut out = [NO_PAIR; FAST_SIZE];
        for (i, slot) in out.iter_mut().enumerate() {
            let e = single[i];
            let run = (e >> 8) & 0xFF;
            let value = (e as i32) >> 16;
            if e & (EXTRA | LONG) != 0 {
                continue;
            }
            let n1 = e & 31;
            if run == EOB_RUN {
                *slot = n1 | (EOB_RUN << 10);
                continue;
            }
            if !(-256..=255).contains(&value) {
                continue;
            }
            let mut entry = n1 | (run << 4) | (((value as u32) & 0x1FF) << 18);
            let second = single[(i << n1) & (FAST_SIZE - 1)];
            let (n2, run2, v2) = (second & 31, (second >> 8) & 0xFF, (second as i32) >> 16);
            if n1 < FAST_BITS
                && second & (EXTRA | LONG) == 0
                && n2 <= FAST_BITS - n1
                && (-16..=15).contains(&v2)
            {
                entry += n2;
                entry |= (v2 as u32) << 27;
                entry |= if run2 == EOB_RUN {
                    SECOND_EOB << 10
                } else {
                    (1 + run2) << 10
                };
            }
            *slot = entry;
        }
        out
    }

    /// Both constructions agree on `table`, as DC and as AC table, and so do the two
    /// constructions of the two-symbol AC table.
    fn assert_same(table: &HuffmanTable, what: &str) {
        // both look-aheads for both kinds, though only DC tables use DC_BITS
        for (is_dc, bits) in [
            (true, DC_BITS),
            (true, FAST_BITS),
            (false, DC_BITS),
            (false, FAST_BITS),
        ] {
            // (from zeros: the builder must write every entry)
            let mut new = vec![0; 1 << bits];
            build_table(table, is_dc, &mut new);
            let old = build_table_by_decoding(table, is_dc, bits);
            if let Some(i) = (0..new.len()).find(|&i| new[i] != old[i]) {
                panic!(
                    "{what} (is_dc {is_dc}, {bits} bits): index {i:#014b}: built {:#x}, decoded {:#x}",
                    new[i], old[i]
                );
            }
        }
        let (mut pairs, mut single) = ([0; FAST_SIZE], [0; FAST_SIZE]);
        build_ac_table(table, &mut pairs, &mut single);
        let reference = build_ac_table_per_entry(&single);
        if let Some(i) = (0..FAST_SIZE).find(|&i| pairs[i] != reference[i]) {
            panic!(
                "{what}: pair table index {i:#014b}: built {:#x}, per entry {:#x}",
                pairs[i], reference[i]
            );
        }
    }

    /// Every Huffman table in the DHT segments of a JPEG stream (a marker walk: the
    /// entropy-coded data holds no 0xFFC4).
    fn dht_tables(stream: &[u8]) -> Vec<(HuffmanTable, bool)> {
        let mut tables = Vec::new();
        let mut at = 0;
        while at + 4 <= stream.len() {
            if stream[at] != 0xFF || stream[at + 1] != 0xC4 {
                at += 1;
                continue;
            }
            let len = usize::from(stream[at + 2]) << 8 | usize::from(stream[at + 3]);
            let seg = &stream[at + 4..(at + 2 + len).min(stream.len())];
            let mut i = 0;
            while i + 17 <= seg.len() {
                let is_dc = seg[i] >> 4 == 0;
                let mut counts = [0u8; 17];
                counts[1..].copy_from_slice(&seg[i + 1..i + 17]);
                let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
                let mut symbols = [0u8; 256];
                let n = total.min(256).min(seg.len() - i - 17);
                symbols[..n].copy_from_slice(&seg[i + 17..i + 17 + n]);
                if let Ok(t) = HuffmanTable::new_without_ac_lookup(&counts, symbols, is_dc) {
                    tables.push((t, is_dc));
                }
                i += 17 + total;
            }
            at += 2 + len;
        }
        tables
    }

    #[test]
    fn tables_of_the_fixtures_and_encoder_outputs() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
        let mut streams: Vec<(String, Vec<u8>)> = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "jpg") {
                streams.push((path.display().to_string(), std::fs::read(&path).unwrap()));
            }
        }
        assert!(
            streams.len() >= 40,
            "fixtures missing from {}",
            dir.display()
        );
        #[cfg(feature = "encoder")]
        {
            let modes = [
                (
                    r#""encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]"#,
                    3,
                ),
                (
                    r#""encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]"#,
                    3,
                ),
                (r#""encoded_color_space": "rgb""#, 3),
                (r#""encoded_color_space": "grayscale""#, 1),
            ];
            let mut seed = 1u32;
            for size in [8u64, 16, 64, 256] {
                for (mode, channels) in modes {
                    for quality in [1, 30, 75, 90, 100] {
                        let n = (size * size) as usize * channels;
                        // a gradient with noise, so the tables have many short and long codes
                        let data: Vec<u8> = (0..n)
                            .map(|i| {
                                seed ^= seed << 13;
                                seed ^= seed >> 17;
                                seed ^= seed << 5;
                                ((i % 251) as u32 + (seed % (quality + 1))) as u8
                            })
                            .collect();
                        let json = format!(r#"{{"quality": {quality}, {mode}}}"#);
                        let value: crate::ConfigValue = serde_json::from_str(&json).unwrap();
                        let config = crate::JpegConfig::parse(&value).unwrap();
                        let shape: Vec<u64> = if channels == 3 {
                            vec![size, size, 3]
                        } else {
                            vec![size, size]
                        };
                        let stream = crate::encode(&config, &data, &shape).unwrap();
                        streams.push((format!("{size}² {json}"), stream));
                    }
                }
            }
        }
        let mut count = 0;
        for (what, stream) in &streams {
            for (k, (table, _)) in dht_tables(stream).iter().enumerate() {
                assert_same(table, &format!("{what}, table {k}"));
                count += 1;
            }
        }
        assert!(count > 200, "only {count} tables");
    }

    /// Random code-length counts within the code space zune accepts (Kraft sum below 1),
    /// lengths from `min_len`, `spread` steering how many codes each length takes.
    fn random_counts(rng: &mut impl FnMut() -> u32, min_len: usize, spread: u32) -> [u8; 17] {
        let mut counts = [0u8; 17];
        let mut total = 0usize;
        // free code space at the current length, in codes of that length
        let mut free: u64 = 1;
        for (len, count) in counts.iter_mut().enumerate().skip(1) {
            free *= 2;
            if len < min_len {
                continue;
            }
            // keep one code free: zune rejects a complete code (the all-ones code)
            let room = (free - 1).min(256 - total as u64);
            if room == 0 {
                continue;
            }
            let pick = match rng() % spread {
                0 => room,
                1 => 0,
                _ => u64::from(rng()) % (room.min(u64::from(rng() % 64 + 1)) + 1),
            };
            *count = pick as u8;
            total += pick as usize;
            free -= pick;
        }
        counts
    }

    #[test]
    fn random_valid_tables() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rng = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 32) as u32
        };
        let (mut accepted, mut with_16, mut only_long) = (0, 0, 0);
        for round in 0..20_000 {
            let min_len = match round % 4 {
                0 => 1,
                1 => 11, // only codes longer than the look-ahead
                _ => (rng() % 16 + 1) as usize,
            };
            let spread = rng() % 6 + 3;
            let counts = random_counts(&mut rng, min_len, spread);
            let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
            let is_dc = round % 3 == 0;
            // distinct symbols in random order (DC: 0..=15, which zune requires)
            let mut pool: Vec<u8> = if is_dc {
                (0..=15).collect()
            } else {
                (0..=255).collect()
            };
            for i in (1..pool.len()).rev() {
                pool.swap(i, rng() as usize % (i + 1));
            }
            let mut symbols = [0u8; 256];
            for (k, s) in symbols.iter_mut().enumerate().take(total) {
                *s = pool[k % pool.len()];
            }
            let Ok(table) = HuffmanTable::new_without_ac_lookup(&counts, symbols, is_dc) else {
                continue;
            };
            accepted += 1;
            with_16 += usize::from(counts[16] > 0);
            only_long += usize::from(total > 0 && counts[..=10].iter().all(|&c| c == 0));
            assert_same(
                &table,
                &format!("counts {counts:?}, symbols {:?}", &symbols[..total]),
            );
        }
        assert!(
            accepted > 10_000 && with_16 > 1_000 && only_long > 1_000,
            "accepted {accepted}, with 16-bit codes {with_16}, only long codes {only_long}"
        );
    }
}
