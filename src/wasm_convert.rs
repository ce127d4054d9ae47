//! The converter across the wasm-bindgen boundary: the core's two IO seams filled with
//! JavaScript objects, values converted, errors mapped. No conversion logic lives here.
//!
//! ```js
//! const { summary, text } = convert(
//!   { size, read(offset, length) → Uint8Array },            // the input, or an array of
//!                                                            // them with names: a folder's files,
//!                                                            // with open(path) → input | null
//!                                                            // for files below it (a volume's chunks)
//!   "slide.svs", "/data/slide.zarr",                         // names, for messages and the summary
//!   { quality: 90, shard: 4096 },                            // the CLI's options
//!   { write(key, bytes), append(key, bytes), close(key), clear() },  // the store
//!   { warning(message), progress(event) },                   // may be {} (nothing called)
//!   { workers, encode(config, options, jobs), decode?(config, jobs),   // optional: who encodes
//!     start?(config, options, jobs) → id, startDecode?(config, jobs) → id, finish?(id) → results },
//! );
//! ```
//! Without the last argument the chunks are encoded on the calling thread. With it, each
//! batch of chunk images goes to `encode`: `config` the codec configuration, `options`
//! encode()'s, `jobs` `[{ samples, shape, decode }]`; it returns, in order, `[{ stream,
//! decoded? }]` (`decoded`: the stream decoded again, where `decode` asked) or `[{ error }]`
//! for a chunk that could not be encoded (a message). `decode`, if given, decodes a batch of
//! a TIFF's tiles: `jobs` `[{ stream, shape }]` → `[{ samples }]` or `[{ error }]`. `start`
//! and `finish`, if given, split `encode` in two: `start` hands the jobs over and returns a
//! batch number at once, and the conversion reads on until it needs them from `finish(id)`;
//! `startDecode` does the same for `decode`.
//! ```js
//! ```
//! A JavaScript exception thrown by any of these callbacks stops the conversion and is
//! thrown again, as it was, by `convert`; the core's refusals throw an `Error` with the
//! message (without the "zarr-jpeg convert: " prefix) and a `kind` (InvalidArgument,
//! InvalidInput, OutputUnavailable, Interrupted).

use std::cell::RefCell;
use std::io;

use js_sys::{Function, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use crate::convert::{
    self, Batch, Conversion, ConvertError, ConvertOptions, DecodeBatch, DecodeJob, Decoded, EncodeJob, EncodedJob, Encoders,
    Events, Folder, Progress, ReadAt, SamplesSource, StoreWriter, Summary,
};
use crate::{EncodeOptions, JpegConfig};
use crate::js_value::{from_config_value, to_config_value};
use crate::wasm::js_error;

/// The first JavaScript exception a callback threw (thrown again at the end).
type Thrown = RefCell<Option<JsValue>>;

fn method(object: &JsValue, name: &str, required: bool) -> Result<Option<Function>, JsValue> {
    let value = Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED);
    match value.dyn_into::<Function>() {
        Ok(f) => Ok(Some(f)),
        Err(v) if v.is_undefined() && !required => Ok(None),
        Err(_) => Err(js_error(&format!("convert: the {name} callback must be a function"), "InvalidArgument")),
    }
}

/// `{ size, read(offset, length) }` as an input.
fn js_input<'t>(input: &JsValue, thrown: &'t Thrown) -> Result<JsInput<'t>, JsValue> {
    let size = Reflect::get(input, &JsValue::from_str("size")).ok().and_then(|v| v.as_f64());
    let size = match size {
        Some(s) if s >= 0.0 && s.fract() == 0.0 && s <= 9_007_199_254_740_991.0 => s as u64,
        _ => return Err(js_error("convert: the input's size must be a whole number of bytes", "InvalidArgument")),
    };
    Ok(JsInput { size, read: method(input, "read", true)?.expect("required"), thrown })
}

/// The input: one file, or a folder's files with their names (and how to open the files
/// below it, when the caller can).
enum Input<'t> {
    File(JsInput<'t>),
    Folder(Vec<(String, JsInput<'t>)>, Option<JsFolder<'t>>),
}

/// A folder's `open(path)` → `{ size, read, close? }` or null.
struct JsFolder<'t> {
    open: Function,
    thrown: &'t Thrown,
}

/// A file opened through [`JsFolder`], closed (its `close`, if any) when dropped.
struct OpenedFile<'t> {
    input: JsInput<'t>,
    object: JsValue,
}

impl ReadAt for OpenedFile<'_> {
    fn size(&self) -> u64 {
        self.input.size
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.input.read_at(offset, buf)
    }
}

impl Drop for OpenedFile<'_> {
    fn drop(&mut self) {
        if let Ok(Some(close)) = method(&self.object, "close", false) {
            let _ = close.call0(&self.object);
        }
    }
}

impl Folder for JsFolder<'_> {
    fn open(&self, path: &str) -> io::Result<Option<Box<dyn ReadAt + '_>>> {
        let got = self.open.call1(&JsValue::NULL, &JsValue::from_str(path)).map_err(|e| {
            self.thrown.borrow_mut().get_or_insert(e);
            io::Error::other("the folder's open callback threw")
        })?;
        if got.is_null() || got.is_undefined() {
            return Ok(None);
        }
        let input = js_input(&got, self.thrown).map_err(|_| io::Error::other("the folder's open callback must return { size, read } or null"))?;
        Ok(Some(Box::new(OpenedFile { input, object: got })))
    }
}

/// `{ name, size, read }`: one file of a folder.
fn named_input<'t>(item: &JsValue, thrown: &'t Thrown) -> Result<(String, JsInput<'t>), JsValue> {
    let name = Reflect::get(item, &JsValue::from_str("name")).ok().and_then(|n| n.as_string());
    let name = name.ok_or_else(|| js_error("convert: each file of a folder input needs a name (a string)", "InvalidArgument"))?;
    Ok((name, js_input(item, thrown)?))
}

struct JsInput<'t> {
    size: u64,
    read: Function,
    thrown: &'t Thrown,
}

impl ReadAt for JsInput<'_> {
    fn size(&self) -> u64 {
        self.size
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        let want = (buf.len() as u64).min(self.size.saturating_sub(offset));
        if want == 0 {
            return Ok(0);
        }
        let got = self
            .read
            .call2(&JsValue::NULL, &JsValue::from_f64(offset as f64), &JsValue::from_f64(want as f64))
            .map_err(|e| {
                self.thrown.borrow_mut().get_or_insert(e);
                io::Error::other("the input's read callback threw")
            })?;
        let array = got
            .dyn_into::<Uint8Array>()
            .map_err(|_| io::Error::other("the input's read callback must return a Uint8Array"))?;
        let n = (array.length() as usize).min(buf.len());
        array.subarray(0, n as u32).copy_to(&mut buf[..n]);
        Ok(n)
    }
}

struct JsStore<'t> {
    write: Function,
    append: Function,
    close: Function,
    clear: Function,
    thrown: &'t Thrown,
}

impl JsStore<'_> {
    fn call(&self, f: &Function, key: &str, bytes: Option<&[u8]>) -> convert::Result<()> {
        let key = JsValue::from_str(key);
        let result = match bytes {
            Some(b) => f.call2(&JsValue::NULL, &key, &Uint8Array::from(b)),
            None => f.call1(&JsValue::NULL, &key),
        };
        result.map(drop).map_err(|e| {
            self.thrown.borrow_mut().get_or_insert(e);
            ConvertError::output("the store's callback threw")
        })
    }
}

impl StoreWriter for JsStore<'_> {
    fn write(&mut self, key: &str, bytes: &[u8]) -> convert::Result<()> {
        self.call(&self.write, key, Some(bytes))
    }
    fn append(&mut self, key: &str, bytes: &[u8]) -> convert::Result<()> {
        self.call(&self.append, key, Some(bytes))
    }
    fn close(&mut self, key: &str) -> convert::Result<()> {
        self.call(&self.close, key, None)
    }
    fn clear(&mut self) -> convert::Result<()> {
        self.clear.call0(&JsValue::NULL).map(drop).map_err(|e| {
            self.thrown.borrow_mut().get_or_insert(e);
            ConvertError::output("the store's clear callback threw")
        })
    }
}

struct JsEvents<'t> {
    warning: Option<Function>,
    progress: Option<Function>,
    thrown: &'t Thrown,
}

fn set(object: &js_sys::Object, key: &str, value: JsValue) {
    let _ = Reflect::set(object, &JsValue::from_str(key), &value);
}

impl Events for JsEvents<'_> {
    fn warning(&mut self, message: &str) {
        if let Some(f) = &self.warning {
            if let Err(e) = f.call1(&JsValue::NULL, &JsValue::from_str(message)) {
                self.thrown.borrow_mut().get_or_insert(e);
            }
        }
    }

    fn progress(&mut self, level: usize, levels: usize, done: u64, total: u64, what: &Progress) -> convert::Result<()> {
        if self.thrown.borrow().is_some() {
            return Err(ConvertError::new(convert::ConvertErrorKind::Interrupted, "a callback threw"));
        }
        let Some(f) = &self.progress else { return Ok(()) };
        let event = js_sys::Object::new();
        set(&event, "levels", JsValue::from_f64(levels as f64));
        set(&event, "chunksTotal", JsValue::from_f64(total as f64));
        set(&event, "chunksDone", JsValue::from_f64(done as f64));
        match what {
            Progress::Level { shape } => {
                set(&event, "phase", JsValue::from_str("level"));
                set(&event, "level", JsValue::from_f64(level as f64));
                let dims: js_sys::Array = shape.iter().map(|&d| JsValue::from_f64(f64::from(d))).collect();
                set(&event, "shape", dims.into());
            }
            Progress::Chunk { level_chunks_done, level_chunks_total } => {
                set(&event, "phase", JsValue::from_str("chunk"));
                set(&event, "level", JsValue::from_f64(level as f64));
                set(&event, "levelChunksDone", JsValue::from_f64(*level_chunks_done as f64));
                set(&event, "levelChunksTotal", JsValue::from_f64(*level_chunks_total as f64));
            }
        }
        f.call1(&JsValue::NULL, &event).map(drop).map_err(|e| {
            self.thrown.borrow_mut().get_or_insert(e);
            ConvertError::new(convert::ConvertErrorKind::Interrupted, "the progress callback threw")
        })
    }
}

/// Encoders the caller brings (the npm package's worker threads).
struct JsEncoders<'t> {
    workers: usize,
    encode: Function,
    decode: Option<Function>,
    start: Option<Function>,
    start_decode: Option<Function>,
    finish: Option<Function>,
    /// batches started and not finished: their number, and which jobs are decoded again
    started: RefCell<Vec<(u64, Vec<bool>)>>,
    thrown: &'t Thrown,
}

fn encode_options_value(options: &EncodeOptions) -> JsValue {
    let object = js_sys::Object::new();
    set(&object, "restartIntervals", JsValue::from_bool(options.restart_intervals));
    set(&object, "trellis", JsValue::from_bool(options.trellis));
    set(&object, "quantTable", JsValue::from_str(options.quant_table.name()));
    object.into()
}

impl Encoders for JsEncoders<'_> {
    fn workers(&self) -> usize {
        self.workers
    }

    fn encode(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> convert::Result<Vec<EncodedJob>> {
        let results = self
            .encode
            .call3(&JsValue::NULL, &from_config_value(&config.to_value()), &encode_options_value(options), &encode_jobs(jobs))
            .map_err(|e| self.threw(e, "the encode callback threw"))?;
        encoded_jobs(results, jobs.iter().map(|j| j.decode_again).collect())
    }

    fn start(&self, config: &JpegConfig, options: &EncodeOptions, jobs: &[EncodeJob]) -> convert::Result<Batch> {
        let Some(start) = &self.start else {
            return self.encode(config, options, jobs).map(Batch::Done);
        };
        let id = start
            .call3(&JsValue::NULL, &from_config_value(&config.to_value()), &encode_options_value(options), &encode_jobs(jobs))
            .map_err(|e| self.threw(e, "the start callback threw"))?;
        let id = batch_number(&id)?;
        self.started.borrow_mut().push((id, jobs.iter().map(|j| j.decode_again).collect()));
        Ok(Batch::Pending(id))
    }

    fn finish(&self, batch: Batch) -> convert::Result<Vec<EncodedJob>> {
        let id = match batch {
            Batch::Done(done) => return Ok(done),
            Batch::Pending(id) => id,
        };
        let decode_again = self.take_started(id)?;
        let results = self.call_finish(id)?;
        encoded_jobs(results, decode_again)
    }

    fn decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> convert::Result<Decoded> {
        let Some(decode) = &self.decode else {
            // (encoders without a decode callback: the tiles are decoded here)
            return crate::convert::Threads(0).decode(config, jobs);
        };
        let results = decode
            .call2(&JsValue::NULL, &from_config_value(&config.to_value()), &decode_jobs(jobs))
            .map_err(|e| self.threw(e, "the decode callback threw"))?;
        decoded_results(results, jobs.len())
    }

    fn start_decode(&self, config: &JpegConfig, jobs: &[DecodeJob]) -> convert::Result<DecodeBatch> {
        let (Some(start), Some(_)) = (&self.start_decode, &self.finish) else {
            return self.decode(config, jobs).map(DecodeBatch::Done);
        };
        let id = start
            .call2(&JsValue::NULL, &from_config_value(&config.to_value()), &decode_jobs(jobs))
            .map_err(|e| self.threw(e, "the startDecode callback threw"))?;
        let id = batch_number(&id)?;
        self.started.borrow_mut().push((id, Vec::new()));
        Ok(DecodeBatch::Pending(id))
    }

    fn finish_decode(&self, batch: DecodeBatch) -> convert::Result<Decoded> {
        let id = match batch {
            DecodeBatch::Done(done) => return Ok(done),
            DecodeBatch::Pending(id) => id,
        };
        self.take_started(id)?;
        let results = self.call_finish(id)?;
        let count = results.dyn_ref::<js_sys::Array>().map_or(0, |a| a.length() as usize);
        decoded_results(results, count)
    }
}

impl JsEncoders<'_> {
    /// A started batch, no longer waiting: which of its jobs are decoded again.
    fn take_started(&self, id: u64) -> convert::Result<Vec<bool>> {
        let at = self.started.borrow().iter().position(|(n, _)| *n == id);
        let at = at.ok_or_else(|| ConvertError::input("cannot encode a chunk: a batch was finished that was not started"))?;
        Ok(self.started.borrow_mut().remove(at).1)
    }

    fn call_finish(&self, id: u64) -> convert::Result<JsValue> {
        let finish = self.finish.as_ref().ok_or_else(|| ConvertError::input("cannot encode a chunk: the encoders have no finish callback"))?;
        finish.call1(&JsValue::NULL, &JsValue::from_f64(id as f64)).map_err(|e| self.threw(e, "the finish callback threw"))
    }

    /// A callback's exception, kept to be thrown again at the end.
    fn threw(&self, e: JsValue, what: &str) -> ConvertError {
        self.thrown.borrow_mut().get_or_insert(e);
        ConvertError::new(convert::ConvertErrorKind::Interrupted, what)
    }
}

fn batch_number(id: &JsValue) -> convert::Result<u64> {
    id.as_f64()
        .filter(|n| *n >= 0.0 && n.fract() == 0.0)
        .map(|n| n as u64)
        .ok_or_else(|| ConvertError::input("cannot encode a chunk: the start callback must return a batch number"))
}

/// Decode jobs as `[{ stream, shape }]`.
fn decode_jobs(jobs: &[DecodeJob]) -> js_sys::Array {
    let list = js_sys::Array::new();
    for job in jobs {
        let item = js_sys::Object::new();
        set(&item, "stream", Uint8Array::from(job.stream).into());
        let shape: js_sys::Array = job.shape.iter().map(|&d| JsValue::from_f64(d as f64)).collect();
        set(&item, "shape", shape.into());
        list.push(&item);
    }
    list
}

/// `[{ samples }]` or `[{ error }]`, one per job of `count`.
fn decoded_results(results: JsValue, count: usize) -> convert::Result<Decoded> {
    let malformed = || ConvertError::input("cannot decode the tiles: the decoders must give back one { samples } per job");
    let results = results.dyn_into::<js_sys::Array>().map_err(|_| malformed())?;
    if results.length() as usize != count {
        return Err(malformed());
    }
    let mut out = Vec::with_capacity(count);
    for item in results.iter() {
        if let Some(message) = Reflect::get(&item, &JsValue::from_str("error")).ok().and_then(|m| m.as_string()) {
            out.push(Err(message));
            continue;
        }
        let samples = Reflect::get(&item, &JsValue::from_str("samples")).ok().and_then(|v| v.dyn_into::<Uint8Array>().ok());
        out.push(Ok(samples.ok_or_else(malformed)?.to_vec()));
    }
    Ok(out)
}

/// Encode jobs as `[{ samples, shape, decode }]` (the samples copied out of wasm memory).
fn encode_jobs(jobs: &[EncodeJob]) -> js_sys::Array {
    let list = js_sys::Array::new();
    for job in jobs {
        let item = js_sys::Object::new();
        set(&item, "samples", Uint8Array::from(job.samples).into());
        let shape: js_sys::Array = job.shape.iter().map(|&d| JsValue::from_f64(d as f64)).collect();
        set(&item, "shape", shape.into());
        set(&item, "decode", JsValue::from_bool(job.decode_again));
        list.push(&item);
    }
    list
}

/// `[{ stream, decoded? }]` or `[{ error }]` for jobs of which those in `decode_again` were decoded again.
fn encoded_jobs(results: JsValue, decode_again: Vec<bool>) -> convert::Result<Vec<EncodedJob>> {
    let malformed = || ConvertError::input("cannot encode a chunk: the encoders must give back one { stream } per job");
    let results = results.dyn_into::<js_sys::Array>().map_err(|_| malformed())?;
    if results.length() as usize != decode_again.len() {
        return Err(malformed());
    }
    let bytes = |item: &JsValue, key: &str| -> Option<Vec<u8>> {
        Reflect::get(item, &JsValue::from_str(key)).ok()?.dyn_into::<Uint8Array>().ok().map(|a| a.to_vec())
    };
    let mut out = Vec::with_capacity(decode_again.len());
    for (item, again) in results.iter().zip(decode_again) {
        if let Some(message) = Reflect::get(&item, &JsValue::from_str("error")).ok().and_then(|m| m.as_string()) {
            return Err(ConvertError::input(format!("cannot encode a chunk: {message}")));
        }
        let stream = bytes(&item, "stream").ok_or_else(malformed)?;
        let decoded = match again {
            true => Some(bytes(&item, "decoded").ok_or_else(malformed)?),
            false => None,
        };
        out.push(EncodedJob { stream, decoded });
    }
    Ok(out)
}

fn js_encoders<'t>(value: &JsValue, thrown: &'t Thrown) -> Result<Option<JsEncoders<'t>>, JsValue> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let workers = Reflect::get(value, &JsValue::from_str("workers")).ok().and_then(|v| v.as_f64());
    let workers = match workers {
        Some(n) if n >= 1.0 && n.fract() == 0.0 && n <= convert::MAX_WORKERS as f64 => n as usize,
        _ => return Err(js_error("convert: the encoders' workers must be a whole number from 1 to 256", "InvalidArgument")),
    };
    Ok(Some(JsEncoders {
        workers,
        encode: method(value, "encode", true)?.expect("required"),
        decode: method(value, "decode", false)?,
        start: method(value, "start", false)?,
        start_decode: method(value, "startDecode", false)?,
        finish: method(value, "finish", false)?,
        started: RefCell::new(Vec::new()),
        thrown,
    }))
}

struct Seams<'t> {
    writer: JsStore<'t>,
    events: JsEvents<'t>,
}

fn seams<'t>(store: &JsValue, events: &JsValue, thrown: &'t Thrown) -> Result<Seams<'t>, JsValue> {
    Ok(Seams {
        writer: JsStore {
            write: method(store, "write", true)?.expect("required"),
            append: method(store, "append", true)?.expect("required"),
            close: method(store, "close", true)?.expect("required"),
            clear: method(store, "clear", true)?.expect("required"),
            thrown,
        },
        events: JsEvents { warning: method(events, "warning", false)?, progress: method(events, "progress", false)?, thrown },
    })
}

fn parse_options(options: &JsValue) -> Result<ConvertOptions, JsValue> {
    let value = to_config_value(options).map_err(|e| js_error(&format!("options: {e}"), "InvalidArgument"))?;
    ConvertOptions::parse(&value).map_err(|e| js_error(e.message(), e.kind().name()))
}

/// Runs an opened conversion, timed here (the core has no clock on wasm); → `{ summary, text }`.
fn run<'a>(
    conversion: convert::Result<Conversion<'a>>,
    seams: &mut Seams,
    encoders: Option<&'a JsEncoders>,
    output: &str,
    thrown: &Thrown,
) -> Result<JsValue, JsValue> {
    let result = conversion.and_then(|conversion| {
        let started = js_sys::Date::now();
        let conversion = match encoders {
            Some(encoders) => conversion.with_encoders(encoders),
            None => conversion,
        };
        let mut summary: Summary = conversion.run(&mut seams.writer, &mut seams.events, output)?;
        summary.seconds = (js_sys::Date::now() - started) / 1000.0;
        // (the caller's workers, or none: wasm has no threads of its own)
        summary.workers = encoders.map_or(0, |e| e.workers);
        Ok(summary)
    });
    if let Some(e) = thrown.borrow_mut().take() {
        return Err(e);
    }
    let summary = result.map_err(|e| js_error(e.message(), e.kind().name()))?;
    let out = js_sys::Object::new();
    set(&out, "summary", from_config_value(&summary.to_value()));
    set(&out, "text", JsValue::from_str(&summary.format()));
    Ok(out.into())
}

/// Converts the input into the store (see the module's documentation); returns
/// `{ summary, text }`: the CLI's `--json` object and its text.
#[wasm_bindgen(js_name = convert)]
pub fn convert_js(
    input: JsValue,
    file: &str,
    output: &str,
    options: JsValue,
    store: JsValue,
    events: JsValue,
    encoders: JsValue,
) -> Result<JsValue, JsValue> {
    let thrown: Thrown = RefCell::new(None);
    // an array of inputs is a folder's files: a DICOM series
    let input = match input.dyn_ref::<js_sys::Array>() {
        Some(items) => Input::Folder(
            items.iter().map(|item| named_input(&item, &thrown)).collect::<Result<_, JsValue>>()?,
            method(&input, "open", false)?.map(|open| JsFolder { open, thrown: &thrown }),
        ),
        None => Input::File(js_input(&input, &thrown)?),
    };
    let mut seams = seams(&store, &events, &thrown)?;
    let options = parse_options(&options)?;
    let encoders = js_encoders(&encoders, &thrown)?;
    let conversion = match &input {
        Input::File(reader) => Conversion::open(reader, file, &options),
        Input::Folder(files, opener) => Conversion::open_folder(
            files.iter().map(|(n, f)| (n.clone(), f as &dyn ReadAt)).collect(),
            file,
            &options,
            opener.as_ref().map(|o| o as &dyn Folder),
        ),
    };
    run(conversion, &mut seams, encoders.as_ref(), output, &thrown)
}

/// Converts samples in memory (`data`: a Uint8Array of `shape`, [height, width] or
/// [height, width, channels]) into the store, as [`convert_js`] converts a file.
#[wasm_bindgen(js_name = convertSamples)]
pub fn convert_samples(
    data: JsValue,
    shape: JsValue,
    output: &str,
    options: JsValue,
    store: JsValue,
    events: JsValue,
    encoders: JsValue,
) -> Result<JsValue, JsValue> {
    let thrown: Thrown = RefCell::new(None);
    let argument = |m: String| js_error(&m, "InvalidArgument");
    let Some(array) = data.dyn_ref::<Uint8Array>() else {
        let name = Reflect::get(&data, &JsValue::from_str("constructor"))
            .ok()
            .and_then(|c| Reflect::get(&c, &JsValue::from_str("name")).ok())
            .and_then(|n| n.as_string())
            .unwrap_or_else(|| data.js_typeof().as_string().unwrap_or_default());
        return Err(argument(format!("data must be a Uint8Array (uint8 samples), got {name}")));
    };
    let shape_value = to_config_value(&shape).unwrap_or(crate::ConfigValue::Null);
    let dims: Option<Vec<f64>> = match &shape_value {
        crate::ConfigValue::Array(items) => items.iter().map(|v| if let crate::ConfigValue::Number(n) = v { Some(*n) } else { None }).collect(),
        _ => None,
    };
    let Some(dims) = dims else {
        return Err(argument(format!(
            "shape must be [height, width] or [height, width, channels], got {}",
            convert::json::compact(&shape_value)
        )));
    };
    let mut seams = seams(&store, &events, &thrown)?;
    let options = parse_options(&options)?;
    // (copied with a checked allocation: an array larger than wasm memory is an error, not a trap)
    let mut samples = crate::zeroed_bytes(array.length() as usize, "data").map_err(|e| js_error(&format!("{e}"), "InvalidArgument"))?;
    if !samples.is_empty() {
        array.copy_to(&mut samples);
    }
    let source = SamplesSource::new(samples, &dims).map_err(|e| js_error(e.message(), e.kind().name()))?;
    let encoders = js_encoders(&encoders, &thrown)?;
    let conversion = Conversion::from_source(Box::new(source), "image", &options);
    run(conversion, &mut seams, encoders.as_ref(), output, &thrown)
}

/// Writes the JPEG OME-Zarr image in `folder` (`{ open(path) → { size, read, close? } | null }`,
/// named `name` in messages) as a neuroglancer precomputed volume into the store (its
/// `write` only); returns `{ summary, text }` as [`convert_js`] does.
#[wasm_bindgen(js_name = exportPrecomputed)]
pub fn export_precomputed_js(folder: JsValue, name: &str, output: &str, options: JsValue, store: JsValue, events: JsValue) -> Result<JsValue, JsValue> {
    let thrown: Thrown = RefCell::new(None);
    let folder = JsFolder { open: method(&folder, "open", true)?.expect("required"), thrown: &thrown };
    let mut seams = seams(&store, &events, &thrown)?;
    let options = parse_options(&options)?;
    let started = js_sys::Date::now();
    let result = convert::export_precomputed(&folder, name, &options, &mut seams.writer, &mut seams.events, output).map(|mut summary| {
        summary.seconds = (js_sys::Date::now() - started) / 1000.0;
        summary
    });
    if let Some(e) = thrown.borrow_mut().take() {
        return Err(e);
    }
    let summary = result.map_err(|e| js_error(e.message(), e.kind().name()))?;
    let out = js_sys::Object::new();
    set(&out, "summary", from_config_value(&summary.to_value()));
    set(&out, "text", JsValue::from_str(&summary.format()));
    Ok(out.into())
}
