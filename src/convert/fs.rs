//! The converter on a native file system, for the bindings that run natively (Python, the
//! tests): the input file as a [`ReadAt`], the store written into a temporary directory
//! beside the output and renamed into place when it is complete, so that the destination
//! holds either the whole store or nothing, and the npm package's overwrite rules.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::error::{ConvertError, Result};
use super::options::ConvertOptions;
use super::source::{Folder, ReadAt};
use super::conversion::Conversion;
use super::events::Events;
use super::store::StoreWriter;
use super::summary::Summary;
use super::export::{export_precomputed, ExportSummary};
use crate::ConfigValue;

/// A file read at offsets (positional reads: one handle serves any order of reads).
pub struct InputFile {
    file: File,
    size: u64,
}

impl InputFile {
    /// Opens `path` (named `name` in messages) for reading.
    pub fn open(path: &Path, name: &str) -> Result<InputFile> {
        let fail = |e: io::Error| {
            let reason = match e.kind() {
                io::ErrorKind::NotFound => "no such file".to_string(),
                io::ErrorKind::IsADirectory => "it is a directory".to_string(),
                _ => e.to_string(),
            };
            ConvertError::input(format!("cannot read {name}: {reason}"))
        };
        let file = File::open(path).map_err(fail)?;
        let meta = file.metadata().map_err(fail)?;
        if meta.is_dir() {
            return Err(ConvertError::input(format!("cannot read {name}: it is a directory")));
        }
        Ok(InputFile { file, size: meta.len() })
    }
}

impl ReadAt for InputFile {
    fn size(&self) -> u64 {
        self.size
    }
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileExt;
            loop {
                match self.file.read_at(buf, offset) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    other => return other,
                }
            }
        }
        #[cfg(windows)]
        {
            use std::os::windows::fs::FileExt;
            self.file.seek_read(buf, offset)
        }
    }
}

/// A store written into a directory: values are files, keys their relative paths.
pub struct FsStore {
    root: PathBuf,
    /// the output's name in messages
    label: String,
    appending: HashMap<String, File>,
}

impl FsStore {
    /// A store in `root`, which is created (its parent must exist).
    pub fn create(root: PathBuf, label: &str) -> Result<FsStore> {
        let store = FsStore { root, label: label.to_string(), appending: HashMap::new() };
        fs::create_dir(&store.root).map_err(|e| store.failed(e))?;
        Ok(store)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn failed(&self, e: io::Error) -> ConvertError {
        ConvertError::output(format!("cannot write {}: {e}", self.label))
    }

    fn path_of(&self, key: &str) -> Result<PathBuf> {
        let path = self.root.join(key);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent).map_err(|e| self.failed(e))?;
        }
        Ok(path)
    }
}

impl StoreWriter for FsStore {
    fn write(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        let path = self.path_of(key)?;
        fs::write(path, bytes).map_err(|e| self.failed(e))
    }

    fn append(&mut self, key: &str, bytes: &[u8]) -> Result<()> {
        if !self.appending.contains_key(key) {
            let path = self.path_of(key)?;
            let file = OpenOptions::new().create(true).append(true).open(path).map_err(|e| self.failed(e))?;
            self.appending.insert(key.to_string(), file);
        }
        let result = self.appending.get_mut(key).expect("opened above").write_all(bytes);
        result.map_err(|e| self.failed(e))
    }

    fn close(&mut self, key: &str) -> Result<()> {
        self.appending.remove(key);
        Ok(())
    }

    fn clear(&mut self) -> Result<()> {
        self.appending.clear();
        fs::remove_dir_all(&self.root).map_err(|e| self.failed(e))?;
        fs::create_dir(&self.root).map_err(|e| self.failed(e))
    }
}

fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Refuses to replace anything but a Zarr store or an empty directory, and never one that
/// holds the input (`convert image.png . --overwrite` must not delete the image).
/// What an output directory is, for the overwrite rules: the files at its top that make one.
#[derive(Clone, Copy)]
enum OutputKind {
    Zarr,
    Precomputed,
}

impl OutputKind {
    fn markers(self) -> &'static [&'static str] {
        match self {
            OutputKind::Zarr => &["zarr.json", ".zgroup", ".zarray", ".zattrs"],
            OutputKind::Precomputed => &["info"],
        }
    }
    fn name(self) -> &'static str {
        match self {
            OutputKind::Zarr => "a Zarr store",
            OutputKind::Precomputed => "a precomputed volume",
        }
    }
    fn marker_text(self) -> &'static str {
        match self {
            OutputKind::Zarr => "no zarr.json at its top",
            OutputKind::Precomputed => "no info file at its top",
        }
    }
}

fn check_replaceable(target: &Path, output: &str, input: &Path, input_name: &str, kind: OutputKind) -> Result<()> {
    let fail = |e: io::Error| ConvertError::output(format!("cannot write {output}: {e}"));
    let real = fs::canonicalize(target).map_err(fail)?;
    if let Ok(real_input) = fs::canonicalize(input) {
        if real_input == real || real_input.starts_with(&real) {
            let what = if real_input == real {
                "is the input image".to_string()
            } else {
                format!("holds the input image {input_name}")
            };
            return Err(ConvertError::output(format!(
                "{output} {what}; --overwrite would delete it: choose another output"
            )));
        }
    }
    if !fs::metadata(target).map_err(fail)?.is_dir() {
        let what = kind.name();
        return Err(ConvertError::output(format!(
            "{output} exists and is not {what} (not a directory); --overwrite replaces only {what}: remove it \
             yourself or choose another output"
        )));
    }
    let mut empty = true;
    let mut store = false;
    for entry in fs::read_dir(target).map_err(fail)? {
        let name = entry.map_err(fail)?.file_name();
        empty = false;
        if kind.markers().iter().any(|n| name == *n) {
            store = true;
        }
    }
    if !empty && !store {
        let (what, why) = (kind.name(), kind.marker_text());
        return Err(ConvertError::output(format!(
            "{output} exists and is not {what} ({why}); --overwrite replaces only {what} or \
             an empty directory: remove it yourself or choose another output"
        )));
    }
    Ok(())
}

/// Checks the output (absent, or replaceable with `overwrite`) and names the temporary
/// directory beside it that the store is written into.
fn prepare_output(output: &str, overwrite: bool, input: &Path, input_name: &str, kind: OutputKind) -> Result<(PathBuf, PathBuf)> {
    let target = absolute(Path::new(output));
    let exists = fs::symlink_metadata(&target).is_ok();
    if exists && !overwrite {
        return Err(ConvertError::output(format!("{output} already exists; choose another name or pass --overwrite")));
    }
    if exists {
        check_replaceable(&target, output, input, input_name, kind)?;
    }
    let parent = target.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("/"));
    if !parent.is_dir() {
        return Err(ConvertError::output(format!(
            "the output's parent directory {} does not exist",
            parent.display()
        )));
    }
    let base = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let millis = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let temp = parent.join(format!(".{base}.partial-{}-{}", std::process::id(), base36(millis)));
    Ok((target, temp))
}

fn base36(mut n: u128) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    String::from_utf8(digits).expect("ascii")
}

/// Moves the finished store into place (an old one replaced in one rename).
fn commit(target: &Path, temp: &Path, output: &str) -> Result<()> {
    let fail = |e: io::Error| ConvertError::output(format!("cannot write {output}: {e}"));
    if fs::symlink_metadata(target).is_ok() {
        let mut old = temp.as_os_str().to_owned();
        old.push(".old");
        let old = PathBuf::from(old);
        fs::rename(target, &old).map_err(fail)?;
        fs::rename(temp, target).map_err(fail)?;
        let _ = fs::remove_dir_all(&old);
    } else {
        fs::rename(temp, target).map_err(fail)?;
    }
    Ok(())
}

/// The files of the directory `path` (named `name` in messages), in name order, each opened.
fn folder_files(path: &Path, name: &str) -> Result<Vec<(String, InputFile)>> {
    let fail = |e: io::Error| ConvertError::input(format!("cannot read {name}: {e}"));
    let mut paths = Vec::new();
    for entry in fs::read_dir(path).map_err(fail)? {
        let entry = entry.map_err(fail)?;
        let is_file = fs::metadata(entry.path()).map_err(fail)?.is_file();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if is_file && !hidden {
            paths.push(entry.path());
        }
    }
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let shown = p.to_string_lossy().into_owned();
            InputFile::open(&p, &shown).map(|f| (shown, f))
        })
        .collect()
}

/// A directory's files opened by relative path (a precomputed volume's chunks).
struct FsFolder {
    root: PathBuf,
}

impl Folder for FsFolder {
    fn open(&self, path: &str) -> io::Result<Option<Box<dyn ReadAt + '_>>> {
        let full = self.root.join(path);
        match File::open(&full) {
            Ok(file) => {
                let meta = file.metadata()?;
                if !meta.is_file() {
                    return Err(io::Error::other("it is not a file"));
                }
                Ok(Some(Box::new(InputFile { file, size: meta.len() })))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// Converts the image file `input` (or the DICOM series in the directory `input`) into the
/// store `output` with the npm CLI's options (`{"quality": 90, "shard": 4096, "overwrite":
/// true, …}`). The store appears whole at `output` or not at all; an error names its cause.
pub fn convert_file(input: &str, output: &str, options: &ConfigValue, events: &mut dyn Events) -> Result<Summary> {
    if output.is_empty() {
        return Err(ConvertError::argument("output must be a directory path"));
    }
    let options = ConvertOptions::parse(options)?;
    let overwrite = options.flag("overwrite")?;
    let input_path = Path::new(input);
    // a directory is a DICOM series: each of its files opened (not read) here
    let (files, single, folder);
    let conversion = if fs::metadata(input_path).is_ok_and(|m| m.is_dir()) {
        files = folder_files(input_path, input)?;
        folder = FsFolder { root: input_path.to_path_buf() };
        Conversion::open_folder(files.iter().map(|(n, f)| (n.clone(), f as &dyn ReadAt)).collect(), input, &options, Some(&folder))?
    } else {
        single = InputFile::open(input_path, input)?;
        Conversion::open(&single, input, &options)?
    };
    let (target, temp) = prepare_output(output, overwrite, input_path, input, OutputKind::Zarr)?;
    let mut store = FsStore::create(temp.clone(), output)?;
    let result = conversion
        .run(&mut store, events, &target.to_string_lossy())
        .and_then(|summary| {
            drop(store);
            commit(&target, &temp, output).map(|()| summary)
        });
    if result.is_err() {
        let _ = fs::remove_dir_all(&temp);
    }
    result
}

/// Writes the JPEG OME-Zarr image in the directory `input` as the neuroglancer precomputed
/// volume `output` (options `{"quality": 85, "overwrite": true, "workers": 2}`), which appears
/// whole or not at all, as [`convert_file`]'s store does.
pub fn export_precomputed_file(input: &str, output: &str, options: &ConfigValue, events: &mut dyn Events) -> Result<ExportSummary> {
    if output.is_empty() {
        return Err(ConvertError::argument("output must be a directory path"));
    }
    let options = ConvertOptions::parse(options)?;
    let overwrite = options.flag("overwrite")?;
    let input_path = Path::new(input);
    if !fs::metadata(input_path).is_ok_and(|m| m.is_dir()) {
        return Err(ConvertError::input(format!("{input} is not a directory: export --precomputed reads a Zarr v3 store")));
    }
    let folder = FsFolder { root: input_path.to_path_buf() };
    let (target, temp) = prepare_output(output, overwrite, input_path, input, OutputKind::Precomputed)?;
    let mut store = FsStore::create(temp.clone(), output)?;
    let result = export_precomputed(&folder, input, &options, &mut store, events, &target.to_string_lossy()).and_then(|summary| {
        drop(store);
        commit(&target, &temp, output).map(|()| summary)
    });
    if result.is_err() {
        let _ = fs::remove_dir_all(&temp);
    }
    result
}
