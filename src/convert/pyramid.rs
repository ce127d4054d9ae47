//! The one pyramid builder. Level 0 arrives as chunk-sized blocks ("nodes"), in any order:
//! a tiled source hands its tiles over in Z order, a row source cuts its bands of rows into
//! nodes. Every node of level n waits in its parent's 2×2 block; when the block is complete
//! it is averaged into a node of level n+1, which is encoded and goes on up. In Z order at
//! most one block per level is incomplete at a time, so memory grows neither with the
//! image's width nor with its height; in row order it is one band of blocks per level.
//!
//!   level n+1 = level n averaged over 2×2 areas (rounded mean; a last odd row or column
//!   averages what there is). The averages are of the samples, never of decoded JPEG, so
//!   loss does not compound from level to level.

use std::collections::{HashMap, VecDeque};

use super::encoder::{ChunkEncoder, Started, Tile};
use super::error::{ConvertError, Result};
use super::levels::Pyramid;
use super::metadata;
use super::options::Plan;
use super::slab::{Slabs, ZAverage};
use super::stack::PlaneIndex;
use super::store::{ChunkStore, StoreWriter};
use super::events::{Events, Progress};

/// Chunks encoded at once per encode thread (at least 16 in all): enough to keep the
/// threads busy, few enough that the chunks held stay small.
const CHUNKS_PER_THREAD: usize = 8;
const MIN_BATCH: usize = 16;
/// Batches with the encoders at once: the oldest is stored before another is handed over.
const BATCHES_IN_FLIGHT: usize = 3;

/// Chunks per batch for `workers` encode threads.
pub fn batch_size(workers: usize) -> usize {
    MIN_BATCH.max(workers * CHUNKS_PER_THREAD)
}

/// The grid's cells (rows, columns) in Z (Morton) order: each aligned 2^k × 2^k block is
/// visited whole before the next, so a pyramid built in this order completes its 2×2
/// blocks one after another at every level. Cells outside the grid are skipped without
/// being visited.
pub fn z_order(rows: u32, columns: u32) -> impl Iterator<Item = (u32, u32)> {
    let side = rows.max(columns).max(1).next_power_of_two();
    let mut stack = vec![(0u32, 0u32, side)];
    std::iter::from_fn(move || {
        while let Some((y, x, s)) = stack.pop() {
            if y >= rows || x >= columns {
                continue;
            }
            if s == 1 {
                return Some((y, x));
            }
            let h = s / 2;
            stack.extend([(y + h, x + h, h), (y + h, x, h), (y, x + h, h), (y, x, h)]);
        }
        None
    })
}

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


/// A node's samples: `nh × nw` pixels of `c` samples (row stride `nw`), of which the first
/// `valid` (rows, columns) are the image's, the rest repeat the last valid row and column.
pub struct Node {
    pub samples: Vec<u8>,
    pub valid: (usize, usize),
}

/// A parent's 2×2 block of nodes at full resolution, filled as its children come.
struct Block {
    samples: Vec<u8>,
    /// the children that came (bit 2·(y&1) + (x&1))
    have: u8,
}

struct Level {
    height: usize,
    width: usize,
    /// blocks waiting for children, by parent position
    blocks: HashMap<(u32, u32), Block>,
    store: ChunkStore,
    /// chunks waiting to be handed to the encoders, with their positions (the level's z
    /// plane, chunk row, column)
    queued: Vec<((u32, u32, u32), Tile)>,
    chunks_done: u64,
    encoded_bytes: u64,
    started: bool,
}

/// A batch with the encoders: its level, its chunks' positions.
struct InFlight {
    level: usize,
    positions: Vec<(u32, u32, u32)>,
    started: Started,
}

/// What the levels share while nodes go through them.
pub struct Context<'a> {
    pub plan: &'a Plan,
    pub pyramid: &'a Pyramid,
    pub writer: &'a mut dyn StoreWriter,
    pub encoder: &'a ChunkEncoder<'a>,
    pub events: &'a mut dyn Events,
    pub chunks_done: u64,
    /// level 0's squared error and sample count
    pub error: (u64, u64),
    /// the plane of a stack these nodes are (0, 0 for a 2-D image)
    pub plane: PlaneIndex,
    /// levels that halve z: their planes averaged across the stack's
    pub z_average: Option<&'a mut ZAverage>,
    /// chunks of several z planes, gathered across the planes
    pub slabs: Option<&'a mut Slabs>,
}

/// The levels of a pyramid being built from level 0's nodes (or rows, cut into nodes).
pub struct ChunkPyramid<'a> {
    levels: Vec<Level>,
    /// level 0's chunks are written by the caller (a TIFF's tiles, copied): its nodes only
    /// feed the levels above
    external_level0: bool,
    channels: usize,
    /// a node's (rows, columns): level 0's chunk
    node: (usize, usize),
    /// level 0's rows (a row source's) not yet cut into nodes
    band: Vec<u8>,
    band_rows: usize,
    rows_in: usize,
    batch: usize,
    in_flight: VecDeque<InFlight>,
    cx: Context<'a>,
}

/// Per level: chunks written and their encoded bytes, and the bytes handed to the writer.
pub struct LevelTotals {
    pub chunks: u64,
    pub encoded_bytes: u64,
    pub bytes_written: u64,
}

/// The `nh × nw` node at column `x0` of a band of `rows` rows `width` pixels wide, edges
/// repeated.
fn node_of_band(band: &[u8], rows: usize, width: usize, c: usize, x0: usize, (nh, nw): (usize, usize)) -> Node {
    Node { samples: cut_tile(band, rows, width, c, x0, nh, nw), valid: (rows.min(nh), (width - x0).min(nw)) }
}

/// Bytes a pyramid built from bands of rows holds in full-width bands, for an image `width`
/// pixels wide of `channels` samples in chunks `chunk_rows` high: the band being cut into
/// nodes, and per level the 2×2 blocks of a band of nodes (two bands of chunk rows at level
/// 0's, one at level 1's, …), about five bands in all.
pub fn row_band_bytes(chunk_rows: u32, width: u32, channels: usize) -> u64 {
    (u64::from(chunk_rows) * u64::from(width) * channels as u64).saturating_mul(5)
}

impl<'a> ChunkPyramid<'a> {
    /// `channels`: samples per pixel of the nodes (a c axis of planes: every plane's).
    pub fn new(cx: Context<'a>, channels: usize) -> ChunkPyramid<'a> {
        let node = cx.pyramid.grids[0].chunk;
        let node = (node.0 as usize, node.1 as usize);
        let levels = (0..cx.pyramid.shapes.len())
            .map(|l| {
                let (h, w) = cx.pyramid.shapes[l];
                let grid = cx.pyramid.grids[l];
                Level {
                    height: h as usize,
                    width: w as usize,
                    blocks: HashMap::new(),
                    store: ChunkStore::new(&l.to_string(), grid),
                    queued: Vec::new(),
                    chunks_done: 0,
                    encoded_bytes: 0,
                    started: false,
                }
            })
            .collect();
        let batch = batch_size(cx.encoder.workers());
        ChunkPyramid {
            levels,
            external_level0: false,
            channels,
            node,
            band: Vec::new(),
            band_rows: 0,
            rows_in: 0,
            batch,
            in_flight: VecDeque::new(),
            cx,
        }
    }

    /// Level 0's chunks come from the caller ([`Self::chunk_written`]); its nodes only feed
    /// the levels above.
    pub fn with_external_level0(mut self) -> Self {
        self.external_level0 = true;
        self
    }

    /// A chunk of level `l` the caller wrote: counted, and reported (`stored`: it has bytes).
    pub fn chunk_written(&mut self, l: usize, stored: bool, bytes: u64) -> Result<()> {
        self.level_started(l)?;
        let total = self.cx.pyramid.grids[l].chunk_count();
        let level = &mut self.levels[l];
        if stored {
            level.chunks_done += 1;
            level.encoded_bytes += bytes;
        }
        let done = level.chunks_done;
        self.cx.chunks_done += 1;
        self.progress(l, Progress::Chunk { level_chunks_done: done, level_chunks_total: total })
    }

    fn level_started(&mut self, l: usize) -> Result<()> {
        if !self.levels[l].started {
            self.levels[l].started = true;
            let shape = metadata::array_shape(self.cx.plan, l, self.cx.pyramid.shapes[l]);
            self.progress(l, Progress::Level { shape })?;
        }
        Ok(())
    }

    /// The store being written (for chunks the caller writes).
    pub fn writer(&mut self) -> &mut dyn StoreWriter {
        &mut *self.cx.writer
    }

    /// Level 0's next `n` rows (a row source's), cut into nodes a band at a time.
    pub fn push(&mut self, rows: &[u8], n: usize) -> Result<()> {
        let (height, width, c) = (self.levels[0].height, self.levels[0].width, self.channels);
        let row_len = width * c;
        let nh = self.node.0;
        debug_assert!(self.rows_in + n <= height, "level 0 got {} rows of {height}", self.rows_in + n);
        if self.band.is_empty() {
            self.band = vec![0; nh * row_len];
        }
        let mut r = 0;
        while r < n {
            let take = (n - r).min(nh - self.band_rows);
            let at = self.band_rows * row_len;
            self.band[at..at + take * row_len].copy_from_slice(&rows[r * row_len..(r + take) * row_len]);
            self.band_rows += take;
            self.rows_in += take;
            r += take;
            if self.band_rows == nh || self.rows_in == height {
                let cy = ((self.rows_in - 1) / nh) as u32;
                let band = std::mem::take(&mut self.band);
                let result = (0..self.cx.pyramid.grids[0].chunks.1).try_for_each(|cx| {
                    let node = node_of_band(&band, self.band_rows, width, c, cx as usize * self.node.1, self.node);
                    self.add(0, cy, cx, node)
                });
                self.band = band;
                self.band_rows = 0;
                result?;
            }
        }
        Ok(())
    }

    /// Node (y, x) of level `l`: encoded (unless level 0's chunks are the caller's), and
    /// added to its parent's block.
    pub fn add(&mut self, l: usize, y: u32, x: u32, node: Node) -> Result<()> {
        let (nh, nw) = self.node;
        let c = self.channels;
        if l + 1 < self.levels.len() {
            let (children_rows, children_columns) = self.cx.pyramid.grids[l].chunks;
            let (py, px) = (y / 2, x / 2);
            let block_row = 2 * nw * c;
            let level = &mut self.levels[l];
            let block = level
                .blocks
                .entry((py, px))
                .or_insert_with(|| Block { samples: vec![0; 4 * nh * nw * c], have: 0 });
            let (qy, qx) = ((y & 1) as usize, (x & 1) as usize);
            for r in 0..node.valid.0 {
                let at = (qy * nh + r) * block_row + qx * nw * c;
                block.samples[at..at + node.valid.1 * c].copy_from_slice(&node.samples[r * nw * c..(r * nw + node.valid.1) * c]);
            }
            block.have |= 1 << (2 * qy + qx);
            let expected = (0..4u32)
                .filter(|b| 2 * py + b / 2 < children_rows && 2 * px + b % 2 < children_columns)
                .fold(0u8, |m, b| m | 1 << b);
            if block.have == expected {
                let block = level.blocks.remove(&(py, px)).expect("the block just filled");
                let parent = self.average(l, py, px, &block.samples);
                self.queue(l, y, x, node)?;
                return self.add(l + 1, py, px, parent);
            }
        }
        self.queue(l, y, x, node)
    }

    /// Level `l + 1`'s node (py, px) from its complete 2×2 block of level `l`.
    fn average(&self, l: usize, py: u32, px: u32, block: &[u8]) -> Node {
        let (nh, nw) = self.node;
        let c = self.channels;
        let level = &self.levels[l];
        let vh = (level.height - 2 * py as usize * nh).min(2 * nh);
        let vw = (level.width - 2 * px as usize * nw).min(2 * nw);
        let block_row = 2 * nw * c;
        let (rows, columns) = (vh.div_ceil(2), vw.div_ceil(2));
        let mut averaged = vec![0u8; rows * columns * c];
        for (r, out) in averaged.chunks_exact_mut(columns * c).enumerate() {
            let a = &block[2 * r * block_row..2 * r * block_row + vw * c];
            let b = (2 * r + 1 < vh).then(|| &block[(2 * r + 1) * block_row..(2 * r + 1) * block_row + vw * c]);
            downsample_rows(a, b, vw, c, out);
        }
        Node { samples: cut_tile(&averaged, rows, columns, c, 0, nh, nw), valid: (rows, columns) }
    }

    /// A node as level `l`'s chunk (cut to the chunk's size where the level is smaller than
    /// a node), queued for the encoders.
    fn queue(&mut self, l: usize, y: u32, x: u32, node: Node) -> Result<()> {
        if l == 0 && self.external_level0 {
            return Ok(());
        }
        self.level_started(l)?;
        let (ch, cw) = self.cx.pyramid.grids[l].chunk;
        let (ch, cw) = (ch as usize, cw as usize);
        let samples = if (ch, cw) == self.node {
            node.samples
        } else {
            cut_tile(&node.samples, self.node.0, self.node.1, self.channels, 0, ch, cw)
        };
        let valid = (node.valid.0 as u32, node.valid.1 as u32);
        let mut tile = Tile { samples, valid, planes: 1 };
        let mut z = self.cx.plane.z;
        if let Some(z_average) = self.cx.z_average.as_deref_mut() {
            match z_average.add(l, y, x, z, tile) {
                Some((level_z, averaged)) => (z, tile) = (level_z, averaged),
                None => return Ok(()),
            }
        }
        if let Some(slabs) = self.cx.slabs.as_deref_mut() {
            match slabs.add(l, y, x, z, tile) {
                Some(chunk) => tile = chunk,
                None => return Ok(()),
            }
        }
        self.levels[l].queued.push(((z, y, x), tile));
        if self.levels[l].queued.len() >= self.batch {
            self.start(l)?;
        }
        Ok(())
    }

    /// Hands level `l`'s queued chunks to the encoders, storing the oldest batch first
    /// where as many are with them as may be.
    fn start(&mut self, l: usize) -> Result<()> {
        let queued = std::mem::take(&mut self.levels[l].queued);
        if queued.is_empty() {
            return Ok(());
        }
        while self.in_flight.len() >= BATCHES_IN_FLIGHT {
            let oldest = self.in_flight.pop_front().expect("a batch in flight");
            self.store(oldest)?;
        }
        let (positions, tiles): (Vec<_>, Vec<_>) = queued.into_iter().unzip();
        let grid = self.cx.pyramid.grids[l];
        let started = self.cx.encoder.start(l, tiles, grid.chunk, self.cx.plan.level_depth(l), l == 0)?;
        self.in_flight.push_back(InFlight { level: l, positions, started });
        Ok(())
    }

    /// A batch's chunks, from the encoders into the store.
    fn store(&mut self, batch: InFlight) -> Result<()> {
        let l = batch.level;
        let total = self.cx.pyramid.grids[l].chunk_count();
        let encoded = self.cx.encoder.finish(batch.started)?;
        for ((z, cy, cx), e) in batch.positions.into_iter().zip(encoded) {
            if let Some((sum, count)) = e.error {
                self.cx.error.0 += sum;
                self.cx.error.1 += count;
            }
            let bytes: u64 = e.streams.iter().map(|s| s.len() as u64).sum();
            let (plan, at) = (self.cx.plan, PlaneIndex { t: self.cx.plane.t, z });
            let key = |y: u32, x: u32, c: u32| metadata::chunk_key(plan, l, at, y, x, c);
            for (c, stream) in e.streams.into_iter().enumerate() {
                self.levels[l].store.store(self.cx.writer, &key, cy, cx, c as u32, stream)?;
            }
            let level = &mut self.levels[l];
            level.chunks_done += 1;
            level.encoded_bytes += bytes;
            self.cx.chunks_done += 1;
            let done = level.chunks_done;
            self.progress(l, Progress::Chunk { level_chunks_done: done, level_chunks_total: total })?;
        }
        Ok(())
    }

    fn progress(&mut self, l: usize, what: Progress) -> Result<()> {
        let levels = self.levels.len();
        let (plan, grids) = (self.cx.plan, &self.cx.pyramid.grids);
        let chunks_total = grids.iter().enumerate().map(|(l, g)| g.chunk_count() * plan.stack_chunks(l)).sum();
        self.cx.events.progress(l, levels, self.cx.chunks_done, chunks_total, &what)
    }

    /// After level 0's last node: encodes and stores what is left, and returns the totals,
    /// level 0's error and the chunks done.
    pub fn finish(mut self) -> Result<(Vec<LevelTotals>, (u64, u64), u64)> {
        if !self.external_level0 && self.rows_in != self.levels[0].height {
            // a source that ended early: its own check should have named the problem
            return Err(ConvertError::input(format!("the input ended after {} of its {} rows", self.rows_in, self.levels[0].height)));
        }
        if self.levels.iter().any(|level| !level.blocks.is_empty()) {
            return Err(ConvertError::input("the input ended before every part of the image was read"));
        }
        for l in 0..self.levels.len() {
            self.start(l)?;
        }
        while let Some(batch) = self.in_flight.pop_front() {
            self.store(batch)?;
        }
        for level in &mut self.levels {
            level.store.finish(self.cx.writer)?;
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
    fn z_order_visits_every_cell_once_block_by_block() {
        let cells: Vec<_> = z_order(3, 5).collect();
        assert_eq!(cells.len(), 15);
        let mut sorted = cells.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), 15);
        assert_eq!(&cells[..4], &[(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(z_order(1, 1 << 20).count(), 1 << 20);
    }

    /// The store written from `image` (h × w × c) fed as bands of rows, or as nodes in Z order.
    fn store_of(image: &[u8], (h, w, c): (usize, usize, usize), options: &[(&str, crate::ConfigValue)], z: bool) -> std::collections::BTreeMap<String, Vec<u8>> {
        use super::super::encoder::Threads;
        use super::super::events::Quiet;
        use super::super::options::ConvertOptions;
        use super::super::store::MemoryStore;
        let members = options.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let plan = ConvertOptions::parse(&crate::ConfigValue::Object(members)).unwrap().resolve(c).unwrap();
        let pyramid = super::super::levels::plan_pyramid(&plan, h as u32, w as u32).unwrap();
        let threads = Threads(2);
        let encoder = ChunkEncoder { config: plan.config.clone(), level_configs: Vec::new(), options: plan.encode_options, channels: c, planes: 1, encoders: &threads };
        let mut store = MemoryStore::default();
        let mut events = Quiet;
        let cx = Context { plan: &plan, pyramid: &pyramid, writer: &mut store, encoder: &encoder, events: &mut events, chunks_done: 0, error: (0, 0), plane: PlaneIndex::default(), z_average: None, slabs: None };
        let mut built = ChunkPyramid::new(cx, c);
        if z {
            let (nh, nw) = built.node;
            let (rows, columns) = built.cx.pyramid.grids[0].chunks;
            for (y, x) in z_order(rows, columns) {
                let y0 = y as usize * nh;
                let band = &image[y0 * w * c..(y0 + nh).min(h) * w * c];
                let node = node_of_band(band, (h - y0).min(nh), w, c, x as usize * nw, (nh, nw));
                built.add(0, y, x, node).unwrap();
            }
            built.rows_in = h;
        } else {
            for y in (0..h).step_by(5) {
                let n = 5.min(h - y);
                built.push(&image[y * w * c..(y + n) * w * c], n).unwrap();
            }
        }
        built.finish().unwrap();
        store.values
    }

    #[test]
    fn nodes_in_z_order_make_the_same_store_as_rows() {
        use crate::ConfigValue as V;
        let mut seed = 9u32;
        for (h, w, c, chunk, shard) in [(67, 45, 1, 16, None), (33, 130, 3, 16, Some(32.0)), (17, 16, 1, 16, None), (5, 300, 3, 16, None)] {
            let image: Vec<u8> = (0..h * w * c)
                .map(|i| {
                    seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                    ((i / c) % w * 3 + (i / c / w) * 2) as u8 ^ (seed >> 29) as u8
                })
                .collect();
            let mut options = vec![("chunk", V::Number(chunk.into())), ("quality", V::Number(90.0))];
            if let Some(side) = shard {
                options.push(("shard", V::Number(side)));
            }
            let rows = store_of(&image, (h, w, c), &options, false);
            let z = store_of(&image, (h, w, c), &options, true);
            assert!(rows.keys().any(|k| k.starts_with("1/c")), "{h}×{w}: several levels");
            assert_eq!(rows.keys().collect::<Vec<_>>(), z.keys().collect::<Vec<_>>(), "{h}×{w}×{c}");
            for (key, value) in &rows {
                assert!(z[key] == *value, "{h}×{w}×{c}: {key} differs");
            }
        }
    }

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
