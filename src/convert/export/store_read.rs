//! A JPEG OME-Zarr 0.5 image read back through the folder seam: its multiscale (axes, each
//! level's scale and translation), each level's array metadata (shape, chunks, key encoding,
//! codecs, with or without `sharding_indexed`) and its chunks' stored JPEG streams. What the
//! codecs before `jpeg` do to a chunk is worked out, so the caller knows which image each
//! stream holds. Every size read is checked before it is allocated.

use std::cell::RefCell;

use crate::convert::error::{ConvertError, Result};
use crate::convert::json;
use crate::convert::source::{read_bytes, Folder, ReadAt};
use crate::convert::store::crc32c;
use crate::reshape::reshape_shape;
use crate::{ConfigValue as V, JpegConfig};

/// The largest `zarr.json` read.
const MAX_METADATA_BYTES: u64 = 16 << 20;
/// The largest shard index read (2^22 chunks).
const MAX_SHARD_CHUNKS: u64 = 1 << 22;

pub fn member<'v>(object: &'v V, name: &str) -> Option<&'v V> {
    match object {
        V::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
    }
}

fn integers(value: Option<&V>) -> Option<Vec<u64>> {
    match value {
        Some(V::Array(items)) => items
            .iter()
            .map(|v| match v {
                V::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n < 9.007e15 => Some(*n as u64),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

fn numbers(value: Option<&V>) -> Option<Vec<f64>> {
    match value {
        Some(V::Array(items)) => items.iter().map(|v| if let V::Number(n) = v { Some(*n) } else { None }).collect(),
        _ => None,
    }
}

/// Reads and parses the JSON file `path` of the store named `store` in messages.
pub fn read_json(folder: &dyn Folder, store: &str, path: &str) -> Result<V> {
    let shown = format!("{store}/{path}");
    let file = folder.open(path).map_err(|e| ConvertError::input(format!("cannot read {shown}: {e}")))?;
    let file = file.ok_or_else(|| ConvertError::input(format!("{shown} does not exist: is {store} a Zarr v3 store?")))?;
    if file.size() > MAX_METADATA_BYTES {
        return Err(ConvertError::input(format!("{shown} is {} bytes, more than Zarr metadata can be here (16 MiB)", file.size())));
    }
    let bytes = read_bytes(&*file, 0, file.size() as usize).map_err(|e| ConvertError::input(format!("cannot read {shown}: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| ConvertError::input(format!("{shown}: not JSON ({e})")))
}

/// One axis of the multiscale.
#[derive(Clone, Debug)]
pub struct Axis {
    pub name: String,
    pub unit: Option<String>,
}

/// One level: its array, and where it sits in space.
pub struct Level {
    pub path: String,
    pub scale: Vec<f64>,
    pub translation: Vec<f64>,
    pub array: ArrayMeta,
}

/// What the codecs make of a chunk before `jpeg`.
#[derive(Clone, Debug)]
pub struct ChunkImage {
    /// the image handed to the jpeg codec: (height, width[, components])
    pub shape: Vec<u64>,
    /// the chunk's axes (array order) in the order the image's samples run (after transposes)
    pub order: Vec<usize>,
}

/// A level's array metadata.
pub struct ArrayMeta {
    pub shape: Vec<u64>,
    /// the chunk (the inner chunk of a shard)
    pub chunk: Vec<u64>,
    /// chunks per shard along each axis (None: not sharded)
    pub per_shard: Option<Vec<u64>>,
    pub index_at_start: bool,
    /// the shard index ends with its CRC-32C
    pub index_crc: bool,
    pub config: JpegConfig,
    pub image: ChunkImage,
    pub fill_value: u8,
    separator: char,
    /// "c/" before the indices (the default encoding) or nothing (v2)
    prefix: &'static str,
}

impl ArrayMeta {
    fn key(&self, indices: &[u64]) -> String {
        let parts: Vec<String> = indices.iter().map(u64::to_string).collect();
        let joined = parts.join(&self.separator.to_string());
        match self.prefix {
            "" if joined.is_empty() => "0".into(),
            "" => joined,
            _ if joined.is_empty() => "c".into(),
            _ => format!("c{}{joined}", self.separator),
        }
    }
}

/// A whole OME-Zarr image: its axes and levels.
pub struct Image {
    pub axes: Vec<Axis>,
    pub levels: Vec<Level>,
}

/// Reads the image's metadata (named `store` in messages).
pub fn open(folder: &dyn Folder, store: &str) -> Result<Image> {
    let root = read_json(folder, store, "zarr.json")?;
    let bad = |what: String| ConvertError::input(format!("{store}/zarr.json: {what}"));
    if member(&root, "zarr_format") != Some(&V::Number(3.0)) || member(&root, "node_type") != Some(&V::String("group".into())) {
        return Err(bad("not a Zarr v3 group (zarr_format 3, node_type \"group\"): an OME-Zarr 0.5 image is one".into()));
    }
    let ms = member(&root, "attributes")
        .and_then(|a| member(a, "ome"))
        .and_then(|o| member(o, "multiscales"))
        .and_then(|m| if let V::Array(items) = m { items.first() } else { None })
        .ok_or_else(|| bad("has no attributes.ome.multiscales (an OME-Zarr 0.5 image)".into()))?;
    let axes = match member(ms, "axes") {
        Some(V::Array(items)) => items
            .iter()
            .map(|a| match member(a, "name") {
                Some(V::String(name)) => Ok(Axis {
                    name: name.clone(),
                    unit: match member(a, "unit") {
                        Some(V::String(u)) => Some(u.clone()),
                        _ => None,
                    },
                }),
                _ => Err(bad(format!("an axis without a name: {}", json::compact(a)))),
            })
            .collect::<Result<Vec<_>>>()?,
        _ => return Err(bad("the multiscale has no axes".into())),
    };
    let datasets = match member(ms, "datasets") {
        Some(V::Array(items)) if !items.is_empty() => items,
        _ => return Err(bad("the multiscale has no datasets".into())),
    };
    let mut levels = Vec::new();
    for d in datasets {
        let path = match member(d, "path") {
            Some(V::String(p)) if !p.is_empty() && !p.split('/').any(|s| s.is_empty() || s == "." || s == "..") && !p.contains('\\') => p.clone(),
            other => return Err(bad(format!("a dataset path must be a relative path within the store, got {}", other.map_or("nothing".into(), json::compact)))),
        };
        let (mut scale, mut translation) = (vec![1.0; axes.len()], vec![0.0; axes.len()]);
        if let Some(V::Array(transforms)) = member(d, "coordinateTransformations") {
            for t in transforms {
                let field = match member(t, "type") {
                    Some(V::String(k)) if k == "scale" => numbers(member(t, "scale")).map(|v| (v, true)),
                    Some(V::String(k)) if k == "translation" => numbers(member(t, "translation")).map(|v| (v, false)),
                    _ => None,
                };
                match field {
                    Some((v, true)) if v.len() == axes.len() => scale = v,
                    Some((v, false)) if v.len() == axes.len() => translation = v,
                    _ => return Err(bad(format!("dataset {path}: a coordinate transformation this reader does not take: {}", json::compact(t)))),
                }
            }
        }
        let array = read_array(folder, store, &path, axes.len())?;
        levels.push(Level { path, scale, translation, array });
    }
    Ok(Image { axes, levels })
}

fn read_array(folder: &dyn Folder, store: &str, path: &str, rank: usize) -> Result<ArrayMeta> {
    let meta = read_json(folder, store, &format!("{path}/zarr.json"))?;
    let bad = |what: String| ConvertError::input(format!("{store}/{path}/zarr.json: {what}"));
    if member(&meta, "node_type") != Some(&V::String("array".into())) {
        return Err(bad("not a Zarr v3 array".into()));
    }
    if member(&meta, "data_type") != Some(&V::String("uint8".into())) {
        return Err(bad(format!("data_type {}: JPEG chunks hold uint8", member(&meta, "data_type").map_or("missing".into(), json::compact))));
    }
    let shape = integers(member(&meta, "shape")).filter(|s| s.len() == rank).ok_or_else(|| bad(format!("shape must be {rank} integers (one per axis)")))?;
    let grid = member(&meta, "chunk_grid");
    let outer = match grid.and_then(|g| member(g, "name")) {
        Some(V::String(n)) if n == "regular" => integers(grid.and_then(|g| member(g, "configuration")).and_then(|c| member(c, "chunk_shape"))),
        _ => None,
    };
    let outer = outer.filter(|c| c.len() == rank && c.iter().all(|&n| n > 0)).ok_or_else(|| bad("chunk_grid must be regular, with a positive chunk length per axis".into()))?;
    let encoding = member(&meta, "chunk_key_encoding");
    let separator = match encoding.and_then(|e| member(e, "configuration")).and_then(|c| member(c, "separator")) {
        None => None,
        Some(V::String(s)) if s == "/" => Some('/'),
        Some(V::String(s)) if s == "." => Some('.'),
        Some(other) => return Err(bad(format!("chunk_key_encoding separator {} is neither \"/\" nor \".\"", json::compact(other)))),
    };
    let (prefix, separator) = match encoding.and_then(|e| member(e, "name")) {
        Some(V::String(n)) if n == "default" => ("c", separator.unwrap_or('/')),
        Some(V::String(n)) if n == "v2" => ("", separator.unwrap_or('.')),
        other => return Err(bad(format!("chunk_key_encoding {} is neither \"default\" nor \"v2\"", other.map_or("missing".into(), json::compact)))),
    };
    let fill_value = match member(&meta, "fill_value") {
        Some(V::Number(n)) if n.fract() == 0.0 && (0.0..=255.0).contains(n) => *n as u8,
        other => return Err(bad(format!("fill_value {} is not a uint8", other.map_or("missing".into(), json::compact)))),
    };
    let codecs = match member(&meta, "codecs") {
        Some(V::Array(c)) => c,
        _ => return Err(bad("has no codecs".into())),
    };
    let named = |c: &V| match member(c, "name") {
        Some(V::String(n)) => n.clone(),
        _ => String::new(),
    };
    let (chunk, inner, per_shard, index_at_start) = match codecs.as_slice() {
        [sharding] if named(sharding) == "sharding_indexed" => {
            let conf = member(sharding, "configuration").ok_or_else(|| bad("sharding_indexed has no configuration".into()))?;
            let chunk = integers(member(conf, "chunk_shape"))
                .filter(|c| c.len() == rank && c.iter().zip(&outer).all(|(&i, &o)| i > 0 && o % i == 0))
                .ok_or_else(|| bad("sharding_indexed's chunk_shape must divide the shard's on every axis".into()))?;
            let inner = match member(conf, "codecs") {
                Some(V::Array(c)) => c.clone(),
                _ => return Err(bad("sharding_indexed has no codecs".into())),
            };
            let index_codecs: Vec<String> = match member(conf, "index_codecs") {
                Some(V::Array(c)) => c.iter().map(named).collect(),
                _ => Vec::new(),
            };
            if index_codecs != ["bytes", "crc32c"] && index_codecs != ["bytes"] {
                return Err(bad(format!("sharding_indexed's index_codecs {index_codecs:?}: this reader takes bytes (and crc32c)")));
            }
            let at_start = matches!(member(conf, "index_location"), Some(V::String(l)) if l == "start");
            let per: Vec<u64> = outer.iter().zip(&chunk).map(|(o, i)| o / i).collect();
            if per.iter().product::<u64>() > MAX_SHARD_CHUNKS {
                return Err(bad("a shard of more than 2^22 chunks".into()));
            }
            (chunk, inner, Some((per, index_codecs.len() == 2)), at_start)
        }
        _ => (outer.clone(), codecs.clone(), None, false),
    };
    // the codecs: transposes and reshapes, then jpeg, then nothing
    let mut image_shape = chunk.clone();
    let mut order: Vec<usize> = (0..rank).collect();
    let mut config = None;
    for (i, c) in inner.iter().enumerate() {
        let name = named(c);
        let conf = member(c, "configuration").cloned().unwrap_or(V::Object(Vec::new()));
        match name.as_str() {
            "transpose" if config.is_none() => {
                let o = integers(member(&conf, "order"))
                    .filter(|o| o.len() == image_shape.len() && { let mut s = o.clone(); s.sort_unstable(); s.iter().enumerate().all(|(i, &v)| v == i as u64) })
                    .ok_or_else(|| bad(format!("a transpose order {} is not a permutation of the chunk's axes", json::compact(&conf))))?;
                if image_shape.len() != rank {
                    return Err(bad("a transpose after a reshape: this reader follows transposes of the chunk's own axes".into()));
                }
                image_shape = o.iter().map(|&a| image_shape[a as usize]).collect();
                order = o.iter().map(|&a| order[a as usize]).collect();
            }
            "reshape" if config.is_none() => {
                image_shape = reshape_shape(&conf, &image_shape).map_err(|e| bad(e))?;
            }
            "jpeg" if config.is_none() => {
                config = Some(JpegConfig::parse(&conf).map_err(|e| bad(format!("the jpeg codec's configuration: {e}")))?);
            }
            _ => {
                return Err(bad(format!(
                    "codec {} ({}): this reader takes chunks of transpose and reshape codecs, then jpeg, and nothing after",
                    i,
                    if name.is_empty() { "unnamed".to_string() } else { name }
                )))
            }
        }
    }
    let config = config.ok_or_else(|| bad("the chunks are not JPEG images (no jpeg codec)".into()))?;
    let (per_shard, index_crc) = match per_shard {
        Some((per, crc)) => (Some(per), crc),
        None => (None, false),
    };
    Ok(ArrayMeta {
        shape,
        chunk,
        per_shard,
        index_at_start,
        index_crc,
        config,
        image: ChunkImage { shape: image_shape, order },
        fill_value,
        separator,
        prefix,
    })
}

/// Reads one level's chunk streams (through its shards, where it has them).
pub struct ChunkReader<'f> {
    folder: &'f dyn Folder,
    store: String,
    path: String,
    /// recently read shard indexes: shard indices → (offset, size) per chunk
    shards: RefCell<Vec<(Vec<u64>, Vec<(u64, u64)>)>>,
}

impl<'f> ChunkReader<'f> {
    pub fn new(folder: &'f dyn Folder, store: &str, path: &str) -> ChunkReader<'f> {
        ChunkReader { folder, store: store.to_string(), path: path.to_string(), shards: RefCell::new(Vec::new()) }
    }

    fn open(&self, key: &str) -> Result<Option<Box<dyn ReadAt + 'f>>> {
        let path = format!("{}/{key}", self.path);
        self.folder.open(&path).map_err(|e| ConvertError::input(format!("cannot read {}/{path}: {e}", self.store)))
    }

    /// Chunk `indices`' stream (None: not stored), at most `limit` bytes.
    pub fn chunk(&self, meta: &ArrayMeta, indices: &[u64], limit: u64) -> Result<Option<Vec<u8>>> {
        let Some(per) = &meta.per_shard else {
            let key = meta.key(indices);
            let Some(file) = self.open(&key)? else { return Ok(None) };
            if file.size() > limit {
                return Err(ConvertError::input(format!("{}/{}/{key}: {} bytes, more than a JPEG of its chunk can be", self.store, self.path, file.size())));
            }
            return read_bytes(&*file, 0, file.size() as usize).map(Some).map_err(|e| ConvertError::input(format!("cannot read {}/{}/{key}: {e}", self.store, self.path)));
        };
        let shard: Vec<u64> = indices.iter().zip(per).map(|(i, p)| i / p).collect();
        // the chunk's place in its shard's index: row-major over the shard's chunks
        let within = indices.iter().zip(per).fold(0u64, |at, (i, p)| at * p + i % p);
        let key = meta.key(&shard);
        let label = format!("{}/{}/{key}", self.store, self.path);
        let Some(file) = self.open(&key)? else { return Ok(None) };
        let n = per.iter().product::<u64>();
        let mut cache = self.shards.borrow_mut();
        let at = match cache.iter().position(|(s, _)| *s == shard) {
            Some(at) => at,
            None => {
                let index_bytes = n * 16 + if meta.index_crc { 4 } else { 0 };
                if file.size() < index_bytes {
                    return Err(ConvertError::input(format!("{label}: {} bytes, shorter than its index ({index_bytes} bytes): a truncated shard", file.size())));
                }
                let start = if meta.index_at_start { 0 } else { file.size() - index_bytes };
                let raw = read_bytes(&*file, start, index_bytes as usize).map_err(|e| ConvertError::input(format!("cannot read {label}: {e}")))?;
                let (words, crc) = raw.split_at((n * 16) as usize);
                if crc.len() == 4 && crc32c(words).to_le_bytes() != crc {
                    return Err(ConvertError::input(format!("{label}: the shard index's CRC-32C does not match: a corrupt or truncated shard")));
                }
                let entries = words
                    .chunks_exact(16)
                    .map(|e| (u64::from_le_bytes(e[..8].try_into().expect("8")), u64::from_le_bytes(e[8..].try_into().expect("8"))))
                    .collect();
                if cache.len() >= 16 {
                    cache.remove(0);
                }
                cache.push((shard.clone(), entries));
                cache.len() - 1
            }
        };
        let (offset, size) = cache[at].1[within as usize];
        if offset == u64::MAX && size == u64::MAX {
            return Ok(None);
        }
        if size > limit || offset.checked_add(size).is_none_or(|end| end > file.size()) {
            return Err(ConvertError::input(format!(
                "{label}: chunk {indices:?} at bytes {offset}+{size} lies outside the shard ({} bytes) or is larger than a JPEG of its chunk can be",
                file.size()
            )));
        }
        read_bytes(&*file, offset, size as usize).map(Some).map_err(|e| ConvertError::input(format!("cannot read {label}: {e}")))
    }
}
