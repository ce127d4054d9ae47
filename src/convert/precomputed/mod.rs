//! Neuroglancer precomputed volumes in (`"encoding": "jpeg"`, unsharded or sharded): every
//! scale becomes a level whose Zarr chunks are the volume's chunks. A precomputed chunk is
//! one JPEG image of its x extent by y·z rows (z-major), which is exactly a Zarr chunk of
//! (z, y, x) folded by `reshape` [[0, 1], [2]] before `jpeg` (a colour chunk is (c, z, y, x),
//! transposed to channels last first). So a full-size chunk is copied byte for byte; a
//! chunk clipped at the volume's upper bound (precomputed stores it clipped, Zarr whole) is
//! decoded, padded by repeating its edge voxels, and re-encoded, as is one that is not
//! baseline. Missing chunks stay missing (the fill value, 0, as in neuroglancer).

mod info;
mod shard;

pub use info::{Scale, Volume};

use super::encoder::parallel_map;
use super::error::{ConvertError, Result};
use super::events::{now, Events, Progress};
use super::levels::Grid;
use super::options::{is_int, ConvertOptions};
use super::source::{read_bytes, Folder, ImageInfo};
use super::store::{ChunkStore, StoreWriter};
use super::summary::{LevelSummary, Summary};
use super::histogram::DataWindow;
use super::json;
use super::metadata::{self, num, obj, s};
use crate::inspect::{inspect_stream, StreamInfo};
use crate::{ConfigValue as V, EncodeOptions, JpegConfig};
use shard::{chunk_id, ShardReader};

/// Options that change what a chunk is: a volume's chunks keep theirs.
const NOT_FOR_VOLUMES: [&str; 11] =
    ["color", "subsampling", "chunk", "chunkDepth", "downsampleZ", "levels", "channelAxis", "pixelSize", "rescale", "levelPsnr", "dicomIdentifiers"];
/// The chunks read and converted at once (then stored in order): bounds the memory.
const BATCH_CHUNKS: usize = 64;

/// Whether a folder's files (their names) are a precomputed volume: it has an `info` file.
pub fn is_volume(names: &[&str]) -> bool {
    names.iter().any(|n| n.rsplit(['/', '\\']).next() == Some("info"))
}

/// One scale on its way to a level.
struct Level {
    scale: Scale,
    /// chunks along x, y, z
    grid: [u64; 3],
    /// the Zarr chunk store's grid: (y, x) per z chunk layer
    store_grid: Grid,
}

/// An opened precomputed volume, ready to convert.
pub struct VolumeJob<'a> {
    folder: &'a dyn Folder,
    /// the volume's name in messages
    label: String,
    volume: Volume,
    levels: Vec<Level>,
    quality: Option<u8>,
    encode_options: EncodeOptions,
    workers: usize,
    pub info: ImageInfo,
}

/// What became of one chunk.
struct ChunkOut {
    bytes: Vec<u8>,
    copied: bool,
    /// squared error and samples of a re-encoded chunk against the volume's decoded one
    error: (u64, u64),
}

impl<'a> VolumeJob<'a> {
    /// Reads and checks the volume's `info` (named `label` in messages) and the options.
    pub fn open(folder: &'a dyn Folder, label: &str, options: &ConvertOptions) -> Result<VolumeJob<'a>> {
        for key in NOT_FOR_VOLUMES {
            if options.get(key).is_some() {
                return Err(ConvertError::argument(format!(
                    "{key} does not apply to a neuroglancer precomputed volume: its chunks are copied as they are (their size, colour space and scales)"
                )));
            }
        }
        let common = options.pyramid_options()?;
        let quality = match options.get("quality") {
            None => None,
            Some(v) => match is_int(v) {
                Some(q) if (1.0..=100.0).contains(&q) => Some(q as u8),
                _ => return Err(ConvertError::argument(format!("quality must be an integer from 1 to 100, got {}", json::compact(v)))),
            },
        };
        let shard = match options.get("shard") {
            None => None,
            Some(v) => match is_int(v) {
                Some(0.0) => None,
                Some(s) if s > 0.0 && s <= f64::from(u32::MAX) => Some(s as u64),
                _ => return Err(ConvertError::argument(format!("shard must be a whole number of voxels (0: no shards), got {}", json::compact(v)))),
            },
        };
        let file = folder.open("info").map_err(|e| ConvertError::input(format!("cannot read {label}/info: {e}")))?;
        let file = file.ok_or_else(|| ConvertError::input(format!("{label} has no info file")))?;
        if file.size() > info::MAX_INFO_BYTES {
            return Err(ConvertError::input(format!("{label}/info is {} bytes, more than an info file can be (1 MiB)", file.size())));
        }
        let bytes = read_bytes(&*file, 0, file.size() as usize).map_err(|e| ConvertError::input(format!("cannot read {label}/info: {e}")))?;
        let volume = info::parse(&bytes, label)?;
        let levels = volume
            .scales
            .iter()
            .map(|scale| {
                let grid = scale.grid();
                let (cy, cx) = (scale.chunk[1] as u32, scale.chunk[0] as u32);
                let shard = match shard {
                    Some(side) if side % u64::from(cy) != 0 || side % u64::from(cx) != 0 => {
                        return Err(ConvertError::argument(format!(
                            "shard {side} is not a multiple of scale {}'s chunk size {cx} × {cy} (x × y)",
                            scale.key
                        )))
                    }
                    Some(side) => Some((side.min(u64::from(u32::MAX / 2)) as u32, side.min(u64::from(u32::MAX / 2)) as u32)),
                    None => None,
                };
                let too_many = |n: u64| u32::try_from(n).map_err(|_| ConvertError::input(format!("{label}: scale {} has {n} chunks along an axis", scale.key)));
                let store_grid = Grid { chunk: (cy, cx), shard, chunks: (too_many(grid[1])?, too_many(grid[0])?) };
                too_many(grid[2])?;
                Ok(Level { scale: scale.clone(), grid, store_grid })
            })
            .collect::<Result<Vec<_>>>()?;
        let s0 = &volume.scales[0];
        let info = ImageInfo {
            height: s0.size[1].min(u64::from(u32::MAX)) as u32,
            width: s0.size[0].min(u64::from(u32::MAX)) as u32,
            channels: volume.channels,
            format: "precomputed",
            planes: false,
            pixel_size: None,
            summary: None,
        };
        Ok(VolumeJob {
            folder,
            label: label.to_string(),
            volume,
            levels,
            quality,
            encode_options: common.encode_options,
            workers: common.workers,
            info,
        })
    }

    fn colour(&self) -> bool {
        self.volume.channels == 3
    }

    /// A level's dimensions (c, z, y, x or z, y, x) from x, y, z values.
    fn dims<T>(&self, xyz: [T; 3], c: T) -> Vec<T> {
        let [x, y, z] = xyz;
        let mut out = if self.colour() { vec![c] } else { Vec::new() };
        out.extend([z, y, x]);
        out
    }

    /// The jpeg codec's configuration of a level: its first chunk's quality (the `info`'s
    /// `jpeg_quality`, else estimated from its tables) and sampling, unless `quality` is given.
    fn level_config(&self, scale: &Scale, first: Option<&StreamInfo>) -> Result<JpegConfig> {
        let quality = self.quality.or(scale.jpeg_quality).or(first.and_then(|f| f.quality)).unwrap_or(75);
        let mut members = vec![("quality".to_string(), V::Number(quality.into()))];
        if self.colour() {
            members.push(("encoded_color_space".into(), V::String("ycbcr".into())));
            let factors = match first {
                Some(f) if f.components.len() == 3 => {
                    f.components.iter().map(|c| V::Array(vec![V::Number(c.horizontal.into()), V::Number(c.vertical.into())])).collect()
                }
                _ => [(2, 2), (1, 1), (1, 1)].iter().map(|&(h, v)| V::Array(vec![V::Number(h.into()), V::Number(v.into())])).collect(),
            };
            members.push(("subsampling".into(), V::Array(factors)));
        } else {
            members.push(("encoded_color_space".into(), V::String("grayscale".into())));
        }
        let config = JpegConfig::parse(&V::Object(members.clone()));
        match config {
            Ok(c) => Ok(c),
            // a sampling the configuration cannot state: re-encoded chunks use 4:2:0
            Err(_) if self.colour() => {
                members.pop();
                members.push(("subsampling".into(), V::Array([(2, 2), (1, 1), (1, 1)].iter().map(|&(h, v)| V::Array(vec![V::Number(h.into()), V::Number(v.into())])).collect())));
                JpegConfig::parse(&V::Object(members)).map_err(|e| ConvertError::input(format!("{e}")))
            }
            Err(e) => Err(ConvertError::input(format!("{e}"))),
        }
    }

    /// The chunk at grid position `at` of `level` as stored (None: the volume has none).
    fn read_chunk(&self, level: &Level, shards: Option<&ShardReader>, at: [u64; 3]) -> Result<Option<Vec<u8>>> {
        let scale = &level.scale;
        let name = scale.chunk_name(at);
        let voxels = scale.chunk.iter().product::<u64>() * self.volume.channels as u64;
        // a JPEG is never much larger than its samples
        let limit = voxels * 2 + (1 << 16);
        match shards {
            Some(reader) => reader.chunk(chunk_id(at, level.grid), &format!("chunk {name}"), limit),
            None => {
                let path = format!("{}/{name}", scale.key);
                let shown = format!("{}/{path}", self.label);
                let Some(file) = self.folder.open(&path).map_err(|e| ConvertError::input(format!("cannot read {shown}: {e}")))? else {
                    return Ok(None);
                };
                if file.size() > limit {
                    return Err(ConvertError::input(format!(
                        "{shown} is {} bytes, more than a JPEG of its {voxels} samples can be",
                        file.size()
                    )));
                }
                let bytes = read_bytes(&*file, 0, file.size() as usize).map_err(|e| ConvertError::input(format!("cannot read {shown}: {e}")))?;
                Ok(Some(bytes))
            }
        }
    }

}

/// What converting a chunk needs (shared by the threads).
struct ChunkWork<'w> {
    /// the volume's name in messages
    label: &'w str,
    channels: usize,
    encode_options: &'w EncodeOptions,
}

impl ChunkWork<'_> {
    /// Checks a chunk and copies or re-encodes it.
    fn convert(&self, scale: &Scale, config: &JpegConfig, at: [u64; 3], stream: Vec<u8>) -> Result<ChunkOut> {
        let label = format!("{}/{}/{}", self.label, scale.key, scale.chunk_name(at));
        let b = scale.chunk_bounds(at);
        let own = [0, 1, 2].map(|d| (b[d].1 - b[d].0) as usize);
        let [cx, cy, cz] = scale.chunk.map(|n| n as usize);
        let channels = self.channels;
        let info = inspect_stream(&stream).map_err(|e| ConvertError::input(format!("{label}: {e}")))?;
        let (want_w, want_h) = (own[0], own[1] * own[2]);
        if usize::from(info.width) != want_w || usize::from(info.height) != want_h {
            return Err(ConvertError::input(format!(
                "{label}: a JPEG of {} × {} pixels, but a chunk of {} × {} × {} voxels (x × y × z, from the info's chunk_sizes {:?} \
                 and size {:?}) is one of {want_w} × {want_h}: the info's chunk size is wrong or the chunk is not this volume's",
                info.width, info.height, own[0], own[1], own[2], scale.chunk, scale.size
            )));
        }
        if info.components.len() != channels {
            return Err(ConvertError::input(format!(
                "{label}: a JPEG of {} component(s) in a volume of {channels} channel(s)",
                info.components.len()
            )));
        }
        if info.precision != 8 {
            return Err(ConvertError::input(format!("{label}: a {}-bit JPEG; the volume is uint8", info.precision)));
        }
        let shape_of = |h: usize, w: usize| -> Vec<u64> {
            if channels == 3 { vec![h as u64, w as u64, 3] } else { vec![h as u64, w as u64] }
        };
        let decoded = crate::decode(config, &stream, &shape_of(want_h, want_w))
            .map_err(|e| ConvertError::input(format!("{label}: cannot decode ({}): {e}", info.process_name())))?;
        let whole = own == [cx, cy, cz];
        if whole && info.sof == 0xC0 {
            return Ok(ChunkOut { bytes: stream, copied: true, error: (0, 0) });
        }
        // padded to the whole chunk by repeating the last voxel of each axis
        let mut padded = vec![0u8; cx * cy * cz * channels];
        for z in 0..cz {
            let sz = z.min(own[2] - 1);
            for y in 0..cy {
                let sy = y.min(own[1] - 1);
                let row = &decoded[((sz * own[1] + sy) * own[0]) * channels..][..own[0] * channels];
                let out = &mut padded[((z * cy + y) * cx) * channels..][..cx * channels];
                out[..row.len()].copy_from_slice(row);
                let last = &row[row.len() - channels..];
                for x in own[0]..cx {
                    out[x * channels..(x + 1) * channels].copy_from_slice(last);
                }
            }
        }
        let shape = shape_of(cy * cz, cx);
        let bytes = crate::encode_from_with_options(config, &padded.as_slice(), &shape, self.encode_options)
            .map_err(|e| ConvertError::input(format!("{label}: cannot encode: {e}")))?;
        let back = crate::decode(config, &bytes, &shape).map_err(|e| ConvertError::input(format!("{label}: {e}")))?;
        let mut sum = 0u64;
        for z in 0..own[2] {
            for y in 0..own[1] {
                let a = &decoded[((z * own[1] + y) * own[0]) * channels..][..own[0] * channels];
                let o = &back[((z * cy + y) * cx) * channels..][..own[0] * channels];
                sum += a.iter().zip(o).map(|(&p, &q)| (i64::from(p) - i64::from(q)).pow(2) as u64).sum::<u64>();
            }
        }
        Ok(ChunkOut { bytes, copied: false, error: (sum, decoded.len() as u64) })
    }
}

impl VolumeJob<'_> {

    fn level_array(&self, level: &Level, config: &JpegConfig, attributes: V) -> V {
        let scale = &level.scale;
        let [cx, cy, cz] = scale.chunk;
        let chunk = self.dims([cx, cy, cz], 3);
        let folded: Vec<V> = if self.colour() { vec![nums(&[0, 1]), nums(&[2]), nums(&[3])] } else { vec![nums(&[0, 1]), nums(&[2])] };
        let mut codecs = Vec::new();
        if self.colour() {
            codecs.push(obj(vec![("name", s("transpose")), ("configuration", obj(vec![("order", nums(&[1, 2, 3, 0]))]))]));
        }
        codecs.push(obj(vec![("name", s("reshape")), ("configuration", obj(vec![("shape", V::Array(folded))]))]));
        codecs.push(obj(vec![("name", s("jpeg")), ("configuration", config.to_value())]));
        let (outer, codecs) = match level.store_grid.shard {
            Some((sy, sx)) => (
                self.dims([u64::from(sx), u64::from(sy), cz], 3),
                V::Array(vec![metadata::sharding_codec(nums(&chunk), V::Array(codecs))]),
            ),
            None => (chunk.clone(), V::Array(codecs)),
        };
        let names: Vec<V> = self.dims(["x", "y", "z"], "c").into_iter().map(s).collect();
        obj(vec![
            ("zarr_format", num(3)),
            ("node_type", s("array")),
            ("shape", nums(&self.dims(scale.size, 3))),
            ("data_type", s("uint8")),
            ("chunk_grid", obj(vec![("name", s("regular")), ("configuration", obj(vec![("chunk_shape", nums(&outer))]))])),
            ("chunk_key_encoding", obj(vec![("name", s("default")), ("configuration", obj(vec![("separator", s("/"))]))])),
            ("fill_value", num(0)),
            ("codecs", codecs),
            ("dimension_names", V::Array(names)),
            ("attributes", attributes),
        ])
    }

    fn group(&self, name: &str) -> V {
        let axis = |n: &str, kind: &str| {
            let mut m = vec![("name", s(n)), ("type", s(kind))];
            if kind == "space" {
                m.push(("unit", s("nanometer")));
            }
            obj(m)
        };
        let axes = self.dims([axis("x", "space"), axis("y", "space"), axis("z", "space")], axis("c", "channel"));
        let offset = self.volume.scales.iter().any(|s| s.voxel_offset != [0; 3]);
        let datasets = self
            .volume
            .scales
            .iter()
            .enumerate()
            .map(|(l, scale)| {
                let mut transforms = vec![obj(vec![("type", s("scale")), ("scale", fnums(&self.dims(scale.resolution, 1.0)))])];
                if offset {
                    let t = [0, 1, 2].map(|d| scale.voxel_offset[d] as f64 * scale.resolution[d]);
                    transforms.push(obj(vec![("type", s("translation")), ("translation", fnums(&self.dims(t, 0.0)))]));
                }
                obj(vec![("path", s(&l.to_string())), ("coordinateTransformations", V::Array(transforms))])
            })
            .collect();
        let mut ome = vec![
            ("version", s("0.5")),
            (
                "multiscales",
                V::Array(vec![obj(vec![
                    ("name", s(name)),
                    ("axes", V::Array(axes)),
                    ("datasets", V::Array(datasets)),
                    (
                        "metadata",
                        obj(vec![
                            ("description", s("the scales of a neuroglancer precomputed volume, its JPEG chunks copied")),
                            ("method", s("zarr-jpeg convert")),
                        ]),
                    ),
                ])]),
            ),
        ];
        if self.colour() {
            let channels = metadata::rgb_channels(|label, color| metadata::omero_channel(label, color, DataWindow::FULL, None));
            ome.push(("omero", metadata::omero(channels, "color")));
        }
        obj(vec![("zarr_format", num(3)), ("node_type", s("group")), ("attributes", obj(vec![("ome", obj(ome))]))])
    }

    /// Writes the store: the group, then each level's chunks and its array metadata.
    pub fn run(self, writer: &mut dyn StoreWriter, events: &mut dyn Events, output: &str, name: &str) -> Result<Summary> {
        let started = now();
        let mut bytes_written = 0u64;
        let put = |writer: &mut dyn StoreWriter, key: &str, value: &V, bytes_written: &mut u64| -> Result<()> {
            let text = json::pretty(value);
            *bytes_written += text.len() as u64;
            writer.write(key, text.as_bytes())
        };
        put(writer, "zarr.json", &self.group(name), &mut bytes_written)?;
        let total: u64 = self.levels.iter().map(|l| l.grid.iter().product::<u64>()).sum();
        let (mut done, mut error) = (0u64, (0u64, 0u64));
        let (mut copied, mut reencoded, mut empty) = (0u64, 0u64, 0u64);
        let mut summaries = Vec::new();
        let mut config0 = None;
        let mut warnings = Vec::new();
        let channels = self.volume.channels;
        let workers = if self.workers == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { self.workers };
        for (l, level) in self.levels.iter().enumerate() {
            let scale = &level.scale;
            let shards = scale.sharding.clone().map(|s| ShardReader::new(self.folder, &self.label, &scale.key, s));
            let [gx, gy, gz] = level.grid;
            let positions = (0..gz).flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z])));
            // the level's configuration, from its first chunk
            let mut first = None;
            for at in positions.clone() {
                if let Some(stream) = self.read_chunk(level, shards.as_ref(), at)? {
                    let label = format!("{}/{}/{}", self.label, scale.key, scale.chunk_name(at));
                    first = Some(inspect_stream(&stream).map_err(|e| ConvertError::input(format!("{label}: {e}")))?);
                    break;
                }
            }
            if first.is_none() {
                let example = match &scale.sharding {
                    Some(sharding) => format!("{}/{}", scale.key, sharding.shard_name(sharding.locate(0).0)),
                    None => format!("{}/{}", scale.key, scale.chunk_name([0, 0, 0])),
                };
                let why = format!(
                    "scale {} has none of its {} chunks (e.g. {example}): its size, voxel_offset or chunk_sizes in the info may be wrong",
                    scale.key,
                    gx * gy * gz
                );
                if l == 0 {
                    return Err(ConvertError::input(format!("{}: {why}, or the volume is empty", self.label)));
                }
                events.warning(&why);
                warnings.push(why);
            }
            let config = self.level_config(scale, first.as_ref())?;
            events.progress(l, self.levels.len(), done, total, &Progress::Level { shape: self.dims(scale.size, 3).iter().map(|&n| n as u32).collect() })?;
            let mut store = ChunkStore::new(&l.to_string(), level.store_grid);
            let colour = self.colour();
            let key = move |y: u32, x: u32, z: u32| if colour { format!("c/0/{z}/{y}/{x}") } else { format!("c/{z}/{y}/{x}") };
            let (mut level_done, mut level_bytes, mut level_chunks) = (0u64, 0u64, 0u64);
            let (mut level_copied, mut level_reencoded) = (0u64, 0u64);
            let level_total = gx * gy * gz;
            let mut positions = positions.peekable();
            while positions.peek().is_some() {
                let batch: Vec<[u64; 3]> = positions.by_ref().take(BATCH_CHUNKS).collect();
                let mut streams = Vec::with_capacity(batch.len());
                for &at in &batch {
                    streams.push((at, self.read_chunk(level, shards.as_ref(), at)?));
                }
                let work = ChunkWork { label: &self.label, channels, encode_options: &self.encode_options };
                let outs = parallel_map(workers, &streams, |(at, stream)| stream.as_ref().map(|s| work.convert(scale, &config, *at, s.clone())));
                for ((at, _), out) in streams.iter().zip(outs) {
                    let (y, x, z) = (at[1] as u32, at[0] as u32, at[2] as u32);
                    match out {
                        None => {
                            empty += 1;
                            store.skip(writer, &key, y, x, z)?;
                        }
                        Some(out) => {
                            let out = out?;
                            if out.copied {
                                copied += 1;
                                level_copied += 1;
                            } else {
                                reencoded += 1;
                                level_reencoded += 1;
                            }
                            if l == 0 {
                                error.0 += out.error.0;
                                error.1 += if out.copied { (scale.chunk.iter().product::<u64>()) * channels as u64 } else { out.error.1 };
                            }
                            level_bytes += out.bytes.len() as u64;
                            level_chunks += 1;
                            store.store(writer, &key, y, x, z, out.bytes)?;
                        }
                    }
                    level_done += 1;
                    done += 1;
                    events.progress(l, self.levels.len(), done, total, &Progress::Chunk { level_chunks_done: level_done, level_chunks_total: level_total })?;
                }
            }
            store.finish(writer)?;
            bytes_written += store.bytes_written;
            let attributes = obj(vec![(
                "zarr_jpeg",
                obj(vec![(
                    "precomputed",
                    obj(vec![
                        ("key", s(&scale.key)),
                        ("chunks_copied", num(level_copied as f64)),
                        ("chunks_reencoded", num(level_reencoded as f64)),
                    ]),
                )]),
            )]);
            put(writer, &format!("{l}/zarr.json"), &self.level_array(level, &config, attributes), &mut bytes_written)?;
            let raw = scale.size.iter().product::<u64>() * channels as u64;
            let [cx, cy, cz] = scale.chunk;
            summaries.push(LevelSummary {
                path: l.to_string(),
                shape: self.dims(scale.size, 3).iter().map(|&n| n as u32).collect(),
                chunk_shape: self.dims([cx, cy, cz], 3).iter().map(|&n| n as u32).collect(),
                shard_shape: level.store_grid.shard.map(|(sy, sx)| self.dims([u64::from(sx), u64::from(sy), cz], 3).iter().map(|&n| n as u32).collect()),
                chunks: level_chunks,
                raw_bytes: raw,
                encoded_bytes: level_bytes,
                ratio: raw as f64 / level_bytes.max(1) as f64,
            });
            config0.get_or_insert(config);
        }
        let raw_bytes: u64 = summaries.iter().map(|l| l.raw_bytes).sum();
        let encoded_bytes: u64 = summaries.iter().map(|l| l.encoded_bytes).sum();
        let psnr = if error.0 == 0 { f64::INFINITY } else { 10.0 * (255.0 * 255.0 / (error.0 as f64 / error.1 as f64)).log10() };
        let source = obj(vec![
            ("format", s("neuroglancer precomputed")),
            ("scales", num(self.levels.len() as f64)),
            ("sharded", V::Bool(self.levels.iter().any(|l| l.scale.sharding.is_some()))),
            ("chunks", obj(vec![("copied", num(copied as f64)), ("reencoded", num(reencoded as f64)), ("missing", num(empty as f64))])),
        ]);
        let s0 = &self.volume.scales[0];
        Ok(Summary {
            output: output.to_string(),
            name: name.to_string(),
            input_shape: self.dims(s0.size, channels as u64).iter().map(|&n| n as u32).collect(),
            config: config0.expect("a volume has a scale"),
            encode_options: self.encode_options,
            channel_axis: self.colour().then_some("first"),
            level0_ratio: summaries.first().map_or(0.0, |l| l.ratio),
            levels: summaries,
            chunks: copied + reencoded,
            bytes_written,
            encoded_bytes,
            raw_bytes,
            ratio: raw_bytes as f64 / encoded_bytes.max(1) as f64,
            psnr,
            seconds: now() - started,
            workers: self.workers,
            warnings,
            streamed: true,
            rescale: None,
            format: "precomputed",
            source: Some(source),
            tiles: None,
            details: vec![format!(
                "  chunks: {copied} copied unchanged from the precomputed volume, {reencoded} re-encoded (clipped at its bounds, \
                 or not baseline), {empty} missing (not stored)"
            )],
        })
    }
}

fn nums(values: &[u64]) -> V {
    V::Array(values.iter().map(|&v| V::Number(v as f64)).collect())
}

fn fnums(values: &[f64]) -> V {
    V::Array(values.iter().map(|&v| V::Number(v)).collect())
}
