//! The one pyramid builder. Level 0 arrives a band of rows at a time; each level keeps only
//! what it has not yet written (at most one chunk row of samples, plus one odd row waiting
//! for its pair), writes a chunk row when it is complete, and hands each pair of rows,
//! averaged, to the level below. Memory does not grow with the image's height.
//!
//!   level n+1 = level n averaged over 2×2 areas (rounded mean; a last odd row or column
//!   averages what there is). The averages are of the samples, never of decoded JPEG, so
//!   loss does not compound from level to level.

use super::encoder::{ChunkEncoder, Started, Tile};
use super::error::{ConvertError, Result};
use super::levels::Pyramid;
use super::metadata;
use super::options::Plan;
use super::store::{ChunkStore, StoreWriter};
use super::events::{Events, Progress};

/// Chunks cut and encoded at once per encode thread (at least 16 in all): enough to keep the
/// threads busy, few enough that the tiles held do not grow with the image's width.
const CHUNKS_PER_THREAD: usize = 8;
const MIN_BATCH: usize = 16;
/// Rows averaged for the level below, handed down at a time.
const DOWN_BATCH: usize = 64;

/// Averages row `a` with row `b` (None: a last odd row) of `width` pixels × `c` samples into `out`.
pub fn downsample_rows(a: &[u8], b: Option<&[u8]>, width: usize, c: usize, out: &mut [u8]) {
    let pairs = width / 2;
    let avg4 = |p: u8, q: u8, r: u8, s: u8| ((u16::from(p) + u16::from(q) + u16::from(r) + u16::from(s) + 2) >> 2) as u8;
    let avg2 = |p: u8, q: u8| ((u16::from(p) + u16::from(q) + 1) >> 1) as u8;
    match b {
        Some(b) => {
            for i in 0..pairs {
                let (x, o) = (2 * i * c, i * c);
                for k in 0..c {
                    out[o + k] = avg4(a[x + k], a[x + c + k], b[x + k], b[x + c + k]);
                }
            }
            if width & 1 == 1 {
                let (x, o) = (2 * pairs * c, pairs * c);
                for k in 0..c {
                    out[o + k] = avg2(a[x + k], b[x + k]);
                }
            }
        }
        None => {
            for i in 0..pairs {
                let (x, o) = (2 * i * c, i * c);
                for k in 0..c {
                    out[o + k] = avg2(a[x + k], a[x + c + k]);
                }
            }
            if width & 1 == 1 {
                let (x, o) = (2 * pairs * c, pairs * c);
                out[o..o + c].copy_from_slice(&a[x..x + c]);
            }
        }
    }
}

/// The (ch × cw × c) tile at column `x0` of a band of `rows` rows `width` pixels wide,
/// edges filled by repeating the last row and column.
pub fn cut_tile(band: &[u8], rows: usize, width: usize, c: usize, x0: usize, ch: usize, cw: usize) -> Vec<u8> {
    let mut out = vec![0u8; ch * cw * c];
    let row_len = cw * c;
    let valid = cw.min(width - x0);
    for y in 0..ch {
        let sy = y.min(rows - 1);
        let src = (sy * width + x0) * c;
        let dst = &mut out[y * row_len..(y + 1) * row_len];
        dst[..valid * c].copy_from_slice(&band[src..src + valid * c]);
        for x in valid..cw {
            dst.copy_within((valid - 1) * c..valid * c, x * c);
        }
    }
    out
}

struct Level {
    height: usize,
    width: usize,
    row_len: usize,
    band: Vec<u8>,
    band_rows: usize,
    chunk_row: u32,
    rows_in: usize,
    /// an odd row waiting for its pair
    pending: Option<Vec<u8>>,
    /// rows averaged for the level below
    down: Vec<u8>,
    down_rows: usize,
    store: ChunkStore,
    chunks_done: u64,
    encoded_bytes: u64,
    started: bool,
    /// the chunk row with the encoders, stored when the next one is handed over (or at the end)
    in_flight: Option<RowInFlight>,
}

/// A chunk row handed to the encoders: its batches, from their first column.
struct RowInFlight {
    cy: u32,
    batches: Vec<(u32, Started)>,
}

/// What the levels share while rows go through them.
pub struct Context<'a> {
    pub plan: &'a Plan,
    pub pyramid: &'a Pyramid,
    pub writer: &'a mut dyn StoreWriter,
    pub encoder: &'a ChunkEncoder<'a>,
    pub events: &'a mut dyn Events,
    pub chunks_done: u64,
    /// level 0's squared error and sample count
    pub error: (u64, u64),
}

/// The levels of a pyramid being built from level 0's rows.
pub struct RowPyramid<'a> {
    levels: Vec<Level>,
    /// level 0's chunks are written by the caller (a TIFF's tiles, copied): its rows only
    /// feed the levels above
    external_level0: bool,
    channels: usize,
    cx: Context<'a>,
}

/// Per level: chunks written and their encoded bytes, and the bytes handed to the writer.
pub struct LevelTotals {
    pub chunks: u64,
    pub encoded_bytes: u64,
    pub bytes_written: u64,
}

impl<'a> RowPyramid<'a> {
    /// `channels`: samples per pixel of the rows (a c axis of planes: every plane's).
    pub fn new(cx: Context<'a>, channels: usize) -> RowPyramid<'a> {
        let n = cx.pyramid.shapes.len();
        let levels = (0..n)
            .map(|l| {
                let (h, w) = cx.pyramid.shapes[l];
                let grid = cx.pyramid.grids[l];
                let row_len = w as usize * channels;
                let next_row_len = if l + 1 < n { cx.pyramid.shapes[l + 1].1 as usize * channels } else { 0 };
                Level {
                    height: h as usize,
                    width: w as usize,
                    row_len,
                    band: vec![0; grid.chunk.0 as usize * row_len],
                    band_rows: 0,
                    chunk_row: 0,
                    rows_in: 0,
                    pending: None,
                    down: vec![0; next_row_len * DOWN_BATCH],
                    down_rows: 0,
                    store: ChunkStore::new(&l.to_string(), grid),
                    chunks_done: 0,
                    encoded_bytes: 0,
                    started: false,
                    in_flight: None,
                }
            })
            .collect();
        RowPyramid { levels, external_level0: false, channels, cx }
    }

    /// Level 0's chunks come from the caller ([`Self::chunk_written`]); its rows only feed
    /// the levels above.
    pub fn with_external_level0(mut self) -> Self {
        self.external_level0 = true;
        // (its band is never cut into chunks, so it is not kept)
        self.levels[0].band = Vec::new();
        self
    }

    /// A chunk of level `l` the caller wrote: counted, and reported (`stored`: it has bytes).
    pub fn chunk_written(&mut self, l: usize, stored: bool, bytes: u64) -> Result<()> {
        let total = self.cx.pyramid.grids[l].chunk_count();
        if !self.levels[l].started {
            self.levels[l].started = true;
            let shape = metadata::array_shape(self.cx.plan, self.cx.pyramid.shapes[l]);
            self.progress(l, Progress::Level { shape })?;
        }
        let level = &mut self.levels[l];
        if stored {
            level.chunks_done += 1;
            level.encoded_bytes += bytes;
        }
        let done = level.chunks_done;
        self.cx.chunks_done += 1;
        self.progress(l, Progress::Chunk { level_chunks_done: done, level_chunks_total: total })
    }

    /// The store being written (for chunks the caller writes).
    pub fn writer(&mut self) -> &mut dyn StoreWriter {
        &mut *self.cx.writer
    }

    /// Level 0's next `n` rows.
    pub fn push(&mut self, rows: &[u8], n: usize) -> Result<()> {
        self.push_level(0, rows, n)
    }

    fn push_level(&mut self, l: usize, rows: &[u8], n: usize) -> Result<()> {
        let (row_len, height, ch) = {
            let level = &self.levels[l];
            (level.row_len, level.height, self.cx.pyramid.grids[l].chunk.0 as usize)
        };
        let rows_in = self.levels[l].rows_in;
        debug_assert!(rows_in + n <= height, "level {l} got {} rows of {height}", rows_in + n);
        let mut r = 0;
        while r < n {
            let level = &mut self.levels[l];
            let take = (n - r).min(ch - level.band_rows);
            let at = level.band_rows * row_len;
            if !(l == 0 && self.external_level0) {
                level.band[at..at + take * row_len].copy_from_slice(&rows[r * row_len..(r + take) * row_len]);
            }
            level.band_rows += take;
            r += take;
            if level.band_rows == ch || rows_in + r == height {
                self.write_chunk_row(l)?;
            }
        }
        if l + 1 < self.levels.len() {
            let row = |i: usize| &rows[i * row_len..(i + 1) * row_len];
            let mut r = 0;
            if n > 0 {
                if let Some(pending) = self.levels[l].pending.take() {
                    self.emit(l, &pending, Some(row(0)))?;
                    r = 1;
                }
            }
            while r + 1 < n {
                self.emit(l, row(r), Some(row(r + 1)))?;
                r += 2;
            }
            if r < n {
                if rows_in + n == height {
                    self.emit(l, row(r), None)?; // the last, odd row
                } else {
                    self.levels[l].pending = Some(row(r).to_vec());
                }
            }
        }
        self.levels[l].rows_in += n;
        Ok(())
    }

    fn emit(&mut self, l: usize, a: &[u8], b: Option<&[u8]>) -> Result<()> {
        let channels = self.channels;
        let next_len = self.levels[l + 1].row_len;
        let level = &mut self.levels[l];
        let at = level.down_rows * next_len;
        downsample_rows(a, b, level.width, channels, &mut level.down[at..at + next_len]);
        level.down_rows += 1;
        if level.down_rows == DOWN_BATCH {
            self.send_down(l)?;
        }
        Ok(())
    }

    fn send_down(&mut self, l: usize) -> Result<()> {
        let n = std::mem::take(&mut self.levels[l].down_rows);
        let down = std::mem::take(&mut self.levels[l].down);
        let next_len = self.levels[l + 1].row_len;
        let result = self.push_level(l + 1, &down[..n * next_len], n);
        self.levels[l].down = down;
        result
    }

    fn write_chunk_row(&mut self, l: usize) -> Result<()> {
        let grid = self.cx.pyramid.grids[l];
        let (ch, cw) = (grid.chunk.0 as usize, grid.chunk.1 as usize);
        let shape = self.cx.pyramid.shapes[l];
        let channels = self.channels;
        let cy = self.levels[l].chunk_row;
        self.levels[l].chunk_row += 1;
        if l == 0 && self.external_level0 {
            self.levels[0].band_rows = 0;
            return Ok(());
        }
        if !self.levels[l].started {
            self.levels[l].started = true;
            let shape_dims = metadata::array_shape(self.cx.plan, shape);
            self.progress(l, Progress::Level { shape: shape_dims })?;
        }
        let batch = MIN_BATCH.max(self.cx.encoder.workers() * CHUNKS_PER_THREAD);
        let columns = grid.chunks.1;
        let valid_h = (shape.0 as usize - cy as usize * ch).min(ch) as u32;
        let mut batches = Vec::new();
        let mut cx0 = 0;
        while cx0 < columns {
            let end = columns.min(cx0 + batch as u32);
            let level = &self.levels[l];
            let tiles: Vec<Tile> = (cx0..end)
                .map(|cx| {
                    let x0 = cx as usize * cw;
                    Tile {
                        samples: cut_tile(&level.band, level.band_rows, level.width, channels, x0, ch, cw),
                        valid: (valid_h, (level.width - x0).min(cw) as u32),
                    }
                })
                .collect();
            batches.push((cx0, self.cx.encoder.start(l, tiles, grid.chunk, l == 0)?));
            cx0 = end;
        }
        self.levels[l].band_rows = 0;
        // the row before is stored now that this one is with the encoders (which may encode
        // while the caller reads on)
        if let Some(before) = self.levels[l].in_flight.take() {
            self.store_row(l, before)?;
        }
        self.levels[l].in_flight = Some(RowInFlight { cy, batches });
        Ok(())
    }

    /// A chunk row's chunks, from the encoders into the store.
    fn store_row(&mut self, l: usize, row: RowInFlight) -> Result<()> {
        let grid = self.cx.pyramid.grids[l];
        let cy = row.cy;
        for (cx0, started) in row.batches {
            let encoded = self.cx.encoder.finish(started)?;
            for (i, e) in encoded.into_iter().enumerate() {
                let cx = cx0 + i as u32;
                if let Some((sum, count)) = e.error {
                    self.cx.error.0 += sum;
                    self.cx.error.1 += count;
                }
                let bytes: u64 = e.streams.iter().map(|s| s.len() as u64).sum();
                let plan = self.cx.plan;
                let key = |y: u32, x: u32, c: u32| metadata::chunk_key(plan, y, x, c);
                for (c, stream) in e.streams.into_iter().enumerate() {
                    self.levels[l].store.store(self.cx.writer, &key, cy, cx, c as u32, stream)?;
                }
                let level = &mut self.levels[l];
                level.chunks_done += 1;
                level.encoded_bytes += bytes;
                self.cx.chunks_done += 1;
                let done = self.levels[l].chunks_done;
                self.progress(l, Progress::Chunk { level_chunks_done: done, level_chunks_total: grid.chunk_count() })?;
            }
        }
        self.levels[l].store.end_chunk_row(self.cx.writer, cy)
    }

    fn progress(&mut self, l: usize, what: Progress) -> Result<()> {
        let levels = self.levels.len();
        let chunks_total = self.cx.pyramid.chunks_total();
        self.cx.events.progress(l, levels, self.cx.chunks_done, chunks_total, &what)
    }

    /// After level 0's last row: flushes what each level holds for the one below, and
    /// returns the totals, and level 0's error.
    pub fn finish(mut self) -> Result<(Vec<LevelTotals>, (u64, u64), u64)> {
        for l in 0..self.levels.len() {
            let level = &self.levels[l];
            if level.rows_in != level.height {
                // a source that ended early: its own check should have named the problem
                return Err(ConvertError::input(format!(
                    "the input ended after {} of its {} rows",
                    self.levels[0].rows_in, self.levels[0].height
                )));
            }
            if l + 1 < self.levels.len() && level.down_rows > 0 {
                self.send_down(l)?;
            }
        }
        for l in 0..self.levels.len() {
            if let Some(row) = self.levels[l].in_flight.take() {
                self.store_row(l, row)?;
            }
        }
        let totals = self
            .levels
            .iter()
            .map(|level| LevelTotals {
                chunks: level.chunks_done,
                encoded_bytes: level.encoded_bytes,
                bytes_written: level.store.bytes_written,
            })
            .collect();
        Ok((totals, self.cx.error, self.cx.chunks_done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_round_like_the_npm_package() {
        let a = [1u8, 2, 3];
        let b = [2u8, 2, 4];
        let mut out = [0u8; 2];
        downsample_rows(&a, Some(&b), 3, 1, &mut out);
        assert_eq!(out, [2, 4]); // (1+2+2+2+2)>>2, (3+4+1)>>1
        downsample_rows(&a, None, 3, 1, &mut out);
        assert_eq!(out, [2, 3]); // (1+2+1)>>1, 3
    }

    #[test]
    fn tiles_repeat_their_last_row_and_column() {
        let band = [1u8, 2, 3, 4];
        let tile = cut_tile(&band, 2, 2, 1, 1, 3, 2);
        assert_eq!(tile, vec![2, 2, 4, 4, 4, 4]);
    }
}
