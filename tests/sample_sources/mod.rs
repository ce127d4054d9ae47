//! Encoding from a `SampleSource` (the samples copied in one MCU row at a time, as the wasm
//! boundary reads the caller's `Uint8Array`) must write the bytes of encoding a slice, and
//! the vendored encoder's `encode_rows` the bytes of its `encode`, on every path. Natively
//! (`tests/sample_sources/main.rs`) and in `--test wasm_node` (with `+simd128`, the SIMD row
//! kernels).

use std::cell::{Cell, RefCell};

use crate::common::{
    config, pattern_chunk, pattern_image as image, BASELINE_SCHEMES, ENCODER_COLOUR_TYPES,
    ENCODER_SAMPLING_FACTORS,
};
#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::{encode, encode_from, CodecError, SampleSource};

/// A source that is not one slice: the chunk held in pieces of uneven sizes (1, 2, 3, ...,
/// 41 bytes, then again), so most reads span pieces and start inside one. It records every
/// read, and fails the read that starts at `fail_at` if set.
struct Scattered {
    pieces: Vec<Vec<u8>>,
    len: usize,
    reads: RefCell<Vec<(usize, usize)>>,
    fail_at: Cell<Option<usize>>,
}

impl Scattered {
    fn new(data: &[u8]) -> Scattered {
        let mut pieces = Vec::new();
        let mut rest = data;
        let mut size = 1;
        while !rest.is_empty() {
            let (piece, tail) = rest.split_at(size.min(rest.len()));
            pieces.push(piece.to_vec());
            rest = tail;
            size = size % 41 + 1;
        }
        Scattered {
            pieces,
            len: data.len(),
            reads: RefCell::new(Vec::new()),
            fail_at: Cell::new(None),
        }
    }
}

impl SampleSource for Scattered {
    fn sample_count(&self) -> usize {
        self.len
    }

    fn read(&self, offset: usize, out: &mut [u8]) -> Result<(), CodecError> {
        assert!(
            offset + out.len() <= self.len,
            "read {offset}..{} past the end ({})",
            offset + out.len(),
            self.len
        );
        self.reads.borrow_mut().push((offset, out.len()));
        if self.fail_at.get() == Some(offset) {
            return Err(CodecError::data("test: this read fails"));
        }
        let mut at = 0; // start of the current piece in the chunk
        let mut written = 0;
        for piece in &self.pieces {
            let end = at + piece.len();
            let from = offset + written;
            if written < out.len() && from < end && from >= at {
                let n = (end - from).min(out.len() - written);
                out[written..written + n].copy_from_slice(&piece[from - at..from - at + n]);
                written += n;
            }
            at = end;
        }
        assert_eq!(written, out.len());
        Ok(())
    }
}

/// Every codec mode: YCbCr from RGB and from YCbCr in all eight schemes, `rgb`, grayscale,
/// with the rows of one MCU row (8 × the luma factor, or 8).
fn modes() -> Vec<(String, usize, usize)> {
    let mut modes = Vec::new();
    for (h, v) in BASELINE_SCHEMES {
        for decoded in ["rgb", "ycbcr"] {
            modes.push((
                format!(
                    r#""encoded_color_space": "ycbcr", "decoded_color_space": "{decoded}", "subsampling": [[{h}, {v}], [1, 1], [1, 1]]"#
                ),
                3,
                8 * usize::from(v),
            ));
        }
    }
    modes.push((r#""encoded_color_space": "rgb""#.to_string(), 3, 8));
    modes.push((r#""encoded_color_space": "grayscale""#.to_string(), 1, 8));
    modes
}

/// The bytes equal the slice path's, and the encoder reads each sample exactly once, in
/// order, in reads of whole MCU rows (up to 64 KiB; the last read what is left).
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn a_scattered_source_gives_the_bytes_of_a_slice_reading_each_row_once() {
    let mut cases = 0;
    for (mode, channels, band) in modes() {
        for quality in [50, 90] {
            let config = config(&format!(r#"{{"quality": {quality}, {mode}}}"#));
            // 1700x40: reads of many MCU rows; 20x900: reads of one.
            for (height, width) in [
                (1, 1),
                (7, 13),
                (61, 47),
                (33, 100),
                (130, 9),
                (1700, 40),
                (20, 900),
            ] {
                for pattern in [0, 3, 6, 7] {
                    let (data, shape) = pattern_chunk(pattern, height, width, channels);
                    let what = format!("{mode} q{quality} {height}x{width} pattern {pattern}");
                    let source = Scattered::new(&data);
                    let from_source = encode_from(&config, &source, &shape).unwrap();
                    assert!(
                        from_source == encode(&config, &data, &shape).unwrap(),
                        "{what}: streams differ"
                    );

                    // Whole MCU rows (the last read: what is left), as many as fit in
                    // 64 KiB, at least one; in order; each sample once.
                    let mcu_row = band * width * channels;
                    let rows_per_read = (65536 / mcu_row).max(1) * mcu_row;
                    let mut next = 0;
                    for &(offset, len) in source.reads.borrow().iter() {
                        assert_eq!(offset, next, "{what}: reads out of order");
                        assert!(
                            len == rows_per_read || offset + len == data.len(),
                            "{what}: read of {len} bytes at {offset}"
                        );
                        next += len;
                    }
                    assert_eq!(next, data.len(), "{what}: bytes read");
                    cases += 1;
                }
            }
        }
    }
    assert_eq!(cases, 18 * 2 * 7 * 4);
}

/// The chunk-length check comes first, with the slice path's message, and reads nothing; a
/// read that fails ends the encode with its error, not a stream.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn length_is_checked_before_reading_and_read_errors_are_returned() {
    let config = config(
        r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    );
    // 16-row MCU rows of 1500 × 3 bytes: one per read.
    let data = image(0, 40, 1500, 3, 1);
    let short = Scattered::new(&data[1..]);
    let from_source = encode_from(&config, &short, &[40, 1500, 3]).unwrap_err();
    let from_slice = encode(&config, &data[1..], &[40, 1500, 3]).unwrap_err();
    assert_eq!(from_source.to_string(), from_slice.to_string());
    assert!(short.reads.borrow().is_empty());

    let failing = Scattered::new(&data);
    failing.fail_at.set(Some(16 * 1500 * 3));
    let err = encode_from(&config, &failing, &[40, 1500, 3]).unwrap_err();
    assert_eq!(
        err.to_string(),
        CodecError::data("test: this read fails").to_string()
    );
    // The encoder cannot stop early, but asks the source for nothing after the failure.
    assert_eq!(failing.reads.borrow().len(), 2);
}

/// The vendored encoder alone: `encode_rows` writes the bytes of `encode` for every input
/// colour type, sampling factor and writer (optimised tables, standard tables, progressive,
/// restart intervals), whatever rows a read asks for.
#[cfg_attr(target_arch = "wasm32", wasm_bindgen_test)]
#[cfg_attr(not(target_arch = "wasm32"), test)]
fn encode_rows_writes_the_bytes_of_encode_on_every_encoder_path() {
    use jpeg_encoder::{ColorType, Encoder, RowSource, SamplingFactor};

    struct Rows<'a> {
        data: &'a [u8],
        row: usize,
        read: usize,
    }
    impl RowSource for Rows<'_> {
        fn read_rows(&mut self, first_row: u16, out: &mut [u8]) {
            assert_eq!(out.len() % self.row, 0);
            let start = usize::from(first_row) * self.row;
            out.copy_from_slice(&self.data[start..start + out.len()]);
            self.read += out.len();
        }
    }

    let mut streams = 0;
    for (colour, channels) in ENCODER_COLOUR_TYPES {
        for sampling in ENCODER_SAMPLING_FACTORS {
            for (height, width) in [(1, 1), (13, 7), (61, 47), (40, 72)] {
                let data = image(0, height, width, channels, (width * 31 + height) as u64);
                // (optimised tables, progressive, restart interval). Not optimised tables with
                // restarts where the crate's per-component writer may run (four components,
                // more than 10 blocks per MCU): it lacks codes there (tests/entropy_coding).
                let four_components = matches!(
                    colour,
                    ColorType::Cmyk | ColorType::CmykAsYcck | ColorType::Ycck
                );
                let restarts_ok = !four_components || sampling == SamplingFactor::F_1_1;
                for (optimised, progressive, restart) in [
                    (true, false, 0),
                    (false, false, 0),
                    (false, true, 0),
                    (false, false, 3),
                    (true, false, 5),
                ] {
                    if optimised && restart > 0 && !restarts_ok {
                        continue;
                    }
                    let settings = |encoder: &mut Encoder<&mut Vec<u8>>| {
                        encoder.set_sampling_factor(sampling);
                        encoder.set_optimized_huffman_tables(optimised);
                        encoder.set_progressive(progressive);
                        if restart > 0 {
                            encoder.set_restart_interval(restart);
                        }
                    };
                    let mut expected = Vec::new();
                    let mut encoder = Encoder::new(&mut expected, 90);
                    settings(&mut encoder);
                    encoder
                        .encode(&data, width as u16, height as u16, colour)
                        .unwrap();
                    let mut ours = Vec::new();
                    let mut encoder = Encoder::new(&mut ours, 90);
                    settings(&mut encoder);
                    let mut rows = Rows {
                        data: &data,
                        row: width * channels,
                        read: 0,
                    };
                    encoder
                        .encode_rows(&mut rows, width as u16, height as u16, colour)
                        .unwrap();
                    let what = format!(
                        "{colour:?} {sampling:?} {height}x{width} optimised {optimised} progressive {progressive} restart {restart}"
                    );
                    assert!(ours == expected, "{what}: streams differ");
                    assert_eq!(rows.read, data.len(), "{what}: bytes read");
                    streams += 1;
                }
            }
        }
    }
    assert_eq!(streams, 9 * 8 * 4 * 5 - 3 * 7 * 4);
}
