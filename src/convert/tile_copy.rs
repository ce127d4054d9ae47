//! Level 0 made of a source's baseline JPEG tiles (a TIFF page's, a DICOM slide's frames),
//! each chunk one tile: its stream copied (the source makes it a complete stream first:
//! tables spliced in, colour markers made to say what the container says; entropy-coded
//! data unchanged) with the chunk shape = the tile shape. A tile whose frame differs from
//! the first one's (progressive, another sampling, another size) is decoded and re-encoded
//! to level 0's configuration. Each tile is decoded too, in Z order, and its samples feed
//! the levels above through the one pyramid builder.

use super::encoder::{parallel_map, ChunkEncoder, DecodeBatch, DecodeJob, Encoders};
use super::error::{ConvertError, Result};
use super::levels::{plan_levels, Layout, Pyramid, Shards};
use super::options::{is_int, mcu_size, ConvertOptions, Plan};
use super::pyramid::{batch_size, cut_tile, z_order, ChunkPyramid, Context, Node};
use super::source::{ImageInfo, PixelSize, TileGrid};
use super::store::{ChunkStore, StoreWriter};
use super::summary::{self, TileCounts};
use super::events::{now, Events};
use super::summary::Summary;
use super::{json, metadata};
use super::level_quality::{level_qualities, with_quality, SAMPLE_TILES};
use crate::decode::StoredColorSpace;
use crate::inspect::{inspect_stream, StreamInfo};
use crate::{ConfigValue as V, JpegConfig};

/// The largest tile: 65535 per side (a JPEG's), 2^26 pixels.
const MAX_JPEG_SIDE: u64 = 65535;
const MAX_TILE_PIXELS: u64 = 1 << 26;
/// The PSNR levels 1+ are kept at by default (dB, against their exact averages).
const DEFAULT_LEVEL_PSNR: f64 = 30.0;

/// Where a source's tiles come from: read on the converting thread, in any order.
pub trait TileInput {
    /// Tile `i`'s complete JPEG stream, None for a tile the source does not hold (an empty
    /// chunk); `label` names the tile in messages.
    fn read(&self, i: u64, label: &str) -> Result<Option<Vec<u8>>>;
}

/// What a source of JPEG tiles says of them, before any is read.
pub struct TileSpec {
    /// the input's name in messages
    pub file: String,
    /// the image within it, in messages ("page 0", "level 0")
    pub label: String,
    /// the container's name in messages ("TIFF", "DICOM")
    pub container: &'static str,
    /// what the container calls the image the tiles make up ("page", "image")
    pub image_noun: &'static str,
    pub height: u64,
    pub width: u64,
    pub tile_height: u64,
    pub tile_width: u64,
    /// tiles: columns fastest, then rows, then planes
    pub grid: TileGrid,
    /// planes of grayscale tiles (a c axis), or 1
    pub planes: usize,
    /// components of one tile (1 or 3)
    pub components: usize,
    /// the first tile the source holds (the page's frame is read from it)
    pub first: u64,
    /// tiles the source does not hold
    pub empty: u64,
    /// the pixel size the file states
    pub pixel: Option<PixelSize>,
    /// the summary's `source` member
    pub summary: V,
    /// the level 0 attribute counting the copied tiles ("copied_from_tiff_tiles")
    pub copied_key: &'static str,
    /// the ImageInfo format ("tiff", "dicom")
    pub format: &'static str,
    /// more members of level 0's `zarr_jpeg` attributes
    pub attributes: Vec<(String, V)>,
}

/// What one tile became.
struct TileOut {
    /// decoded samples (th × tw × components), None for an empty tile
    samples: Option<Vec<u8>>,
    /// the chunk's stream, None for an empty tile
    bytes: Option<Vec<u8>>,
    copied: bool,
    why: String,
}

/// What a tile needs after it is inspected.
enum Step {
    /// a tile to copy, whose samples are still to decode
    Copy(Vec<u8>),
    Done(TileOut),
}

/// A group of tiles with the decoders: their cells (row, column), what each tile (and
/// plane) needs, and the decodes of those to copy.
type Group = (Vec<(u32, u32)>, Vec<(u64, Step)>, DecodeBatch);

/// A source's JPEG tiles, ready to convert.
pub struct TileJob<'a> {
    input: Box<dyn TileInput + 'a>,
    tiles: Tiles,
}

impl std::ops::Deref for TileJob<'_> {
    type Target = Tiles;
    fn deref(&self) -> &Tiles {
        &self.tiles
    }
}

/// What the tiles' work needs, apart from the input (shared by the decode threads).
pub struct Tiles {
    spec: TileSpec,
    frame: StreamInfo,
    config0: JpegConfig,
    /// components of one tile (1 with several planes)
    tc: usize,
    planes: usize,
    pixel: Option<PixelSize>,
    /// the PSNR target levels 1+ are chosen for (None: `quality`, or the tiles', for all)
    level_psnr: Option<f64>,
    pub info: ImageInfo,
    pub plan: Plan,
    pub pyramid: Pyramid,
}

fn int_option(options: &ConvertOptions, name: &str) -> Option<std::result::Result<f64, String>> {
    options.get(name).map(|v| is_int(v).ok_or_else(|| json::compact(v)))
}

/// The largest tile side and area this converter takes, checked before a tile is read.
pub fn check_tile_size(image: &str, tw: u64, th: u64, kinds: &str) -> Result<()> {
    if tw > MAX_JPEG_SIDE || th > MAX_JPEG_SIDE || tw * th > MAX_TILE_PIXELS {
        return Err(ConvertError::input(format!(
            "{image}: {kinds} of {tw} × {th} pixels are larger than this converter accepts (65535 per side, 2^26 pixels)"
        )));
    }
    Ok(())
}

impl<'a> TileJob<'a> {
    pub fn prepare(input: Box<dyn TileInput + 'a>, spec: TileSpec, options: &ConvertOptions, warnings: &mut Vec<String>) -> Result<TileJob<'a>> {
        let container = spec.container;
        let kinds = format!("{}s", spec.grid.kind);
        // the options: level 0 keeps the tiles, so what would change them is refused
        if options.get("rescale").is_some() {
            return Err(ConvertError::argument(format!("rescale applies to 16-bit input; this {container}'s {kinds} are 8-bit JPEG")));
        }
        for key in ["chunkDepth", "downsampleZ"] {
            if options.get(key).is_some() {
                return Err(ConvertError::argument(format!("{key} applies to a stack of z planes; this {container} is one 2-D image")));
            }
        }
        for key in ["color", "subsampling", "chunk"] {
            if options.get(key).is_some() {
                return Err(ConvertError::argument(format!(
                    "{key} applies to PNG and JPEG input; a {container}'s level 0 keeps its {kinds} (their size, colour space and subsampling)"
                )));
            }
        }
        let quality = match int_option(options, "quality") {
            None => None,
            Some(Ok(q)) if (1.0..=100.0).contains(&q) => Some(q as u8),
            Some(Ok(q)) => return Err(quality_error(&json::compact(&V::Number(q)))),
            Some(Err(v)) => return Err(quality_error(&v)),
        };
        let level_psnr = match (options.get("levelPsnr"), quality) {
            (None, Some(_)) => None,
            (None, None) => Some(DEFAULT_LEVEL_PSNR),
            (Some(V::Number(db)), None) if *db == 0.0 => None,
            (Some(V::Number(db)), None) if (1.0..=99.0).contains(db) => Some(*db),
            (Some(_), Some(_)) => {
                return Err(ConvertError::argument(format!(
                    "quality and levelPsnr both set the quality of levels 1+ of a {container} of JPEG {kinds}: give one"
                )))
            }
            (Some(v), None) => {
                return Err(ConvertError::argument(format!(
                    "levelPsnr must be a number of dB from 1 to 99, or 0 for the {kinds}' own quality, got {}",
                    json::compact(v)
                )))
            }
        };
        let shard = match int_option(options, "shard") {
            None => None,
            Some(Ok(s)) if s >= 0.0 && s <= f64::from(u32::MAX) => Some(s as u32),
            Some(Ok(s)) => return Err(shard_error(&json::compact(&V::Number(s)), spec.grid.kind)),
            Some(Err(v)) => return Err(shard_error(&v, spec.grid.kind)),
        };
        let common = options.pyramid_options()?;
        check_tile_size(&format!("{}: {}", spec.file, spec.label), spec.tile_width, spec.tile_height, &kinds)?;

        let (tc, planes) = (spec.components, spec.planes);
        // the frame: the first tile's (the tiles of one image share it, as the TIFF JPEG
        // rules have it; one that differs is re-encoded)
        let first = spec.first;
        let probe = TileProbe { spec: &spec };
        let label = probe.label(first);
        let stream = input
            .read(first, &label)?
            .ok_or_else(|| ConvertError::input(format!("{label}: the source holds no data for it")))?;
        let frame = probe.inspect(first, &stream)?;
        if frame.precision != 8 {
            return Err(ConvertError::input(format!("{label}: {}-bit JPEG; the jpeg codec stores 8-bit samples only", frame.precision)));
        }
        if frame.components.len() != tc {
            return Err(ConvertError::input(format!(
                "{label}: the JPEG frame has {} component(s) but the {} has {tc} sample(s) per pixel{}",
                frame.components.len(),
                spec.image_noun,
                if planes > 1 { " in each plane" } else { "" }
            )));
        }
        // the colour space the first tile's markers state: each source's `read` has made them
        // say what its container says where the tile itself says nothing
        let color = crate::markers::read_header(&stream)
            .and_then(|header| crate::decode::stored_color_space(&header))
            .map_err(|e| ConvertError::input(format!("{label}: {e}")))?;
        let estimated = frame.quality.unwrap_or(95);
        let name = match color {
            StoredColorSpace::Grayscale => "grayscale",
            StoredColorSpace::Rgb => "rgb",
            _ => "ycbcr",
        };
        let mut members = vec![("quality".to_string(), V::Number(estimated.into())), ("encoded_color_space".into(), V::String(name.into()))];
        if color == StoredColorSpace::Ycbcr {
            let factors = frame
                .components
                .iter()
                .map(|c| V::Array(vec![V::Number(c.horizontal.into()), V::Number(c.vertical.into())]))
                .collect();
            members.push(("subsampling".into(), V::Array(factors)));
        }
        let config0 = JpegConfig::parse(&V::Object(members)).map_err(|e| {
            ConvertError::input(format!("{label}: its frame cannot be described by a jpeg codec configuration: {e}"))
        })?;
        let level_quality = f64::from(quality.unwrap_or(estimated));
        let config_up = JpegConfig::parse(&V::Object(if tc == 1 {
            vec![("quality".into(), V::Number(level_quality)), ("encoded_color_space".into(), V::String("grayscale".into()))]
        } else {
            vec![
                ("quality".into(), V::Number(level_quality)),
                ("encoded_color_space".into(), V::String("ycbcr".into())),
                ("subsampling".into(), V::Array(vec![pair(2, 2), pair(1, 1), pair(1, 1)])),
            ]
        }))
        .map_err(|e| ConvertError::argument(format!("{e}")))?;

        // the levels: halved until one fits a tile (or as many as asked), level 0's chunks the tiles
        let (height, width) = (spec.height as u32, spec.width as u32);
        let (th, tw) = (spec.tile_height as u32, spec.tile_width as u32);
        let shards = match shard {
            None => Shards::Auto,
            Some(0) => Shards::Off,
            Some(side) if side % th != 0 || side % tw != 0 => {
                return Err(ConvertError::argument(format!("shard {side} is not a multiple of the {} size {tw} × {th}", spec.grid.kind)));
            }
            Some(side) => Shards::Side(side),
        };
        let mcu = mcu_size(&config_up);
        let layout = Layout { chunk: (th, tw), mcu, levels: common.levels, shards, whole_level0_chunk: true };
        let pyramid = plan_levels(height, width, &layout)?;

        let pixel = match common.pixel_size {
            Some(size) => Some(PixelSize { x: size, y: size, source: "--pixel-size" }),
            None => spec.pixel,
        };
        if let Some(p) = pixel {
            if (p.x - p.y).abs() > 1e-9 * p.x {
                warnings.push(format!(
                    "the pixels are not square ({} × {} µm); the scale uses {} for both axes",
                    json::compact(&V::Number(p.x)),
                    json::compact(&V::Number(p.y)),
                    json::compact(&V::Number(p.x))
                ));
            }
        }
        let unit = common.unit.clone().or_else(|| (pixel.is_some() && common.pixel_size.is_none()).then(|| "micrometer".to_string()));
        let plan = Plan {
            config: config_up,
            chunk: th,
            chunk_depth: 1,
            downsample_z: false,
            shard: None,
            levels: common.levels,
            channel_axis: common.channel_axis,
            pixel_size: pixel.map(|p| p.x),
            unit,
            encode_options: common.encode_options,
            workers: common.workers,
            warnings: Vec::new(),
            components: tc,
            mcu,
            planes,
            rescale: None,
            stack: Default::default(),
            windows: Vec::new(),
        };
        let info = ImageInfo {
            height,
            width,
            channels: tc * planes,
            format: spec.format,
            planes: planes > 1,
            pixel_size: pixel.map(|p| p.x),
            summary: Some(spec.summary.clone()),
        };
        let tiles = Tiles { spec, frame, config0, tc, planes, pixel, level_psnr, info, plan, pyramid };
        Ok(TileJob { input, tiles })
    }
}

impl Tiles {
    fn probe(&self) -> TileProbe<'_> {
        TileProbe { spec: &self.spec }
    }

    fn shape0(&self) -> Vec<u64> {
        let (th, tw) = (self.spec.tile_height, self.spec.tile_width);
        if self.tc == 3 {
            vec![th, tw, 3]
        } else {
            vec![th, tw]
        }
    }

    fn same_frame(&self, info: &StreamInfo) -> bool {
        info.components.len() == self.frame.components.len()
            && info
                .components
                .iter()
                .zip(&self.frame.components)
                .all(|(a, b)| a.horizontal == b.horizontal && a.vertical == b.vertical)
    }


    /// Tile `i` (of any plane) from its stream: inspected, decoded, and copied or re-encoded.
    fn one(&self, i: u64, stream: Option<Vec<u8>>) -> Result<TileOut> {
        match self.classify(i, stream)? {
            Step::Done(out) => Ok(out),
            Step::Copy(stream) => {
                let samples = crate::decode(&self.config0, &stream, &self.shape0()).map_err(|e| self.decode_error(i, &e.to_string()))?;
                Ok(TileOut { samples: Some(samples), bytes: Some(stream), copied: true, why: String::new() })
            }
        }
    }

    fn decode_error(&self, i: u64, message: &str) -> ConvertError {
        ConvertError::input(format!("{}: cannot decode: {message}", self.probe().label(i)))
    }

    /// Tile `i`: empty, or copied (its decode is left to the caller, who may batch it), or
    /// re-encoded here (another frame).
    fn classify(&self, i: u64, stream: Option<Vec<u8>>) -> Result<Step> {
        let Some(stream) = stream else {
            return Ok(Step::Done(TileOut { samples: None, bytes: None, copied: false, why: String::new() }));
        };
        let probe = self.probe();
        let label = probe.label(i);
        let info = probe.inspect(i, &stream)?;
        let (th, tw) = (self.spec.tile_height, self.spec.tile_width);
        let shape0 = self.shape0();
        let copyable = info.sof == 0xC0
            && info.precision == 8
            && u64::from(info.width) == tw
            && u64::from(info.height) == th
            && self.same_frame(&info);
        if copyable {
            return Ok(Step::Copy(stream));
        }
        if info.precision != 8 {
            return Err(ConvertError::input(format!("{label}: {}-bit JPEG; the jpeg codec stores 8-bit samples only", info.precision)));
        }
        if info.components.len() != self.tc {
            return Err(ConvertError::input(format!("{label}: {} component(s) where the page has {}", info.components.len(), self.tc)));
        }
        // decoded at its own size, then cut (or padded) to the tile's
        let (ih, iw) = (usize::from(info.height), usize::from(info.width));
        let own: Vec<u64> = if self.tc == 3 { vec![ih as u64, iw as u64, 3] } else { vec![ih as u64, iw as u64] };
        let decoded = crate::decode(&self.config0, &stream, &own)
            .map_err(|e| ConvertError::input(format!("{label}: cannot decode ({}): {e}", info.process_name())))?;
        let samples = cut_tile(&decoded, ih, iw, self.tc, 0, th as usize, tw as usize);
        let bytes = crate::encode_from_with_options(&self.config0, &samples.as_slice(), &shape0, &self.plan.encode_options)
            .map_err(|e| ConvertError::input(format!("{label}: cannot encode: {e}")))?;
        let why = if info.process_name() != "baseline" {
            info.process_name().to_string()
        } else if iw as u64 != tw || ih as u64 != th {
            format!("{iw} × {ih}")
        } else {
            "another sampling".to_string()
        };
        Ok(Step::Done(TileOut { samples: Some(samples), bytes: Some(bytes), copied: false, why }))
    }

}

impl TileJob<'_> {
    /// Each level's configuration: level 0's (the tiles'), then levels 1+ at `quality`, the
    /// tiles' own, or the lowest meeting the PSNR target on a sample of tiles (level_quality.rs).
    fn level_configs(&self) -> Result<Vec<JpegConfig>> {
        let levels = self.pyramid.shapes.len();
        let mut configs = vec![self.config0.clone()];
        let Some(target) = self.level_psnr.filter(|_| levels > 1) else {
            configs.resize(levels, self.plan.config.clone());
            return Ok(configs);
        };
        // tiles inside the image (an edge tile's padding is not image), spread over the page and its planes
        let (th, tw) = (self.spec.tile_height, self.spec.tile_width);
        let (rows, columns) = (self.spec.grid.rows, self.spec.grid.columns);
        let inside_rows = if rows * th > self.spec.height { rows - 1 } else { rows }.max(1);
        let inside_columns = if columns * tw > self.spec.width { columns - 1 } else { columns }.max(1);
        let inside = inside_rows * inside_columns;
        let picks = (inside * self.planes as u64).min(SAMPLE_TILES as u64);
        let mut sample = Vec::with_capacity(picks as usize);
        for k in 0..picks {
            let at = k * inside * self.planes as u64 / picks;
            let (plane, at) = (at / inside, at % inside);
            let i = plane * rows * columns + (at / inside_columns) * columns + at % inside_columns;
            if let Some(samples) = self.tiles.one(i, self.read(i)?)?.samples {
                sample.push(samples);
            }
        }
        let start = self.plan.config.quality;
        let qualities = level_qualities(&sample, (th as usize, tw as usize), self.tc, &self.plan.config, start, target, levels - 1);
        for q in qualities {
            configs.push(with_quality(&self.plan.config, q).ok_or_else(|| ConvertError::input("cannot set a level's quality"))?);
        }
        Ok(configs)
    }

    /// Tile `i`'s complete stream (read on the calling thread: the input need not be shared).
    fn read(&self, i: u64) -> Result<Option<Vec<u8>>> {
        self.input.read(i, &self.probe().label(i))
    }

    /// The tiles at `cells` (each plane's), read here, inspected (and the rare tile of
    /// another frame re-encoded) on the core's threads, the copied ones handed to `encoders`
    /// to decode.
    fn start_group(&self, cells: Vec<(u32, u32)>, encoders: &dyn Encoders, shape0: &[u64]) -> Result<Group> {
        let planes = self.planes as u64;
        let plane_tiles = self.spec.grid.rows * self.spec.grid.columns;
        let mut streams = Vec::with_capacity(cells.len() * self.planes);
        for &(ty, tx) in &cells {
            for p in 0..planes {
                let i = p * plane_tiles + u64::from(ty) * self.spec.grid.columns + u64::from(tx);
                streams.push(std::sync::Mutex::new(Some((i, self.read(i)))));
            }
        }
        let tiles = &self.tiles;
        let steps = parallel_map(self.plan.workers, &streams, |slot| -> Result<(u64, Step)> {
            let (i, stream) = slot.lock().expect("unpoisoned").take().expect("taken once");
            Ok((i, tiles.classify(i, stream?)?))
        });
        let steps: Vec<(u64, Step)> = steps.into_iter().collect::<Result<_>>()?;
        let jobs: Vec<DecodeJob> = steps
            .iter()
            .filter_map(|(_, step)| match step {
                Step::Copy(stream) => Some(DecodeJob { stream, shape: shape0.to_vec() }),
                Step::Done(_) => None,
            })
            .collect();
        let batch = encoders.start_decode(&tiles.config0, &jobs)?;
        drop(jobs);
        Ok((cells, steps, batch))
    }

    pub fn run(self, writer: &mut dyn StoreWriter, events: &mut dyn Events, encoders: &dyn Encoders, output: &str, name: &str, mut warnings: Vec<String>) -> Result<Summary> {
        let started = now();
        for w in &warnings {
            events.warning(w);
        }
        let (th, tw) = (self.spec.tile_height as usize, self.spec.tile_width as usize);
        let width = self.spec.width as usize;
        let planes = self.planes;
        let c = self.tc * planes;
        let level_configs = self.level_configs()?;
        let encoder = ChunkEncoder {
            config: self.plan.config.clone(),
            level_configs: level_configs.clone(),
            options: self.plan.encode_options,
            channels: c,
            planes,
            encoders,
        };
        let plan = &self.plan;
        let key = |y: u32, x: u32, p: u32| metadata::chunk_key(plan, 0, Default::default(), y, x, p);
        let mut store0 = ChunkStore::new("0", self.pyramid.grids[0]);
        let (mut copied, mut stored0, mut bytes0) = (0u64, 0u64, 0u64);
        let mut reencoded: Vec<(Vec<u32>, String)> = Vec::new();
        let cx = Context { plan, pyramid: &self.pyramid, writer: &mut *writer, encoder: &encoder, events: &mut *events, chunks_done: 0, error: (0, 0), plane: Default::default(), z_average: None, slabs: None };
        let mut rows = ChunkPyramid::new(cx, c).with_external_level0();
        let shape0 = self.tiles.shape0();
        let (height, grid_rows, grid_columns) = (self.spec.height as usize, self.spec.grid.rows as u32, self.spec.grid.columns as u32);
        // The tiles in Z order, a group at a time, so that the levels above complete their
        // blocks one after another: memory does not grow with the page's width. Group k + 1
        // is handed to the decoders, then group k (decoding meanwhile) is taken back,
        // stored and handed to the pyramid: the decoders work while this thread reads.
        let group = 2 * batch_size(encoders.workers());
        let mut cells = z_order(grid_rows, grid_columns);
        let mut previous: Option<Group> = None;
        loop {
            let next: Vec<(u32, u32)> = cells.by_ref().take(group).collect();
            let current = match next.is_empty() {
                false => Some(self.start_group(next, encoders, &shape0)?),
                true => None,
            };
            let Some((positions, steps, batch)) = std::mem::replace(&mut previous, current) else {
                match previous {
                    None => break, // no group left to start, none with the decoders
                    Some(_) => continue, // the first group: started, nothing to take back yet
                }
            };
            let tiles = &self.tiles;
            let mut decoded = encoders.finish_decode(batch)?.into_iter();
            let copies = steps.iter().filter(|(_, step)| matches!(step, Step::Copy(_))).count();
            if decoded.len() != copies {
                return Err(ConvertError::input("cannot decode the tiles: the decoder gave back another number of tiles"));
            }
            let mut outs = steps.into_iter().map(|(i, step)| match step {
                Step::Done(out) => Ok(out),
                Step::Copy(stream) => match decoded.next().expect("one per job") {
                    Ok(samples) if samples.len() == shape0.iter().product::<u64>() as usize => {
                        Ok(TileOut { samples: Some(samples), bytes: Some(stream), copied: true, why: String::new() })
                    }
                    Ok(_) => Err(tiles.decode_error(i, "the decoded samples are not the tile's size")),
                    Err(message) => Err(tiles.decode_error(i, &message)),
                },
            });
            for (ty, tx) in positions {
                let mut any = false;
                let mut sum = 0u64;
                let mut node = match planes {
                    1 => None,
                    _ => Some(vec![0u8; th * tw * c]),
                };
                for p in 0..planes {
                    let t = outs.next().expect("one per tile and plane")?;
                    if let Some(b) = &t.bytes {
                        any = true;
                        sum += b.len() as u64;
                        if t.copied {
                            copied += 1;
                        } else if planes > 1 {
                            reencoded.push((vec![p as u32, ty, tx], t.why.clone()));
                        } else {
                            reencoded.push((vec![ty, tx], t.why.clone()));
                        }
                    }
                    match t.bytes {
                        Some(b) => store0.store(rows.writer(), &key, ty, tx, p as u32, b)?,
                        None => store0.skip(rows.writer(), &key, ty, tx, p as u32)?,
                    }
                    match (&mut node, t.samples) {
                        (Some(node), Some(s)) => node.iter_mut().skip(p).step_by(c).zip(s).for_each(|(v, s)| *v = s),
                        (Some(_), None) => {}
                        (None, s) => node = Some(s.unwrap_or_else(|| vec![0u8; th * tw * c])),
                    }
                }
                if any {
                    stored0 += 1;
                    bytes0 += sum;
                }
                rows.chunk_written(0, any, sum)?;
                let valid = (th.min(height - ty as usize * th), tw.min(width - tx as usize * tw));
                let samples = node.expect("a tile has at least one plane");
                rows.add(0, ty, tx, Node { samples, valid })?;
            }
        }
        store0.finish(rows.writer())?;
        let (mut totals, _, chunks) = rows.finish()?;
        totals[0].chunks = stored0;
        totals[0].encoded_bytes = bytes0;
        totals[0].bytes_written = store0.bytes_written;
        reencoded.sort();

        // metadata last: level 0's attributes say which chunks are the TIFF's tiles
        let mut metadata_bytes = 0u64;
        let mut put = |writer: &mut dyn StoreWriter, key: &str, value: &V| -> Result<()> {
            let text = json::pretty(value);
            metadata_bytes += text.len() as u64;
            writer.write(key, text.as_bytes())
        };
        put(writer, "zarr.json", &metadata::group(plan, &self.pyramid.shapes, name))?;
        let mut plan0 = plan.clone();
        plan0.config = self.config0.clone();
        for (l, (shape, grid)) in self.pyramid.shapes.iter().zip(&self.pyramid.grids).enumerate() {
            let mut level_plan = plan.clone();
            level_plan.config = level_configs[l].clone();
            let mut meta = metadata::level_array(&level_plan, l, *shape, grid);
            if l == 0 {
                let source = self.spec.file.rsplit(['/', '\\']).next().unwrap_or(&self.spec.file).to_string();
                let chunks = reencoded.iter().map(|(k, _)| V::Array(k.iter().map(|&v| V::Number(v.into())).collect())).collect();
                set_attributes(
                    &mut meta,
                    V::Object(vec![(
                        "zarr_jpeg".into(),
                        V::Object(vec![
                            ("source".into(), V::String(source)),
                            (self.spec.copied_key.into(), V::Number(copied as f64)),
                            ("reencoded_chunks".into(), V::Array(chunks)),
                            ("quality_estimated".into(), V::Bool(self.frame.quality.is_some())),
                        ]
                        .into_iter()
                        .chain(self.spec.attributes.iter().cloned())
                        .collect()),
                    )]),
                );
            }
            put(writer, &format!("{l}/zarr.json"), &meta)?;
        }
        let where_ = format!("{}: {}", self.spec.file, self.spec.label);
        let mut late = Vec::new();
        for (chunk, why) in reencoded.iter().take(3) {
            let at: Vec<String> = chunk.iter().map(u32::to_string).collect();
            late.push(format!("{where_}: tile at chunk ({}) re-encoded ({why})", at.join(", ")));
        }
        if reencoded.len() > 3 {
            late.push(format!("{where_}: {} tiles re-encoded in all", reencoded.len()));
        }
        for w in &late {
            events.warning(w);
        }
        warnings.extend(late);
        let empty = self.spec.empty;
        let mut summary = summary::build(summary::Parts {
            output,
            name,
            plan: &plan0,
            pyramid: &self.pyramid,
            info: &self.info,
            channels: c,
            totals: &totals,
            chunks,
            metadata_bytes,
            error: (0, 0),
            seconds: now() - started,
            warnings,
            streamed: true,
        });
        summary.psnr = if reencoded.is_empty() { f64::INFINITY } else { f64::NAN };
        summary.tiles = Some(TileCounts {
            copied,
            reencoded: reencoded.len() as u64,
            empty,
            level_config: level_configs.get(1).unwrap_or(&plan.config).clone(),
            level_qualities: level_configs[1..].iter().map(|c| c.quality).collect(),
            level_psnr: self.level_psnr,
            quality_estimated: self.frame.quality.is_some(),
            pixel: self.pixel.map(|p| (p.x, p.source)),
            container: self.spec.container,
        });
        summary.channel_axis = (self.tc == 3).then(|| plan.channel_axis.name());
        summary.input_shape = if planes > 1 {
            vec![planes as u32, self.info.height, self.info.width]
        } else if self.tc == 3 {
            vec![self.info.height, self.info.width, 3]
        } else {
            vec![self.info.height, self.info.width]
        };
        Ok(summary)
    }
}

fn pair(h: u8, v: u8) -> V {
    V::Array(vec![V::Number(h.into()), V::Number(v.into())])
}

fn quality_error(got: &str) -> ConvertError {
    ConvertError::argument(format!("quality must be an integer from 1 to 100 (the jpeg codec's range), got {got}"))
}

fn shard_error(got: &str, kind: &str) -> ConvertError {
    ConvertError::argument(format!("shard must be 0 (no shards) or a positive multiple of the {kind} size, got {got}"))
}

fn set_attributes(meta: &mut V, attributes: V) {
    if let V::Object(members) = meta {
        if let Some(slot) = members.iter_mut().find(|(k, _)| k == "attributes") {
            slot.1 = attributes;
        }
    }
}

/// Naming and inspecting one source's tiles.
struct TileProbe<'t> {
    spec: &'t TileSpec,
}

impl TileProbe<'_> {
    fn label(&self, i: u64) -> String {
        let spec = self.spec;
        let plane_tiles = spec.grid.rows * spec.grid.columns;
        let j = i % plane_tiles;
        let channel = if spec.planes > 1 { format!(", channel {}", i / plane_tiles) } else { String::new() };
        format!(
            "{}: {} {} {i} (row {}, column {}{channel})",
            spec.file,
            spec.label,
            spec.grid.kind,
            j / spec.grid.columns,
            j % spec.grid.columns
        )
    }

    fn inspect(&self, i: u64, stream: &[u8]) -> Result<StreamInfo> {
        inspect_stream(stream).map_err(|e| ConvertError::input(format!("{}: {e}", self.label(i))))
    }
}
