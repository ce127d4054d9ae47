"""TIFF in, through the Rust converter (``zarr_jpeg.convert`` and the ``zarr-jpeg`` script):
on TIFFs that tifffile and libvips write at test time it writes the npm CLI's store byte for
byte and refuses what the CLI refuses with its messages; level 0 equals what tifffile
(libjpeg-turbo, zlib, its LZW) and Pillow (libtiff) decode from the same files, and a
JPEG-tiled page's tiles are copied, not re-encoded."""

from __future__ import annotations

import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import tifffile
import zarr
from PIL import Image

import zarr_jpeg
from conftest import PILLOW_TOLERANCE
from test_convert import assert_same_store, node_convert, script_convert


def gradient(height: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    rgb = np.dstack([x * 255 // width, y * 255 // height, (x + y) % 256]).astype(int)
    return (rgb + rng.integers(0, 20, rgb.shape)).clip(0, 255).astype(np.uint8)


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def ycbcr_tiff(path: Path, rgb: np.ndarray, rows_per_strip: int, deflate: bool) -> None:
    """A chunky YCbCr TIFF with 2×2 chroma subsampling (TIFF 6.0 §21's data units), written
    byte by byte: tifffile and libvips refuse to write (or read) this layout; libtiff reads it."""
    h, w, _ = rgb.shape
    # (data units cover whole 2×2 blocks: the edges are padded by repeating them)
    f = np.pad(rgb, ((0, h % 2), (0, w % 2), (0, 0)), mode="edge").astype(float)
    y = 0.299 * f[..., 0] + 0.587 * f[..., 1] + 0.114 * f[..., 2]
    cb = (f[..., 2] - y) / 1.772 + 128
    cr = (f[..., 0] - y) / 1.402 + 128
    strips = []
    for top in range(0, h, rows_per_strip):
        units = bytearray()
        for by in range(top, min(top + rows_per_strip, h), 2):
            for bx in range(0, w, 2):
                units += bytes(np.clip(np.round(y[by:by + 2, bx:bx + 2]), 0, 255).astype(np.uint8).ravel())
                units += bytes([int(np.clip(round(cb[by:by + 2, bx:bx + 2].mean()), 0, 255)),
                                int(np.clip(round(cr[by:by + 2, bx:bx + 2].mean()), 0, 255))])
        strips.append(zlib.compress(bytes(units)) if deflate else bytes(units))
    data = b"".join(strips)
    offsets, at = [], 8
    for s in strips:
        offsets.append(at)
        at += len(s)
    extra = at  # values that do not fit in an entry follow the data
    values = b""

    def put(raw: bytes) -> int:
        nonlocal values
        where = extra + len(values)
        values += raw
        return where

    entries = [
        (256, 4, 1, struct.pack("<I", w)), (257, 4, 1, struct.pack("<I", h)),
        (258, 3, 3, struct.pack("<I", put(struct.pack("<3H", 8, 8, 8)))),
        (259, 3, 1, struct.pack("<HH", 8 if deflate else 1, 0)), (262, 3, 1, struct.pack("<HH", 6, 0)),
        (273, 4, len(offsets), struct.pack("<I", put(struct.pack(f"<{len(offsets)}I", *offsets)))),
        (277, 3, 1, struct.pack("<HH", 3, 0)), (278, 4, 1, struct.pack("<I", rows_per_strip)),
        (279, 4, len(strips), struct.pack("<I", put(struct.pack(f"<{len(strips)}I", *map(len, strips))))),
        (284, 3, 1, struct.pack("<HH", 1, 0)), (530, 3, 2, struct.pack("<HH", 2, 2)),
        (532, 5, 6, struct.pack("<I", put(struct.pack("<12I", 0, 1, 255, 1, 128, 1, 255, 1, 128, 1, 255, 1)))),
    ]
    ifd = extra + len(values)
    table = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHI", t, k, n) + v for t, k, n, v in entries) + b"\0\0\0\0"
    path.write_bytes(b"II*\0" + struct.pack("<I", ifd) + data + values + table)


def old_jpeg_tiff(path: Path, jpeg: bytes, height: int, width: int, interchange: bool, strips: int = 1) -> None:
    """An old-style JPEG (compression 6) TIFF as scanners wrote them, byte by byte (no
    maintained tool writes the scheme; libtiff reads it): the whole JPEG stream at offset 8,
    JPEGInterchangeFormat (513/514) pointing at it when `interchange`, and the strips
    holding its entropy-coded data (or, with one strip and no 513, the whole stream)."""
    scan = jpeg.index(b"\xff\xda")
    scan += 2 + struct.unpack(">H", jpeg[scan + 2:scan + 4])[0]
    if interchange or strips > 1:
        step = -(-(len(jpeg) - scan) // strips)
        offsets = [8 + scan + i * step for i in range(strips)]
        counts = [min(step, len(jpeg) - scan - i * step) for i in range(strips)]
    else:
        offsets, counts = [8], [len(jpeg)]
    extra = 8 + len(jpeg) + len(jpeg) % 2
    values = struct.pack("<3H", 8, 8, 8) + struct.pack(f"<{strips}I", *offsets) + struct.pack(f"<{strips}I", *counts)
    at = lambda i: extra + i  # noqa: E731
    pointer = lambda n, i: struct.pack("<I", at(i)) if n > 1 else values[i:i + 4]  # noqa: E731
    entries = [
        (256, 4, 1, struct.pack("<I", width)), (257, 4, 1, struct.pack("<I", height)),
        (258, 3, 3, struct.pack("<I", at(0))), (259, 3, 1, struct.pack("<HH", 6, 0)), (262, 3, 1, struct.pack("<HH", 6, 0)),
        (273, 4, strips, pointer(strips, 6)), (277, 3, 1, struct.pack("<HH", 3, 0)),
        (278, 4, 1, struct.pack("<I", -(-height // strips))), (279, 4, strips, pointer(strips, 6 + 4 * strips)),
        (284, 3, 1, struct.pack("<HH", 1, 0)),
    ]
    if interchange:
        entries += [(512, 3, 1, struct.pack("<HH", 1, 0)), (513, 4, 1, struct.pack("<I", 8)), (514, 4, 1, struct.pack("<I", len(jpeg)))]
    entries += [(530, 3, 2, struct.pack("<HH", 2, 2))]
    ifd = extra + len(values)
    table = struct.pack("<H", len(entries)) + b"".join(struct.pack("<HHI", t, k, n) + v for t, k, n, v in entries) + b"\0\0\0\0"
    path.write_bytes(b"II*\0" + struct.pack("<I", ifd) + jpeg + b"\0" * (len(jpeg) % 2) + values + table)


def pillow_jpeg(rgb: np.ndarray, quality: int) -> bytes:
    from io import BytesIO
    out = BytesIO()
    Image.fromarray(rgb).save(out, "JPEG", quality=quality, subsampling="4:2:0")
    return out.getvalue()


@pytest.fixture(scope="module")
def tiffs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("tiffs")
    rgb = gradient(700, 1000, 1)
    small = gradient(300, 421, 2)
    jpeg = lambda q: {"compression": "jpeg", "compressionargs": {"level": q}}  # noqa: E731
    tifffile.imwrite(d / "jpeg-rgb.tif", rgb, **jpeg(85), tile=(256, 256), photometric="rgb")
    tifffile.imwrite(d / "jpeg-ycbcr.tif", rgb, **jpeg(80), tile=(128, 128), photometric="ycbcr")
    tifffile.imwrite(d / "jpeg-gray.tif", rgb[..., 1], **jpeg(90), tile=(240, 176))
    tifffile.imwrite(d / "jpeg-planes.tif", np.moveaxis(rgb, 2, 0), compression="jpeg", tile=(128, 128),
                     planarconfig="separate", photometric="minisblack")
    tifffile.imwrite(d / "jpeg-channels.ome.tif", np.stack([rgb[..., 0], rgb[..., 2]]), compression="jpeg", tile=(256, 256),
                     metadata={"axes": "CYX", "PhysicalSizeX": 0.25, "PhysicalSizeY": 0.25})
    tifffile.imwrite(d / "aperio.svs", rgb, **jpeg(70), tile=(256, 256), photometric="rgb", metadata=None,
                     description="Aperio Image Library v12.0.5\r\n1000x700 [0,0 1000x700] (256x256) JPEG/RGB Q=70|AppMag = 20|MPP = 0.4990")
    tifffile.imwrite(d / "lzw-tiles.tif", small, compression="lzw", tile=(128, 128))
    tifffile.imwrite(d / "deflate-strips.tif", small, compression="zlib", rowsperstrip=37, predictor=True)
    tifffile.imwrite(d / "packbits-gray.tif", small[..., 0], compression="packbits", rowsperstrip=50)
    tifffile.imwrite(d / "gray16.tif", small[..., 1].astype(np.uint16) * 250, compression="zlib", predictor=True, tile=(64, 64))
    tifffile.imwrite(d / "planar.tif", np.moveaxis(small, 2, 0), planarconfig="separate", photometric="rgb")
    tifffile.imwrite(d / "four-channels.tif", np.stack([small[..., 0], small[..., 1], small[..., 2], small[..., 0]]),
                     planarconfig="separate", photometric="minisblack")
    tifffile.imwrite(d / "min-is-white.tif", small[..., 2], photometric="miniswhite")
    tifffile.imwrite(d / "big-endian.tif", small, bigtiff=True, compression="lzw", byteorder=">")
    # OME-XML that disagrees with the file's IFDs
    ome = '<OME><Image><Pixels DimensionOrder="XYZCT" SizeC="1" SizeZ="{z}" SizeT="1"><Channel SamplesPerPixel="1"/>{td}</Pixels></Image></OME>'
    for name, description in [("z-stack-short.ome.tif", ome.format(z=4, td="")),
                              ("tiffdata-past-end.ome.tif", ome.format(z=2, td='<TiffData IFD="1" PlaneCount="2"/>'))]:
        with tifffile.TiffWriter(d / name) as w:
            w.write(small[..., 0], photometric="minisblack", metadata=None, description=description)
            w.write(small[..., 0], photometric="minisblack", metadata=None)
    tifffile.imwrite(d / "int8.tif", small[..., 0].astype(np.int8))
    tifffile.imwrite(d / "float.tif", small[..., 0].astype(np.float32))
    ycbcr_tiff(d / "ycbcr-subsampled.tif", small[:96, :128], rows_per_strip=16, deflate=True)
    # (Pillow reads uncompressed YCbCr with its own decoder, which ignores subsampling)
    ycbcr_tiff(d / "ycbcr-subsampled-edges.tif", small[:63, :99], rows_per_strip=8, deflate=True)
    ycbcr_tiff(d / "ycbcr-uncompressed.tif", small[:64, :100], rows_per_strip=8, deflate=False)
    y, x = np.mgrid[0:300, 0:260]
    stripes = np.stack([x * 0.9 % 256, y * 0.8 % 256, (x + y) * 0.4 % 256], -1).astype(np.uint8)
    tifffile.imwrite(d / "j2k-rgb.tif", stripes, tile=(128, 128), compression="jpeg2000", photometric="rgb")
    tifffile.imwrite(d / "aperio-j2k-rgb.tif", stripes, tile=(128, 128), compression=33005, photometric="rgb")
    tifffile.imwrite(d / "j2k-strips-be.tif", stripes, rowsperstrip=64, compression="jpeg2000", photometric="rgb", byteorder=">")
    tifffile.imwrite(d / "j2k-gray16.tif", (1000 + x * 150 + y * 100).astype(np.uint16), tile=(128, 128), compression="jpeg2000",
                     photometric="minisblack")
    tifffile.imwrite(d / "aperio-j2k-ycbcr.tif", stripes, tile=(128, 128), compression=33003, photometric="ycbcr")
    ojpeg = pillow_jpeg(small, 90)
    old_jpeg_tiff(d / "ojpeg-interchange.tif", ojpeg, 300, 421, interchange=True)
    old_jpeg_tiff(d / "ojpeg-one-strip.tif", ojpeg, 300, 421, interchange=False)
    old_jpeg_tiff(d / "ojpeg-bare-strips.tif", ojpeg, 300, 421, interchange=False, strips=3)
    old_jpeg_tiff(d / "ojpeg-wrong-size.tif", ojpeg, 300, 420, interchange=True)
    (d / "ojpeg.jpg").write_bytes(ojpeg)
    (d / "truncated.tif").write_bytes((d / "jpeg-rgb.tif").read_bytes()[:5000])
    # an IFD whose next-IFD offset points back at itself
    loop = bytearray((d / "min-is-white.tif").read_bytes())
    first = struct.unpack_from("<I", loop, 4)[0]
    count = struct.unpack_from("<H", loop, first)[0]
    struct.pack_into("<I", loop, first + 2 + 12 * count, first)
    (d / "loop.tif").write_bytes(bytes(loop))
    if shutil.which("vips"):
        tifffile.imwrite(d / "plain.tif", rgb)
        subprocess.run(["vips", "tiffsave", str(d / "plain.tif"), str(d / "vips-pyramid.tif"), "--tile", "--tile-width", "256",
                        "--tile-height", "256", "--compression", "jpeg", "-Q", "75", "--pyramid"], check=True)
    return d


# (input, CLI arguments): every kind of TIFF page, and the options a TIFF takes
SAME = [
    ("jpeg-rgb.tif", []),
    ("jpeg-rgb.tif", ["--shard", "512", "--quality", "60", "--channel-axis", "last"]),
    ("jpeg-ycbcr.tif", ["--levels", "4"]),
    ("jpeg-gray.tif", []),
    ("jpeg-planes.tif", []),
    ("jpeg-channels.ome.tif", []),
    ("aperio.svs", ["--name", "slide"]),
    ("vips-pyramid.tif", []),
    ("deflate-strips.tif", ["--chunk", "128"]),
    ("packbits-gray.tif", []),
    ("gray16.tif", ["--rescale", "auto"]),
    ("planar.tif", ["--color", "grayscale"]),
    ("four-channels.tif", []),
    ("min-is-white.tif", ["--pixel-size", "0.5"]),
    ("big-endian.tif", []),
    ("j2k-rgb.tif", []),
    ("aperio-j2k-rgb.tif", ["--chunk", "128"]),
    ("j2k-gray16.tif", ["--rescale", "auto"]),
    ("ojpeg-interchange.tif", []),
    ("ojpeg-one-strip.tif", ["--levels", "2"]),
]


@pytest.mark.parametrize("name,args", SAME, ids=[f"{n} {' '.join(a)}".strip() for n, a in SAME])
def test_the_same_store_as_the_npm_cli(tiffs: Path, tmp: Path, name: str, args: list[str]) -> None:
    source = tiffs / name
    if not source.exists():
        pytest.skip(f"{name} needs libvips")
    js = node_convert(source, tmp / "js.zarr", [*args, "--workers", "0", "--quiet"])
    assert js.returncode == 0, js.stderr
    py = script_convert(source, tmp / "py.zarr", [*args, "--quiet"])
    assert py.returncode == 0, py.stderr
    assert js.stderr == py.stderr, "the same warnings"
    assert_same_store(tmp / "js.zarr", tmp / "py.zarr")


@pytest.mark.parametrize("name", ["vips-pyramid.tif", "aperio.svs", "lzw-tiles.tif"])
def test_npm_worker_threads_write_the_same_store(tiffs: Path, tmp: Path, name: str) -> None:
    """The npm CLI's worker threads (which decode a TIFF's tiles and encode the levels while
    the calling thread reads on) write the store the native converter writes."""
    source = tiffs / name
    if not source.exists():
        pytest.skip(f"{name} needs libvips")
    js = node_convert(source, tmp / "js.zarr", ["--workers", "2", "--quiet", "--json"])
    assert js.returncode == 0, js.stderr
    assert '"workers": 2' in js.stdout
    py = script_convert(source, tmp / "py.zarr", ["--quiet"])
    assert py.returncode == 0, py.stderr
    assert_same_store(tmp / "js.zarr", tmp / "py.zarr")


def test_jpeg_tiles_are_copied_and_read_back_as_tifffile_decodes_them(tiffs: Path, tmp: Path) -> None:
    summary = zarr_jpeg.convert(tiffs / "aperio.svs", tmp / "out.zarr", progress=False)
    assert summary["tiles"] == {"copied": 12, "reencoded": 0, "empty": 0}
    assert summary["config"]["quality"] == 70 and summary["qualityEstimated"] is True
    assert summary["source"]["pixelSize"] == {"x": 0.499, "y": 0.499, "source": "Aperio MPP"}
    page = tifffile.TiffFile(tiffs / "aperio.svs").pages[0]
    # each chunk holds its tile's entropy-coded data unchanged
    fh = page.parent.filehandle
    for i, (offset, count) in enumerate(zip(page.dataoffsets, page.databytecounts)):
        fh.seek(offset)
        tile = fh.read(count)
        chunk = (tmp / "out.zarr" / "0" / "c" / "0" / str(i // 4) / str(i % 4)).read_bytes()
        scan = tile[tile.rindex(b"\xff\xda"):]
        assert chunk.endswith(scan), i
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    level0 = np.moveaxis(group["0"][:], 0, -1)
    # libjpeg-turbo (tifffile's imagecodecs) and the codec decode the same streams (IDCT
    # rounding and chroma upsampling differ by a few samples at 4:2:0)
    difference = np.abs(level0.astype(int) - page.asarray().astype(int))
    assert difference.max() <= PILLOW_TOLERANCE + 1 and difference.mean() < 0.5
    scale = group.attrs["ome"]["multiscales"][0]["datasets"][1]["coordinateTransformations"][0]["scale"]
    assert scale == [1, 0.998, 0.998]


@pytest.mark.parametrize("name", ["lzw-tiles.tif", "deflate-strips.tif", "big-endian.tif", "j2k-rgb.tif", "aperio-j2k-rgb.tif",
                                  "j2k-strips-be.tif"])
def test_decoded_pages_match_tifffile(tiffs: Path, tmp: Path, name: str) -> None:
    zarr_jpeg.convert(tiffs / name, tmp / "out.zarr", quality=100, subsampling="4:4:4", channel_axis="last", progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")[:]
    assert psnr(level0, tifffile.imread(tiffs / name)) > 45


def test_a_16_bit_jpeg_2000_page_rescaled(tiffs: Path, tmp: Path) -> None:
    summary = zarr_jpeg.convert(tiffs / "j2k-gray16.tif", tmp / "out.zarr", quality=100, rescale="auto", progress=False)
    samples = tifffile.imread(tiffs / "j2k-gray16.tif").astype(float)  # (OpenJPEG, through imagecodecs)
    low, high = samples.min(), samples.max()
    assert summary["rescale"] == {"min": low, "max": high}
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")[:]
    assert np.abs(level0.astype(int) - np.round((samples - low) * 255 / (high - low))).max() <= 1


@pytest.mark.parametrize("name", ["ycbcr-subsampled.tif", "ycbcr-subsampled-edges.tif"])
def test_subsampled_ycbcr_matches_libtiff(tiffs: Path, tmp: Path, name: str) -> None:
    reference = np.asarray(Image.open(tiffs / name).convert("RGB"))
    zarr_jpeg.convert(tiffs / name, tmp / "out.zarr", quality=100, subsampling="4:4:4", channel_axis="last", progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")[:]
    assert level0.shape == reference.shape
    assert psnr(level0, reference) > 45
    assert np.abs(level0.astype(int) - reference.astype(int)).mean() < 1


@pytest.mark.parametrize("name", ["ojpeg-interchange.tif", "ojpeg-one-strip.tif"])
def test_old_style_jpeg_is_its_whole_stream_decoded(tiffs: Path, tmp: Path, name: str) -> None:
    """An old-style JPEG page is its JPEGInterchangeFormat stream (or its only strip), decoded
    as libjpeg-turbo decodes that stream and as libtiff reads the TIFF."""
    zarr_jpeg.convert(tiffs / name, tmp / "out.zarr", quality=100, subsampling="4:4:4", channel_axis="last", progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")[:]
    stream = np.asarray(Image.open(tiffs / "ojpeg.jpg").convert("RGB"))
    assert level0.shape == stream.shape
    assert psnr(level0, stream) > 40
    if name == "ojpeg-interchange.tif":
        libtiff = np.asarray(Image.open(tiffs / name).convert("RGB"))
        assert psnr(level0, libtiff) > 35


def test_uncompressed_subsampled_ycbcr_is_the_deflated_one(tiffs: Path, tmp: Path) -> None:
    small = gradient(300, 421, 2)[:64, :100]
    ycbcr_tiff(tmp / "deflated.tif", small, rows_per_strip=8, deflate=True)
    zarr_jpeg.convert(tiffs / "ycbcr-uncompressed.tif", tmp / "a.zarr", progress=False)
    zarr_jpeg.convert(tmp / "deflated.tif", tmp / "b.zarr", name="ycbcr-uncompressed", progress=False)
    assert_same_store(tmp / "a.zarr", tmp / "b.zarr")


# (input, CLI arguments, a part of the message): refusals both packages give, with nothing
# left at the destination
BAD = [
    ("z-stack-short.ome.tif", [], "describes 4 z-plane(s) × 1 channel(s) × 1 time point(s) = 4 planes, but the file has 2 IFD(s)"),
    ("tiffdata-past-end.ome.tif", [], "a TiffData points at IFD 2, past the last IFD (the file has 2: 0–1)"),
    ("gray16.tif", [], "the samples are uint16"),
    ("int8.tif", [], "the samples are int8"),
    ("float.tif", [], "the samples are float32"),
    ("jpeg-rgb.tif", ["--chunk", "128"], "chunk applies to PNG and JPEG input"),
    ("jpeg-rgb.tif", ["--rescale", "auto"], "rescale applies to 16-bit input; this TIFF's tiles are 8-bit JPEG"),
    ("jpeg-rgb.tif", ["--shard", "300"], "shard 300 is not a multiple of the tile size 256 × 256"),
    ("jpeg-rgb.tif", ["--levels", "12"], "levels 12 is too many"),
    ("min-is-white.tif", ["--rescale", "auto"], "rescale applies to 16-bit input"),
    ("truncated.tif", [], "lies past the end of the file"),
    ("aperio-j2k-ycbcr.tif", [], "Aperio JPEG 2000 (YCbCr) is not supported"),
    ("loop.tif", [], "a loop of IFD offsets"),
    ("ojpeg-bare-strips.tif", [], "old-style JPEG (compression 6) without a whole JPEG stream of the image"),
    ("ojpeg-wrong-size.tif", [], "the old-style JPEG stream is 300 × 421 pixels (height × width), the page 300 × 420"),
]


@pytest.mark.parametrize("name,args,message", BAD, ids=[f"{n} {' '.join(a)}".strip() for n, a, _ in BAD])
def test_refusals_are_the_npm_clis(tiffs: Path, tmp: Path, name: str, args: list[str], message: str) -> None:
    js = node_convert(tiffs / name, tmp / "js.zarr", [*args, "--quiet"])
    py = script_convert(tiffs / name, tmp / "py.zarr", [*args, "--quiet"])
    assert py.returncode == 1, py.stderr
    assert message in py.stderr
    assert js.returncode == 1, js.stderr
    assert py.stderr.replace("py.zarr", "js.zarr") == js.stderr
    assert list(tmp.iterdir()) == [], "nothing at the destination, no temporary directory"


def exact_level(level0: np.ndarray, level: int) -> np.ndarray:
    """Level `level` made without loss from level 0: rounded 2×2 means, level by level (edges: of what exists)."""
    a = level0.astype(np.float64)
    for _ in range(level):
        h, w = a.shape[:2]
        total = np.zeros((h + h % 2, w + w % 2) + a.shape[2:])
        count = np.zeros((h + h % 2, w + w % 2) + (1,) * (a.ndim - 2))
        total[:h, :w], count[:h, :w] = a, 1
        s = total.reshape(total.shape[0] // 2, 2, total.shape[1] // 2, 2, *a.shape[2:]).sum(axis=(1, 3))
        n = count.reshape(count.shape[0] // 2, 2, count.shape[1] // 2, 2, *count.shape[2:]).sum(axis=(1, 3))
        a = np.floor(s / n + 0.5)
    return a


def test_levels_above_copied_tiles_keep_30_db_by_default(tmp: Path) -> None:
    """A detailed slide copied at Q30 (libvips' tiles): re-encoded at Q30, its derived levels
    would be < 30 dB from the exact averages of level 0 as libjpeg-turbo decodes it
    (tifffile); by default each gets the lowest quality keeping ≥ 30 dB; level_psnr=0 keeps
    the tiles' quality; quality sets them all."""
    if not shutil.which("vips"):
        pytest.skip("needs libvips")
    samples = Path(__file__).resolve().parents[2] / "samples"
    subprocess.run(["vips", "replicate", str(samples / "ihc.png"), str(tmp / "big.v"), "4", "4"], check=True)
    subprocess.run(["vips", "tiffsave", str(tmp / "big.v"), str(tmp / "q30.tif"), "--compression", "jpeg", "--Q", "30",
                    "--tile", "--tile-width", "256", "--tile-height", "256"], check=True)
    level0 = tifffile.imread(tmp / "q30.tif")

    def level_psnrs(store: Path) -> list[float]:
        group = zarr.open_group(store, mode="r")
        paths = [d["path"] for d in group.attrs["ome"]["multiscales"][0]["datasets"]]
        return [psnr(np.moveaxis(group[p][:], 0, -1), exact_level(level0, k)) for k, p in enumerate(paths) if k > 0]

    summary = zarr_jpeg.convert(tmp / "q30.tif", tmp / "default.zarr", progress=False)
    assert summary["config"]["quality"] == 30 and summary["levelPsnr"] == 30
    qualities = summary["levelQualities"]
    assert len(qualities) == len(summary["levels"]) - 1 and all(q > 30 for q in qualities), qualities
    assert summary["levelConfig"]["quality"] == qualities[0]
    group = zarr.open_group(tmp / "default.zarr", mode="r")
    for k, q in enumerate(qualities, start=1):
        assert group[str(k)].metadata.codecs[-1].to_dict()["configuration"]["quality"] == q
    # (the qualities are chosen on a sample of 48 tiles; over the whole level they keep ~30 dB)
    assert min(level_psnrs(tmp / "default.zarr")) >= 29.8, level_psnrs(tmp / "default.zarr")
    assert "≥ 30 dB from its exact averages" in str(summary)

    kept = zarr_jpeg.convert(tmp / "q30.tif", tmp / "kept.zarr", level_psnr=0, progress=False)
    assert kept["levelQualities"] == [30] * len(qualities) and kept["levelPsnr"] is None
    assert max(level_psnrs(tmp / "kept.zarr")) < 29, "re-encoded at the tiles' Q30, the derived levels are worse"
    assert kept["levels"][0]["encodedBytes"] == summary["levels"][0]["encodedBytes"], "level 0: the same tiles"

    fixed = zarr_jpeg.convert(tmp / "q30.tif", tmp / "fixed.zarr", quality=90, progress=False)
    assert fixed["levelQualities"] == [90] * len(qualities)
    with pytest.raises(zarr_jpeg.ConvertError, match="quality and levelPsnr both set") as refused:
        zarr_jpeg.convert(tmp / "q30.tif", tmp / "both.zarr", quality=90, level_psnr=35, progress=False)
    assert refused.value.kind == "InvalidArgument" and not (tmp / "both.zarr").exists()
    with pytest.raises(zarr_jpeg.ConvertError, match="levelPsnr applies to a TIFF of JPEG tiles"):
        zarr_jpeg.convert(samples / "ihc.png", tmp / "png.zarr", level_psnr=35, progress=False)
