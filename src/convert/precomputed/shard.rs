//! Neuroglancer's `neuroglancer_uint64_sharded_v1` format: a scale's chunks gathered into
//! shard files, each found by its chunk id (the compressed Morton code of its grid position),
//! hashed into a shard and a minishard; the shard's fixed-size index locates the minishard's
//! index, which lists the chunks' ids, offsets and sizes. Indexes (and chunk data, where
//! the volume says so) may be gzip-compressed. Every offset and size read is checked
//! against the shard file before anything is allocated for it.

use std::cell::RefCell;

use crate::convert::error::{ConvertError, Result};
use crate::convert::json;
use crate::convert::source::{read_bytes, Folder, ReadAt};
use crate::ConfigValue as V;

/// The most bytes of minishard indexes kept decoded at once.
const INDEX_CACHE_BYTES: usize = 64 << 20;
/// The largest minishard index read (decoded): 2^22 chunks.
const MAX_MINISHARD_INDEX: u64 = 24 << 22;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Hash {
    Identity,
    Murmur3,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Encoding {
    Raw,
    Gzip,
}

/// A scale's `sharding` member.
#[derive(Clone, Debug)]
pub struct Sharding {
    pub preshift_bits: u32,
    pub hash: Hash,
    pub minishard_bits: u32,
    pub shard_bits: u32,
    pub minishard_index_encoding: Encoding,
    pub data_encoding: Encoding,
}

fn member<'v>(object: &'v [(String, V)], name: &str) -> Option<&'v V> {
    object.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

impl Sharding {
    pub fn parse(value: &V) -> std::result::Result<Sharding, String> {
        let V::Object(m) = value else { return Err(format!("must be an object, got {}", value.describe())) };
        match member(m, "@type") {
            Some(V::String(t)) if t == "neuroglancer_uint64_sharded_v1" => {}
            other => {
                return Err(format!(
                    "@type must be \"neuroglancer_uint64_sharded_v1\", got {}",
                    other.map_or("nothing".to_string(), json::compact)
                ))
            }
        }
        let bits = |name: &str, max: u32| -> std::result::Result<u32, String> {
            match member(m, name) {
                Some(V::Number(n)) if n.fract() == 0.0 && *n >= 0.0 && *n <= f64::from(max) => Ok(*n as u32),
                other => Err(format!("{name} must be an integer from 0 to {max}, got {}", other.map_or("nothing".to_string(), json::compact))),
            }
        };
        let encoding = |name: &str| -> std::result::Result<Encoding, String> {
            match member(m, name) {
                None => Ok(Encoding::Raw),
                Some(V::String(e)) if e == "raw" => Ok(Encoding::Raw),
                Some(V::String(e)) if e == "gzip" => Ok(Encoding::Gzip),
                Some(other) => Err(format!("{name} must be \"raw\" or \"gzip\", got {}", json::compact(other))),
            }
        };
        let hash = match member(m, "hash") {
            Some(V::String(h)) if h == "identity" => Hash::Identity,
            Some(V::String(h)) if h == "murmurhash3_x86_128" => Hash::Murmur3,
            other => {
                return Err(format!(
                    "hash must be \"identity\" or \"murmurhash3_x86_128\", got {}",
                    other.map_or("nothing".to_string(), json::compact)
                ))
            }
        };
        let sharding = Sharding {
            preshift_bits: bits("preshift_bits", 64)?,
            hash,
            // (a shard index holds 2^minishard_bits entries: 2^24 of them is 256 MiB)
            minishard_bits: bits("minishard_bits", 24)?,
            shard_bits: bits("shard_bits", 64)?,
            minishard_index_encoding: encoding("minishard_index_encoding")?,
            data_encoding: encoding("data_encoding")?,
        };
        if sharding.minishard_bits + sharding.shard_bits > 64 {
            return Err(format!("minishard_bits + shard_bits = {} is more than 64", sharding.minishard_bits + sharding.shard_bits));
        }
        Ok(sharding)
    }

    /// The shard and minishard of chunk `id`.
    pub fn locate(&self, id: u64) -> (u64, u64) {
        let shifted = id.checked_shr(self.preshift_bits).unwrap_or(0);
        let hashed = match self.hash {
            Hash::Identity => shifted,
            Hash::Murmur3 => murmur3_x86_128_low64(shifted),
        };
        let mask = |bits: u32| if bits >= 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let minishard = hashed & mask(self.minishard_bits);
        let shard = hashed.checked_shr(self.minishard_bits).unwrap_or(0) & mask(self.shard_bits);
        (shard, minishard)
    }

    /// A shard's file name: its number in hexadecimal, ⌈shard_bits / 4⌉ digits, `.shard`.
    pub fn shard_name(&self, shard: u64) -> String {
        let digits = self.shard_bits.div_ceil(4) as usize;
        format!("{shard:0digits$x}.shard")
    }

    fn index_bytes(&self) -> u64 {
        16u64 << self.minishard_bits
    }
}

/// A chunk's id: the bits of its grid position interleaved x, y, z from the lowest, each
/// axis giving only the ⌈log2(grid)⌉ bits it needs (the compressed Morton code).
pub fn chunk_id(at: [u64; 3], grid: [u64; 3]) -> u64 {
    let bits = grid.map(|n| 64 - n.saturating_sub(1).leading_zeros());
    let (mut code, mut j) = (0u64, 0u32);
    for i in 0..bits.iter().copied().max().unwrap_or(0) {
        for d in 0..3 {
            if i < bits[d] {
                code |= ((at[d] >> i) & 1) << j;
                j += 1;
            }
        }
    }
    code
}

/// The low 64 bits of MurmurHash3_x86_128 (seed 0) of `key`'s 8 little-endian bytes.
pub fn murmur3_x86_128_low64(key: u64) -> u64 {
    const C1: u32 = 0x239b_961b;
    const C2: u32 = 0xab0e_9789;
    const C3: u32 = 0x38b3_4ae5;
    fn fmix(mut h: u32) -> u32 {
        h ^= h >> 16;
        h = h.wrapping_mul(0x85eb_ca6b);
        h ^= h >> 13;
        h = h.wrapping_mul(0xc2b2_ae35);
        h ^ (h >> 16)
    }
    let (mut h1, mut h2, mut h3, mut h4) = (0u32, 0u32, 0u32, 0u32);
    // 8 bytes: no 16-byte block, a tail of k1 (bytes 0–3) and k2 (bytes 4–7)
    let k2 = ((key >> 32) as u32).wrapping_mul(C2).rotate_left(16).wrapping_mul(C3);
    h2 ^= k2;
    let k1 = (key as u32).wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    h1 ^= k1;
    for h in [&mut h1, &mut h2, &mut h3, &mut h4] {
        *h ^= 8;
    }
    h1 = h1.wrapping_add(h2).wrapping_add(h3).wrapping_add(h4);
    h2 = h2.wrapping_add(h1);
    h3 = h3.wrapping_add(h1);
    h4 = h4.wrapping_add(h1);
    h1 = fmix(h1);
    h2 = fmix(h2);
    h3 = fmix(h3);
    h4 = fmix(h4);
    h1 = h1.wrapping_add(h2).wrapping_add(h3).wrapping_add(h4);
    h2 = h2.wrapping_add(h1);
    u64::from(h1) | (u64::from(h2) << 32)
}

/// A gzip stream's contents (one member), at most `limit` bytes.
pub fn gunzip(bytes: &[u8], limit: usize, what: &str) -> Result<Vec<u8>> {
    let bad = |why: &str| ConvertError::input(format!("{what}: not a valid gzip stream ({why})"));
    if bytes.len() < 18 || bytes[0] != 0x1f || bytes[1] != 0x8b || bytes[2] != 8 {
        return Err(bad("no gzip header"));
    }
    let flags = bytes[3];
    let mut at = 10usize;
    let need = |at: usize| if at > bytes.len() { Err(bad("its header is cut short")) } else { Ok(at) };
    if flags & 4 != 0 {
        need(at + 2)?;
        let n = usize::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]));
        at = need(at + 2 + n)?;
    }
    for flag in [8u8, 16] {
        if flags & flag != 0 {
            let end = bytes[at..].iter().position(|&b| b == 0).ok_or_else(|| bad("its header is cut short"))?;
            at += end + 1;
        }
    }
    if flags & 2 != 0 {
        at = need(at + 2)?;
    }
    let body = bytes.get(at..).ok_or_else(|| bad("its header is cut short"))?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(body, limit).map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
            ConvertError::input(format!("{what}: decompresses to more than {} MiB", limit >> 20))
        }
        _ => bad("its deflate data are corrupt or cut short"),
    })
}

/// One chunk's place in its shard: offset (from the end of the shard index) and size.
type Entry = (u64, u64, u64);

/// Reads a sharded scale's chunks by id.
pub struct ShardReader<'f> {
    folder: &'f dyn Folder,
    /// the scale's folder (messages and paths)
    key: String,
    volume: String,
    sharding: Sharding,
    /// recently used shard files (None: absent)
    files: RefCell<Vec<(u64, Option<Box<dyn ReadAt + 'f>>)>>,
    /// recently used minishard indexes: (shard, minishard) → entries sorted by id
    indexes: RefCell<Vec<((u64, u64), Vec<Entry>)>>,
}

impl<'f> ShardReader<'f> {
    pub fn new(folder: &'f dyn Folder, volume: &str, key: &str, sharding: Sharding) -> ShardReader<'f> {
        ShardReader {
            folder,
            key: key.to_string(),
            volume: volume.to_string(),
            sharding,
            files: RefCell::new(Vec::new()),
            indexes: RefCell::new(Vec::new()),
        }
    }

    fn shard_label(&self, shard: u64) -> String {
        format!("{}/{}/{}", self.volume, self.key, self.sharding.shard_name(shard))
    }

    fn with_file<R>(&self, shard: u64, f: impl FnOnce(Option<&dyn ReadAt>) -> Result<R>) -> Result<R> {
        let mut files = self.files.borrow_mut();
        let at = match files.iter().position(|(s, _)| *s == shard) {
            Some(at) => at,
            None => {
                let path = format!("{}/{}", self.key, self.sharding.shard_name(shard));
                let opened = self
                    .folder
                    .open(&path)
                    .map_err(|e| ConvertError::input(format!("cannot read {}: {e}", self.shard_label(shard))))?;
                if files.len() >= 8 {
                    files.remove(0);
                }
                files.push((shard, opened));
                files.len() - 1
            }
        };
        f(files[at].1.as_deref())
    }

    fn read(&self, file: &dyn ReadAt, shard: u64, offset: u64, length: u64, what: &str) -> Result<Vec<u8>> {
        let label = self.shard_label(shard);
        let end = offset.checked_add(length).filter(|&e| e <= file.size()).ok_or_else(|| {
            ConvertError::input(format!(
                "{label}: {what} at bytes {offset}–{} lies past the end of the file ({} bytes): the shard is truncated or its index is corrupt",
                offset.saturating_add(length),
                file.size()
            ))
        })?;
        let bytes = read_bytes(file, offset, length as usize).map_err(|e| ConvertError::input(format!("cannot read {label}: {e}")))?;
        if bytes.len() as u64 != end - offset {
            return Err(ConvertError::input(format!("{label}: {what} is cut short")));
        }
        Ok(bytes)
    }

    /// The minishard's entries (sorted by chunk id).
    fn minishard(&self, file: &dyn ReadAt, shard: u64, minishard: u64) -> Result<Vec<Entry>> {
        if let Some((_, entries)) = self.indexes.borrow().iter().find(|(k, _)| *k == (shard, minishard)) {
            return Ok(entries.clone());
        }
        let label = self.shard_label(shard);
        let index_bytes = self.sharding.index_bytes();
        let at = self.read(file, shard, minishard * 16, 16, "the shard index")?;
        let start = u64::from_le_bytes(at[..8].try_into().expect("8 bytes"));
        let end = u64::from_le_bytes(at[8..].try_into().expect("8 bytes"));
        if end < start {
            return Err(ConvertError::input(format!("{label}: minishard {minishard}'s index ends ({end}) before it starts ({start})")));
        }
        let mut entries = Vec::new();
        if end > start {
            if end - start > MAX_MINISHARD_INDEX {
                return Err(ConvertError::input(format!("{label}: minishard {minishard}'s index of {} bytes is larger than this converter reads", end - start)));
            }
            let offset = index_bytes.checked_add(start).ok_or_else(|| ConvertError::input(format!("{label}: a minishard index offset past 2^64")))?;
            let raw = self.read(file, shard, offset, end - start, &format!("minishard {minishard}'s index"))?;
            let decoded = match self.sharding.minishard_index_encoding {
                Encoding::Raw => raw,
                Encoding::Gzip => gunzip(&raw, MAX_MINISHARD_INDEX as usize, &format!("{label}: minishard {minishard}'s index"))?,
            };
            if decoded.len() % 24 != 0 {
                return Err(ConvertError::input(format!(
                    "{label}: minishard {minishard}'s index has {} bytes, not a multiple of 24 (3 × 8 bytes per chunk)",
                    decoded.len()
                )));
            }
            let n = decoded.len() / 24;
            let word = |i: usize| u64::from_le_bytes(decoded[8 * i..8 * i + 8].try_into().expect("8 bytes"));
            let (mut id, mut position) = (0u64, 0u64);
            for i in 0..n {
                let overflow = || ConvertError::input(format!("{label}: minishard {minishard}'s index overflows 64 bits"));
                id = id.checked_add(word(i)).ok_or_else(overflow)?;
                let offset = position.checked_add(word(n + i)).ok_or_else(overflow)?;
                let size = word(2 * n + i);
                position = offset.checked_add(size).ok_or_else(overflow)?;
                entries.push((id, offset, size));
            }
            entries.sort_unstable_by_key(|e| e.0);
        }
        let mut cache = self.indexes.borrow_mut();
        let mut held: usize = cache.iter().map(|(_, e)| e.len() * 24).sum();
        while held + entries.len() * 24 > INDEX_CACHE_BYTES && !cache.is_empty() {
            held -= cache.remove(0).1.len() * 24;
        }
        cache.push(((shard, minishard), entries.clone()));
        Ok(entries)
    }

    /// Chunk `id`'s stored bytes (gunzipped where the data are), None when the shard does not
    /// hold it; `label` names the chunk in messages; at most `limit` bytes.
    pub fn chunk(&self, id: u64, label: &str, limit: u64) -> Result<Option<Vec<u8>>> {
        let (shard, minishard) = self.sharding.locate(id);
        self.with_file(shard, |file| {
            let Some(file) = file else { return Ok(None) };
            let entries = self.minishard(file, shard, minishard)?;
            let Ok(i) = entries.binary_search_by_key(&id, |e| e.0) else { return Ok(None) };
            let (_, offset, size) = entries[i];
            if size > limit {
                return Err(ConvertError::input(format!(
                    "{}: {label} is {size} bytes, more than a chunk of its size can be ({limit})",
                    self.shard_label(shard)
                )));
            }
            let at = offset.checked_add(self.sharding.index_bytes()).ok_or_else(|| ConvertError::input("a chunk offset past 2^64"))?;
            let bytes = self.read(file, shard, at, size, label)?;
            match self.sharding.data_encoding {
                Encoding::Raw => Ok(Some(bytes)),
                Encoding::Gzip => gunzip(&bytes, limit as usize, &format!("{}: {label}", self.shard_label(shard))).map(Some),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_morton_codes() {
        // a 3 × 2 × 3 grid: x and z take 2 bits, y 1
        assert_eq!(chunk_id([0, 0, 0], [3, 2, 3]), 0);
        assert_eq!(chunk_id([1, 0, 0], [3, 2, 3]), 0b1);
        assert_eq!(chunk_id([0, 1, 0], [3, 2, 3]), 0b10);
        assert_eq!(chunk_id([0, 0, 1], [3, 2, 3]), 0b100);
        assert_eq!(chunk_id([2, 0, 0], [3, 2, 3]), 0b1000);
        assert_eq!(chunk_id([0, 0, 2], [3, 2, 3]), 0b10000);
        // an axis of one chunk gives no bits
        assert_eq!(chunk_id([1, 0, 1], [2, 1, 2]), 0b11);
    }

    #[test]
    fn murmur3_matches_the_reference() {
        // the first 8 bytes of MurmurHash3_x86_128 (seed 0) as the mmh3 package computes it
        assert_eq!(murmur3_x86_128_low64(0), 0x4772_b084_e028_ae41);
        assert_eq!(murmur3_x86_128_low64(7), 0xdd7c_2bae_7398_2156);
        assert_eq!(murmur3_x86_128_low64(12345), 0x1d31_307e_3a65_e510);
    }

    #[test]
    fn shard_names_have_a_digit_per_four_bits() {
        let s = Sharding::parse(&serde_json::from_str(r#"{"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 0, "hash": "identity", "minishard_bits": 1, "shard_bits": 5}"#).unwrap()).unwrap();
        assert_eq!((s.shard_name(3), s.locate(7)), ("03.shard".to_string(), (3, 1)));
        let e = Sharding::parse(&serde_json::from_str(r#"{"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 0, "hash": "md5", "minishard_bits": 1, "shard_bits": 5}"#).unwrap()).unwrap_err();
        assert!(e.contains("hash must be"), "{e}");
    }

    #[test]
    fn gzip_members_round_trip_and_bad_ones_are_named() {
        let body = miniz_oxide::deflate::compress_to_vec(b"hello hello hello", 6);
        let mut gz = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        gz.extend_from_slice(&body);
        gz.extend_from_slice(&[0; 8]);
        assert_eq!(gunzip(&gz, 100, "x").unwrap(), b"hello hello hello");
        assert!(gunzip(&gz, 5, "x").unwrap_err().message().contains("more than"));
        assert!(gunzip(&gz[..12], 100, "x").unwrap_err().message().contains("not a valid gzip"));
    }
}
