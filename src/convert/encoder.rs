//! Chunks encoded as JPEG streams, several at once: a batch of tiles goes out to `workers`
//! threads (natively; wasm builds encode on the calling thread) and comes back in order, so
//! the store is the same whatever the thread count. Level 0's chunks are decoded again to
//! measure the conversion's error against the input.

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

pub struct ChunkEncoder {
    pub config: JpegConfig,
    pub options: EncodeOptions,
    /// samples per pixel of a tile's samples
    pub channels: usize,
    /// a c axis of this many grayscale planes (1: none)
    pub planes: usize,
    pub workers: usize,
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

impl ChunkEncoder {
    /// Encodes `tiles` (each `chunk` = (ch, cw) pixels), measuring the error when `measure`.
    pub fn encode_all(&self, tiles: &[Tile], chunk: (u32, u32), measure: bool) -> Result<Vec<Encoded>> {
        parallel_map(self.workers, tiles, |t| self.encode_one(t, chunk, measure)).into_iter().collect()
    }

    fn encode_one(&self, tile: &Tile, (ch, cw): (u32, u32), measure: bool) -> Result<Encoded> {
        let (ch, cw) = (u64::from(ch), u64::from(cw));
        let mut streams = Vec::with_capacity(self.planes);
        let mut error = measure.then_some((0u64, 0u64));
        let mut one = |samples: &[u8], per_pixel: usize| -> Result<()> {
            let shape: Vec<u64> = if per_pixel == 3 { vec![ch, cw, 3] } else { vec![ch, cw] };
            let bytes = crate::encode_from_with_options(&self.config, &samples, &shape, &self.options)
                .map_err(codec_error)?;
            if let Some((sum, count)) = error.as_mut() {
                let decoded = crate::decode(&self.config, &bytes, &shape).map_err(codec_error)?;
                let (h, w) = (tile.valid.0 as usize, tile.valid.1 as usize * per_pixel);
                let stride = cw as usize * per_pixel;
                for y in 0..h {
                    let a = &samples[y * stride..y * stride + w];
                    let b = &decoded[y * stride..y * stride + w];
                    *sum += a.iter().zip(b).map(|(&p, &q)| (i32::from(p) - i32::from(q)).pow(2) as u64).sum::<u64>();
                }
                *count += (h * w) as u64;
            }
            streams.push(bytes);
            Ok(())
        };
        if self.planes > 1 {
            for c in 0..self.planes {
                let plane: Vec<u8> = tile.samples.iter().skip(c).step_by(self.planes).copied().collect();
                one(&plane, 1)?;
            }
        } else {
            one(&tile.samples, self.channels)?;
        }
        Ok(Encoded { streams, error })
    }
}
