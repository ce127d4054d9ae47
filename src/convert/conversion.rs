//! The dispatcher: opens an input as the source its bytes announce, resolves the options
//! into a plan and a pyramid, and runs the one pipeline into the caller's store.

use super::encoder::{ChunkEncoder, Encoders, Threads};
use super::error::{ConvertError, Result};
use super::events::{now, Events};
use super::levels::{self, Pyramid};
use super::options::{ConvertOptions, Plan};
use super::pyramid::{row_band_bytes, ChunkPyramid, Context, LevelTotals};
use super::source::{self, ImageInfo, ReadAt, RowSource, RowsEnd, StackPlanes};
use super::stack::{PlaneIndex, Stack};
use super::store::StoreWriter;
use super::summary::{self, Summary};
use super::tile_copy::TileJob;
use super::histogram::Histograms;
use super::slab::{Slabs, ZAverage};
use super::precomputed::{self, VolumeJob};
use super::source::Folder;
use super::{dicom, jpeg, json, metadata, png, tiff};

/// The format its first bytes announce.
pub fn sniff_format(bytes: &[u8]) -> Option<&'static str> {
    if bytes.starts_with(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a]) {
        return Some("png");
    }
    if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
        return Some("jpeg");
    }
    if dicom::is_dicom(bytes) {
        return Some("dicom");
    }
    if bytes.len() >= 4 {
        let le = bytes[0] == 0x49 && bytes[1] == 0x49;
        let be = bytes[0] == 0x4d && bytes[1] == 0x4d;
        let magic = if le { u16::from_le_bytes([bytes[2], bytes[3]]) } else { u16::from_be_bytes([bytes[2], bytes[3]]) };
        if (le || be) && (magic == 42 || magic == 43) {
            return Some("tiff");
        }
    }
    None
}

/// The multiscale's default name: the input's file name without its extension.
pub fn default_name(input: &str) -> String {
    let base = input.rsplit(['/', '\\']).next().unwrap_or(input);
    match base.rfind('.') {
        Some(dot) if dot > 0 || base.len() > 1 => base[..dot].to_string(),
        _ => base.to_string(),
    }
}

/// What produces level 0.
enum Job<'a> {
    /// rows, encoded into chunks
    Rows(Box<dyn RowSource + 'a>),
    /// a TIFF's JPEG tiles, copied
    Tiles(Box<TileJob<'a>>),
    /// a neuroglancer precomputed volume's chunks, copied
    Volume(Box<VolumeJob<'a>>),
}

/// A conversion whose input has been opened and whose options are resolved: what it will
/// write is known, nothing has been written.
pub struct Conversion<'a> {
    job: Job<'a>,
    plan: Plan,
    pyramid: Pyramid,
    name: String,
    to_gray: bool,
    /// samples per pixel of the rows the pyramid gets (1 after `to_gray`)
    channels: usize,
    warnings: Vec<String>,
    /// what encodes the chunks, when the caller brings its own (else `plan.workers` threads)
    encoders: Option<&'a dyn Encoders>,
    /// a stack's planes after the first
    more_planes: Option<Box<dyn StackPlanes<'a> + 'a>>,
}

impl<'a> Conversion<'a> {
    /// Opens `input` (named `file` in messages), reads its header and resolves `options`.
    pub fn open(input: &'a dyn ReadAt, file: &str, options: &ConvertOptions) -> Result<Conversion<'a>> {
        let head = source::read_bytes(input, 0, 132).map_err(|e| ConvertError::input(format!("cannot read {file}: {e}")))?;
        let rescale = options.rescale()?;
        let format = sniff_format(&head);
        if format != Some("dicom") && options.get("dicomIdentifiers").is_some() {
            return Err(ConvertError::argument("dicomIdentifiers applies to DICOM input"));
        }
        let source: Box<dyn RowSource + 'a> = match format {
            Some("png") => Box::new(png::PngSource::open(input, file, rescale)?),
            Some("jpeg") => {
                if rescale.is_some() {
                    return Err(ConvertError::argument(format!("rescale applies to 16-bit input; {file} is an 8-bit JPEG")));
                }
                Box::new(jpeg::JpegSource::open(input, file)?)
            }
            Some("dicom") => {
                let files = vec![dicom::DicomFile { name: file.to_string(), input }];
                return Self::from_dicom(dicom::open(files, file, options, rescale)?, file, options);
            }
            Some(_) => match tiff::open(input, file, options, rescale)? {
                tiff::Opened::Rows(rows) => rows,
                tiff::Opened::Stack(first, more, stack) => return Self::from_stack(first, Some(more), stack, file, options),
                tiff::Opened::Tiles(job, warnings) => return Self::from_tiles(job, warnings, file, options),
            },
            None => {
                return Err(ConvertError::input(format!(
                    "{file} is not a PNG, JPEG, TIFF or DICOM file (its first bytes are none of their signatures; a DICOM file has \"DICM\" after a 128-byte preamble)"
                )))
            }
        };
        Self::from_source(source, file, options)
    }

    /// Opens the files of a folder (named `folder` in messages): a neuroglancer precomputed
    /// volume when it has an `info` file (its chunks opened through `opener`), else a DICOM
    /// whole-slide series, whose files that are not DICOM are skipped with a warning.
    pub fn open_folder(
        files: Vec<(String, &'a dyn ReadAt)>,
        folder: &str,
        options: &ConvertOptions,
        opener: Option<&'a dyn Folder>,
    ) -> Result<Conversion<'a>> {
        if files.is_empty() {
            return Err(ConvertError::input(format!(
                "{folder} is an empty directory; a directory is read as a neuroglancer precomputed volume (with an info file) or a DICOM series"
            )));
        }
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        if let (true, Some(opener)) = (precomputed::is_volume(&names), opener) {
            return Self::from_volume(VolumeJob::open(opener, folder, options)?, folder, options);
        }
        let rescale = options.rescale()?;
        let files = files.into_iter().map(|(name, input)| dicom::DicomFile { name, input }).collect();
        Self::from_dicom(dicom::open(files, folder, options, rescale)?, folder, options)
    }

    fn from_dicom(opened: dicom::Opened<'a>, file: &str, options: &ConvertOptions) -> Result<Conversion<'a>> {
        match opened {
            dicom::Opened::Rows(rows) => Self::from_source(rows, file, options),
            dicom::Opened::Tiles(job, warnings) => Self::from_tiles(job, warnings, file, options),
        }
    }

    fn from_volume(job: VolumeJob<'a>, folder: &str, options: &ConvertOptions) -> Result<Conversion<'a>> {
        let name = match options.string("name")? {
            Some(name) => name.to_string(),
            None => default_name(folder.trim_end_matches(['/', '\\'])),
        };
        // (the volume's levels are its scales: the plan is the defaults', for callers that ask)
        let plan = ConvertOptions::default().resolve(job.info.channels)?;
        let pyramid = Pyramid { shapes: Vec::new(), grids: Vec::new() };
        let channels = job.info.channels;
        Ok(Conversion { job: Job::Volume(Box::new(job)), plan, pyramid, name, to_gray: false, channels, warnings: Vec::new(), encoders: None, more_planes: None })
    }

    fn from_tiles(job: Box<TileJob<'a>>, warnings: Vec<String>, file: &str, options: &ConvertOptions) -> Result<Conversion<'a>> {
        let name = match options.string("name")? {
            Some(name) => name.to_string(),
            None => default_name(file),
        };
        let (plan, pyramid) = (job.plan.clone(), job.pyramid.clone());
        let channels = job.info.channels;
        Ok(Conversion { job: Job::Tiles(job), plan, pyramid, name, to_gray: false, channels, warnings, encoders: None, more_planes: None })
    }

    /// A conversion of any row source.
    pub fn from_source(source: Box<dyn RowSource + 'a>, file: &str, options: &ConvertOptions) -> Result<Conversion<'a>> {
        Self::from_stack(source, None, Stack::default(), file, options)
    }

    /// A conversion of a stack of planes read as rows: `first` is plane (0, 0), `more` opens
    /// the others (None: a single plane).
    pub fn from_stack(
        source: Box<dyn RowSource + 'a>,
        more_planes: Option<Box<dyn StackPlanes<'a> + 'a>>,
        stack: Stack,
        file: &str,
        options: &ConvertOptions,
    ) -> Result<Conversion<'a>> {
        let info = source.info().clone();
        let gray = matches!(options.color(), Some(crate::ConfigValue::String(c)) if c == "grayscale");
        if info.planes && options.color().is_some() && !gray {
            return Err(ConvertError::argument(format!(
                "{file} has {} channels, stored as a c axis of grayscale chunks; color {} needs RGB input",
                info.channels,
                options.color().map_or(String::new(), |c| match c {
                    crate::ConfigValue::String(s) => s.clone(),
                    other => json::compact(other),
                })
            )));
        }
        let to_gray = !info.planes && info.channels == 3 && gray;
        let channels = if to_gray { 1 } else { info.channels };
        let stated;
        let options = match info.pixel_size {
            Some(size) if options.get("pixelSize").is_none() => {
                stated = options.with_pixel_size(size);
                &stated
            }
            _ => options,
        };
        let mut plan = options.resolve(if info.planes { 1 } else { channels })?;
        if info.planes {
            plan.planes = channels;
        }
        if stack.is_stack() && plan.components == 3 && plan.channel_axis == super::options::ChannelAxis::Last {
            return Err(ConvertError::argument(format!(
                "channelAxis \"last\" applies to 2-D images; {file} is a stack of {} planes, and OME-Zarr puts c before z",
                stack.count()
            )));
        }
        if (plan.chunk_depth > 1 || plan.downsample_z) && stack.z <= 1 {
            return Err(ConvertError::argument(format!(
                "{} applies to a stack of z planes; {file} has {}",
                if plan.chunk_depth > 1 { "chunkDepth" } else { "downsampleZ" },
                if stack.is_stack() { "time points but one z plane" } else { "one plane" }
            )));
        }
        plan.stack = stack;
        plan.rescale = source.rescaled();
        let mut warnings = source.warnings();
        if to_gray {
            warnings.push("the colour input is converted to grayscale (BT.601 luma)".into());
        }
        warnings.append(&mut plan.warnings);
        let pyramid = levels::plan_pyramid(&plan, info.height, info.width)?;
        let pyramid_bands = row_band_bytes(pyramid.grids[0].chunk.0, info.width, channels);
        let bands = source.band_bytes().saturating_add(pyramid_bands);
        if bands > source::MAX_BAND_BYTES {
            return Err(ConvertError::input(format!(
                "{file}: an image {} pixels wide is converted a band of rows at a time, and its bands would hold {} MiB, \
                 more than this converter holds ({} MiB){}",
                info.width,
                bands >> 20,
                source::MAX_BAND_BYTES >> 20,
                if pyramid_bands > source::MAX_BAND_BYTES { "; a smaller chunk holds less" } else { "" }
            )));
        }
        check_z_chunks(&plan, &pyramid, channels, file)?;
        let name = match options.string("name")? {
            Some(name) => name.to_string(),
            None => default_name(file),
        };
        Ok(Conversion { job: Job::Rows(source), plan, pyramid, name, to_gray, channels, warnings, encoders: None, more_planes })
    }

    /// Encodes the chunks with `encoders` instead of the core's threads.
    pub fn with_encoders(mut self, encoders: &'a dyn Encoders) -> Self {
        self.encoders = Some(encoders);
        self
    }

    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    pub fn pyramid(&self) -> &Pyramid {
        &self.pyramid
    }

    pub fn info(&self) -> &ImageInfo {
        match &self.job {
            Job::Rows(source) => source.info(),
            Job::Tiles(job) => &job.info,
            Job::Volume(job) => &job.info,
        }
    }

    /// Writes the store through `writer`; `seconds` measures the run for the summary.
    pub fn run(mut self, writer: &mut dyn StoreWriter, events: &mut dyn Events, output: &str) -> Result<Summary> {
        let threads = Threads(self.plan.workers);
        let encoders = self.encoders.unwrap_or(&threads);
        let source = match self.job {
            Job::Tiles(job) => return job.run(writer, events, encoders, output, &self.name, self.warnings),
            Job::Volume(job) => return job.run(writer, events, output, &self.name),
            Job::Rows(source) => source,
        };
        let mut source = source;
        let started = now();
        for w in &self.warnings {
            events.warning(w);
        }
        let channels = self.channels;
        let encoder = ChunkEncoder {
            config: self.plan.config.clone(),
            level_configs: Vec::new(),
            options: self.plan.encode_options,
            channels,
            planes: self.plan.planes,
            encoders,
        };
        loop {
            let group = json::pretty(&metadata::group(&self.plan, &self.pyramid.shapes, &self.name));
            writer.write("zarr.json", group.as_bytes())?;
            let group_bytes = group.len() as u64;
            let mut metadata_bytes = group_bytes;
            let mut put = |writer: &mut dyn StoreWriter, key: &str, value: &crate::ConfigValue| -> Result<()> {
                let text = json::pretty(value);
                metadata_bytes += text.len() as u64;
                writer.write(key, text.as_bytes())
            };
            for (l, (shape, grid)) in self.pyramid.shapes.iter().zip(&self.pyramid.grids).enumerate() {
                put(writer, &format!("{l}/zarr.json"), &metadata::level_array(&self.plan, l, *shape, grid))?;
            }
            let mut totals: Vec<LevelTotals> = Vec::new();
            let (mut error, mut chunks) = ((0, 0), 0);
            let mut restart = false;
            let mut read_warnings = Vec::new();
            // a multi-channel image's windows come from its data
            let mut histograms = (self.plan.planes > 1).then(|| Histograms::new(channels));
            let mut z_average = self.plan.downsample_z.then(|| ZAverage::new(self.plan.stack.z));
            let levels = self.pyramid.grids.len();
            let mut slabs = (self.plan.chunk_depth > 1)
                .then(|| Slabs::new((0..levels).map(|l| (self.plan.level_depth(l), self.plan.level_z(l))).collect()));
            for (i, at) in self.plan.stack.planes().enumerate() {
                let mut opened = match (&self.more_planes, i) {
                    (_, 0) => None,
                    (Some(more), _) => Some(more.open(at)?),
                    (None, _) => return Err(ConvertError::input(format!("plane {at:?} of the stack cannot be opened"))),
                };
                let plane: &mut dyn RowSource = match opened.as_deref_mut() {
                    Some(plane) => plane,
                    None => &mut *source,
                };
                let cx = Context {
                    plan: &self.plan,
                    pyramid: &self.pyramid,
                    writer: &mut *writer,
                    encoder: &encoder,
                    events: &mut *events,
                    chunks_done: chunks,
                    error,
                    plane: at,
                    z_average: z_average.as_mut(),
                    slabs: slabs.as_mut(),
                };
                let mut rows = ChunkPyramid::new(cx, channels);
                let counted = &mut histograms;
                let read = plane.read_rows(self.to_gray, &mut |samples, n| {
                    if let Some(h) = counted.as_mut() {
                        h.add(samples);
                    }
                    rows.push(samples, n)
                })?;
                match read {
                    RowsEnd::Again if i == 0 => {
                        restart = true;
                        break;
                    }
                    RowsEnd::Again => return Err(ConvertError::input(format!("plane t={}, z={} could not be read in one pass", at.t, at.z))),
                    RowsEnd::Done(warnings) => {
                        let (plane_totals, plane_error, done) = rows.finish()?;
                        add_totals(&mut totals, plane_totals);
                        (error, chunks) = (plane_error, done);
                        read_warnings.extend(warnings.into_iter().map(|w| plane_label(&self.plan.stack, at, w)));
                    }
                }
            }
            if restart {
                writer.clear()?;
                continue;
            }
            if slabs.is_some_and(|s| !s.is_empty()) || z_average.is_some_and(|z| !z.is_empty()) {
                return Err(ConvertError::input("the stack ended before every chunk of its z planes was read"));
            }
            if let Some(h) = histograms {
                // the group again, now that the windows are known
                self.plan.windows = h.windows();
                let text = json::pretty(&metadata::group(&self.plan, &self.pyramid.shapes, &self.name));
                writer.write("zarr.json", text.as_bytes())?;
                metadata_bytes = metadata_bytes - group_bytes + text.len() as u64;
            }
            for w in &read_warnings {
                events.warning(w);
            }
            self.warnings.extend(read_warnings);
            return Ok(summary::build(summary::Parts {
                output,
                name: &self.name,
                plan: &self.plan,
                pyramid: &self.pyramid,
                info: source.info(),
                channels,
                totals: &totals,
                chunks,
                metadata_bytes,
                error,
                seconds: now() - started,
                warnings: self.warnings.clone(),
                streamed: source.streamed(),
            }));
        }
    }
}

/// A chunk of several z planes is one JPEG no taller than a JPEG can be, and what is held
/// across planes (a slab of planes for such chunks, a plane's sums for levels that halve z,
/// at every level) fits the converter's memory.
fn check_z_chunks(plan: &Plan, pyramid: &Pyramid, channels: usize, file: &str) -> Result<()> {
    let depth = plan.level_depth(0);
    if depth > 1 {
        let height = u64::from(pyramid.grids[0].chunk.0) * u64::from(depth);
        if height > 65535 {
            return Err(ConvertError::argument(format!(
                "chunkDepth {depth} with chunks {} pixels high makes JPEG images {height} pixels high, more than a JPEG holds (65535)",
                pyramid.grids[0].chunk.0
            )));
        }
    }
    let plane_bytes = |g: &levels::Grid| g.chunk_count() * u64::from(g.chunk.0) * u64::from(g.chunk.1) * channels as u64;
    let grids = pyramid.grids.iter().enumerate();
    let slabs: u64 = grids.clone().filter(|_| depth > 1).map(|(l, g)| u64::from(plan.level_depth(l)) * plane_bytes(g)).sum();
    let sums: u64 = grids.skip(1).filter(|_| plan.downsample_z).map(|(_, g)| 4 * plane_bytes(g)).sum();
    let bytes = slabs.saturating_add(sums);
    if bytes > source::MAX_BAND_BYTES {
        return Err(ConvertError::input(format!(
            "{file}: what is held across its z planes (a slab of {depth} planes for chunks of several, a plane's sums for \
             levels that halve z) would be {} MiB, more than this converter holds ({} MiB); a smaller chunkDepth holds less",
            bytes >> 20,
            source::MAX_BAND_BYTES >> 20
        )));
    }
    Ok(())
}

/// Adds a plane's level totals to the stack's.
fn add_totals(totals: &mut Vec<LevelTotals>, plane: Vec<LevelTotals>) {
    if totals.is_empty() {
        *totals = plane;
        return;
    }
    for (sum, p) in totals.iter_mut().zip(plane) {
        sum.chunks += p.chunks;
        sum.encoded_bytes += p.encoded_bytes;
        sum.bytes_written += p.bytes_written;
    }
}

/// A warning from reading one plane of a stack, saying which.
fn plane_label(stack: &Stack, at: PlaneIndex, warning: String) -> String {
    if !stack.is_stack() {
        return warning;
    }
    format!("plane t={}, z={}: {warning}", at.t, at.z)
}

/// Converts `input` into `writer` (a store the caller commits), the whole of it in memory
/// terms of the core: open, resolve, run.
pub fn convert(input: &dyn ReadAt, file: &str, options: &ConvertOptions, writer: &mut dyn StoreWriter, events: &mut dyn Events) -> Result<Summary> {
    Conversion::open(input, file, options)?.run(writer, events, "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ConfigValue as V;

    fn plan(chunk: u32, depth: u32, z: u32) -> Plan {
        let options = V::Object(vec![("chunk".into(), V::Number(chunk.into())), ("chunkDepth".into(), V::Number(depth.into()))]);
        let mut plan = ConvertOptions::parse(&options).and_then(|o| o.resolve(1)).expect("valid options");
        plan.stack = Stack { z, ..Stack::default() };
        plan
    }

    #[test]
    fn a_chunk_of_z_planes_is_one_jpeg_no_taller_than_65535() {
        let p = plan(256, 255, 300);
        let pyramid = levels::plan_pyramid(&p, 1024, 1024).expect("a pyramid");
        check_z_chunks(&p, &pyramid, 1, "stack.tif").expect("255 × 256 fits");
        let p = plan(256, 256, 300);
        let e = check_z_chunks(&p, &pyramid, 1, "stack.tif").unwrap_err();
        assert!(e.to_string().contains("chunkDepth 256 with chunks 256 pixels high makes JPEG images 65536 pixels high"), "{e}");
    }

    #[test]
    fn a_slab_of_z_planes_must_fit_the_converter() {
        // 64 planes of a 16,384² colour plane and its levels: about 68 GiB
        let p = plan(256, 64, 100);
        let pyramid = levels::plan_pyramid(&p, 16384, 16384).expect("a pyramid");
        let e = check_z_chunks(&p, &pyramid, 3, "big.tif").unwrap_err();
        assert!(e.to_string().contains("big.tif: what is held across its z planes (a slab of 64 planes"), "{e}");
        let p = plan(256, 2, 100);
        check_z_chunks(&p, &pyramid, 1, "big.tif").expect("2 planes of 16,384² grayscale: about 680 MiB");
    }

    #[test]
    fn chunks_of_z_planes_have_keys_by_their_first_plane() {
        let p = plan(64, 3, 7);
        assert_eq!(p.stack_chunks(0), 3);
        assert_eq!(metadata::chunk_key(&p, 0, PlaneIndex { t: 0, z: 5 }, 1, 2, 0), "c/1/1/2");
        assert_eq!(metadata::chunk_shape(&p, 0, (64, 64)), [3, 64, 64]);
    }

    #[test]
    fn levels_that_halve_z_have_fewer_planes_and_shallower_chunks() {
        let mut p = plan(64, 4, 5);
        p.downsample_z = true;
        let z: Vec<u32> = (0..5).map(|l| p.level_z(l)).collect();
        assert_eq!(z, [5, 3, 2, 1, 1]);
        let depth: Vec<u32> = (0..5).map(|l| p.level_depth(l)).collect();
        assert_eq!(depth, [4, 3, 2, 1, 1]);
        let factor: Vec<f64> = (0..5).map(|l| p.level_z_factor(l)).collect();
        assert_eq!(factor, [1.0, 2.0, 4.0, 8.0, 8.0]);
        assert_eq!((0..5).map(|l| p.stack_chunks(l)).collect::<Vec<_>>(), [2, 1, 1, 1, 1]);
        assert_eq!(metadata::array_shape(&p, 1, (32, 32)), [3, 32, 32]);
    }
}
