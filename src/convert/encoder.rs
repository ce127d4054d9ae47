//! Chunks encoded as JPEG streams, several at once: a batch of chunk images goes to an
//! [`Encoders`] and comes back in order, so the store is the same whatever encodes it. The
//! core's own is [`Threads`] (threads natively; wasm builds have none and encode on the
//! calling thread); a binding may bring its own (the npm package: its worker threads).
//! Level 0's chunks are decoded again to measure the conversion's error against the input.

use super::error::{ConvertError, Result};
use crate::{EncodeOptions, JpegConfig};

/// One chunk's samples: `ch × cw` pixels of `planes × components` samples (a chunk of
/// several z planes: each plane's `ch` rows below the last's), and the part of it that is
/// inside the image, over which the error is measured: (rows, columns) of each of its first
/// `planes` z planes.
pub struct Tile {
    pub samples: Vec<u8>,
    pub valid: (u32, u32),
    pub planes: u32,
}

/// A chunk's stream(s): one, or one per plane of a c axis of grayscale planes; and at level
/// 0 the squared error over its valid samples and their count.
pub struct Encoded {
    pub streams: Vec<Vec<u8>>,
    pub error: Option<(u64, u64)>,
}

/// One chunk image to encode: C-order samples of `shape` ([h, w] or [h, w, 3]), decoded
/// again after when `decode_again`.
pub struct EncodeJob<'s> {
    pub samples: &'s [u8],
    pub shape: Vec<u64>,
    pub decode_again: bool,
}

/// A job's stream, and its decoded samples when asked for.
pub struct EncodedJob {
    pub stream: Vec<u8>,
    pub decoded: Option<Vec<u8>>,
}

/// One stream to decode to samples of `shape` (a TIFF's JPEG tile).
pub struct DecodeJob<'s> {
    pub stream: &'s [u8],
    pub shape: Vec<u64>,
}

/// A batch of encode jobs handed over: done already, or to collect later.
pub enum Batch {
    Done(Vec<EncodedJob>),
    /// the encoders' own handle
    Pending(u64),
}

/// Tiles' samples, or the decoder's message for each tile it refused.
pub type Decoded = Vec<std::result::Result<Vec<u8>, String>>;

/// A batch of decode jobs handed over: done already, or to collect later.
pub enum DecodeBatch {
    Done(Decoded),
    Pending(u64),
}

/// Where batches of chunk images are encoded, and a TIFF's tiles decoded.
pub trait Encoders {
    /// How many encode at once (sizes the batches; the summary's `workers`).
    fn workers(&self) -> usize;
    /// Every job's stream, in the jobs' order; the first failure fails the batch.
    fn encode(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> Result<Vec<EncodedJob>>;
    /// Hands `jobs` over and returns before they are done, where the encoders can (the
    /// caller reads on while they encode); [`Self::finish`] gives their streams. By default
    /// they are encoded here, now.
    fn start(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> Result<Batch> {
        self.encode(config, options, jobs).map(Batch::Done)
    }
    /// A started batch's streams, in its jobs' order.
    fn finish(&self, batch: Batch) -> Result<Vec<EncodedJob>> {
        match batch {
            Batch::Done(done) => Ok(done),
            Batch::Pending(_) => Err(ConvertError::input("cannot encode a chunk: these encoders start no batches")),
        }
    }
    /// Every job's samples, in the jobs' order, or the decoder's message for a job it refused.
    fn decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> Result<Decoded>;
    /// As [`Self::start`], for decodes.
    fn start_decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> Result<DecodeBatch> {
        self.decode(config, jobs).map(DecodeBatch::Done)
    }
    /// A started decode batch's samples.
    fn finish_decode(&self, batch: DecodeBatch) -> Result<Decoded> {
        match batch {
            DecodeBatch::Done(done) => Ok(done),
            DecodeBatch::Pending(_) => Err(ConvertError::input("cannot decode the tiles: these encoders start no batches")),
        }
    }
}

/// The core's encoders: `workers` threads, the caller's among them (wasm: the caller's only).
pub struct Threads(pub usize);

impl Encoders for Threads {
    fn workers(&self) -> usize {
        if cfg!(target_arch = "wasm32") {
            0
        } else {
            self.0
        }
    }

    fn encode(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> Result<Vec<EncodedJob>> {
        parallel_map(self.0, jobs, |job| encode_job(config, options, job)).into_iter().collect()
    }

    fn decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> Result<Decoded> {
        Ok(parallel_map(self.0, jobs, |job| crate::decode(config, job.stream, &job.shape).map_err(|e| e.to_string())))
    }
}

/// One job on this thread.
pub fn encode_job(config: &JpegConfig, options: &EncodeOptions, job: &EncodeJob) -> Result<EncodedJob> {
    let stream = crate::encode_from_with_options(config, &job.samples, &job.shape, options).map_err(codec_error)?;
    let decoded = match job.decode_again {
        true => Some(crate::decode(config, &stream, &job.shape).map_err(codec_error)?),
        false => None,
    };
    Ok(EncodedJob { stream, decoded })
}

/// Chunks handed to the encoders ([`ChunkEncoder::start`]): encoded already, or waiting.
pub enum Started {
    Ready(Vec<Encoded>),
    Waiting(Waiting),
}

pub struct Waiting {
    batch: Batch,
    /// each chunk's part inside the image: rows and columns of each of its z planes inside it
    valid: Vec<((u32, u32), u32)>,
    /// rows of one z plane of a chunk
    plane_rows: usize,
    /// the images encoded, kept to measure the error (else empty)
    images: Vec<Vec<u8>>,
    stride: usize,
    per_pixel: usize,
    measure: bool,
}

pub struct ChunkEncoder<'e> {
    pub config: JpegConfig,
    /// a configuration per level where they differ (a TIFF's levels 1+); empty: `config` for all
    pub level_configs: Vec<JpegConfig>,
    pub options: EncodeOptions,
    /// samples per pixel of a tile's samples
    pub channels: usize,
    /// a c axis of this many grayscale planes (1: none)
    pub planes: usize,
    pub encoders: &'e dyn Encoders,
}

fn codec_error(e: crate::CodecError) -> ConvertError {
    ConvertError::input(format!("cannot encode a chunk: {e}"))
}

/// `f` of every item, in order, on up to `workers` threads (the caller's among them;
/// wasm builds run them all on the caller's).
pub fn parallel_map<T: Sync, R: Send>(workers: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = if cfg!(target_arch = "wasm32") { 0 } else { workers.min(items.len()) };
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let work = || {
            let mut done = Vec::new();
            loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= items.len() {
                    return done;
                }
                done.push((i, f(&items[i])));
            }
        };
        let handles: Vec<_> = (1..threads).map(|_| scope.spawn(work)).collect();
        for (i, r) in work() {
            results[i] = Some(r);
        }
        for handle in handles {
            for (i, r) in handle.join().expect("a worker thread panicked") {
                results[i] = Some(r);
            }
        }
    });
    results.into_iter().map(|r| r.expect("every item done")).collect()
}

impl ChunkEncoder<'_> {
    pub fn workers(&self) -> usize {
        self.encoders.workers()
    }

    fn config(&self, level: usize) -> &JpegConfig {
        self.level_configs.get(level).unwrap_or(&self.config)
    }

    /// Hands `tiles` of `level` (each `chunk` = (ch, cw) pixels in each of `depth` z planes)
    /// to the encoders, measuring the error when `measure`; [`Self::finish`] gives their
    /// chunks' streams.
    pub fn start(&self, level: usize, tiles: Vec<Tile>, (ch, cw): (u32, u32), depth: u32, measure: bool) -> Result<Started> {
        let plane_rows = ch as usize;
        let (ch, cw) = (u64::from(ch) * u64::from(depth), u64::from(cw));
        let valid: Vec<((u32, u32), u32)> = tiles.iter().map(|t| (t.valid, t.planes)).collect();
        // a c axis of grayscale planes: one image per plane, cut out here
        let images: Vec<Vec<u8>> = match self.planes {
            1 => tiles.into_iter().map(|t| t.samples).collect(),
            n => tiles.iter().flat_map(|t| (0..n).map(move |c| t.samples.iter().skip(c).step_by(n).copied().collect())).collect(),
        };
        let per_pixel = if self.planes > 1 { 1 } else { self.channels };
        let shape: Vec<u64> = if per_pixel == 3 { vec![ch, cw, 3] } else { vec![ch, cw] };
        let jobs: Vec<EncodeJob> =
            images.iter().map(|samples| EncodeJob { samples, shape: shape.clone(), decode_again: measure }).collect();
        let batch = self.encoders.start(self.config(level), &self.options, &jobs)?;
        drop(jobs);
        let done = matches!(batch, Batch::Done(_));
        // (the samples are kept only to measure the error against)
        let images = if measure { images } else { Vec::new() };
        let waiting = Waiting { batch, valid, plane_rows, images, stride: cw as usize * per_pixel, per_pixel, measure };
        match done {
            // (measured now, so that the samples go now)
            true => self.collect(waiting).map(Started::Ready),
            false => Ok(Started::Waiting(waiting)),
        }
    }

    /// The streams of a started batch, and each chunk's error where it was measured.
    pub fn finish(&self, started: Started) -> Result<Vec<Encoded>> {
        match started {
            Started::Ready(encoded) => Ok(encoded),
            Started::Waiting(waiting) => self.collect(waiting),
        }
    }

    fn collect(&self, waiting: Waiting) -> Result<Vec<Encoded>> {
        let Waiting { batch, valid, plane_rows, images, stride, per_pixel, measure } = waiting;
        let count = valid.len() * self.planes;
        let mut done = self.encoders.finish(batch)?.into_iter();
        if done.len() != count {
            return Err(ConvertError::input(format!("cannot encode a chunk: {} streams came back for {count} chunks", done.len())));
        }
        let mut encoded = Vec::with_capacity(valid.len());
        for (t, &(valid, planes)) in valid.iter().enumerate() {
            let mut streams = Vec::with_capacity(self.planes);
            let mut error = measure.then_some((0u64, 0u64));
            for p in 0..self.planes {
                let out = done.next().expect("one per job");
                if let (Some((sum, count)), Some(decoded)) = (error.as_mut(), &out.decoded) {
                    let samples = &images[t * self.planes + p];
                    let (h, w) = (valid.0 as usize, valid.1 as usize * per_pixel);
                    if decoded.len() != samples.len() {
                        return Err(ConvertError::input("cannot encode a chunk: its decoded samples are not the chunk's size"));
                    }
                    for y in (0..planes as usize).flat_map(|z| z * plane_rows..z * plane_rows + h) {
                        let a = &samples[y * stride..y * stride + w];
                        let b = &decoded[y * stride..y * stride + w];
                        *sum += a.iter().zip(b).map(|(&p, &q)| (i32::from(p) - i32::from(q)).pow(2) as u64).sum::<u64>();
                    }
                    *count += (planes as usize * h * w) as u64;
                }
                streams.push(out.stream);
            }
            encoded.push(Encoded { streams, error });
        }
        Ok(encoded)
    }
}
