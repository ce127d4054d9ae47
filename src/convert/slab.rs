//! Chunks that span z planes. A stack is read plane by plane, so a chunk of `depth` planes
//! is gathered here: each plane's tile of it is copied below the last, and the chunk goes to
//! the encoders when its last plane (or the stack's last) is in. The JPEG of such a chunk is
//! its planes one above the other, as the `reshape` codec folds (z, y, x) into (z·y, x).
//! What this holds is bounded by the chunk depth, not the stack's: one slab of planes, every
//! level's chunks of it.

use std::collections::HashMap;

use super::encoder::Tile;

struct Gathering {
    samples: Vec<u8>,
    valid: (u32, u32),
    planes: u32,
}

/// The chunks of one slab of `depth` planes being gathered, by (level, chunk row, column).
pub struct Slabs {
    depth: u32,
    /// the stack's z planes
    z: u32,
    gathering: HashMap<(usize, u32, u32), Gathering>,
}

/// Bytes a slab holds at most: `depth` planes of every level's chunks.
pub fn slab_bytes(depth: u32, level_chunk_bytes: u64) -> u64 {
    u64::from(depth).saturating_mul(level_chunk_bytes)
}

impl Slabs {
    pub fn new(depth: u32, z: u32) -> Slabs {
        Slabs { depth, z, gathering: HashMap::new() }
    }

    /// Plane `z`'s `tile` of chunk (y, x) of level `l`; the chunk, `depth` times the tile's
    /// height, once its last plane is in. Planes past the stack's last repeat it.
    pub fn add(&mut self, l: usize, y: u32, x: u32, z: u32, tile: Tile) -> Option<Tile> {
        let first = z - z % self.depth;
        let planes = self.depth.min(self.z - first);
        let size = tile.samples.len();
        let entry = self.gathering.entry((l, y, x)).or_insert_with(|| Gathering {
            samples: Vec::with_capacity(size * self.depth as usize),
            valid: tile.valid,
            planes: 0,
        });
        entry.samples.extend_from_slice(&tile.samples);
        entry.planes += 1;
        if z - first + 1 < planes {
            return None;
        }
        let mut done = self.gathering.remove(&(l, y, x)).expect("the chunk being gathered");
        for _ in planes..self.depth {
            done.samples.extend_from_slice(&tile.samples);
        }
        Some(Tile { samples: done.samples, valid: done.valid, planes })
    }

    /// Every chunk begun was finished.
    pub fn is_empty(&self) -> bool {
        self.gathering.is_empty()
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
        let mut slabs = Slabs::new(2, 3);
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
        let mut slabs = Slabs::new(2, 2);
        assert!(slabs.add(0, 0, 0, 0, tile(1)).is_none());
        assert!(slabs.add(1, 0, 0, 0, tile(5)).is_none());
        assert!(!slabs.is_empty());
        assert_eq!(slabs.add(1, 0, 0, 1, tile(6)).expect("level 1").samples, [5, 5, 5, 5, 6, 6, 6, 6]);
        assert_eq!(slabs.add(0, 0, 0, 1, tile(2)).expect("level 0").samples, [1, 1, 1, 1, 2, 2, 2, 2]);
    }
}
