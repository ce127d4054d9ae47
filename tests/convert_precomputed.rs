//! Neuroglancer precomputed volumes, natively, on volumes held in memory: a sharded volume
//! (written here by the format's rules: the interop tests use tensorstore's) gives the same
//! store as the unsharded one, and no truncation or byte flip of the info, a chunk or a
//! shard makes the converter panic: each is converted or refused with an error, never a
//! store half-written.
#![cfg(all(not(target_arch = "wasm32"), feature = "converter"))]

use std::collections::BTreeMap;
use std::io;

use zarr_jpeg::convert::{Conversion, ConvertOptions, Folder, MemoryStore, Quiet, ReadAt};
use zarr_jpeg::ConfigValue;

/// A folder of files in memory.
#[derive(Clone, Default)]
struct Files(BTreeMap<String, Vec<u8>>);

impl Folder for Files {
    fn open(&self, path: &str) -> io::Result<Option<Box<dyn ReadAt + '_>>> {
        Ok(self.0.get(path).map(|b| Box::new(b.clone()) as Box<dyn ReadAt>))
    }
}

const SIZE: [u64; 3] = [40, 24, 6];
const CHUNK: [u64; 3] = [16, 16, 4];

fn config() -> zarr_jpeg::JpegConfig {
    let value: ConfigValue = serde_json::from_str(r#"{"quality": 90, "encoded_color_space": "grayscale"}"#).unwrap();
    zarr_jpeg::JpegConfig::parse(&value).unwrap()
}

/// The chunk at grid (x, y, z): a JPEG of its clipped x extent by y·z rows.
fn chunk(at: [u64; 3]) -> (String, Vec<u8>) {
    let b: Vec<(u64, u64)> = (0..3).map(|d| (at[d] * CHUNK[d], ((at[d] + 1) * CHUNK[d]).min(SIZE[d]))).collect();
    let (w, h, d) = (b[0].1 - b[0].0, b[1].1 - b[1].0, b[2].1 - b[2].0);
    let mut samples = Vec::new();
    for z in b[2].0..b[2].1 {
        for y in b[1].0..b[1].1 {
            for x in b[0].0..b[0].1 {
                samples.push(((x * 5 + y * 3 + z * 40) % 256) as u8);
            }
        }
    }
    let stream = zarr_jpeg::encode(&config(), &samples, &[h * d, w]).unwrap();
    (format!("{}-{}_{}-{}_{}-{}", b[0].0, b[0].1, b[1].0, b[1].1, b[2].0, b[2].1), stream)
}

fn info(sharding: &str) -> Vec<u8> {
    format!(
        r#"{{"@type": "neuroglancer_multiscale_volume", "type": "image", "data_type": "uint8", "num_channels": 1,
        "scales": [{{"key": "s0", "size": [40, 24, 6], "chunk_sizes": [[16, 16, 4]], "resolution": [8, 8, 30],
        "voxel_offset": [0, 0, 0], "encoding": "jpeg"{sharding}}}]}}"#
    )
    .into_bytes()
}

fn positions() -> Vec<[u64; 3]> {
    let mut out = Vec::new();
    for z in 0..2 {
        for y in 0..2 {
            for x in 0..3 {
                out.push([x, y, z]);
            }
        }
    }
    out
}

fn unsharded() -> Files {
    let mut files = Files::default();
    files.0.insert("info".into(), info(""));
    for at in positions() {
        let (name, stream) = chunk(at);
        files.0.insert(format!("s0/{name}"), stream);
    }
    files
}

/// One shard, one minishard (identity hash, 0 bits each), a raw index: chunk ids are the
/// compressed Morton codes of a 3 × 2 × 2 grid (x 2 bits, y 1, z 1).
fn sharded() -> Files {
    let morton = |[x, y, z]: [u64; 3]| (x & 1) | ((y & 1) << 1) | ((z & 1) << 2) | ((x >> 1 & 1) << 3);
    let mut chunks: Vec<(u64, Vec<u8>)> = positions().into_iter().map(|at| (morton(at), chunk(at).1)).collect();
    chunks.sort_by_key(|c| c.0);
    let mut data = Vec::new();
    let (mut ids, mut offsets, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
    let (mut last_id, mut last_end) = (0u64, 0u64);
    for (id, stream) in &chunks {
        ids.push(id - last_id);
        offsets.push(data.len() as u64 - last_end);
        sizes.push(stream.len() as u64);
        last_id = *id;
        data.extend_from_slice(stream);
        last_end = data.len() as u64;
    }
    let index: Vec<u8> = ids.iter().chain(&offsets).chain(&sizes).flat_map(|v| v.to_le_bytes()).collect();
    let mut shard = (data.len() as u64).to_le_bytes().to_vec();
    shard.extend_from_slice(&((data.len() + index.len()) as u64).to_le_bytes());
    shard.extend_from_slice(&data);
    shard.extend_from_slice(&index);
    let mut files = Files::default();
    files.0.insert(
        "info".into(),
        info(r#", "sharding": {"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 0, "hash": "identity", "minishard_bits": 0, "shard_bits": 0}"#),
    );
    files.0.insert("s0/0.shard".into(), shard);
    files
}

fn convert(files: &Files) -> Result<MemoryStore, String> {
    let info = files.0.get("info").cloned().unwrap_or_default();
    let listed: Vec<(String, &dyn ReadAt)> = vec![("vol/info".to_string(), &info as &dyn ReadAt)];
    let options = ConvertOptions::parse(&ConfigValue::Null).unwrap();
    let mut store = MemoryStore::default();
    let conversion = Conversion::open_folder(listed, "vol", &options, Some(files)).map_err(|e| e.message().to_string())?;
    conversion.run(&mut store, &mut Quiet, "out").map_err(|e| e.message().to_string())?;
    Ok(store)
}

fn chunks(store: &MemoryStore) -> BTreeMap<String, Vec<u8>> {
    store.values.iter().filter(|(k, _)| k.contains("/c/")).map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[test]
fn a_sharded_volume_gives_the_unsharded_ones_store() {
    let plain = convert(&unsharded()).unwrap();
    let shard = convert(&sharded()).unwrap();
    assert_eq!(chunks(&plain).len(), 12);
    assert_eq!(chunks(&plain), chunks(&shard));
    // the full chunk (0, 0, 0) is the volume's file; a clipped one is re-encoded whole
    let files = unsharded();
    assert_eq!(plain.values["0/c/0/0/0"], files.0["s0/0-16_0-16_0-4"]);
    assert_ne!(plain.values["0/c/1/1/2"], files.0["s0/32-40_16-24_4-6"]);
}

/// A deterministic sequence of byte positions.
fn spots(len: usize, n: usize) -> Vec<usize> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % len as u64) as usize
        })
        .collect()
}

#[test]
fn damaged_volumes_are_converted_or_refused_never_a_panic() {
    for files in [unsharded(), sharded()] {
        for (name, bytes) in files.0.clone() {
            let cuts: Vec<usize> = spots(bytes.len(), 12).into_iter().chain([0, 1, bytes.len() / 2, bytes.len() - 1]).collect();
            for cut in cuts {
                let mut damaged = files.clone();
                damaged.0.insert(name.clone(), bytes[..cut].to_vec());
                let _ = convert(&damaged);
            }
            for at in spots(bytes.len(), 24) {
                for flip in [0xff, 0x01, 0x80] {
                    let mut damaged = files.clone();
                    let mut b = bytes.clone();
                    b[at] ^= flip;
                    damaged.0.insert(name.clone(), b);
                    let _ = convert(&damaged);
                }
            }
        }
    }
    let mut missing = unsharded();
    missing.0.retain(|k, _| k == "info");
    let e = convert(&missing).unwrap_err();
    assert!(e.contains("has none of its 12 chunks (e.g. s0/0-16_0-16_0-4)"), "{e}");
}
