//! The one level planner: how many levels a pyramid has, each level's shape, and its
//! chunk and shard grid.

use super::error::{ConvertError, Result};
use super::options::Plan;

/// One level's grid: chunk and shard shape (y, x) and the number of chunks (rows, columns).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub chunk: (u32, u32),
    pub shard: Option<(u32, u32)>,
    pub chunks: (u32, u32),
}

impl Grid {
    pub fn chunk_count(&self) -> u64 {
        u64::from(self.chunks.0) * u64::from(self.chunks.1)
    }

    /// Chunks per shard (rows, columns).
    pub fn per_shard(&self) -> Option<(u32, u32)> {
        self.shard.map(|(sh, sw)| (sh / self.chunk.0, sw / self.chunk.1))
    }
}

#[derive(Clone, Debug)]
pub struct Pyramid {
    /// (height, width) per level
    pub shapes: Vec<(u32, u32)>,
    pub grids: Vec<Grid>,
}

impl Pyramid {
    pub fn chunks_total(&self) -> u64 {
        self.grids.iter().map(Grid::chunk_count).sum()
    }
}

fn div_ceil(v: u32, m: u32) -> u32 {
    v.div_ceil(m)
}

pub(super) fn round_up(v: u32, m: u32) -> u32 {
    // (at most 65535 + an MCU or a shard of whole chunks: no overflow in u64)
    (u64::from(v).div_ceil(u64::from(m)) * u64::from(m)).min(u64::from(u32::MAX)) as u32
}

/// How the levels are stored in shards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shards {
    Off,
    /// shards of `side` × `side` pixels (a multiple of the chunk) at every level
    Side(u32),
    /// a level of more than AUTO_SHARD_ABOVE chunks in shards of SHARD_CHUNKS² chunks,
    /// smaller levels unsharded (a copied TIFF's default)
    Auto,
}

const AUTO_SHARD_ABOVE: u64 = 1024;
const SHARD_CHUNKS: u32 = 16;

/// What a pyramid is planned from, besides the image's size.
#[derive(Clone, Copy, Debug)]
pub struct Layout {
    /// the chunk (height, width) of full-sized levels
    pub chunk: (u32, u32),
    /// the MCU a smaller level's chunk is rounded up to
    pub mcu: (u32, u32),
    /// exactly this many levels (None: halve until one fits a chunk)
    pub levels: Option<u32>,
    pub shards: Shards,
    /// level 0's chunk is `chunk` even where the image is smaller (copied tiles)
    pub whole_level0_chunk: bool,
}

/// The number of levels: halve until the image fits one chunk, or exactly `levels` (each
/// at least 1 pixel).
pub fn level_count(height: u32, width: u32, chunk: (u32, u32), levels: Option<u32>) -> Result<u32> {
    let largest = height.max(width);
    // ceil(log2(largest)) + 1: down to a 1×1 level
    let possible = (u32::BITS - (largest - 1).leading_zeros()) + 1;
    if let Some(levels) = levels {
        if levels > possible {
            return Err(ConvertError::argument(format!(
                "levels {levels} is too many for a {height}×{width} image (at most {possible}, down to 1×1)"
            )));
        }
        return Ok(levels.max(1));
    }
    let (mut h, mut w, mut n) = (height, width, 1);
    while h > chunk.0 || w > chunk.1 {
        h = div_ceil(h, 2);
        w = div_ceil(w, 2);
        n += 1;
    }
    Ok(n)
}

/// The pyramid of every source: each level halved (rounded up); a level smaller than a
/// chunk gets a chunk rounded up to whole MCUs (the spec's SHOULD), a level smaller than a
/// shard a shard of whole chunks.
pub fn plan_levels(height: u32, width: u32, layout: &Layout) -> Result<Pyramid> {
    let n = level_count(height, width, layout.chunk, layout.levels)?;
    let mut shapes = vec![(height, width)];
    for l in 1..n as usize {
        let (h, w) = shapes[l - 1];
        shapes.push((div_ceil(h, 2), div_ceil(w, 2)));
    }
    let (ch, cw) = layout.chunk;
    let grids = shapes
        .iter()
        .enumerate()
        .map(|(l, &(h, w))| {
            let chunk = if l == 0 && layout.whole_level0_chunk {
                layout.chunk
            } else {
                (ch.min(round_up(h, layout.mcu.0)), cw.min(round_up(w, layout.mcu.1)))
            };
            let chunks = (div_ceil(h, chunk.0), div_ceil(w, chunk.1));
            let want = match layout.shards {
                Shards::Off => None,
                Shards::Side(side) => Some((side, side)),
                Shards::Auto => (u64::from(chunks.0) * u64::from(chunks.1) > AUTO_SHARD_ABOVE)
                    .then_some((SHARD_CHUNKS * chunk.0, SHARD_CHUNKS * chunk.1)),
            };
            let shard = want.map(|(sh, sw)| {
                (round_up(sh.min(round_up(h, chunk.0)), chunk.0), round_up(sw.min(round_up(w, chunk.1)), chunk.1))
            });
            Grid { chunk, shard, chunks }
        })
        .collect();
    Ok(Pyramid { shapes, grids })
}

/// The pyramid of a `height` × `width` image encoded under `plan`.
pub fn plan_pyramid(plan: &Plan, height: u32, width: u32) -> Result<Pyramid> {
    let layout = Layout {
        chunk: (plan.chunk, plan.chunk),
        mcu: plan.mcu,
        levels: plan.levels,
        shards: plan.shard.map_or(Shards::Off, Shards::Side),
        whole_level0_chunk: false,
    };
    plan_levels(height, width, &layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_until_one_chunk() {
        assert_eq!(level_count(256, 256, (256, 256), None).unwrap(), 1);
        assert_eq!(level_count(257, 100, (256, 256), None).unwrap(), 2);
        assert_eq!(level_count(12000, 12000, (256, 256), None).unwrap(), 7);
        assert_eq!(level_count(1, 1, (256, 256), Some(1)).unwrap(), 1);
        assert_eq!(
            level_count(100, 60, (256, 256), Some(9)).unwrap_err().message(),
            "levels 9 is too many for a 100×60 image (at most 8, down to 1×1)"
        );
    }

    fn tiles(chunk: (u32, u32), shards: Shards) -> Layout {
        Layout { chunk, mcu: (16, 16), levels: None, shards, whole_level0_chunk: true }
    }

    #[test]
    fn copied_tiles_keep_their_chunk_and_smaller_levels_round_to_mcus() {
        let p = plan_levels(700, 1000, &tiles((256, 256), Shards::Auto)).unwrap();
        assert_eq!(p.shapes, vec![(700, 1000), (350, 500), (175, 250)]);
        assert_eq!(p.grids[0], Grid { chunk: (256, 256), shard: None, chunks: (3, 4) });
        assert_eq!(p.grids[2], Grid { chunk: (176, 256), shard: None, chunks: (1, 1) });
        // a page smaller than its tile: level 0's chunk is still the tile
        let small = plan_levels(100, 60, &tiles((240, 176), Shards::Off)).unwrap();
        assert_eq!(small.grids, vec![Grid { chunk: (240, 176), shard: None, chunks: (1, 1) }]);
    }

    #[test]
    fn auto_shards_only_levels_of_more_than_1024_chunks() {
        let p = plan_levels(26000, 26000, &tiles((256, 256), Shards::Auto)).unwrap();
        let shards: Vec<_> = p.grids.iter().map(|g| g.shard).collect();
        assert_eq!(&shards[..3], &[Some((4096, 4096)), Some((4096, 4096)), None]);
        // a side is clipped to the level, in whole chunks
        let side = plan_levels(100, 300, &tiles((256, 256), Shards::Side(512))).unwrap();
        assert_eq!(side.grids[0].shard, Some((256, 512)));
        assert_eq!(side.grids[1].shard, Some((64, 160)));
    }
}
