//! The wasm API through real JS values, shared by the Node and browser suites: the
//! exports take the configuration object, a Uint8Array and a shape array; errors
//! arrive as JS `Error`s naming the problem; the module keeps working after errors.

use js_sys::{Array, Object, Reflect, Uint16Array, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::wasm_bindgen_test;
use zarr_jpeg::wasm::{decode, validate_config};

/// `wasm::encode` as JavaScript calls it without the optional options argument.
fn encode(config: JsValue, data: JsValue, shape: JsValue) -> Result<Uint8Array, JsValue> {
    zarr_jpeg::wasm::encode(config, data, shape, JsValue::UNDEFINED)
}

/// `wasm::encode_into` as JavaScript calls it without the optional options argument.
fn encode_into(
    config: JsValue,
    data: JsValue,
    shape: JsValue,
    out: JsValue,
) -> Result<u32, JsValue> {
    zarr_jpeg::wasm::encode_into(config, data, shape, out, JsValue::UNDEFINED)
}

fn json(text: &str) -> JsValue {
    js_sys::JSON::parse(text).unwrap()
}

fn shape(dims: &[u32]) -> JsValue {
    dims.iter()
        .map(|&d| JsValue::from(d))
        .collect::<Array>()
        .into()
}

fn samples(len: usize) -> Uint8Array {
    let data: Vec<u8> = (0..len).map(|i| ((i * 7 + i / 97) % 251) as u8).collect();
    Uint8Array::from(data.as_slice())
}

/// The error must be a JS Error whose message contains `expected`.
fn error_message(result: Result<impl Sized, JsValue>, expected: &str) -> String {
    let err = match result {
        Ok(_) => panic!("expected an error containing {expected:?}"),
        Err(e) => e,
    };
    let error: &js_sys::Error = err.dyn_ref().expect("a JS Error");
    let message: String = error.message().into();
    assert!(message.contains(expected), "{message:?} lacks {expected:?}");
    message
}

const SPEC_EXAMPLES: &[&str] = &[
    r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
    r#"{"quality": 90, "encoded_color_space": "grayscale"}"#,
    r#"{"quality": 95, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#,
    r#"{"quality": 90, "encoded_color_space": "rgb"}"#,
    r#"{"quality": 90, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}"#,
];

#[wasm_bindgen_test]
fn spec_examples_round_trip_through_js_values() {
    for text in SPEC_EXAMPLES {
        let gray = text.contains("grayscale");
        let dims: &[u32] = if gray { &[48, 40] } else { &[48, 40, 3] };
        let data = samples(dims.iter().product::<u32>() as usize);
        let stream = encode(json(text), data.clone().into(), shape(dims)).unwrap();
        assert_eq!(stream.get_index(0), 0xFF);
        assert_eq!(stream.get_index(1), 0xD8);
        let back = decode(json(text), stream.into(), shape(dims)).unwrap();
        assert_eq!(back.length(), data.length(), "{text}");
    }
}

#[wasm_bindgen_test]
fn validate_config_returns_the_normalised_object() {
    let normalised =
        validate_config(json(r#"{"quality": 80, "encoded_color_space": "rgb"}"#)).unwrap();
    let get = |k: &str| Reflect::get(&normalised, &JsValue::from_str(k)).unwrap();
    assert_eq!(get("quality").as_f64(), Some(80.0));
    assert_eq!(
        get("encoded_color_space").as_string().as_deref(),
        Some("rgb")
    );
    assert_eq!(
        get("decoded_color_space").as_string().as_deref(),
        Some("rgb")
    );
    assert!(get("subsampling").is_undefined());
    assert!(normalised.is_instance_of::<Object>());
    let ycc = validate_config(json(SPEC_EXAMPLES[0])).unwrap();
    let sub = Reflect::get(&ycc, &JsValue::from_str("subsampling")).unwrap();
    assert!(Array::is_array(&sub));
    assert_eq!(Array::from(&sub).length(), 3);
}

#[wasm_bindgen_test]
fn configuration_errors_name_the_field() {
    error_message(
        validate_config(json(r#"{"quality": 0, "encoded_color_space": "rgb"}"#)),
        "quality must be an integer from 1 to 100, got 0",
    );
    error_message(
        validate_config(json(r#"{"quality": "90", "encoded_color_space": "rgb"}"#)),
        "got \"90\" (a string)",
    );
    error_message(
        validate_config(json(r#"{"quality": 90, "encoded_color_space": "ycbcr"}"#)),
        "subsampling is required",
    );
    error_message(
        validate_config(json(
            r#"{"quality": 90, "encoded_color_space": "rgb", "level": 3}"#,
        )),
        "unknown member \"level\"",
    );
    error_message(
        validate_config(JsValue::from_str("jpeg")),
        "must be an object",
    );
    error_message(validate_config(JsValue::UNDEFINED), "must be an object");
    // named as what it is, not as the null it is read as
    error_message(validate_config(JsValue::UNDEFINED), "got undefined");
    error_message(validate_config(JsValue::NULL), "got null");
}

#[wasm_bindgen_test]
fn errors_carry_a_kind() {
    let err = validate_config(json(r#"{"quality": 0, "encoded_color_space": "rgb"}"#)).unwrap_err();
    let kind = Reflect::get(&err, &JsValue::from_str("kind")).unwrap();
    assert_eq!(kind.as_string().as_deref(), Some("InvalidConfiguration"));
}

#[wasm_bindgen_test]
fn data_must_be_a_uint8array_of_the_right_length() {
    let cfg = SPEC_EXAMPLES[1];
    let wrong_type = Uint16Array::new_with_length(48 * 40);
    error_message(
        encode(json(cfg), wrong_type.into(), shape(&[48, 40])),
        "data must be a Uint8Array, got a Uint16Array",
    );
    error_message(
        encode(json(cfg), JsValue::from_str("pixels"), shape(&[48, 40])),
        "data must be a Uint8Array",
    );
    error_message(
        encode(json(cfg), samples(48 * 40 - 1).into(), shape(&[48, 40])),
        "holds 1919 bytes but the chunk shape needs 1920",
    );
    error_message(
        decode(json(cfg), JsValue::NULL, shape(&[48, 40])),
        "the encoded chunk must be a Uint8Array, got null",
    );
}

#[wasm_bindgen_test]
fn shapes_are_checked() {
    let cfg = json(SPEC_EXAMPLES[1]);
    let data: JsValue = samples(100).into();
    error_message(encode(cfg.clone(), data.clone(), shape(&[100])), "1-D");
    error_message(
        encode(cfg.clone(), data.clone(), json("[10, 2.5]")),
        "shape[1] must be a non-negative integer, got 2.5",
    );
    error_message(
        encode(cfg.clone(), data.clone(), json("[10, -10]")),
        "shape[1] must be a non-negative integer",
    );
    error_message(
        encode(cfg.clone(), data.clone(), JsValue::from_str("10x10")),
        "must be an array of integers",
    );
    error_message(encode(cfg, data, shape(&[10, 10, 3])), "stores 1");
}

#[wasm_bindgen_test]
fn corrupt_streams_are_errors_and_the_module_keeps_working() {
    let cfg = SPEC_EXAMPLES[0];
    let data = samples(32 * 32 * 3);
    let good = encode(json(cfg), data.clone().into(), shape(&[32, 32, 3])).unwrap();
    for i in 0..200u32 {
        let bytes = good.slice(0, (i * 7) % good.length());
        let result = decode(json(cfg), bytes.clone().into(), shape(&[32, 32, 3]));
        if let Err(e) = result {
            assert!(e.is_instance_of::<js_sys::Error>());
        }
        // The input is never modified.
        assert_eq!(
            bytes.to_vec(),
            good.slice(0, (i * 7) % good.length()).to_vec()
        );
    }
    error_message(
        decode(
            json(cfg),
            Uint8Array::new_with_length(0).into(),
            shape(&[32, 32, 3]),
        ),
        "empty",
    );
    let png = Uint8Array::from(&b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"[..]);
    error_message(decode(json(cfg), png.into(), shape(&[32, 32, 3])), "PNG");
    // Still works after hundreds of errors.
    let back = decode(json(cfg), good.into(), shape(&[32, 32, 3])).unwrap();
    assert_eq!(back.length(), 32 * 32 * 3);
}

#[wasm_bindgen_test]
fn chunks_larger_than_wasm_memory_are_rejected_not_wrapped() {
    // 65535 × 65535 × 3 overflows a 32-bit usize: it must be an error, never a wrapped size.
    let cfg = json(SPEC_EXAMPLES[3]);
    error_message(
        encode(cfg.clone(), samples(16).into(), shape(&[65535, 65535, 3])),
        "more than this platform can address",
    );
    error_message(
        decode(cfg, samples(16).into(), shape(&[65535, 65535, 3])),
        "more than this platform can address",
    );
}

/// `encode` reads the caller's array where it is, a band of rows at a time: a view at an
/// offset into a larger buffer, over several bands (and a partial last one), gives the bytes
/// of the core's `encode` of the same samples as a slice, and the buffer is left untouched.
#[wasm_bindgen_test]
fn encode_reads_a_view_into_a_larger_buffer_in_place() {
    for cfg in SPEC_EXAMPLES {
        let channels = if cfg.contains("grayscale") { 1 } else { 3 };
        // 500 × 300 × 3: 48 KiB per 4:2:0 MCU row, so one MCU row per read; grayscale 5 reads.
        let (height, width) = (300u32, 500u32);
        let len = (height * width * channels) as usize;
        let buffer = samples(len + 37);
        let before = buffer.to_vec();
        let view = buffer.subarray(13, 13 + len as u32);
        let dims: Vec<u32> = if channels == 1 {
            vec![height, width]
        } else {
            vec![height, width, 3]
        };
        let stream = encode(json(cfg), view.into(), shape(&dims))
            .unwrap()
            .to_vec();

        let config = zarr_jpeg::JpegConfig::parse(&serde_json::from_str(cfg).unwrap()).unwrap();
        let dims: Vec<u64> = dims.iter().map(|&d| u64::from(d)).collect();
        let expected = zarr_jpeg::encode(&config, &before[13..13 + len], &dims).unwrap();
        assert!(
            stream == expected,
            "{cfg}: the wasm export and the core write different bytes"
        );
        assert!(
            buffer.to_vec() == before,
            "{cfg}: the caller's buffer changed"
        );
    }
}

/// `encode_into` writes the stream `encode` returns into the caller's buffer, at its start,
/// and returns its length; a buffer one byte short gets an error naming both sizes and is
/// left as it was.
#[wasm_bindgen_test]
fn encode_into_writes_encodes_stream_or_nothing() {
    for cfg in SPEC_EXAMPLES {
        let dims: &[u32] = if cfg.contains("grayscale") {
            &[48, 40]
        } else {
            &[48, 40, 3]
        };
        let data = samples(dims.iter().product::<u32>() as usize);
        let stream = encode(json(cfg), data.clone().into(), shape(dims))
            .unwrap()
            .to_vec();

        let out = Uint8Array::new_with_length(stream.len() as u32 + 9);
        out.fill(7, 0, out.length());
        let len = encode_into(
            json(cfg),
            data.clone().into(),
            shape(dims),
            out.clone().into(),
        )
        .unwrap();
        assert_eq!(len as usize, stream.len(), "{cfg}");
        assert!(
            out.subarray(0, len).to_vec() == stream,
            "{cfg}: not encode's bytes"
        );
        assert!(
            out.subarray(len, out.length())
                .to_vec()
                .iter()
                .all(|&b| b == 7),
            "{cfg}: written past the stream"
        );

        let short = Uint8Array::new_with_length(stream.len() as u32 - 1);
        short.fill(7, 0, short.length());
        error_message(
            encode_into(json(cfg), data.into(), shape(dims), short.clone().into()),
            &format!(
                "holds {} bytes but the encoded chunk needs {}",
                stream.len() - 1,
                stream.len()
            ),
        );
        assert!(
            short.to_vec().iter().all(|&b| b == 7),
            "{cfg}: a failed encode_into wrote"
        );
    }
}

#[wasm_bindgen_test]
fn encode_options_leave_restart_intervals_out_or_name_what_is_wrong() {
    let cfg = SPEC_EXAMPLES[0];
    let is_gray = cfg.contains("grayscale");
    let dims: &[u32] = if is_gray { &[200, 40] } else { &[200, 40, 3] };
    let data = samples(dims.iter().product::<u32>() as usize);
    let has_dri = |s: &Uint8Array| s.to_vec().windows(2).any(|p| p == [0xFF, 0xDD]);
    let with = encode(json(cfg), data.clone().into(), shape(dims)).unwrap();
    assert!(
        has_dri(&with),
        "the default writes restart intervals at 200 rows"
    );
    let off = json(r#"{"restartIntervals": false}"#);
    let plain = zarr_jpeg::wasm::encode(json(cfg), data.clone().into(), shape(dims), off).unwrap();
    assert!(
        !has_dri(&plain),
        "{{ restartIntervals: false }} wrote a DRI"
    );
    error_message(
        zarr_jpeg::wasm::encode(
            json(cfg),
            data.into(),
            shape(dims),
            json(r#"{"restartIntervals": 1}"#),
        ),
        "restartIntervals must be true or false, got 1",
    );
}

/// The full decoder reserves what zune-jpeg will allocate before it decodes
/// (src/decode/full.rs): 4 MB of progressive stream claiming a 26000² RGB image, whose
/// coefficients alone would take 4 GB, is an error naming the memory it needs, not a trap
/// (an allocation failure in wasm), and the module decodes on.
#[wasm_bindgen_test]
fn a_progressive_chunk_too_large_for_memory_is_an_error_not_a_trap() {
    let cfg = r#"{"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}"#;
    let huge = crate::common::flat_progressive(26000, 26000, &[(1, 1); 3]);
    let result = decode(json(cfg), Uint8Array::from(&huge[..]).into(), shape(&[26000, 26000, 3]));
    let message = error_message(result, "bytes of memory");
    assert!(message.contains("26000 × 26000 (height × width) progressive stream"), "{message}");
    let small = crate::common::flat_progressive(96, 80, &[(1, 1); 3]);
    let back = decode(json(cfg), Uint8Array::from(&small[..]).into(), shape(&[80, 96, 3])).unwrap();
    assert!(back.to_vec().iter().all(|&v| v == 128));
}

/// A flat grey baseline stream of `height` × `width` × 3 (4:4:4, no JFIF: YCbCr) whose
/// every block is two bits (DC difference 0, end of block): a large image, a small stream.
#[cfg(feature = "encoder")]
fn flat_colour_stream(height: u16, width: u16) -> Vec<u8> {
    fn segment(out: &mut Vec<u8>, marker: u8, payload: &[u8]) {
        out.extend_from_slice(&[0xFF, marker]);
        out.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
        out.extend_from_slice(payload);
    }
    let mut s = vec![0xFF, 0xD8];
    let mut dqt = vec![0u8];
    dqt.extend_from_slice(&[1u8; 64]);
    segment(&mut s, 0xDB, &dqt);
    let mut counts = [0u8; 16];
    counts[0] = 1;
    for class in [0x00u8, 0x10] {
        let mut dht = vec![class];
        dht.extend_from_slice(&counts);
        dht.push(0x00);
        segment(&mut s, 0xC4, &dht);
    }
    let [h0, h1] = height.to_be_bytes();
    let [w0, w1] = width.to_be_bytes();
    segment(
        &mut s,
        0xC0,
        &[8, h0, h1, w0, w1, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0],
    );
    segment(&mut s, 0xDA, &[3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0]);
    let blocks = 3 * usize::from(height).div_ceil(8) * usize::from(width).div_ceil(8);
    s.resize(s.len() + (2 * blocks).div_ceil(8), 0);
    s.extend_from_slice(&[0xFF, 0xD9]);
    s
}

/// The row decoder (`RowDecoder`, the converter's JPEG input) takes a colour image of more
/// samples than wasm32 can address (40,000² × 3: 4.8 GB), which `decode` refuses: its
/// rows come a band at a time.
#[cfg(feature = "encoder")]
#[wasm_bindgen_test]
fn row_decoder_decodes_an_image_larger_than_wasm_memory_in_bands() {
    let stream = flat_colour_stream(40000, 40000);
    let config = || json(r#"{"quality": 95, "encoded_color_space": "rgb"}"#);
    let message = error_message(
        decode(config(), Uint8Array::from(&stream[..]).into(), shape(&[40000, 40000, 3])),
        "more than this platform can address",
    );
    assert!(message.contains("40000, 40000, 3"), "{message}");
    let parsed = zarr_jpeg::JpegConfig::parse(&zarr_jpeg::ConfigValue::Object(vec![
        ("quality".into(), zarr_jpeg::ConfigValue::Number(95.0)),
        ("encoded_color_space".into(), zarr_jpeg::ConfigValue::String("rgb".into())),
    ]))
    .unwrap();
    let zarr_jpeg::Rows::Bands(mut rows) = zarr_jpeg::RowDecoder::new(&parsed, stream, &[40000, 40000, 3]).unwrap() else {
        panic!("a baseline stream is decoded in bands");
    };
    for _ in 0..3 {
        let band = rows.next_rows().unwrap().unwrap();
        // whole rows of 40,000 × 3 samples, up to an MCU row's 8
        let n = band.len();
        assert!(n % 120_000 == 0 && (1..=8).contains(&(n / 120_000)), "{n} bytes");
        assert!(band.iter().all(|&v| v == 128));
    }
}

/// The row decoder drops the scan bytes it has read after every MCU row, so its bit
/// positions stay small: a scan of more than 256 MiB (which wasm32 positions could not count
/// with the decoder's margin, and which `decode` leaves to the full decoder) is decoded in
/// bands. 44,000 × 65,535 grayscale, every block 48 bits (16-bit codes: DC 0, ZRL, EOB).
#[cfg(feature = "encoder")]
#[wasm_bindgen_test]
fn row_decoder_decodes_a_scan_of_more_than_256_mib_in_bands() {
    let (h, w) = (44000u16, 65535u16);
    let mut stream = vec![0xFF, 0xD8];
    let mut segment = |marker: u8, payload: &[u8]| {
        stream.extend_from_slice(&[0xFF, marker]);
        stream.extend_from_slice(&((payload.len() + 2) as u16).to_be_bytes());
        stream.extend_from_slice(payload);
    };
    segment(0xDB, &[[0u8].as_slice(), &[1u8; 64]].concat());
    let mut dc = vec![0x00];
    dc.extend_from_slice(&[0u8; 15]);
    dc.extend_from_slice(&[1, 0x00]);
    segment(0xC4, &dc);
    let mut ac = vec![0x10];
    ac.extend_from_slice(&[0u8; 15]);
    ac.extend_from_slice(&[2, 0xF0, 0x00]);
    segment(0xC4, &ac);
    let [h0, h1] = h.to_be_bytes();
    let [w0, w1] = w.to_be_bytes();
    segment(0xC0, &[8, h0, h1, w0, w1, 1, 1, 0x11, 0]);
    segment(0xDA, &[1, 1, 0x00, 0, 63, 0]);
    let blocks = usize::from(h).div_ceil(8) * usize::from(w).div_ceil(8);
    assert!(6 * blocks > 256 << 20);
    let start = stream.len();
    stream.resize(start + 6 * blocks, 0);
    for i in (start + 5..start + 6 * blocks).step_by(6) {
        stream[i] = 1; // 00 00 00 00 00 01
    }
    stream.extend_from_slice(&[0xFF, 0xD9]);
    let parsed = zarr_jpeg::JpegConfig::parse(&zarr_jpeg::ConfigValue::Object(vec![
        ("quality".into(), zarr_jpeg::ConfigValue::Number(95.0)),
        ("encoded_color_space".into(), zarr_jpeg::ConfigValue::String("grayscale".into())),
    ]))
    .unwrap();
    let zarr_jpeg::Rows::Bands(mut rows) = zarr_jpeg::RowDecoder::new(&parsed, stream, &[u64::from(h), u64::from(w)]).unwrap() else {
        panic!("a baseline stream is decoded in bands");
    };
    for k in 0..100 {
        let band = rows.next_rows().unwrap().unwrap();
        assert!(band.len() % usize::from(w) == 0 && band.iter().all(|&v| v == 128), "band {k}");
    }
}
