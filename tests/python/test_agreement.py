"""One core, whatever the language: the Python package gives the JavaScript package's
configuration rules and messages, writes the same bytes for the same samples and options,
and decodes to the same samples. libjpeg-turbo (Pillow) decodes what it writes."""

from __future__ import annotations

import io
import itertools

import numpy as np
import pytest
from PIL import Image

import zarr_jpeg
from zarr_jpeg import _zarr_jpeg as native
from conftest import PILLOW_TOLERANCE, ROOT, node, rgb_image

YCBCR_420 = {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}
YCBCR_422 = {"quality": 85, "encoded_color_space": "ycbcr", "subsampling": [[2, 1], [1, 1], [1, 1]]}
YCBCR_444 = {"quality": 95, "encoded_color_space": "ycbcr", "subsampling": [[1, 1], [1, 1], [1, 1]]}
YCBCR_41 = {"quality": 75, "encoded_color_space": "ycbcr", "subsampling": [[4, 1], [1, 1], [1, 1]]}
YCBCR_IN = {"quality": 80, "encoded_color_space": "ycbcr", "decoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1], [1, 1]]}
RGB = {"quality": 90, "encoded_color_space": "rgb"}
GRAY = {"quality": 70, "encoded_color_space": "grayscale"}

CONFIGS = [
    # valid, normalised by both
    YCBCR_420, YCBCR_IN, RGB, GRAY,
    {"quality": 95, "encoded_color_space": "rgb", "subsampling": [[1, 1], [1, 1], [1, 1]]},
    {"quality": 1.0, "encoded_color_space": "grayscale", "subsampling": [[1, 1]], "decoded_color_space": "grayscale"},
    # invalid: every rule, and values messages must quote safely
    {"quality": 0, "encoded_color_space": "rgb"},
    {"quality": 101, "encoded_color_space": "rgb"},
    {"quality": 90.5, "encoded_color_space": "rgb"},
    {"quality": "90", "encoded_color_space": "rgb"},
    {"quality": None, "encoded_color_space": "rgb"},
    {"quality": True, "encoded_color_space": "rgb"},
    {"quality": [90], "encoded_color_space": "rgb"},
    {"encoded_color_space": "rgb"},
    {"quality": 90},
    {"quality": 90, "encoded_color_space": "cmyk"},
    {"quality": 90, "encoded_color_space": "\u001b[31mred\u001b[0m and a very long name that goes on and on"},
    {"quality": 90, "encoded_color_space": "rgb", "decoded_color_space": "ycbcr"},
    {"quality": 90, "encoded_color_space": "grayscale", "decoded_color_space": "rgb"},
    {"quality": 90, "encoded_color_space": "ycbcr"},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [1, 1]]},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": "4:2:0"},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 2], [2, 2], [1, 1]]},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[3, 1], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[4, 4], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2, 5], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "ycbcr", "subsampling": [[2], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "rgb", "subsampling": [[2, 2], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "grayscale", "subsampling": [[1, 1], [1, 1], [1, 1]]},
    {"quality": 90, "encoded_color_space": "rgb", "colour": "yes"},
    {"quality": 90, "encoded_color_space": "rgb", "nested": {"a": [[[[]]]]}},
    None,
    [90, "rgb"],
    "quality=90",
    90,
]


def python_result(f):
    try:
        return {"ok": f()}
    except zarr_jpeg.JpegError as e:
        return {"error": str(e), "kind": e.kind}


def test_configurations_are_normalised_or_refused_with_the_javascript_packages_messages(tmp):
    js = node({"op": "messages", "cases": [{"config": c} for c in CONFIGS]}, tmp)
    refused = 0
    for config, expected in zip(CONFIGS, js):
        got = python_result(lambda: zarr_jpeg.validate_config(config))
        assert got == expected, f"config {config!r}"
        refused += "error" in got
    assert refused == len(CONFIGS) - 6  # every invalid one was refused, by both


def test_encode_options_shapes_and_data_are_checked_with_the_javascript_packages_messages(tmp):
    samples = tmp / "samples.bin"
    samples.write_bytes(bytes(range(256)) * 48)  # 12,288 bytes: a 64 x 64 x 3 chunk
    cases = [
        # encode options (the JS names: the native function takes them as encode() does)
        (YCBCR_420, [64, 64, 3], {"trellis": 1}),
        (YCBCR_420, [64, 64, 3], {"restartIntervals": "no"}),
        (YCBCR_420, [64, 64, 3], {"quantTable": "jpegli"}),
        (YCBCR_420, [64, 64, 3], {"quantTable": 3}),
        (YCBCR_420, [64, 64, 3], {"progressive": True}),
        (YCBCR_420, [64, 64, 3], [True]),
        (YCBCR_420, [64, 64, 3], "fast"),
        (YCBCR_420, [64, 64, 3], {"trellis": True, "quantTable": "flat", "restartIntervals": False}),
        # the spec's chunk-shape table and the data's length
        (YCBCR_420, [12288], None),
        (YCBCR_420, [64, 64, 2, 1], None),
        (YCBCR_420, [64, 48, 4], None),
        (YCBCR_420, [64, 64, 1], None),
        (GRAY, [64, 64, 3], None),
        (GRAY, [0, 12288], None),
        (GRAY, [70000, 1], None),
        (GRAY, [64, 64], None),
        (GRAY, [64, 192], None),
        (GRAY, [64, 192, 1], None),
        (GRAY, [64, -192], None),
        (GRAY, [64, 1.5], None),
        (GRAY, [64, "192"], None),
        (GRAY, [], None),
    ]
    js = node({"op": "messages", "cases": [{"config": c, "samples": str(samples), "shape": s, "options": o} for c, s, o in cases]}, tmp)
    data = samples.read_bytes()
    for (config, shape, options), expected in zip(cases, js):
        got = python_result(lambda: len(native.encode(config, data, shape, options)))
        assert got == expected, f"encode {config} {shape} {options}"
    assert sum("error" in r for r in js) == len(cases) - 3


def test_corrupt_and_mismatched_streams_are_refused_with_the_javascript_packages_messages(tmp):
    good = zarr_jpeg.encode(rgb_image(48, 64), YCBCR_420)
    streams = {
        "empty": b"",
        "not jpeg": b"GIF89a" + bytes(100),
        "truncated header": good[:100],
        "truncated data": good[: len(good) // 2],
        "no EOI": good[:-2],
        "flipped bytes": good[:300] + bytes(b ^ 0x5A for b in good[300:340]) + good[340:],
    }
    cases = [(name, YCBCR_420, [48, 64, 3]) for name in streams]
    cases += [("other height", YCBCR_420, [40, 64, 3]), ("other components", GRAY, [48, 64]), ("other width", RGB, [48, 60, 3])]
    files = []
    for i, (name, config, shape) in enumerate(cases):
        f = tmp / f"stream-{i}.jpg"
        f.write_bytes(streams.get(name, good))
        files.append(f)
    js = node({"op": "decode", "cases": [{"config": c, "stream": str(f), "shape": s, "out": str(f) + ".out"} for (_, c, s), f in zip(cases, files)]}, tmp)
    for (name, config, shape), f, expected in zip(cases, files, js):
        got = python_result(lambda: zarr_jpeg.decode(f.read_bytes(), config, shape).shape)
        if "error" in expected:
            assert got == expected, name
        else:  # (a corruption the decoder reads through: both give the same samples)
            assert np.array_equal(zarr_jpeg.decode(f.read_bytes(), config, shape).ravel(), np.frombuffer((f.parent / (f.name + ".out")).read_bytes(), np.uint8)), name
    assert sum("error" in r for r in js) >= len(cases) - 2


def test_type_errors_name_what_they_got():
    with pytest.raises(TypeError, match="must be a uint8 array, got an array of float32"):
        zarr_jpeg.encode(np.zeros((8, 8), np.float32), GRAY)
    with pytest.raises(TypeError, match="the encoded chunk must be a bytes-like object .* got a str"):
        zarr_jpeg.decode("FFD8", GRAY, (8, 8))
    with pytest.raises(TypeError, match="C-contiguous"):
        native.encode(GRAY, np.zeros((16, 16), np.uint8)[:, ::2], [16, 8])
    with pytest.raises(zarr_jpeg.JpegError, match="the chunk shape must be a tuple or list of integers, got a str"):
        native.decode_into(GRAY, b"", "16x16", bytearray(256))
    with pytest.raises(TypeError, match="the output buffer must be writable, got a bytes \\(read-only\\)"):
        native.decode_into(GRAY, zarr_jpeg.encode(np.zeros((8, 8), np.uint8), GRAY), [8, 8], bytes(64))
    with pytest.raises(zarr_jpeg.JpegError, match="the output buffer holds 63 bytes"):
        native.decode_into(GRAY, zarr_jpeg.encode(np.zeros((8, 8), np.uint8), GRAY), [8, 8], bytearray(63))
    shared = bytearray(zarr_jpeg.encode(np.zeros((8, 8), np.uint8), GRAY)) + bytearray(64)
    with pytest.raises(TypeError, match="overlaps the encoded chunk"):
        native.decode_into(GRAY, memoryview(shared), [8, 8], memoryview(shared)[-64:])
    with pytest.raises(TypeError, match="given twice"):
        zarr_jpeg.encode(np.zeros((8, 8), np.uint8), GRAY, quant_table="flat", quantTable="flat")
    with pytest.raises(zarr_jpeg.JpegError, match='unknown encode option "speed"'):
        zarr_jpeg.encode(np.zeros((8, 8), np.uint8), GRAY, speed=3)
    e = pytest.raises(ValueError, zarr_jpeg.validate_config, {"quality": 90})
    assert e.value.kind == "InvalidConfiguration"


# The byte-identity matrix: every colour mode and sampling, sizes that are and are not whole
# MCUs, chunks over 64 rows (restart intervals), and every encode option.
CHUNKS = [
    (YCBCR_420, (130, 96, 3)), (YCBCR_420, (37, 53, 3)), (YCBCR_422, (72, 40, 3)), (YCBCR_444, (64, 80, 3)),
    (YCBCR_41, (66, 100, 3)), (YCBCR_IN, (80, 48, 3)), (RGB, (100, 70, 3)), (GRAY, (150, 61)), (GRAY, (33, 17, 1)),
]
OPTIONS = [{}, {"restart_intervals": False}, {"trellis": True}, {"quant_table": "flat"}, {"quantTable": "ms-ssim", "trellis": True}]
JS_NAMES = {"restart_intervals": "restartIntervals", "quant_table": "quantTable"}


def test_python_writes_the_javascript_packages_bytes_and_both_decode_them_alike(tmp):
    cases = []
    for i, ((config, shape), options) in enumerate(itertools.product(CHUNKS, OPTIONS)):
        image = rgb_image(shape[0], shape[1], seed=i)
        samples = image if len(shape) == 3 and shape[2] == 3 else image[..., :1].reshape(shape)
        f = tmp / f"samples-{i}.bin"
        f.write_bytes(np.ascontiguousarray(samples).tobytes())
        stream = zarr_jpeg.encode(samples, config, **options)
        (tmp / f"py-{i}.jpg").write_bytes(stream)
        js_options = {JS_NAMES.get(k, k): v for k, v in options.items()}
        cases.append((i, config, shape, samples, stream, js_options, f))
    node({"op": "encode", "cases": [{"config": c, "samples": str(f), "shape": list(s), "options": o, "out": str(tmp / f"js-{i}.jpg")} for i, c, s, _, _, o, f in cases]}, tmp)
    node({"op": "decode", "cases": [{"config": c, "stream": str(tmp / f"py-{i}.jpg"), "shape": list(s), "out": str(tmp / f"js-{i}.bin")} for i, c, s, *_ in cases]}, tmp)
    sizes = set()
    for i, config, shape, samples, stream, options, _ in cases:
        js_stream = (tmp / f"js-{i}.jpg").read_bytes()
        assert stream == js_stream, f"{config} {shape} {options}: Python wrote {len(stream)} bytes, JS {len(js_stream)}"
        ours = zarr_jpeg.decode(stream, config, shape)
        assert ours.shape == shape and ours.dtype == np.uint8
        assert np.array_equal(ours.ravel(), np.frombuffer((tmp / f"js-{i}.bin").read_bytes(), np.uint8)), f"{config} {shape} {options}"
        # and the stream is a faithful one (not, say, all one colour)
        error = np.abs(ours.astype(int) - samples.astype(int)).mean()
        assert error < 12, f"{config} {shape} {options}: mean error {error}"
        sizes.add(len(stream))
    assert len(sizes) > len(cases) // 2  # the options did change the streams


def sample(h: int, w: int, channels: int, y: int = 0, x: int = 0) -> np.ndarray:
    """The interop tests' sample images (samples/ihc.png, samples/cell.png), tiled as
    tests/python/write_jpeg_store.py does for tests/js/python-writer.test.mjs, from (y, x)."""
    name = "ihc.png" if channels == 3 else "cell.png"
    img = np.asarray(Image.open(ROOT / "samples" / name).convert("RGB" if channels == 3 else "L"))
    reps = (-(-(y + h) // img.shape[0]), -(-(x + w) // img.shape[1])) + ((1,) if channels == 3 else ())
    return np.ascontiguousarray(np.tile(img, reps)[y : y + h, x : x + w])


PILLOW_CONFIGS = [(YCBCR_420, 3, "4:2:0"), (YCBCR_422, 3, "4:2:2"), (YCBCR_444, 3, "4:4:4"), (RGB, 3, None), (GRAY, 1, None)]


def pillow_decode(stream: bytes, channels: int) -> np.ndarray:
    pil = Image.open(io.BytesIO(stream))
    pil.load()
    assert pil.mode == ("L" if channels == 1 else "RGB")
    return np.asarray(pil)


@pytest.mark.parametrize("config,channels,pillow_subsampling", PILLOW_CONFIGS, ids=["4:2:0", "4:2:2", "4:4:4", "rgb", "grayscale"])
def test_libjpeg_turbo_decodes_python_written_chunks_as_ours_do(config, channels, pillow_subsampling):
    # The bound of tests/js/python-writer.test.mjs (3) on its samples (tiles from the origin).
    # Elsewhere in the images a sample can differ by 4 with chroma subsampling, for the stream
    # Pillow itself writes of the same samples as much as for ours (IDCT rounding and chroma
    # upsampling differ between the decoders): there the bound is what Pillow's own stream shows.
    worst = 0
    for shape, (y, x) in itertools.product([(128, 192), (100, 130), (37, 53)], [(0, 0), (40, 30), (200, 50)]):
        image = sample(*shape, channels, y, x)
        bound = PILLOW_TOLERANCE
        if (y, x) != (0, 0) and (channels == 1 or pillow_subsampling):
            reference = io.BytesIO()
            Image.fromarray(image).save(reference, "JPEG", quality=config["quality"], **({"subsampling": pillow_subsampling} if pillow_subsampling else {}))
            theirs_stream = reference.getvalue()
            own = np.abs(pillow_decode(theirs_stream, channels).astype(int) - zarr_jpeg.decode(theirs_stream, config, image.shape).astype(int)).max()
            bound = max(bound, own)
        for options in [{}, {"trellis": True}, {"restart_intervals": False}]:
            stream = zarr_jpeg.encode(image, config, **options)
            diff = np.abs(pillow_decode(stream, channels).astype(int) - zarr_jpeg.decode(stream, config, image.shape).astype(int)).max()
            worst = max(worst, diff)
            assert diff <= bound, f"{shape} at {(y, x)} {options}: max |ours - Pillow| = {diff} > {bound}"
    print(f"{config}: max |ours - Pillow| = {worst}")


def test_the_extension_has_the_full_decoder_progressive_streams_decode():
    # The npm package loads its full decoder on demand; the extension is built with it, so a
    # progressive stream (here Pillow's) decodes directly, as libjpeg-turbo decodes it.
    image = sample(96, 128, 3)
    stream = io.BytesIO()
    Image.fromarray(image).save(stream, "JPEG", quality=90, progressive=True, subsampling="4:4:4")
    stream = stream.getvalue()
    assert b"\xff\xc2" in stream  # SOF2: progressive
    ours = zarr_jpeg.decode(stream, YCBCR_444, image.shape)
    assert np.abs(ours.astype(int) - pillow_decode(stream, 3).astype(int)).max() <= PILLOW_TOLERANCE
