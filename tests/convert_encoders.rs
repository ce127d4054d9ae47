//! The converter's encoding seam (`Encoders`): what a binding brings in place of the core's
//! threads (the npm package: worker threads) gets every chunk image, in batches, and the
//! store is the same whatever encodes it; a chunk it cannot encode stops the conversion
//! with its message, as the core's own encoder's would.
#![cfg(all(not(target_arch = "wasm32"), feature = "converter"))]

use std::cell::{Cell, RefCell};

use zarr_jpeg::convert::{
    encode_job, Conversion, ConvertError, ConvertErrorKind, ConvertOptions, DecodeJob, EncodeJob, EncodedJob, Encoders, MemoryStore,
    Quiet, Result, SamplesSource, Threads,
};
use zarr_jpeg::{ConfigValue, EncodeOptions, JpegConfig};

/// Encodes on this thread, counting jobs and batches; fails the `fail_at`-th job if set.
struct Counting {
    jobs: Cell<usize>,
    batches: RefCell<Vec<usize>>,
    fail_at: Option<usize>,
}

impl Encoders for Counting {
    fn workers(&self) -> usize {
        3
    }

    fn encode(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> Result<Vec<EncodedJob>> {
        self.batches.borrow_mut().push(jobs.len());
        jobs.iter()
            .map(|job| {
                self.jobs.set(self.jobs.get() + 1);
                if Some(self.jobs.get()) == self.fail_at {
                    return Err(ConvertError::input("cannot encode a chunk: refused by the test"));
                }
                encode_job(config, options, job)
            })
            .collect()
    }

    fn decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> Result<Vec<std::result::Result<Vec<u8>, String>>> {
        Threads(0).decode(config, jobs)
    }
}

fn image(height: usize, width: usize, channels: usize) -> Vec<u8> {
    (0..height * width * channels).map(|i| ((i * 7 + i / (width * channels) * 13) % 251) as u8).collect()
}

fn options(json: &[(&str, ConfigValue)]) -> ConvertOptions {
    ConvertOptions::parse(&ConfigValue::Object(json.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())).unwrap()
}

fn convert(data: &[u8], shape: &[f64], options: &ConvertOptions, encoders: Option<&dyn Encoders>) -> Result<(MemoryStore, usize)> {
    let source = SamplesSource::new(data.to_vec(), shape)?;
    let mut conversion = Conversion::from_source(Box::new(source), "image", options)?;
    if let Some(encoders) = encoders {
        conversion = conversion.with_encoders(encoders);
    }
    let mut store = MemoryStore::default();
    let summary = conversion.run(&mut store, &mut Quiet, "out.zarr")?;
    Ok((store, summary.chunks as usize))
}

#[test]
fn the_store_is_the_same_whatever_encodes_it() {
    let n = ConfigValue::Number;
    for (shape, extra) in [
        (vec![300.0, 410.0, 3.0], vec![("chunk", n(64.0))]),
        (vec![300.0, 410.0, 3.0], vec![("chunk", n(64.0)), ("shard", n(128.0)), ("workers", n(2.0))]),
        (vec![257.0, 129.0], vec![("chunk", n(32.0)), ("trellis", ConfigValue::Bool(true))]),
    ] {
        let data = image(shape[0] as usize, shape[1] as usize, shape.get(2).map_or(1, |&c| c as usize));
        let opts = options(&extra);
        let (core, chunks) = convert(&data, &shape, &opts, None).unwrap();
        let counting = Counting { jobs: Cell::new(0), batches: RefCell::new(Vec::new()), fail_at: None };
        let (theirs, _) = convert(&data, &shape, &opts, Some(&counting)).unwrap();
        assert_eq!(core.values, theirs.values, "{shape:?}");
        assert_eq!(counting.jobs.get(), chunks, "{shape:?}: one job per chunk");
        assert!(counting.batches.borrow().iter().any(|&b| b > 1), "{shape:?}: chunks go in batches");
    }
}

#[test]
fn a_chunk_the_encoders_refuse_stops_the_conversion_with_their_message() {
    let data = image(200, 200, 3);
    let opts = options(&[("chunk", ConfigValue::Number(64.0))]);
    let counting = Counting { jobs: Cell::new(0), batches: RefCell::new(Vec::new()), fail_at: Some(5) };
    let error = convert(&data, &[200.0, 200.0, 3.0], &opts, Some(&counting)).err().expect("refused");
    assert_eq!(error.kind(), ConvertErrorKind::InvalidInput);
    assert_eq!(error.message(), "cannot encode a chunk: refused by the test");
}
