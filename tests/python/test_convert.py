"""The converter from Python: ``zarr_jpeg.convert`` and the ``zarr-jpeg`` console script run the
Rust core's converter, and write the store the npm CLI (``node dist/cli.js convert``) writes,
file for file and byte for byte, on inputs that Pillow and libvips write at test time; they
refuse what it refuses, with its messages, and leave nothing at the destination. The store's
level 0 is checked against the input by libjpeg-turbo (Pillow decodes the chunk streams)."""

from __future__ import annotations

import io
import json
import re
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
import zarr
from PIL import Image

import zarr_jpeg
from conftest import PILLOW_TOLERANCE, ROOT, gray_image, rgb_image

CLI = ROOT / "dist" / "cli.js"
SCRIPT = Path(sys.executable).with_name("zarr-jpeg")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Images in the formats and variants the converter reads, written by Pillow and libvips."""
    d = tmp_path_factory.mktemp("inputs")
    rgb = rgb_image(300, 421, seed=3)
    gray = gray_image(277, 190, seed=4)
    Image.fromarray(rgb).save(d / "rgb.png")
    Image.fromarray(gray).save(d / "gray.png")
    Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE, colors=64).save(d / "palette.png")
    alpha = (np.arange(300 * 421) % 256).reshape(300, 421).astype(np.uint8)
    Image.fromarray(np.dstack([rgb, alpha])).save(d / "rgba.png")
    Image.fromarray(np.dstack([gray[:, :150], gray[:, :150]])).save(d / "gray-alpha.png")
    deep = (gray.astype(np.uint16) * 200 + 1000).astype(np.uint16)
    Image.fromarray(deep).save(d / "gray16.png")
    Image.fromarray(rgb[:1, :1]).save(d / "pixel.png")
    Image.fromarray(rgb).save(d / "base.jpg", quality=90)
    Image.fromarray(rgb).save(d / "base444.jpg", quality=85, subsampling=0)
    Image.fromarray(gray).save(d / "gray.jpg", quality=80)
    Image.fromarray(rgb).save(d / "progressive.jpg", quality=90, progressive=True)
    if shutil.which("vips"):
        subprocess.run(["vips", "copy", str(d / "rgb.png"), f"{d / 'interlaced.png'}[interlace]"], check=True)
    return d


def node_convert(input: Path, output: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    if not CLI.exists():
        raise RuntimeError("dist/ is missing: run `node scripts/build.mjs` (npm test builds it first)")
    return subprocess.run(["node", str(CLI), "convert", str(input), str(output), *args],
                          capture_output=True, text=True, timeout=600)


def script_convert(input: Path, output: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCRIPT), "convert", str(input), str(output), *args],
                          capture_output=True, text=True, timeout=600)


def files(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in sorted(store.rglob("*")) if p.is_file()}


def assert_same_store(a: Path, b: Path) -> None:
    fa, fb = files(a), files(b)
    assert sorted(fa) == sorted(fb), "the same files"
    different = [k for k in fa if fa[k] != fb[k]]
    assert different == [], f"files that differ: {different[:5]}"


# (input, CLI arguments): every input kind and the options that change what is written
CASES = [
    ("rgb.png", []),
    ("rgb.png", ["--shard", "256", "--chunk", "64"]),
    ("rgb.png", ["--color", "rgb", "--channel-axis", "last", "--chunk", "100"]),
    ("rgb.png", ["--subsampling", "4:2:2", "--levels", "2", "--pixel-size", "0.25", "--unit", "micrometer", "--name", "slide"]),
    ("rgb.png", ["--quality", "40", "--trellis", "--quant-table", "flat", "--no-restart-intervals"]),
    ("rgb.png", ["--color", "grayscale"]),
    ("gray.png", ["--chunk", "128", "--shard", "256"]),
    ("palette.png", []),
    ("rgba.png", ["--subsampling", "4:4:4"]),
    ("gray-alpha.png", []),
    ("gray16.png", ["--rescale", "auto"]),
    ("gray16.png", ["--rescale", "1000:40000", "--chunk", "96"]),
    ("pixel.png", []),
    ("interlaced.png", ["--chunk", "128"]),
    ("base.jpg", []),
    ("base444.jpg", ["--chunk", "160", "--shard", "320"]),
    ("gray.jpg", ["--quality", "70"]),
    ("progressive.jpg", []),
]


@pytest.mark.parametrize("name,args", CASES, ids=[f"{n} {' '.join(a)}".strip() for n, a in CASES])
def test_the_same_store_as_the_npm_cli(inputs: Path, tmp: Path, name: str, args: list[str]) -> None:
    source = inputs / name
    if not source.exists():
        pytest.skip(f"{name} needs libvips")
    js = node_convert(source, tmp / "js.zarr", [*args, "--workers", "0", "--quiet"])
    assert js.returncode == 0, js.stderr
    # the console script (its default: several encode threads) and the function
    py = script_convert(source, tmp / "script.zarr", [*args, "--quiet"])
    assert py.returncode == 0, py.stderr
    assert js.stderr == py.stderr, "the same warnings"
    assert_same_store(tmp / "js.zarr", tmp / "script.zarr")


def test_level0_is_the_input_as_libjpeg_turbo_decodes_it(inputs: Path, tmp: Path) -> None:
    summary = zarr_jpeg.convert(inputs / "rgb.png", tmp / "out.zarr", chunk=128, channel_axis="last", progress=False)
    image = np.asarray(Image.open(inputs / "rgb.png"))
    assert summary["levels"][0]["shape"] == [300, 421, 3]
    by_pillow = np.zeros_like(image)
    # every level-0 chunk file is a JPEG that Pillow (libjpeg-turbo) decodes to the input's tile
    for cy in range(3):
        for cx in range(4):
            tile = np.asarray(Image.open(io.BytesIO((tmp / "out.zarr" / "0" / "c" / str(cy) / str(cx) / "0").read_bytes())))
            want = image[cy * 128:(cy + 1) * 128, cx * 128:(cx + 1) * 128]
            got = tile[:want.shape[0], :want.shape[1]].astype(int)
            by_pillow[cy * 128:(cy + 1) * 128, cx * 128:(cx + 1) * 128] = got
            mse = np.mean((got - want) ** 2)
            assert 10 * np.log10(255**2 / mse) > 30, (cy, cx)
    # zarr-python reads the pyramid with the axes and the scale of each level
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    multiscale = group.attrs["ome"]["multiscales"][0]
    assert [a["name"] for a in multiscale["axes"]] == ["y", "x", "c"]
    assert [group[d["path"]].shape for d in multiscale["datasets"]] == [(300, 421, 3), (150, 211, 3), (75, 106, 3)]
    decoded = group["0"][:]
    # (IDCT rounding and chroma upsampling differ: a few samples by 4 at 4:2:0)
    difference = np.abs(decoded.astype(int) - by_pillow)
    assert difference.max() <= PILLOW_TOLERANCE + 1 and difference.mean() < 0.5
    assert summary["psnr"] > 30 and summary["chunks"] == sum(level["chunks"] for level in summary["levels"])


def test_summary_and_progress(inputs: Path, tmp: Path) -> None:
    events: list[dict] = []
    warnings: list[str] = []
    summary = zarr_jpeg.convert(inputs / "rgba.png", tmp / "out.zarr", chunk=64, progress=events.append,
                                on_warning=warnings.append, workers=4)
    assert isinstance(summary, dict) and summary["inputShape"] == [300, 421, 3]
    assert summary["workers"] == 4 and summary["streamed"] is True
    assert warnings == summary["warnings"] and "alpha channel" in warnings[0]
    chunks = [e for e in events if e["phase"] == "chunk"]
    assert len(chunks) == summary["chunks"] == events[-1]["chunksTotal"]
    assert [e["chunksDone"] for e in chunks] == list(range(1, summary["chunks"] + 1))
    assert [e["level"] for e in events if e["phase"] == "level"] == list(range(len(summary["levels"])))
    text = str(summary)
    assert text.startswith(f"wrote {tmp / 'out.zarr'} in ") and "PSNR of level 0 against the input" in text
    js = node_convert(inputs / "rgba.png", tmp / "js.zarr", ["--chunk", "64", "--json", "--workers", "0"])
    expected = json.loads(js.stdout)
    # bytesWritten: the bytes of the files (the npm CLI counts the metadata's UTF-16 code units)
    assert summary["bytesWritten"] == sum(p.stat().st_size for p in (tmp / "out.zarr").rglob("*") if p.is_file())
    for key in ("inputShape", "config", "encodeOptions", "channelAxis", "levels", "chunks", "encodedBytes", "rawBytes", "ratio", "level0Ratio", "warnings", "streamed"):
        assert summary[key] == expected[key], key
    assert summary["psnr"] == pytest.approx(expected["psnr"])


def test_a_callback_that_raises_stops_the_conversion_and_leaves_nothing(inputs: Path, tmp: Path) -> None:
    def stop(event: dict) -> None:
        if event["chunksDone"] == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        zarr_jpeg.convert(inputs / "rgb.png", tmp / "out.zarr", chunk=32, progress=stop)
    assert list(tmp.iterdir()) == []


def test_python_threads_run_while_it_converts(inputs: Path, tmp: Path) -> None:
    """The GIL is released: conversions in two threads both finish, each its own store."""
    outputs = [tmp / "a.zarr", tmp / "b.zarr"]
    errors: list[BaseException] = []

    def run(out: Path) -> None:
        try:
            zarr_jpeg.convert(inputs / "rgb.png", out, chunk=64, progress=False, workers=2)
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(o,)) for o in outputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert_same_store(*outputs)


# (input, CLI arguments, a part of the message): refusals both packages give, before
# anything is written or with the partial store removed
BAD = [
    ("missing.png", [], "no such file"),
    (".", [], "is a directory with no DICOM file in it"),
    ("notes.txt", [], "is not a PNG, JPEG, TIFF or DICOM file"),
    ("gray16.png", [], "16-bit grayscale PNG"),
    ("rgb.png", ["--rescale", "auto"], "rescale applies to 16-bit input"),
    ("gray16.png", ["--rescale", "9:9"], "rescale"),
    ("truncated.png", [], "truncated.png"),
    ("cmyk.jpg", [], "4 colour components"),
    ("rgb.png", ["--quality", "0"], "quality must be an integer from 1 to 100"),
    ("rgb.png", ["--color", "cmyk"], "color must be ycbcr, rgb or grayscale"),
    ("rgb.png", ["--color", "rgb", "--subsampling", "4:2:0"], "subsampling applies only to color ycbcr"),
    ("rgb.png", ["--subsampling", "4:1:1"], "subsampling must be one of"),
    ("gray.png", ["--color", "ycbcr"], "needs 3 channels"),
    ("rgb.png", ["--chunk", "0"], "chunk must be a positive integer"),
    ("rgb.png", ["--chunk", "70000"], "at most 65535"),
    ("rgb.png", ["--chunk", "32", "--shard", "48"], "shard must be a positive multiple of chunk"),
    ("rgb.png", ["--levels", "0"], "levels must be a positive integer"),
    ("rgb.png", ["--levels", "11"], "levels 11 is too many for a 300×421 image (at most 10, down to 1×1)"),
    ("rgb.png", ["--channel-axis", "middle"], "channelAxis"),
    ("rgb.png", ["--quant-table", "Flat"], "quantTable must be one of"),
    ("rgb.png", ["--workers", "300"], "workers must be a whole number from 0 to 256"),
    ("zero.png", [], "0 × 12 pixels"),
]


@pytest.fixture(scope="module")
def bad_inputs(inputs: Path) -> Path:
    (inputs / "notes.txt").write_text("not an image")
    (inputs / "truncated.png").write_bytes((inputs / "rgb.png").read_bytes()[:60])
    (inputs / "cmyk.jpg").write_bytes(bytes([0xFF, 0xD8, 0xFF, 0xC0, 0, 20, 8, 0, 8, 0, 8, 4, 1, 0x11, 0, 2, 0x11, 0,
                                             3, 0x11, 0, 4, 0x11, 0, 0xFF, 0xD9]))
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", 0, 12, 8, 2, 0, 0, 0)
    (inputs / "zero.png").write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b""))
                                      + chunk(b"IEND", b""))
    return inputs


@pytest.mark.parametrize("name,args,message", BAD, ids=[f"{n} {' '.join(a)}".strip() for n, a, _ in BAD])
def test_refusals_are_the_npm_clis(bad_inputs: Path, tmp: Path, name: str, args: list[str], message: str) -> None:
    source = bad_inputs / name
    js = node_convert(source, tmp / "js.zarr", [*args, "--quiet"])
    py = script_convert(source, tmp / "py.zarr", [*args, "--quiet"])
    assert js.returncode == 1, js.stderr
    assert py.returncode == 1, py.stderr
    assert message in js.stderr
    assert py.stderr.replace("py.zarr", "js.zarr") == js.stderr
    assert list(tmp.iterdir()) == [], "nothing at the destination, no temporary directory"


def test_output_rules(inputs: Path, tmp: Path) -> None:
    image = tmp / "image.png"
    shutil.copy(inputs / "rgb.png", image)
    (tmp / "precious.txt").write_text("keep me")
    out = tmp / "out.zarr"
    zarr_jpeg.convert(image, out, quality=50, progress=False)
    with pytest.raises(zarr_jpeg.ConvertError, match="already exists; choose another name or pass --overwrite") as e:
        zarr_jpeg.convert(image, out, progress=False)
    assert e.value.kind == "OutputUnavailable"
    zarr_jpeg.convert(image, out, quality=80, overwrite=True, progress=False)
    assert json.loads((out / "0" / "zarr.json").read_text())["codecs"][-1]["configuration"]["quality"] == 80
    for output, message in [
        (tmp, "holds the input image"),
        (image, "is the input image"),
        (tmp / "precious.txt", re.escape("is not a Zarr store (not a directory)")),
        (tmp / "no" / "parent.zarr", "does not exist"),
    ]:
        with pytest.raises(zarr_jpeg.ConvertError, match=message):
            zarr_jpeg.convert(image, output, overwrite=True, progress=False)
    assert (tmp / "precious.txt").read_text() == "keep me" and image.exists()
    assert sorted(p.name for p in tmp.iterdir()) == ["image.png", "out.zarr", "precious.txt"]


def test_rescale_is_refused_for_8_bit_jpeg(inputs: Path, tmp: Path) -> None:
    # (the npm CLI ignored --rescale on a JPEG; the Rust converter refuses it, as for PNG)
    with pytest.raises(zarr_jpeg.ConvertError, match="rescale applies to 16-bit input; .*base.jpg is an 8-bit JPEG"):
        zarr_jpeg.convert(inputs / "base.jpg", tmp / "a.zarr", rescale="auto")
    assert list(tmp.iterdir()) == []


def test_python_option_names(inputs: Path, tmp: Path) -> None:
    with pytest.raises(TypeError, match="unknown option 'qualty'"):
        zarr_jpeg.convert(inputs / "rgb.png", tmp / "a.zarr", qualty=90)
    with pytest.raises(zarr_jpeg.ConvertError, match="channelAxis") as e:
        zarr_jpeg.convert(inputs / "rgb.png", tmp / "a.zarr", channel_axis="middle")
    assert e.value.kind == "InvalidArgument"
    # snake_case and the npm names, and a (min, max) rescale window
    a = zarr_jpeg.convert(inputs / "gray16.png", tmp / "a.zarr", rescale=(1000, 40000), pixel_size=0.5, progress=False)
    b = zarr_jpeg.convert(inputs / "gray16.png", tmp / "b.zarr", rescale="1000:40000", pixelSize=0.5, progress=False)
    assert a["rescale"] == b["rescale"] == {"min": 1000, "max": 40000}
    assert_same_store(tmp / "a.zarr", tmp / "b.zarr")
    assert not (tmp / "c.zarr").exists()


def test_silent_unless_a_terminal(inputs: Path, tmp: Path, capfd: pytest.CaptureFixture[str]) -> None:
    zarr_jpeg.convert(inputs / "gray.png", tmp / "a.zarr")
    assert capfd.readouterr().err == ""
    zarr_jpeg.convert(inputs / "gray.png", tmp / "b.zarr", progress=True)
    err = capfd.readouterr().err
    assert "100%" in err and err.endswith("\n")
    r = script_convert(inputs / "gray.png", tmp / "c.zarr", [])
    assert r.returncode == 0 and r.stdout.startswith(f"wrote {tmp / 'c.zarr'}")
    assert r.stderr.startswith("level 1/") # not a terminal: a line per level, as the npm CLI
    js = node_convert(inputs / "gray.png", tmp / "d.zarr", [])
    assert r.stderr == js.stderr
