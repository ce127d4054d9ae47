//! Chunks encoded as JPEG streams, several at once: a batch of chunk images goes to an
//! [`Encoders`] and comes back in order, so the store is the same whatever encodes it. The
//! core's own is [`Threads`] (threads natively; wasm builds have none and encode on the
//! calling thread); a binding may bring its own (the npm package: its worker threads).
//! Level 0's chunks are decoded again to measure the conversion's error against the input.

use super::error::{ConvertError, Result};
use crate::{EncodeOptions, JpegConfig};

/// One chunk's samples: `ch × cw` pixels of `planes × components` samples, and the part of
/// it that is inside the image (rows, columns), over which the error is measured.
pub struct Tile {
    pub samples: Vec<u8>,
    pub valid: (u32, u32),
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

/// Where batches of chunk images are encoded.
pub trait Encoders {
    /// How many encode at once (sizes the batches; the summary's `workers`).
    fn workers(&self) -> usize;
    /// Every job's stream, in the jobs' order; the first failure fails the batch.
    fn encode(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> Result<Vec<EncodedJob>>;
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

    /// Encodes `tiles` of `level` (each `chunk` = (ch, cw) pixels), measuring the error when `measure`.
    pub fn encode_all(&self, level: usize, tiles: &[Tile], (ch, cw): (u32, u32), measure: bool) -> Result<Vec<Encoded>> {
        let (ch, cw) = (u64::from(ch), u64::from(cw));
        // a c axis of grayscale planes: one image per plane, cut out here
        let planes: Vec<Vec<u8>> = match self.planes {
            1 => Vec::new(),
            n => tiles.iter().flat_map(|t| (0..n).map(move |c| t.samples.iter().skip(c).step_by(n).copied().collect())).collect(),
        };
        let per_pixel = if self.planes > 1 { 1 } else { self.channels };
        let shape: Vec<u64> = if per_pixel == 3 { vec![ch, cw, 3] } else { vec![ch, cw] };
        let images: Vec<&[u8]> = match self.planes {
            1 => tiles.iter().map(|t| t.samples.as_slice()).collect(),
            _ => planes.iter().map(Vec::as_slice).collect(),
        };
        let jobs: Vec<EncodeJob> =
            images.into_iter().map(|samples| EncodeJob { samples, shape: shape.clone(), decode_again: measure }).collect();
        let mut done = self.encoders.encode(self.config(level), &self.options, &jobs)?.into_iter();
        if done.len() != jobs.len() {
            return Err(ConvertError::input(format!("cannot encode a chunk: {} streams came back for {} chunks", done.len(), jobs.len())));
        }
        let mut encoded = Vec::with_capacity(tiles.len());
        for (t, tile) in tiles.iter().enumerate() {
            let mut streams = Vec::with_capacity(self.planes);
            let mut error = measure.then_some((0u64, 0u64));
            for p in 0..self.planes {
                let out = done.next().expect("one per job");
                if let (Some((sum, count)), Some(decoded)) = (error.as_mut(), &out.decoded) {
                    let samples = jobs[t * self.planes + p].samples;
                    let (h, w) = (tile.valid.0 as usize, tile.valid.1 as usize * per_pixel);
                    let stride = cw as usize * per_pixel;
                    if decoded.len() != samples.len() {
                        return Err(ConvertError::input("cannot encode a chunk: its decoded samples are not the chunk's size"));
                    }
                    for y in 0..h {
                        let a = &samples[y * stride..y * stride + w];
                        let b = &decoded[y * stride..y * stride + w];
                        *sum += a.iter().zip(b).map(|(&p, &q)| (i32::from(p) - i32::from(q)).pow(2) as u64).sum::<u64>();
                    }
                    *count += (h * w) as u64;
                }
                streams.push(out.stream);
            }
            encoded.push(Encoded { streams, error });
        }
        Ok(encoded)
    }
}
