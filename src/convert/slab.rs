//! What crosses z planes. A stack is read plane by plane, and each plane goes through the
//! 2-D pyramid (y and x halved per level); here, between that pyramid and the encoders:
//!
//! - [`ZAverage`]: with z halved per level too, level `l`'s plane is the mean of `2^l` planes'
//!   tiles of that level (a box of 2^l × 2^l × 2^l of level 0, rounded once), emitted with
//!   the group's last plane;
//! - [`Slabs`]: a chunk of `depth` planes is gathered, each plane's tile below the last, and
//!   goes to the encoders when its last plane (or the level's last) is in. The JPEG of such a
//!   chunk is its planes one above the other, as `reshape` folds (z, y, x) into (z·y, x).
//!
//! What they hold is bounded by the chunk depth, not the stack's: a slab of planes and one
//! plane's sums, at every level.

use std::collections::HashMap;

use super::encoder::Tile;

struct Gathering {
    samples: Vec<u8>,
    valid: (u32, u32),
}

/// The chunks of one slab of planes being gathered, by (level, chunk row, column).
pub struct Slabs {
    /// per level: z planes per chunk, and the level's z planes
    levels: Vec<(u32, u32)>,
    gathering: HashMap<(usize, u32, u32), Gathering>,
}

impl Slabs {
    /// `levels`: per level, z planes per chunk and the level's z planes.
    pub fn new(levels: Vec<(u32, u32)>) -> Slabs {
        Slabs { levels, gathering: HashMap::new() }
    }

    /// The level's plane `z`'s `tile` of chunk (y, x) of level `l`; the chunk, its depth
    /// times the tile's height, once its last plane is in. Planes past the level's last
    /// repeat it.
    pub fn add(&mut self, l: usize, y: u32, x: u32, z: u32, tile: Tile) -> Option<Tile> {
        let (depth, level_z) = self.levels[l];
        if depth == 1 {
            return Some(tile);
        }
        let first = z - z % depth;
        let planes = depth.min(level_z - first);
        let size = tile.samples.len();
        let entry = self.gathering.entry((l, y, x)).or_insert_with(|| Gathering {
            samples: Vec::with_capacity(size * depth as usize),
            valid: tile.valid,
        });
        entry.samples.extend_from_slice(&tile.samples);
        if z - first + 1 < planes {
            return None;
        }
        let mut done = self.gathering.remove(&(l, y, x)).expect("the chunk being gathered");
        for _ in planes..depth {
            done.samples.extend_from_slice(&tile.samples);
        }
        Some(Tile { samples: done.samples, valid: done.valid, planes })
    }

    /// Every chunk begun was finished.
    pub fn is_empty(&self) -> bool {
        self.gathering.is_empty()
    }
}

/// Level `l`'s plane of a z group being summed, by (level, chunk row, column).
struct Sum {
    sums: Vec<u32>,
    valid: (u32, u32),
    planes: u32,
}

/// Planes averaged along z: level `l`'s plane `k` is the mean of the level's tiles of the
/// stack's planes `k·2^l … (k+1)·2^l − 1` (those the stack has).
pub struct ZAverage {
    /// the stack's z planes
    z: u32,
    sums: HashMap<(usize, u32, u32), Sum>,
}

impl ZAverage {
    pub fn new(z: u32) -> ZAverage {
        ZAverage { z, sums: HashMap::new() }
    }

    /// Stack plane `z`'s `tile` of chunk (y, x) of level `l`: the level's plane index and its
    /// tile, once the plane's group is in.
    pub fn add(&mut self, l: usize, y: u32, x: u32, z: u32, tile: Tile) -> Option<(u32, Tile)> {
        let shift = (l as u32).min(31);
        if shift == 0 {
            return Some((z, tile));
        }
        let group = z >> shift;
        let first = group << shift;
        let planes = (1u32 << shift).min(self.z - first);
        if planes == 1 {
            return Some((group, tile));
        }
        let entry = self.sums.entry((l, y, x)).or_insert_with(|| Sum { sums: vec![0; tile.samples.len()], valid: tile.valid, planes: 0 });
        for (sum, &v) in entry.sums.iter_mut().zip(&tile.samples) {
            *sum += u32::from(v);
        }
        entry.planes += 1;
        if entry.planes < planes {
            return None;
        }
        let done = self.sums.remove(&(l, y, x)).expect("the plane being summed");
        let samples = done.sums.iter().map(|&s| ((s + planes / 2) / planes) as u8).collect();
        Some((group, Tile { samples, valid: done.valid, planes: 1 }))
    }

    /// Every group begun was finished.
    pub fn is_empty(&self) -> bool {
        self.sums.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(value: u8) -> Tile {
        Tile { samples: vec![value; 4], valid: (2, 1), planes: 1 }
    }

    #[test]
    fn a_chunk_is_its_planes_one_above_the_other() {
        let mut slabs = Slabs::new(vec![(2, 3)]);
        assert!(slabs.add(0, 0, 0, 0, tile(1)).is_none());
        let chunk = slabs.add(0, 0, 0, 1, tile(2)).expect("two planes in");
        assert_eq!(chunk.samples, [1, 1, 1, 1, 2, 2, 2, 2]);
        assert_eq!((chunk.valid, chunk.planes), ((2, 1), 2));
        // the last slab has one plane: the chunk repeats it
        let chunk = slabs.add(0, 0, 0, 2, tile(3)).expect("the stack's last plane");
        assert_eq!(chunk.samples, [3; 8]);
        assert_eq!(chunk.planes, 1);
        assert!(slabs.is_empty());
    }

    #[test]
    fn chunks_are_gathered_apart() {
        let mut slabs = Slabs::new(vec![(2, 2), (2, 2)]);
        assert!(slabs.add(0, 0, 0, 0, tile(1)).is_none());
        assert!(slabs.add(1, 0, 0, 0, tile(5)).is_none());
        assert!(!slabs.is_empty());
        assert_eq!(slabs.add(1, 0, 0, 1, tile(6)).expect("level 1").samples, [5, 5, 5, 5, 6, 6, 6, 6]);
        assert_eq!(slabs.add(0, 0, 0, 1, tile(2)).expect("level 0").samples, [1, 1, 1, 1, 2, 2, 2, 2]);
    }

    #[test]
    fn levels_average_their_groups_of_planes() {
        // 5 planes: level 1's groups are (0, 1), (2, 3), (4); level 2's (0–3), (4)
        let mut z = ZAverage::new(5);
        let t = |v: u8| Tile { samples: vec![v, v], valid: (1, 2), planes: 1 };
        assert_eq!(z.add(0, 0, 0, 3, t(9)).map(|(k, t)| (k, t.samples)), Some((3, vec![9, 9])));
        assert!(z.add(1, 0, 0, 0, t(10)).is_none());
        assert_eq!(z.add(1, 0, 0, 1, t(13)).map(|(k, t)| (k, t.samples)), Some((0, vec![12, 12]))); // 11.5 rounds up
        for (plane, v) in [(0, 1), (1, 2), (2, 3)] {
            assert!(z.add(2, 0, 0, plane, t(v)).is_none());
        }
        assert_eq!(z.add(2, 0, 0, 3, t(6)).map(|(k, t)| (k, t.samples)), Some((0, vec![3, 3])));
        assert_eq!(z.add(1, 0, 0, 4, t(7)).map(|(k, t)| (k, t.samples)), Some((2, vec![7, 7])));
        assert_eq!(z.add(2, 0, 0, 4, t(8)).map(|(k, t)| (k, t.samples)), Some((1, vec![8, 8])));
        assert!(z.is_empty());
    }
}
