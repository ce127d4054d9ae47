//! The converter: an image → a JPEG-compressed OME-Zarr 0.5 image, one pipeline for every
//! binding (docs/converter.md draws it):
//!
//!   source (rows, or JPEG tiles in Z order) → pyramid builder (chunk-sized nodes, 2×2
//!   averages) → encoder (threads) → chunk store (plain or sharded) → [`StoreWriter`]
//!
//! The core does no IO of its own: the input is a [`ReadAt`], the output a [`StoreWriter`],
//! progress and warnings go to [`Events`]; the native file-system side (temporary store,
//! overwrite rules, the final rename) is [`convert_file`], the bindings' entry point.
//! This file only declares the modules and re-exports their public parts: the dispatcher is
//! conversion.rs, and no stage imports from a layer above it.

mod conversion;
mod dicom;
mod encoder;
mod error;
mod events;
mod export;
#[cfg(not(target_arch = "wasm32"))]
mod fs;
mod histogram;
mod jpeg;
pub mod json;
mod level_quality;
mod levels;
mod metadata;
mod options;
mod png;
mod precomputed;
mod pyramid;
mod samples;
mod slab;
mod source;
mod stack;
mod store;
mod summary;
mod tile_copy;
mod tiff;

pub use error::{ConvertError, ConvertErrorKind, Result};
#[cfg(not(target_arch = "wasm32"))]
pub use fs::{convert_file, export_precomputed_file, FsStore};
pub use levels::{level_count, Grid, Pyramid};
pub use options::{ChannelAxis, ConvertOptions, Plan, Rescale, Window, DEFAULT_CHUNK, DEFAULT_QUALITY, MAX_WORKERS, SUBSAMPLING};
pub use samples::SamplesSource;
pub use source::{Folder, ImageInfo, ReadAt, RowSource, RowsEnd};
pub use store::{crc32c, MemoryStore, StoreWriter};
pub use summary::{LevelSummary, Summary};

pub use encoder::{encode_job, Batch, DecodeBatch, DecodeJob, Decoded, EncodeJob, EncodedJob, Encoders, Threads};

pub use conversion::{convert, default_name, sniff_format, Conversion};
pub use events::{Events, Progress, Quiet};
pub use export::{export_precomputed, ExportSummary};
