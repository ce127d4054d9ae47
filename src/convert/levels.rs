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

/// The number of levels: halve until the image fits one chunk, or exactly `levels` (each
/// at least 1 pixel).
pub fn level_count(height: u32, width: u32, chunk: u32, levels: Option<u32>) -> Result<u32> {
    let largest = height.max(width);
    // ceil(log2(largest)) + 1: down to a 1×1 level
    let possible = (u32::BITS - (largest - 1).leading_zeros()) + 1;
    if let Some(levels) = levels {
        if levels > possible {
            return Err(ConvertError::argument(format!(
                "levels {levels} is too many for a {height}×{width} image (at most {possible}, down to 1×1)"
            )));
        }
        return Ok(levels);
    }
    let (mut h, mut w, mut n) = (height, width, 1);
    while h > chunk || w > chunk {
        h = div_ceil(h, 2);
        w = div_ceil(w, 2);
        n += 1;
    }
    Ok(n)
}

/// The pyramid of a `height` × `width` image under `plan`: each level halved (rounded up);
/// a level smaller than a chunk gets a chunk rounded up to whole MCUs (the spec's SHOULD),
/// a level smaller than a shard a shard of whole chunks.
pub fn plan_pyramid(plan: &Plan, height: u32, width: u32) -> Result<Pyramid> {
    let n = level_count(height, width, plan.chunk, plan.levels)?;
    let mut shapes = vec![(height, width)];
    for l in 1..n as usize {
        let (h, w) = shapes[l - 1];
        shapes.push((div_ceil(h, 2), div_ceil(w, 2)));
    }
    let grids = shapes
        .iter()
        .map(|&(h, w)| {
            let chunk = (plan.chunk.min(round_up(h, plan.mcu.0)), plan.chunk.min(round_up(w, plan.mcu.1)));
            let shard = plan.shard.map(|s| (s.min(round_up(h, chunk.0)), s.min(round_up(w, chunk.1))));
            Grid { chunk, shard, chunks: (div_ceil(h, chunk.0), div_ceil(w, chunk.1)) }
        })
        .collect();
    Ok(Pyramid { shapes, grids })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_until_one_chunk() {
        assert_eq!(level_count(256, 256, 256, None).unwrap(), 1);
        assert_eq!(level_count(257, 100, 256, None).unwrap(), 2);
        assert_eq!(level_count(12000, 12000, 256, None).unwrap(), 7);
        assert_eq!(level_count(1, 1, 256, Some(1)).unwrap(), 1);
        assert_eq!(
            level_count(100, 60, 256, Some(9)).unwrap_err().message(),
            "levels 9 is too many for a 100×60 image (at most 8, down to 1×1)"
        );
    }
}
