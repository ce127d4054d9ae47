//! Where a conversion's files go. The core writes through [`StoreWriter`], which each
//! binding implements (a directory on disk natively, JavaScript callbacks in wasm), and
//! does no IO of its own. [`ChunkStore`] lays a level's chunks out: one key each, or
//! appended to their shard in row-major order (whatever order they come in), the shard's
//! index and CRC-32C written when its last chunk is in.

use std::collections::HashMap;

use super::error::Result;
use super::levels::Grid;

/// The store being written. Keys are `/`-separated paths within the store (`zarr.json`,
/// `0/c/0/1/2`).
pub trait StoreWriter {
    /// Writes a whole value.
    fn write(&mut self, key: &str, bytes: &[u8]) -> Result<()>;
    /// Appends to a value, creating it empty on the first append.
    fn append(&mut self, key: &str, bytes: &[u8]) -> Result<()>;
    /// No more appends to `key` will follow.
    fn close(&mut self, key: &str) -> Result<()>;
    /// Removes everything written so far (a conversion that starts again).
    fn clear(&mut self) -> Result<()>;
}

/// A store in memory, for tests and for callers that hand the values on themselves.
#[derive(Default, Debug)]
pub struct MemoryStore {
    pub values: std::collections::BTreeMap<String, Vec<u8>>,
}

impl StoreWriter for MemoryStore {
    fn write(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        self.values.insert(key.to_string(), bytes.to_vec());
        Ok(())
    }
    fn append(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        self.values.entry(key.to_string()).or_default().extend_from_slice(bytes);
        Ok(())
    }
    fn close(&mut self, _key: &str) -> Result<()> {
        Ok(())
    }
    fn clear(&mut self) -> Result<()> {
        self.values.clear();
        Ok(())
    }
}

/// CRC-32C (Castagnoli), as the `crc32c` codec of a shard index.
pub fn crc32c(bytes: &[u8]) -> u32 {
    static TABLE: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        let mut t = [0u32; 256];
        for (n, entry) in t.iter_mut().enumerate() {
            let mut c = n as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { 0x82f6_3b78 ^ (c >> 1) } else { c >> 1 };
            }
            *entry = c;
        }
        t
    });
    let mut crc = 0xffff_ffffu32;
    for &b in bytes {
        crc = table[((crc ^ u32::from(b)) & 0xff) as usize] ^ (crc >> 8);
    }
    crc ^ 0xffff_ffff
}

const EMPTY: u64 = u64::MAX;

struct Shard {
    key: String,
    rows: u32,
    cols: u32,
    opened: bool,
    offset: u64,
    /// the row-major position (in the shard's grid) to write next
    next: u32,
    index: Vec<u64>,
    /// streams (None: not stored) that came before their turn
    waiting: HashMap<u32, Option<Vec<u8>>>,
}

/// One level's chunks into a [`StoreWriter`] under `prefix` (the level's path).
pub struct ChunkStore {
    prefix: String,
    grid: Grid,
    per: Option<(u32, u32)>,
    shards: HashMap<(u32, u32, u32), Shard>,
    /// bytes handed to the writer
    pub bytes_written: u64,
}

impl ChunkStore {
    pub fn new(prefix: &str, grid: Grid) -> ChunkStore {
        ChunkStore { prefix: prefix.to_string(), grid, per: grid.per_shard(), shards: HashMap::new(), bytes_written: 0 }
    }

    /// Stores chunk (cy, cx) of plane `c` (key: its chunk key's path).
    pub fn store(&mut self, w: &mut dyn StoreWriter, key: &dyn Fn(u32, u32, u32) -> String, cy: u32, cx: u32, c: u32, bytes: Vec<u8>) -> Result<()> {
        let Some((py, px)) = self.per else {
            self.bytes_written += bytes.len() as u64;
            return w.write(&format!("{}/{}", self.prefix, key(cy, cx, c)), &bytes);
        };
        let at = (cy % py) * px + (cx % px);
        self.shard(key, cy, cx, c).waiting.insert(at, Some(bytes));
        self.advance(w, (c, cy / py, cx / px), false)
    }

    /// Records chunk (cy, cx) of plane `c` as not stored (its shard's index says so).
    pub fn skip(&mut self, w: &mut dyn StoreWriter, key: &dyn Fn(u32, u32, u32) -> String, cy: u32, cx: u32, c: u32) -> Result<()> {
        let Some((py, px)) = self.per else { return Ok(()) };
        let at = (cy % py) * px + (cx % px);
        self.shard(key, cy, cx, c).waiting.insert(at, None);
        self.advance(w, (c, cy / py, cx / px), false)
    }

    fn shard(&mut self, key: &dyn Fn(u32, u32, u32) -> String, cy: u32, cx: u32, c: u32) -> &mut Shard {
        let (py, px) = self.per.expect("sharded");
        let (sy, sx) = (cy / py, cx / px);
        let grid = self.grid;
        let prefix = &self.prefix;
        self.shards.entry((c, sy, sx)).or_insert_with(|| Shard {
            key: format!("{prefix}/{}", key(sy, sx, c)),
            rows: py.min(grid.chunks.0 - sy * py),
            cols: px.min(grid.chunks.1 - sx * px),
            opened: false,
            offset: 0,
            next: 0,
            index: vec![EMPTY; (py * px * 2) as usize],
            waiting: HashMap::new(),
        })
    }

    /// Writes the waiting streams whose turn has come; closes the shard when all are in.
    fn advance(&mut self, w: &mut dyn StoreWriter, id: (u32, u32, u32), force: bool) -> Result<()> {
        let (_, px) = self.per.expect("sharded");
        let shard = self.shards.get_mut(&id).expect("open shard");
        let end = (shard.rows - 1) * px + shard.cols;
        while shard.next < end {
            let at = shard.next;
            if at % px >= shard.cols {
                shard.next += 1;
                continue;
            }
            match shard.waiting.remove(&at) {
                None if !force => return Ok(()),
                None | Some(None) => {}
                Some(Some(bytes)) => {
                    shard.opened = true;
                    shard.index[2 * at as usize] = shard.offset;
                    shard.index[2 * at as usize + 1] = bytes.len() as u64;
                    w.append(&shard.key, &bytes)?;
                    self.bytes_written += bytes.len() as u64;
                    shard.offset += bytes.len() as u64;
                }
            }
            shard.next += 1;
        }
        let shard = self.shards.remove(&id).expect("open shard");
        if !shard.opened {
            return Ok(()); // no chunk stored: no file
        }
        let mut tail: Vec<u8> = shard.index.iter().flat_map(|v| v.to_le_bytes()).collect();
        let crc = crc32c(&tail);
        tail.extend_from_slice(&crc.to_le_bytes());
        w.append(&shard.key, &tail)?;
        self.bytes_written += tail.len() as u64;
        w.close(&shard.key)
    }

    /// After the level's last chunk: closes the shards still open (those with chunks
    /// neither stored nor skipped).
    pub fn finish(&mut self, w: &mut dyn StoreWriter) -> Result<()> {
        if self.per.is_none() {
            return Ok(());
        }
        let mut ids: Vec<_> = self.shards.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            self.advance(w, id, true)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_check_value() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
    }

    #[test]
    fn a_shard_is_written_row_major_whatever_the_order() {
        let grid = Grid { chunk: (2, 2), shard: Some((4, 4)), chunks: (2, 1) };
        let mut store = ChunkStore::new("0", grid);
        let mut w = MemoryStore::default();
        let key = |y: u32, x: u32, _c: u32| format!("c/{y}/{x}");
        store.store(&mut w, &key, 1, 0, 0, vec![2, 2]).unwrap();
        assert!(w.values.is_empty());
        store.store(&mut w, &key, 0, 0, 0, vec![1]).unwrap();
        let shard = &w.values["0/c/0/0"];
        assert_eq!(&shard[..3], &[1, 2, 2]);
        let index = &shard[3..shard.len() - 4];
        let words: Vec<u64> = index.chunks(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect();
        assert_eq!(words, vec![0, 1, EMPTY, EMPTY, 1, 2, EMPTY, EMPTY]);
        assert_eq!(&shard[shard.len() - 4..], &crc32c(index).to_le_bytes());
    }
}
