//! The Python boundary of zarr-jpeg (the extension module `zarr_jpeg._zarr_jpeg`): converts
//! Python values to the core's (`ConfigValue`, shapes, byte slices) and `CodecError`s to
//! Python exceptions, as `src/wasm.rs` does for JavaScript. No codec logic lives here:
//! configuration rules, encode options, the chunk-shape table and every stream check are the
//! core's (the crate at the repository root), and so is the converter (`convert_file` only hands
//! it options and callbacks). The GIL is released while a chunk is encoded or decoded, and for a
//! whole conversion, so Python threads (zarr-python's, Dask's) run in parallel.

use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use zarr_jpeg::convert::{self, ConvertErrorKind, Events, Progress};
use zarr_jpeg::{ChunkLayout, CodecError, ConfigValue, EncodeOptions, JpegConfig};

create_exception!(
    zarr_jpeg,
    JpegError,
    PyValueError,
    "A chunk, configuration or option the jpeg codec refuses. A ValueError; `kind` names the \
     error's kind as the JavaScript package's `error.kind` does (\"InvalidConfiguration\", \
     \"InvalidShape\", \"InvalidData\", \"UnsupportedStream\", \"CorruptStream\", \
     \"StreamMismatch\")."
);

create_exception!(
    zarr_jpeg,
    ConvertError,
    pyo3::exceptions::PyException,
    "A conversion that was refused or failed, with the message the npm CLI prints. `kind` says \
     which side was wrong, as the JavaScript `ConvertError.kind`: \"InvalidArgument\" (an \
     option), \"InvalidInput\" (the image), \"OutputUnavailable\" (the destination is in the \
     way or cannot be written). Nothing is left at the destination."
);

/// Nesting and size limits of a configuration, as the JavaScript boundary's (the core's
/// `config_value::MAX_DEPTH` and `MAX_VALUES`): a jpeg configuration holds about 15 values.
const MAX_DEPTH: usize = 32;
const MAX_VALUES: usize = 1024;

/// More dimensions than this are refused without reading them (the codec takes 2 or 3), as
/// in `src/wasm.rs`.
const MAX_SHAPE_LENGTH: usize = 32;

/// Validates a codec configuration; returns its normalised form (a dict), or raises.
#[pyfunction]
fn validate_config<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let config = parse_config(config)?;
    from_config_value(py, &config.to_value())
}

/// Checks a chunk shape against the spec's table and the configuration's component count,
/// as encoding and decoding do; raises the same error they would.
#[pyfunction]
fn check_chunk_shape(config: &Bound<'_, PyAny>, shape: &Bound<'_, PyAny>) -> PyResult<()> {
    let config = parse_config(config)?;
    let shape = parse_shape(shape)?;
    ChunkLayout::for_config(&shape, &config).map_err(codec_error)?;
    Ok(())
}

/// Checks encode options (the JavaScript `encode()`'s, as for [`encode`]) without encoding.
#[pyfunction]
fn check_encode_options(options: &Bound<'_, PyAny>) -> PyResult<()> {
    parse_encode_options(options).map(|_| ())
}

fn parse_encode_options(options: &Bound<'_, PyAny>) -> PyResult<EncodeOptions> {
    let value = to_config_value(options).map_err(|e| {
        codec_error(CodecError::config(format!(
            "the encode options are not a JSON-like object: {e}"
        )))
    })?;
    EncodeOptions::parse(&value).map_err(codec_error)
}

/// Encodes one chunk: `data` is a C-contiguous buffer of the uint8 samples of `shape`;
/// `options` a dict of the JavaScript `encode()` options (`restartIntervals`, `trellis`,
/// `quantTable`) or None. Returns the JPEG stream.
#[pyfunction]
#[pyo3(signature = (config, data, shape, options=None))]
fn encode<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    data: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
    options: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let config = parse_config(config)?;
    let shape = parse_shape(shape)?;
    let options = match options {
        None => EncodeOptions::default(),
        Some(options) => parse_encode_options(options)?,
    };
    let data = contiguous_bytes(data, "the chunk data")?;
    let samples = Samples(&data);
    let stream = py
        .detach(|| {
            let samples = samples;
            zarr_jpeg::encode_from_with_options(&config, &samples.slice(), &shape, &options)
        })
        .map_err(codec_error)?;
    Ok(PyBytes::new(py, &stream))
}

/// Decodes one chunk's JPEG stream (any C-contiguous bytes-like object) into `out`, a writable
/// C-contiguous buffer of exactly the chunk's byte length (a new numpy array, say: it need not
/// be zeroed), not overlapping the stream. After an error, what `out` holds is unspecified.
#[pyfunction]
fn decode_into<'py>(
    py: Python<'py>,
    config: &Bound<'py, PyAny>,
    stream: &Bound<'py, PyAny>,
    shape: &Bound<'py, PyAny>,
    out: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let config = parse_config(config)?;
    let shape = parse_shape(shape)?;
    let stream = contiguous_bytes(stream, "the encoded chunk")?;
    let out_buffer = contiguous_bytes(out, "the output buffer")?;
    if out_buffer.readonly() {
        return Err(PyTypeError::new_err(format!(
            "the output buffer must be writable, got {} (read-only)",
            type_name(out)
        )));
    }
    let out = out_buffer;
    let (o, s) = (out.buf_ptr() as usize, stream.buf_ptr() as usize);
    if o < s + stream.len_bytes() && s < o + out.len_bytes() {
        return Err(PyTypeError::new_err(
            "the output buffer overlaps the encoded chunk: decode into another buffer",
        ));
    }
    zarr_jpeg::check_output(&config, &shape, out.len_bytes()).map_err(codec_error)?;
    let (samples, target) = (Samples(&stream), Target(&out));
    py.detach(|| {
        let (samples, target) = (samples, target);
        // SAFETY: a writable C-contiguous buffer of `len_bytes()` bytes, exported (so alive and
        // not resized) until `out` is dropped after this call; nothing else in this call reads
        // or writes it (it does not overlap the stream). (`len_bytes()` is not 0:
        // `check_output` took the chunk's length.)
        let out = unsafe {
            std::slice::from_raw_parts_mut(target.0.buf_ptr() as *mut u8, target.0.len_bytes())
        };
        zarr_jpeg::decode_into(&config, samples.slice(), &shape, out)
    })
    .map_err(codec_error)
}

/// The output buffer of `decode_into`, written while the GIL is released (see `Samples`).
struct Target<'a>(&'a PyBuffer<u8>);

/// A buffer's bytes, read where they are while the GIL is released (`PyBuffer` is `Sync`, so
/// this crosses `detach`). The `PyBuffer` (held by the caller for the whole call) keeps the
/// exporter's memory alive and its shape fixed: a numpy array, `bytearray` or `mmap` cannot
/// be resized while a buffer is exported. Another Python thread could still write the samples
/// meanwhile; the stream then holds whatever each band held when the encoder read it, as with
/// any native codec that releases the GIL.
struct Samples<'a>(&'a PyBuffer<u8>);

impl<'a> Samples<'a> {
    fn slice(&self) -> &'a [u8] {
        let len = self.0.len_bytes();
        if len == 0 {
            return &[];
        }
        // SAFETY: a C-contiguous buffer of `len` bytes (checked in `contiguous_bytes`), alive
        // while `self.0` is.
        unsafe { std::slice::from_raw_parts(self.0.buf_ptr() as *const u8, len) }
    }
}

/// A C-contiguous buffer of bytes (bytes, bytearray, memoryview, a uint8 numpy array);
/// anything else is a TypeError naming what it got.
fn contiguous_bytes(value: &Bound<'_, PyAny>, what: &str) -> PyResult<PyBuffer<u8>> {
    let buffer = PyBuffer::<u8>::get(value).map_err(|_| {
        PyTypeError::new_err(format!(
            "{what} must be a bytes-like object of uint8 (bytes, bytearray, memoryview, a uint8 \
             numpy array), got {}",
            type_name(value)
        ))
    })?;
    if !buffer.is_c_contiguous() {
        return Err(PyTypeError::new_err(format!(
            "{what} must be C-contiguous, got a strided {} (numpy.ascontiguousarray makes a copy \
             that is)",
            type_name(value)
        )));
    }
    Ok(buffer)
}

fn parse_config(config: &Bound<'_, PyAny>) -> PyResult<JpegConfig> {
    let value = to_config_value(config).map_err(|e| {
        codec_error(CodecError::config(format!(
            "the configuration is not a JSON-like object: {e}"
        )))
    })?;
    JpegConfig::parse(&value).map_err(codec_error)
}

/// A chunk shape: a tuple or list of non-negative integers (Python ints or numpy integers).
fn parse_shape(shape: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    let shape_error = |message: String| codec_error(CodecError::shape(message));
    let items: Vec<Bound<'_, PyAny>> = if let Ok(t) = shape.cast::<PyTuple>() {
        t.iter().take(MAX_SHAPE_LENGTH + 1).collect()
    } else if let Ok(l) = shape.cast::<PyList>() {
        l.iter().take(MAX_SHAPE_LENGTH + 1).collect()
    } else {
        return Err(shape_error(format!(
            "the chunk shape must be a tuple or list of integers, got {}",
            type_name(shape)
        )));
    };
    let length = shape.len()?;
    if length > MAX_SHAPE_LENGTH {
        return Err(shape_error(format!(
            "the chunk shape has {length} dimensions; the jpeg codec accepts 2-D or 3-D chunks"
        )));
    }
    let mut sizes = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let size = if item.is_instance_of::<PyBool>() {
            None
        } else {
            item.extract::<u64>()
                .ok()
                .filter(|&n| n <= 9_007_199_254_740_991)
        };
        match size {
            Some(n) => sizes.push(n),
            None => {
                let got = match to_config_value(item) {
                    Ok(value) => value.describe(),
                    Err(_) => type_name(item),
                };
                return Err(shape_error(format!(
                    "shape[{i}] must be a non-negative integer, got {got}"
                )));
            }
        }
    }
    Ok(sizes)
}

/// A Python value as the core's JSON-like value: None, bool, int (and numpy integers), float
/// (and numpy floats), str, list/tuple, dict with str keys. Anything else is an error naming
/// it, as the JavaScript boundary's (`src/js_value.rs`).
fn to_config_value(value: &Bound<'_, PyAny>) -> Result<ConfigValue, String> {
    let mut budget = MAX_VALUES;
    read(value, 0, &mut budget)
}

fn read(value: &Bound<'_, PyAny>, depth: usize, budget: &mut usize) -> Result<ConfigValue, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the configuration is nested more than {MAX_DEPTH} levels deep"
        ));
    }
    if *budget == 0 {
        return Err(too_many_values());
    }
    *budget -= 1;
    if value.is_none() {
        return Ok(ConfigValue::Null);
    }
    if let Ok(b) = value.cast::<PyBool>() {
        return Ok(ConfigValue::Bool(b.is_true()));
    }
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(ConfigValue::String(
            s.to_cow().map_err(|e| e.to_string())?.into_owned(),
        ));
    }
    if value.is_instance_of::<PyInt>() || is_numpy_scalar(value, "integer") {
        if let Ok(n) = value.extract::<i64>() {
            return Ok(ConfigValue::Number(n as f64));
        }
        if let Ok(n) = value.extract::<u64>() {
            return Ok(ConfigValue::Number(n as f64));
        }
        return Err("an int outside the 64-bit range is not a JSON-like value".to_string());
    }
    if value.is_instance_of::<PyFloat>() || is_numpy_scalar(value, "floating") {
        return value
            .extract::<f64>()
            .map(ConfigValue::Number)
            .map_err(|e| e.to_string());
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in value.try_iter().map_err(|e| e.to_string())? {
            let item = item.map_err(|e| e.to_string())?;
            items.push(read(&item, depth + 1, budget)?);
        }
        return Ok(ConfigValue::Array(items));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        if dict.len() > *budget {
            return Err(too_many_values());
        }
        let mut members = Vec::with_capacity(dict.len());
        for (key, member) in dict.iter() {
            let Ok(name) = key.cast::<PyString>() else {
                return Err(format!("the key {} is not a string", describe_python(&key)));
            };
            let name = name.to_cow().map_err(|e| e.to_string())?.into_owned();
            let member = read(&member, depth + 1, budget);
            let member = if depth == 0 {
                member.map_err(|e| format!("member \"{name}\": {e}"))?
            } else {
                member?
            };
            members.push((name, member));
        }
        return Ok(ConfigValue::Object(members));
    }
    Err(format!("{} is not a JSON-like value", type_name(value)))
}

fn too_many_values() -> String {
    format!(
        "the configuration holds more than {MAX_VALUES} values (arrays' items and objects' \
         members, nested ones included); a jpeg configuration holds about 15"
    )
}

/// Whether `value` is a numpy scalar of the abstract type `numpy.<kind>` (numpy is imported
/// only if the caller already has it).
fn is_numpy_scalar(value: &Bound<'_, PyAny>, kind: &str) -> bool {
    let py = value.py();
    let class = py
        .import("sys")
        .and_then(|sys| sys.getattr("modules"))
        .and_then(|modules| modules.get_item("numpy"))
        .and_then(|numpy| numpy.getattr(kind));
    match class {
        Ok(class) => value.is_instance(&class).unwrap_or(false),
        Err(_) => false,
    }
}

/// A short description for messages: the value's repr for ints, the type otherwise.
fn describe_python(value: &Bound<'_, PyAny>) -> String {
    match to_config_value(value) {
        Ok(
            v @ (ConfigValue::Number(_)
            | ConfigValue::Bool(_)
            | ConfigValue::Null
            | ConfigValue::String(_)),
        ) => v.describe(),
        _ => type_name(value),
    }
}

/// `a dict`, `an int`, `a numpy.ndarray`: the value's type, with its module unless builtin.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    let class = value.get_type();
    let name = class
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".to_string());
    let module = class.module().map(|m| m.to_string()).unwrap_or_default();
    let name = if module.is_empty() || module == "builtins" {
        name
    } else {
        format!("{module}.{name}")
    };
    let article = match name.as_bytes().first() {
        Some(b'A' | b'E' | b'I' | b'O' | b'U' | b'a' | b'e' | b'i' | b'o' | b'u') => "an",
        _ => "a",
    };
    format!("{article} {name}")
}

fn from_config_value<'py>(py: Python<'py>, value: &ConfigValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        ConfigValue::Null => py.None().into_bound(py),
        ConfigValue::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        ConfigValue::Number(n) if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 => {
            (*n as i64).into_pyobject(py)?.into_any()
        }
        ConfigValue::Number(n) => PyFloat::new(py, *n).into_any(),
        ConfigValue::String(s) => PyString::new(py, s).into_any(),
        ConfigValue::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(from_config_value(py, item)?)?;
            }
            list.into_any()
        }
        ConfigValue::Object(members) => {
            let dict = PyDict::new(py);
            for (name, member) in members {
                dict.set_item(name, from_config_value(py, member)?)?;
            }
            dict.into_any()
        }
    })
}

/// A `CodecError` as a `JpegError` (a ValueError) with the core's message, the text the
/// JavaScript package's `Error` carries, and its kind.
fn codec_error(e: CodecError) -> PyErr {
    with_kind(JpegError::new_err(e.to_string()), e.kind().name())
}

/// `error` with its `kind` attribute set (the JavaScript errors' `kind`).
fn with_kind(error: PyErr, kind: &str) -> PyErr {
    Python::attach(|py| {
        let _ = error.value(py).setattr("kind", kind);
    });
    error
}

/// Progress and warnings handed to Python callables. The conversion runs without the GIL;
/// each event takes it briefly, and also checks for signals, so Ctrl-C stops a conversion.
struct PyEvents {
    progress: Option<Py<PyAny>>,
    warning: Option<Py<PyAny>>,
    /// a callback's exception (or KeyboardInterrupt), raised once the conversion has stopped
    failure: Option<PyErr>,
}

impl PyEvents {
    fn interrupted(&mut self, error: PyErr) -> convert::ConvertError {
        self.failure.get_or_insert(error);
        convert::ConvertError::new(ConvertErrorKind::Interrupted, "interrupted")
    }
}

impl Events for PyEvents {
    fn warning(&mut self, message: &str) {
        let Some(callback) = &self.warning else { return };
        if let Err(e) = Python::attach(|py| callback.call1(py, (message,)).map(drop)) {
            self.failure.get_or_insert(e);
        }
    }

    fn progress(&mut self, level: usize, levels: usize, done: u64, total: u64, what: &Progress) -> convert::Result<()> {
        if let Some(e) = self.failure.take() {
            return Err(self.interrupted(e));
        }
        let result = Python::attach(|py| -> PyResult<()> {
            py.check_signals()?;
            let Some(callback) = &self.progress else { return Ok(()) };
            let event = PyDict::new(py);
            event.set_item("level", level)?;
            event.set_item("levels", levels)?;
            event.set_item("chunksDone", done)?;
            event.set_item("chunksTotal", total)?;
            match what {
                Progress::Level { shape } => {
                    event.set_item("phase", "level")?;
                    event.set_item("shape", PyTuple::new(py, shape)?)?;
                }
                Progress::Chunk { level_chunks_done, level_chunks_total } => {
                    event.set_item("phase", "chunk")?;
                    event.set_item("levelChunksDone", level_chunks_done)?;
                    event.set_item("levelChunksTotal", level_chunks_total)?;
                }
            }
            callback.call1(py, (event,)).map(drop)
        });
        result.map_err(|e| self.interrupted(e))
    }
}

/// Converts the image file `src` into the JPEG OME-Zarr store `dst`. `options` is a dict of
/// the npm CLI's option names (`quality`, `shard`, `channelAxis`, `overwrite`, …); `progress`
/// and `warning` are called with each event (a dict) and warning (a str). Returns the summary
/// (a dict with the CLI's `--json` keys) and its text. Raises `ConvertError`.
#[pyfunction]
#[pyo3(signature = (src, dst, options, progress=None, warning=None))]
fn convert_file<'py>(
    py: Python<'py>,
    src: &str,
    dst: &str,
    options: &Bound<'py, PyAny>,
    progress: Option<Py<PyAny>>,
    warning: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let options = to_config_value(options).map_err(|e| convert_error(convert::ConvertError::argument(e)))?;
    let mut events = PyEvents { progress, warning, failure: None };
    let result = py.detach(|| convert::convert_file(src, dst, &options, &mut events));
    if let Some(e) = events.failure.take() {
        return Err(e);
    }
    let summary = result.map_err(convert_error)?;
    Ok((from_config_value(py, &summary.to_value())?, summary.format()))
}

/// Writes the JPEG OME-Zarr image `src` as the neuroglancer precomputed volume `dst`
/// (`options`: `quality`, `overwrite`, `workers`), as [`convert_file`] converts.
#[pyfunction]
#[pyo3(signature = (src, dst, options, progress=None, warning=None))]
fn export_precomputed<'py>(
    py: Python<'py>,
    src: &str,
    dst: &str,
    options: &Bound<'py, PyAny>,
    progress: Option<Py<PyAny>>,
    warning: Option<Py<PyAny>>,
) -> PyResult<(Bound<'py, PyAny>, String)> {
    let options = to_config_value(options).map_err(|e| convert_error(convert::ConvertError::argument(e)))?;
    let mut events = PyEvents { progress, warning, failure: None };
    let result = py.detach(|| convert::export_precomputed_file(src, dst, &options, &mut events));
    if let Some(e) = events.failure.take() {
        return Err(e);
    }
    let summary = result.map_err(convert_error)?;
    Ok((from_config_value(py, &summary.to_value())?, summary.format()))
}

fn convert_error(e: convert::ConvertError) -> PyErr {
    with_kind(ConvertError::new_err(e.to_string()), e.kind().name())
}

#[pymodule]
fn _zarr_jpeg(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(validate_config, m)?)?;
    m.add_function(wrap_pyfunction!(check_chunk_shape, m)?)?;
    m.add_function(wrap_pyfunction!(check_encode_options, m)?)?;
    m.add_function(wrap_pyfunction!(encode, m)?)?;
    m.add_function(wrap_pyfunction!(decode_into, m)?)?;
    m.add_function(wrap_pyfunction!(convert_file, m)?)?;
    m.add_function(wrap_pyfunction!(export_precomputed, m)?)?;
    m.add("JpegError", m.py().get_type::<JpegError>())?;
    m.add("ConvertError", m.py().get_type::<ConvertError>())?;
    Ok(())
}
