//! A JPEG OME-Zarr volume out as a neuroglancer precomputed volume (`"encoding": "jpeg"`,
//! unsharded): each level becomes a scale whose chunk files are the Zarr chunks' JPEG
//! streams where the layouts agree (a chunk of (z, y, x[, c]) folded z-major into
//! (z·y, x[, 3]) before `jpeg`, as the converter writes volumes and 2-D images alike) and
//! the chunk lies inside the volume; Zarr's edge chunks are padded where precomputed's are
//! clipped, so those are decoded, cut and re-encoded. The store is read through the folder
//! seam and the volume written through the store seam, as the converter does.

mod store_read;

use crate::convert::encoder::parallel_map;
use crate::convert::error::{ConvertError, Result};
use crate::convert::events::{now, Events, Progress};
use crate::convert::json;
use crate::convert::options::{is_int, ConvertOptions};
use crate::convert::source::Folder;
use crate::convert::store::StoreWriter;
use crate::inspect::inspect_stream;
use crate::{ConfigValue as V, EncodeOptions, EncodedColorSpace, JpegConfig};
use store_read::{ArrayMeta, ChunkReader, Image};

/// The chunks read and converted at once.
const BATCH_CHUNKS: usize = 64;
/// The options an export takes.
const OPTIONS: [&str; 3] = ["quality", "overwrite", "workers"];

/// What an export wrote.
#[derive(Clone, Debug)]
pub struct ExportSummary {
    pub output: String,
    pub scales: Vec<ScaleSummary>,
    pub copied: u64,
    pub reencoded: u64,
    pub missing: u64,
    pub bytes_written: u64,
    pub seconds: f64,
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct ScaleSummary {
    pub key: String,
    /// x, y, z
    pub size: [u64; 3],
    pub chunk: [u64; 3],
    pub resolution: [f64; 3],
}

impl ExportSummary {
    pub fn to_value(&self) -> V {
        let n = |v: u64| V::Number(v as f64);
        let scales = self
            .scales
            .iter()
            .map(|s| {
                V::Object(vec![
                    ("key".into(), V::String(s.key.clone())),
                    ("size".into(), V::Array(s.size.iter().map(|&v| n(v)).collect())),
                    ("chunkSize".into(), V::Array(s.chunk.iter().map(|&v| n(v)).collect())),
                    ("resolution".into(), V::Array(s.resolution.iter().map(|&v| V::Number(v)).collect())),
                ])
            })
            .collect();
        V::Object(vec![
            ("output".into(), V::String(self.output.clone())),
            ("format".into(), V::String("neuroglancer precomputed".into())),
            ("scales".into(), V::Array(scales)),
            ("chunks".into(), V::Object(vec![("copied".into(), n(self.copied)), ("reencoded".into(), n(self.reencoded)), ("missing".into(), n(self.missing))])),
            ("bytesWritten".into(), n(self.bytes_written)),
            ("seconds".into(), V::Number(self.seconds)),
            ("warnings".into(), V::Array(self.warnings.iter().map(|w| V::String(w.clone())).collect())),
        ])
    }

    pub fn format(&self) -> String {
        let mut lines = vec![format!("wrote {} in {:.2} s: a neuroglancer precomputed volume (jpeg), {} scale(s)", self.output, self.seconds, self.scales.len())];
        for s in &self.scales {
            lines.push(format!(
                "  scale {}: size {}×{}×{} (x×y×z), chunk {}×{}×{}, resolution {} nm",
                s.key,
                s.size[0],
                s.size[1],
                s.size[2],
                s.chunk[0],
                s.chunk[1],
                s.chunk[2],
                s.resolution.iter().map(|&r| json::number(r)).collect::<Vec<_>>().join(" × ")
            ));
        }
        lines.push(format!(
            "  chunks: {} copied unchanged from the Zarr store, {} re-encoded (clipped at the volume's bounds, or not baseline YCbCr/grayscale), {} missing",
            self.copied, self.reencoded, self.missing
        ));
        lines.push(format!("  bytes written {:.2} MB", self.bytes_written as f64 / 1e6));
        lines.join("\n")
    }
}

/// Where each axis of a level's array is.
#[derive(Clone, Copy)]
struct Axes {
    t: Option<usize>,
    c: Option<usize>,
    z: Option<usize>,
    y: usize,
    x: usize,
}

/// Nanometres per unit of an OME-Zarr space axis.
fn nanometres(unit: Option<&str>) -> Option<f64> {
    Some(match unit? {
        "nanometer" => 1.0,
        "micrometer" => 1e3,
        "millimeter" => 1e6,
        "centimeter" => 1e7,
        "meter" => 1e9,
        "angstrom" => 0.1,
        "picometer" => 1e-3,
        _ => return None,
    })
}

/// One level on its way to a scale.
struct Plan<'m> {
    meta: &'m ArrayMeta,
    path: String,
    scale: ScaleSummary,
    voxel_offset: [i64; 3],
    /// the chunk's lengths along x, y, z
    chunk: [u64; 3],
    /// what re-encoded chunks use
    encode: JpegConfig,
    /// the level's streams are what precomputed holds (YCbCr or grayscale)
    copyable: bool,
}

/// What converting a chunk needs, shared by the threads.
struct ChunkWork<'w> {
    store: &'w str,
    channels: usize,
    options: &'w EncodeOptions,
}

impl ChunkWork<'_> {
    /// The chunk file of Zarr chunk (ix, iy, iz): its stream, or None for a chunk of zeros.
    fn convert(&self, plan: &Plan, at: [u64; 3], stream: Option<&Vec<u8>>) -> Result<Option<(Vec<u8>, bool)>> {
        let [cx, cy, cz] = plan.chunk.map(|n| n as usize);
        let size = plan.scale.size;
        let own = [0, 1, 2].map(|d| ((size[d] - at[d] * plan.chunk[d]).min(plan.chunk[d])) as usize);
        let channels = self.channels;
        let label = format!("{}/{}: chunk (x, y, z) {:?}", self.store, plan.path, at);
        let image = |h: usize, w: usize| -> Vec<u64> { if channels == 3 { vec![h as u64, w as u64, 3] } else { vec![h as u64, w as u64] } };
        let decoded = match stream {
            None if plan.meta.fill_value == 0 => return Ok(None),
            None => vec![plan.meta.fill_value; cx * cy * cz * channels],
            Some(stream) => {
                let info = inspect_stream(stream).map_err(|e| ConvertError::input(format!("{label}: {e}")))?;
                if usize::from(info.width) != cx || usize::from(info.height) != cy * cz || info.components.len() != channels {
                    return Err(ConvertError::input(format!(
                        "{label}: a JPEG of {} × {} pixels and {} component(s), where its chunk makes one of {cx} × {} and {channels}",
                        info.width,
                        info.height,
                        info.components.len(),
                        cy * cz
                    )));
                }
                let decoded = crate::decode(&plan.meta.config, stream, &image(cy * cz, cx)).map_err(|e| ConvertError::input(format!("{label}: cannot decode: {e}")))?;
                if own == [cx, cy, cz] && plan.copyable && info.sof == 0xC0 {
                    return Ok(Some((stream.clone(), true)));
                }
                decoded
            }
        };
        let mut cut = Vec::with_capacity(own[0] * own[1] * own[2] * channels);
        for z in 0..own[2] {
            for y in 0..own[1] {
                cut.extend_from_slice(&decoded[((z * cy + y) * cx) * channels..][..own[0] * channels]);
            }
        }
        let bytes = crate::encode_from_with_options(&plan.encode, &cut.as_slice(), &image(own[1] * own[2], own[0]), self.options)
            .map_err(|e| ConvertError::input(format!("{label}: cannot encode: {e}")))?;
        Ok(Some((bytes, false)))
    }
}

/// Writes the OME-Zarr image in `folder` (named `store` in messages) as a precomputed
/// volume through `writer`; `output` names it in the summary.
pub fn export_precomputed(folder: &dyn Folder, store: &str, options: &ConvertOptions, writer: &mut dyn StoreWriter, events: &mut dyn Events, output: &str) -> Result<ExportSummary> {
    let started = now();
    for name in options.names() {
        if !OPTIONS.contains(&name) {
            return Err(ConvertError::argument(format!("{name} does not apply to export --precomputed (it takes quality, overwrite and workers)")));
        }
    }
    let quality = match options.get("quality") {
        None => None,
        Some(v) => match is_int(v) {
            Some(q) if (1.0..=100.0).contains(&q) => Some(q as u8),
            _ => return Err(ConvertError::argument(format!("quality must be an integer from 1 to 100, got {}", json::compact(v)))),
        },
    };
    let common = options.pyramid_options()?;
    let image = store_read::open(folder, store)?;
    let axes = find_axes(&image, store)?;
    let mut warnings = Vec::new();
    let channels = axes.c.map_or(1, |c| image.levels[0].array.shape[c] as usize);
    let plans = image
        .levels
        .iter()
        .enumerate()
        .map(|(l, level)| plan_level(&image, level, l, axes, channels, quality, store, &mut warnings))
        .collect::<Result<Vec<_>>>()?;
    let mut keys: Vec<String> = Vec::new();
    let mut plans = plans;
    for plan in &mut plans {
        let mut key = plan.scale.key.clone();
        let mut n = 1;
        while keys.contains(&key) {
            n += 1;
            key = format!("{}_{n}", plan.scale.key);
        }
        plan.scale.key = key.clone();
        keys.push(key);
    }
    for w in &warnings {
        events.warning(w);
    }
    let workers = if common.workers == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { common.workers };
    let total: u64 = plans.iter().map(|p| grid(p).iter().product::<u64>()).sum();
    let (mut done, mut copied, mut reencoded, mut missing, mut bytes_written) = (0u64, 0u64, 0u64, 0u64, 0u64);
    let work = ChunkWork { store, channels, options: &common.encode_options };
    for (l, plan) in plans.iter().enumerate() {
        let shape: Vec<u32> = plan.meta.shape.iter().map(|&n| n.min(u64::from(u32::MAX)) as u32).collect();
        events.progress(l, plans.len(), done, total, &Progress::Level { shape })?;
        let reader = ChunkReader::new(folder, store, &plan.path);
        let [gx, gy, gz] = grid(plan);
        let limit = plan.chunk.iter().product::<u64>() * channels as u64 * 2 + (1 << 16);
        let mut positions = (0..gz).flat_map(|z| (0..gy).flat_map(move |y| (0..gx).map(move |x| [x, y, z]))).peekable();
        let mut level_done = 0u64;
        while positions.peek().is_some() {
            let batch: Vec<[u64; 3]> = positions.by_ref().take(BATCH_CHUNKS).collect();
            let mut streams = Vec::with_capacity(batch.len());
            for &at in &batch {
                let mut indices = vec![0u64; plan.meta.shape.len()];
                indices[axes.x] = at[0];
                indices[axes.y] = at[1];
                if let Some(z) = axes.z {
                    indices[z] = at[2];
                }
                streams.push((at, reader.chunk(plan.meta, &indices, limit)?));
            }
            let outs = parallel_map(workers, &streams, |(at, stream)| work.convert(plan, *at, stream.as_ref()));
            for ((at, _), out) in streams.iter().zip(outs) {
                match out? {
                    None => missing += 1,
                    Some((bytes, was_copied)) => {
                        if was_copied {
                            copied += 1;
                        } else {
                            reencoded += 1;
                        }
                        let name = chunk_name(plan, *at);
                        bytes_written += bytes.len() as u64;
                        writer.write(&format!("{}/{name}", plan.scale.key), &bytes)?;
                    }
                }
                done += 1;
                level_done += 1;
                let level_total = gx * gy * gz;
                events.progress(l, plans.len(), done, total, &Progress::Chunk { level_chunks_done: level_done, level_chunks_total: level_total })?;
            }
        }
    }
    let info = info_json(&plans, channels);
    let text = json::pretty(&info);
    bytes_written += text.len() as u64;
    writer.write("info", text.as_bytes())?;
    Ok(ExportSummary {
        output: output.to_string(),
        scales: plans.iter().map(|p| p.scale.clone()).collect(),
        copied,
        reencoded,
        missing,
        bytes_written,
        seconds: now() - started,
        warnings,
    })
}

fn grid(plan: &Plan) -> [u64; 3] {
    [0, 1, 2].map(|d| plan.scale.size[d].div_ceil(plan.chunk[d]))
}

fn chunk_name(plan: &Plan, at: [u64; 3]) -> String {
    let b = [0, 1, 2].map(|d| {
        let start = at[d] * plan.chunk[d];
        let end = (start + plan.chunk[d]).min(plan.scale.size[d]);
        (plan.voxel_offset[d] + start as i64, plan.voxel_offset[d] + end as i64)
    });
    format!("{}-{}_{}-{}_{}-{}", b[0].0, b[0].1, b[1].0, b[1].1, b[2].0, b[2].1)
}

fn find_axes(image: &Image, store: &str) -> Result<Axes> {
    let find = |n: &str| image.axes.iter().position(|a| a.name == n);
    let bad = |what: String| ConvertError::input(format!("{store}: {what}"));
    if let Some(other) = image.axes.iter().find(|a| !["t", "c", "z", "y", "x"].contains(&a.name.as_str())) {
        return Err(bad(format!("an axis named {}: a precomputed volume has x, y, z and channels", json::compact(&V::String(other.name.clone())))));
    }
    let (Some(y), Some(x)) = (find("y"), find("x")) else {
        return Err(bad("the image has no y and x axes".into()));
    };
    let axes = Axes { t: find("t"), c: find("c"), z: find("z"), y, x };
    let shape = &image.levels[0].array.shape;
    if let Some(t) = axes.t.filter(|&t| shape[t] > 1) {
        return Err(bad(format!("{} time points: a precomputed volume has no time axis (export one time point at a time)", shape[t])));
    }
    if let Some(c) = axes.c.filter(|&c| shape[c] != 1 && shape[c] != 3) {
        return Err(bad(format!("{} channels: a precomputed jpeg volume holds 1 (grayscale) or 3 (colour)", shape[c])));
    }
    Ok(axes)
}

#[allow(clippy::too_many_arguments)]
fn plan_level<'m>(
    image: &'m Image,
    level: &'m store_read::Level,
    l: usize,
    axes: Axes,
    channels: usize,
    quality: Option<u8>,
    store: &str,
    warnings: &mut Vec<String>,
) -> Result<Plan<'m>> {
    let meta = &level.array;
    let bad = |what: String| ConvertError::input(format!("{store}/{}: {what}", level.path));
    let len = |a: Option<usize>, of: &[u64]| a.map_or(1, |i| of[i]);
    let chunk = [meta.chunk[axes.x], meta.chunk[axes.y], len(axes.z, &meta.chunk)];
    let size = [meta.shape[axes.x], meta.shape[axes.y], len(axes.z, &meta.shape)];
    if len(axes.t, &meta.chunk) != 1 {
        return Err(bad("a chunk spans several time points".into()));
    }
    if axes.c.is_some() && len(axes.c, &meta.chunk) as usize != channels {
        return Err(bad(format!(
            "each chunk holds {} of the {channels} channels (grayscale planes): a precomputed jpeg chunk is one colour JPEG of all 3",
            len(axes.c, &meta.chunk)
        )));
    }
    // the image each chunk is: z-major rows of x, channels interleaved
    let (h, w) = (chunk[1] * chunk[2], chunk[0]);
    let want: Vec<u64> = if channels == 3 { vec![h, w, 3] } else { vec![h, w] };
    let image_shape: Vec<u64> = if channels == 1 && meta.image.shape.len() == 3 && meta.image.shape[2] == 1 { meta.image.shape[..2].to_vec() } else { meta.image.shape.clone() };
    let runs: Vec<usize> = meta.image.order.iter().copied().filter(|&a| meta.chunk[a] > 1).collect();
    let expected: Vec<usize> = [axes.z, Some(axes.y), Some(axes.x), axes.c].into_iter().flatten().filter(|&a| meta.chunk[a] > 1).collect();
    if image_shape != want || runs != expected {
        return Err(bad(format!(
            "its chunks are JPEG images of {:?} with their samples in axis order {:?}; precomputed's are x × (y·z) with rows z-major ({want:?})",
            meta.image.shape,
            meta.image.order.iter().map(|&a| image.axes[a].name.as_str()).collect::<Vec<_>>()
        )));
    }
    for (d, &n) in chunk.iter().enumerate() {
        if n > 65535 || (d > 0 && h > 65535) {
            return Err(bad("chunks larger than a JPEG can be".into()));
        }
    }
    let unit = image.axes[axes.x].unit.as_deref();
    let factor = nanometres(unit).unwrap_or_else(|| {
        let w = format!("level {}: the x axis's unit {} is not a length unit this exporter knows: its scale is taken as nanometres", level.path, unit.unwrap_or("(none)"));
        if !warnings.contains(&w) && l == 0 {
            warnings.push(w);
        }
        1.0
    });
    let axis_nm = |a: Option<usize>| -> f64 {
        match a {
            Some(i) => level.scale[i] * nanometres(image.axes[i].unit.as_deref()).unwrap_or(factor),
            None => level.scale[axes.x] * factor,
        }
    };
    let resolution = [axis_nm(Some(axes.x)), axis_nm(Some(axes.y)), axis_nm(axes.z)];
    if resolution.iter().any(|r| !(r.is_finite() && *r > 0.0)) {
        return Err(bad(format!("a scale of {resolution:?} nm: each must be a positive number")));
    }
    let offset_of = |a: Option<usize>, r: f64| -> i64 {
        match a {
            Some(i) => (level.translation[i] * nanometres(image.axes[i].unit.as_deref()).unwrap_or(factor) / r).round() as i64,
            None => 0,
        }
    };
    let voxel_offset = [offset_of(Some(axes.x), resolution[0]), offset_of(Some(axes.y), resolution[1]), offset_of(axes.z, resolution[2])];
    let copyable = meta.config.encoded_color_space != EncodedColorSpace::Rgb;
    let mut encode = meta.config.clone();
    if let Some(q) = quality {
        encode.quality = q;
    }
    if !copyable {
        // neuroglancer decodes YCbCr JPEG: RGB-coded chunks are re-encoded so
        let conf = V::Object(vec![("quality".into(), V::Number(encode.quality.into())), ("encoded_color_space".into(), V::String("ycbcr".into()))]);
        encode = JpegConfig::parse(&conf).map_err(|e| bad(e.to_string()))?;
        let w = format!("level {}: its chunks are RGB-coded JPEG, which neuroglancer does not decode: re-encoded as YCbCr", level.path);
        warnings.push(w);
    }
    let key = resolution.iter().map(|&r| json::number(r)).collect::<Vec<_>>().join("_");
    Ok(Plan {
        meta,
        path: level.path.clone(),
        scale: ScaleSummary { key, size, chunk, resolution },
        voxel_offset,
        chunk,
        encode,
        copyable,
    })
}

fn info_json(plans: &[Plan], channels: usize) -> V {
    let n = |v: f64| V::Number(v);
    let scales = plans
        .iter()
        .map(|p| {
            V::Object(vec![
                ("key".into(), V::String(p.scale.key.clone())),
                ("size".into(), V::Array(p.scale.size.iter().map(|&v| n(v as f64)).collect())),
                ("resolution".into(), V::Array(p.scale.resolution.iter().map(|&v| n(v)).collect())),
                ("voxel_offset".into(), V::Array(p.voxel_offset.iter().map(|&v| n(v as f64)).collect())),
                ("chunk_sizes".into(), V::Array(vec![V::Array(p.chunk.iter().map(|&v| n(v as f64)).collect())])),
                ("encoding".into(), V::String("jpeg".into())),
                ("jpeg_quality".into(), n(f64::from(p.encode.quality))),
            ])
        })
        .collect();
    V::Object(vec![
        ("@type".into(), V::String("neuroglancer_multiscale_volume".into())),
        ("type".into(), V::String("image".into())),
        ("data_type".into(), V::String("uint8".into())),
        ("num_channels".into(), n(channels as f64)),
        ("scales".into(), V::Array(scales)),
    ])
}
