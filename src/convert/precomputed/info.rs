//! A neuroglancer precomputed volume's `info` file: its scales, read and checked before any
//! chunk is (sizes, chunk sizes, keys), so that a bad field is refused by name.

use super::shard::Sharding;
use crate::convert::error::{ConvertError, Result};
use crate::convert::json;
use crate::ConfigValue as V;

/// The largest `info` file read (they are a few kilobytes).
pub const MAX_INFO_BYTES: u64 = 1 << 20;
/// The largest volume side.
const MAX_SIDE: u64 = 1 << 31;
/// The largest chunk: a JPEG's 65535 per side (x; y·z), 2^26 voxels.
const MAX_JPEG_SIDE: u64 = 65535;
const MAX_CHUNK_VOXELS: u64 = 1 << 26;

/// One scale of the volume, axes in neuroglancer's order (x, y, z).
#[derive(Clone, Debug)]
pub struct Scale {
    /// the folder of its chunks, relative to the volume's
    pub key: String,
    pub size: [u64; 3],
    pub chunk: [u64; 3],
    /// nanometres per voxel
    pub resolution: [f64; 3],
    pub voxel_offset: [i64; 3],
    pub jpeg_quality: Option<u8>,
    pub sharding: Option<Sharding>,
}

impl Scale {
    /// Chunks along x, y, z.
    pub fn grid(&self) -> [u64; 3] {
        [0, 1, 2].map(|d| self.size[d].div_ceil(self.chunk[d]))
    }

    /// The chunk at grid position `at`: its voxel ranges [start, end) in the volume's
    /// coordinates (voxel_offset included), clipped at the upper bound.
    pub fn chunk_bounds(&self, at: [u64; 3]) -> [(i64, i64); 3] {
        [0, 1, 2].map(|d| {
            let start = at[d] * self.chunk[d];
            let end = (start + self.chunk[d]).min(self.size[d]);
            (self.voxel_offset[d] + start as i64, self.voxel_offset[d] + end as i64)
        })
    }

    /// An unsharded chunk's file name within the scale's folder: `x0-x1_y0-y1_z0-z1`.
    pub fn chunk_name(&self, at: [u64; 3]) -> String {
        let b = self.chunk_bounds(at);
        format!("{}-{}_{}-{}_{}-{}", b[0].0, b[0].1, b[1].0, b[1].1, b[2].0, b[2].1)
    }
}

/// What the `info` file says.
#[derive(Clone, Debug)]
pub struct Volume {
    /// 1 (grayscale) or 3 (colour)
    pub channels: usize,
    pub scales: Vec<Scale>,
}

fn member<'v>(object: &'v V, name: &str) -> Option<&'v V> {
    match object {
        V::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
        _ => None,
    }
}

fn shown(v: &V) -> String {
    json::compact(v)
}

/// Parses and checks `bytes`, the `info` file of the volume named `name` in messages.
pub fn parse(bytes: &[u8], name: &str) -> Result<Volume> {
    let bad = |what: String| ConvertError::input(format!("{name}/info: {what}"));
    let value: V = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON ({e})")))?;
    if !matches!(value, V::Object(_)) {
        return Err(bad(format!("must be a JSON object, got {}", value.describe())));
    }
    match member(&value, "@type") {
        None => {}
        Some(V::String(t)) if t == "neuroglancer_multiscale_volume" => {}
        Some(other) => return Err(bad(format!("@type is {}, not \"neuroglancer_multiscale_volume\"", shown(other)))),
    }
    match member(&value, "type") {
        Some(V::String(t)) if t == "image" => {}
        Some(V::String(t)) if t == "segmentation" => {
            return Err(bad("a segmentation volume (type \"segmentation\"): label ids are not JPEG images; this converter reads image volumes".into()))
        }
        Some(other) => return Err(bad(format!("type must be \"image\", got {}", shown(other)))),
        None => return Err(bad("has no \"type\" (\"image\" for a volume of JPEG chunks)".into())),
    }
    match member(&value, "data_type") {
        Some(V::String(t)) if t == "uint8" => {}
        Some(other) => {
            return Err(bad(format!("data_type is {}; JPEG chunks hold uint8, so this converter reads uint8 volumes", shown(other))))
        }
        None => return Err(bad("has no \"data_type\"".into())),
    }
    let channels = match member(&value, "num_channels") {
        Some(V::Number(n)) if *n == 1.0 || *n == 3.0 => *n as usize,
        Some(other) => {
            return Err(bad(format!("num_channels is {}; a JPEG chunk holds 1 (grayscale) or 3 (colour) channels", shown(other))))
        }
        None => return Err(bad("has no \"num_channels\"".into())),
    };
    let scales = match member(&value, "scales") {
        Some(V::Array(items)) if !items.is_empty() => items,
        Some(other) => return Err(bad(format!("scales must be a non-empty array, got {}", shown(other)))),
        None => return Err(bad("has no \"scales\"".into())),
    };
    if scales.len() > 64 {
        return Err(bad(format!("lists {} scales; this converter reads at most 64", scales.len())));
    }
    let scales = scales.iter().enumerate().map(|(i, s)| scale(s, i, &bad)).collect::<Result<Vec<_>>>()?;
    Ok(Volume { channels, scales })
}

fn scale(value: &V, i: usize, bad: &dyn Fn(String) -> ConvertError) -> Result<Scale> {
    let field = |name: &str| format!("scales[{i}].{name}");
    let bad_field = |name: &str, rule: &str, v: Option<&V>| {
        bad(match v {
            Some(v) => format!("{} {rule}, got {}", field(name), shown(v)),
            None => format!("{} is missing ({rule})", field(name)),
        })
    };
    let key = match member(value, "key") {
        Some(V::String(k)) if safe_key(k) => k.trim_end_matches('/').to_string(),
        v => {
            return Err(bad_field(
                "key",
                "must be a relative path within the volume's folder (no \"..\", no leading \"/\", no \"\\\")",
                v,
            ))
        }
    };
    let triple = |name: &str, min: u64, max: u64| -> Result<[u64; 3]> {
        let v = member(value, name);
        let rule = format!("must be 3 integers from {min} to {max} (x, y, z)");
        match v {
            Some(V::Array(items)) if items.len() == 3 => {
                let mut out = [0u64; 3];
                for (o, item) in out.iter_mut().zip(items) {
                    match item {
                        V::Number(n) if n.fract() == 0.0 && *n >= min as f64 && *n <= max as f64 => *o = *n as u64,
                        _ => return Err(bad_field(name, &rule, v)),
                    }
                }
                Ok(out)
            }
            _ => Err(bad_field(name, &rule, v)),
        }
    };
    let size = triple("size", 1, MAX_SIDE)?;
    let chunk = match member(value, "chunk_sizes") {
        Some(V::Array(items)) if !items.is_empty() => {
            let rule = "must be 3 positive integers (x, y, z)";
            let sizes = match &items[0] {
                V::Array(c) if c.len() == 3 => c,
                other => return Err(bad_field("chunk_sizes[0]", rule, Some(other))),
            };
            let mut out = [0u64; 3];
            for (o, item) in out.iter_mut().zip(sizes) {
                match item {
                    V::Number(n) if n.fract() == 0.0 && *n >= 1.0 && *n <= MAX_JPEG_SIDE as f64 => *o = *n as u64,
                    _ => return Err(bad_field("chunk_sizes[0]", rule, Some(&items[0]))),
                }
            }
            out
        }
        v => return Err(bad_field("chunk_sizes", "must be a non-empty array of [x, y, z] chunk sizes", v)),
    };
    let [cx, cy, cz] = chunk;
    if cx > MAX_JPEG_SIDE || cy * cz > MAX_JPEG_SIDE || cx * cy * cz > MAX_CHUNK_VOXELS {
        return Err(bad(format!(
            "{}: chunks of {cx} × {cy} × {cz} voxels are JPEG images of {cx} × {} pixels, larger than this converter accepts \
             (65535 per side, 2^26 pixels)",
            field("chunk_sizes"),
            cy * cz
        )));
    }
    let resolution = match member(value, "resolution") {
        Some(V::Array(r)) if r.len() == 3 && r.iter().all(|n| matches!(n, V::Number(n) if *n > 0.0 && n.is_finite())) => {
            [0, 1, 2].map(|d| if let V::Number(n) = r[d] { n } else { 1.0 })
        }
        v => return Err(bad_field("resolution", "must be 3 positive numbers (nanometres per voxel along x, y, z)", v)),
    };
    let voxel_offset = match member(value, "voxel_offset") {
        None => [0; 3],
        Some(V::Array(o)) if o.len() == 3 && o.iter().all(|n| matches!(n, V::Number(n) if n.fract() == 0.0 && n.abs() <= MAX_SIDE as f64)) => {
            [0, 1, 2].map(|d| if let V::Number(n) = o[d] { n as i64 } else { 0 })
        }
        v => return Err(bad_field("voxel_offset", "must be 3 integers (x, y, z)", v)),
    };
    match member(value, "encoding") {
        Some(V::String(e)) if e == "jpeg" => {}
        Some(V::String(e)) => {
            return Err(bad(format!(
                "{} is \"{e}\"; this converter copies JPEG chunks, so it reads volumes with \"encoding\": \"jpeg\"",
                field("encoding")
            )))
        }
        v => return Err(bad_field("encoding", "must be \"jpeg\"", v)),
    }
    let jpeg_quality = match member(value, "jpeg_quality") {
        None => None,
        Some(V::Number(q)) if q.fract() == 0.0 && (1.0..=100.0).contains(q) => Some(*q as u8),
        v => return Err(bad_field("jpeg_quality", "must be an integer from 1 to 100", v)),
    };
    let sharding = match member(value, "sharding") {
        None | Some(V::Null) => None,
        Some(s) => Some(Sharding::parse(s).map_err(|e| bad(format!("{}: {e}", field("sharding"))))?),
    };
    Ok(Scale { key, size, chunk, resolution, voxel_offset, jpeg_quality, sharding })
}

/// A key names a folder inside the volume's: never one outside it.
fn safe_key(key: &str) -> bool {
    !key.is_empty()
        && !key.starts_with('/')
        && !key.contains('\\')
        && !key.contains(':')
        && key.trim_end_matches('/').split('/').all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(scale: &str) -> String {
        format!(r#"{{"@type": "neuroglancer_multiscale_volume", "type": "image", "data_type": "uint8", "num_channels": 1, "scales": [{scale}]}}"#)
    }

    const GOOD: &str = r#"{"key": "4_4_40", "size": [130, 100, 40], "chunk_sizes": [[64, 64, 16]], "resolution": [4, 4, 40], "voxel_offset": [0, 0, 0], "encoding": "jpeg"}"#;

    #[test]
    fn a_tensorstore_info_is_read() {
        let v = parse(info(GOOD).as_bytes(), "vol").unwrap();
        let s = &v.scales[0];
        assert_eq!((v.channels, s.size, s.chunk, s.grid()), (1, [130, 100, 40], [64, 64, 16], [3, 2, 3]));
        assert_eq!(s.chunk_name([2, 1, 2]), "128-130_64-100_32-40");
    }

    #[test]
    fn bad_fields_are_named() {
        let cases = [
            (GOOD.replace("\"4_4_40\"", "\"../up\""), "scales[0].key must be a relative path"),
            (GOOD.replace("[[64, 64, 16]]", "[[64, 0, 16]]"), "scales[0].chunk_sizes[0] must be 3 positive integers"),
            (GOOD.replace("[[64, 64, 16]]", "[[64, 4096, 64]]"), "larger than this converter accepts"),
            (GOOD.replace("\"jpeg\"", "\"raw\""), "scales[0].encoding is \"raw\""),
            (GOOD.replace("[130, 100, 40]", "[130, 100]"), "scales[0].size must be 3 integers"),
        ];
        for (scale, expected) in cases {
            let e = parse(info(&scale).as_bytes(), "vol").unwrap_err();
            assert!(e.message().contains(expected), "{} lacks {expected}", e.message());
        }
        let e = parse(info(GOOD).replace("\"uint8\"", "\"uint16\"").as_bytes(), "vol").unwrap_err();
        assert!(e.message().contains("data_type is \"uint16\""), "{}", e.message());
        assert!(parse(b"{", "vol").unwrap_err().message().starts_with("vol/info: not JSON"));
    }
}
