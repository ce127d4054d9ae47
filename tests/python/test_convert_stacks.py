"""Stacks in: z-stacks and time series with channels, written at test time by tifffile as an
OME-TIFF (TCZYX, one TiffData) and as an ImageJ hyperstack (TZCYX). Both packages write the
same store; zarr-python reads back every axis in OME-Zarr's order with its size, its physical
size and unit, the channel names, and level 0 within JPEG tolerance of tifffile's read."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tifffile
import zarr

import zarr_jpeg
from test_convert import assert_same_store, node_convert, script_convert

T, C, Z, H, W = 2, 3, 4, 150, 210


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


@pytest.fixture(scope="module")
def stacks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("stacks")
    rng = np.random.default_rng(7)
    y, x = np.mgrid[0:H, 0:W]
    # each plane differs (a plane read from the wrong page would show)
    data = np.array([[[(np.sin(x / (9 + c) + t) + np.cos(y / 13 + z)) * 50 + 40 * c + 60 + rng.normal(0, 3, (H, W))
                       for z in range(Z)] for c in range(C)] for t in range(T)]).clip(0, 255).astype(np.uint8)
    tifffile.imwrite(d / "tczyx.ome.tif", data, ome=True, photometric="minisblack", tile=(64, 64), compression="zlib",
                     metadata={"axes": "TCZYX", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5, "PhysicalSizeZ": 2.0,
                               "PhysicalSizeZUnit": "µm", "TimeIncrement": 30.0, "TimeIncrementUnit": "s",
                               "Channel": {"Name": ["DAPI", "GFP", "RFP"]}})
    # ImageJ's page order is TZC; the array is TZCYX
    tifffile.imwrite(d / "hyperstack.tif", np.moveaxis(data, 1, 2), imagej=True,
                     metadata={"axes": "TZCYX", "spacing": 2.0, "unit": "um", "finterval": 30.0})
    # a z-series of RGB planes
    rgb = np.stack([np.dstack([data[0, 0, z], data[0, 1, z], data[0, 2, z]]) for z in range(Z)])
    tifffile.imwrite(d / "rgb-z.ome.tif", rgb, ome=True, photometric="rgb", metadata={"axes": "ZYXS"})
    return d


def expected(d: Path, name: str) -> np.ndarray:
    read = tifffile.imread(d / name)
    if name == "hyperstack.tif":
        return np.moveaxis(read, 2, 1)  # TZCYX → TCZYX
    return read


@pytest.mark.parametrize("name", ["tczyx.ome.tif", "hyperstack.tif"])
def test_every_axis_reads_back_in_zarr_python(stacks: Path, tmp: Path, name: str) -> None:
    zarr_jpeg.convert(stacks / name, tmp / "out.zarr", chunk=64, progress=False)
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    ms = group.attrs["ome"]["multiscales"][0]
    assert [a["name"] for a in ms["axes"]] == ["t", "c", "z", "y", "x"]
    assert [a["type"] for a in ms["axes"]] == ["time", "channel", "space", "space", "space"]
    assert ms["axes"][0]["unit"] == "second" and ms["axes"][2]["unit"] == "micrometer"
    scales = [d["coordinateTransformations"][0]["scale"] for d in ms["datasets"]]
    xy = 0.5 if name.endswith(".ome.tif") else 1.0
    assert scales[0] == [30, 1, 2, xy, xy]
    assert scales[1] == [30, 1, 2, 2 * xy, 2 * xy]
    level0 = group["0"]
    assert level0.shape == (T, C, Z, H, W)
    assert level0.chunks == (1, 1, 1, 64, 64)
    assert level0.metadata.dimension_names == ("t", "c", "z", "y", "x")
    source = expected(stacks, name)
    got = level0[:]
    assert psnr(got, source) >= 35
    # each plane is its own: none is another's
    for t in range(T):
        for c in range(C):
            for z in range(Z):
                assert psnr(got[t, c, z], source[t, c, z]) >= 35, (t, c, z)
    level1 = group["1"][:]
    assert level1.shape == (T, C, Z, H // 2, W // 2)
    mean = source[..., 0::2, 0::2] / 4 + source[..., 1::2, 0::2] / 4 + source[..., 0::2, 1::2] / 4 + source[..., 1::2, 1::2] / 4
    assert psnr(level1, mean) >= 35
    if name.endswith(".ome.tif"):
        assert [ch["label"] for ch in group.attrs["ome"]["omero"]["channels"]] == ["DAPI", "GFP", "RFP"]
    # each channel's window is its data's: the range, and the display range without the
    # darkest and brightest 0.1 % of the samples (numpy's order statistics of tifffile's read)
    for c, channel in enumerate(group.attrs["ome"]["omero"]["channels"]):
        values = np.sort(source[:, c].ravel())
        tail = int(values.size * 0.001)
        assert channel["window"] == {"min": int(values[0]), "max": int(values[-1]),
                                     "start": int(values[tail]), "end": int(values[-1 - tail])}, c


def test_an_rgb_z_series_keeps_its_colour(stacks: Path, tmp: Path) -> None:
    zarr_jpeg.convert(stacks / "rgb-z.ome.tif", tmp / "out.zarr", progress=False)
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    assert [a["name"] for a in group.attrs["ome"]["multiscales"][0]["axes"]] == ["c", "z", "y", "x"]
    got = group["0"][:]
    assert got.shape == (3, Z, H, W)
    assert psnr(np.moveaxis(got, 0, -1), expected(stacks, "rgb-z.ome.tif")) >= 35


@pytest.mark.parametrize("name,args", [("tczyx.ome.tif", ["--chunk", "64"]), ("hyperstack.tif", ["--shard", "512"]),
                                       ("rgb-z.ome.tif", [])])
def test_the_npm_cli_writes_the_same_store(stacks: Path, tmp: Path, name: str, args: list[str]) -> None:
    js = node_convert(stacks / name, tmp / "js.zarr", [*args, "--quiet"])
    assert js.returncode == 0, js.stderr
    py = script_convert(stacks / name, tmp / "py.zarr", [*args, "--quiet"])
    assert py.returncode == 0, py.stderr
    assert_same_store(tmp / "js.zarr", tmp / "py.zarr")


def test_the_reshape_codec_writes_and_reads_5d_jpeg_chunks_in_zarr_python(tmp: Path) -> None:
    """zarr-python writes a (t, c, z, y, x) array through reshape + jpeg and reads it back;
    a shape whose product differs is refused by name."""
    data = (np.arange(2 * 3 * 64 * 64).reshape(2, 1, 3, 64, 64) % 251).astype(np.uint8)
    array = zarr.create_array(tmp / "a.zarr", shape=data.shape, chunks=(1, 1, 1, 32, 64), dtype="uint8",
                              filters=[zarr_jpeg.ReshapeCodec(shape=[[0, 1, 2, 3], 64])],
                              serializer=zarr_jpeg.JpegCodec(quality=100, encoded_color_space="grayscale"))
    array[:] = data
    again = zarr.open_array(tmp / "a.zarr", mode="r")
    assert isinstance(again.metadata.codecs[0], zarr_jpeg.ReshapeCodec)
    assert psnr(again[:], data) >= 45
    assert zarr_jpeg.ReshapeCodec(shape=[-1, 64]).to_dict() == {"name": "reshape", "configuration": {"shape": [-1, 64]}}
    with pytest.raises(zarr_jpeg.JpegError, match=r"reshape: .*prod\(output\) = 4096 != prod\(input\) = 2048"):
        zarr_jpeg._reshape.reshape_shape([64, 64], (1, 1, 1, 32, 64))
    with pytest.raises(zarr_jpeg.JpegError, match="-1 must occur at most once"):
        zarr_jpeg._reshape.reshape_shape([-1, -1], (4, 4))


def test_ome_xml_without_samples_per_pixel_over_rgb_pages_is_one_colour_image(tmp: Path) -> None:
    """SizeC="3" with a Channel that does not say how many samples a page holds, over one RGB
    page: the page's three samples are the three channels (one colour image, not channel pages)."""
    rng = np.random.default_rng(3)
    rgb = rng.integers(60, 200, (96, 128, 3)).astype(np.uint8)
    description = '<OME><Image><Pixels DimensionOrder="XYCZT" SizeC="3" SizeZ="1" SizeT="1"><Channel/></Pixels></Image></OME>'
    tifffile.imwrite(tmp / "rgb.ome.tif", rgb, photometric="rgb", metadata=None, description=description)
    zarr_jpeg.convert(tmp / "rgb.ome.tif", tmp / "out.zarr", quality=100, subsampling="4:4:4", progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")
    assert level0.shape == (3, 96, 128)
    assert psnr(np.moveaxis(level0[:], 0, -1), rgb) >= 35


def test_chunks_of_several_z_planes_are_their_planes_one_above_the_other(stacks: Path, tmp: Path) -> None:
    """chunk_depth=3 over 4 z planes: chunks (1, 1, 3, 64, 64), the last holding one plane.
    zarr-python reads every plane back; Pillow (libjpeg-turbo) decodes a chunk's JPEG as its
    three planes one above the other; the npm CLI writes the same store, plain and sharded."""
    zarr_jpeg.convert(stacks / "tczyx.ome.tif", tmp / "out.zarr", chunk=64, chunk_depth=3, progress=False)
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    level0 = group["0"]
    assert level0.shape == (T, C, Z, H, W)
    assert level0.chunks == (1, 1, 3, 64, 64)
    source = expected(stacks, "tczyx.ome.tif")
    got = level0[:]
    for t in range(T):
        for c in range(C):
            for z in range(Z):
                assert psnr(got[t, c, z], source[t, c, z]) >= 35, (t, c, z)
    assert group["1"].chunks == (1, 1, 3, 64, 64)
    mean = source[..., 0::2, 0::2] / 4 + source[..., 1::2, 0::2] / 4 + source[..., 0::2, 1::2] / 4 + source[..., 1::2, 1::2] / 4
    assert psnr(group["1"][:], mean) >= 35
    codecs = level0.metadata.to_dict()["codecs"]
    assert [c["name"] for c in codecs] == ["reshape", "jpeg"]
    assert codecs[0]["configuration"]["shape"] == [192, 64]
    # chunk (t=1, c=2, z-chunk 0, y 1, x 2): planes 0, 1 and 2, 64 rows each
    from PIL import Image
    with Image.open(tmp / "out.zarr" / "0" / "c" / "1" / "2" / "0" / "1" / "2") as image:
        assert image.size == (64, 192) and image.mode == "L"
        pixels = np.asarray(image)
    for z in range(3):
        assert psnr(pixels[64 * z:64 * z + 64], source[1, 2, z, 64:128, 128:192]) >= 35, z
    for args in (["--chunk", "64", "--chunk-z", "3"], ["--chunk", "64", "--chunk-z", "3", "--shard", "128"]):
        js = node_convert(stacks / "tczyx.ome.tif", tmp / "js.zarr", [*args, "--quiet", "--overwrite"])
        assert js.returncode == 0, js.stderr
        py = script_convert(stacks / "tczyx.ome.tif", tmp / "py.zarr", [*args, "--quiet", "--overwrite"])
        assert py.returncode == 0, py.stderr
        assert_same_store(tmp / "js.zarr", tmp / "py.zarr")
    assert zarr.open_array(tmp / "py.zarr" / "0", mode="r").shards == (1, 1, 3, 128, 128)
    assert psnr(zarr.open_array(tmp / "py.zarr" / "0", mode="r")[:], source) >= 35


def test_colour_chunks_of_several_z_planes(stacks: Path, tmp: Path) -> None:
    zarr_jpeg.convert(stacks / "rgb-z.ome.tif", tmp / "out.zarr", chunk_depth=2, progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")
    assert level0.chunks == (3, 2, 160, 224)  # 150 × 210 rounded up to whole 16 × 16 MCUs
    got = np.moveaxis(level0[:], 0, -1)
    source = expected(stacks, "rgb-z.ome.tif")
    for z in range(Z):
        assert psnr(got[z], source[z]) >= 35, z


@pytest.mark.parametrize("depth", [0, 1.5, "2"])
def test_a_bad_chunk_depth_is_refused_by_name(stacks: Path, tmp: Path, depth: object) -> None:
    with pytest.raises(zarr_jpeg.ConvertError, match=r"chunkDepth must be a positive integer \(z planes per chunk\), got"):
        zarr_jpeg.convert(stacks / "tczyx.ome.tif", tmp / "out.zarr", chunk_depth=depth, progress=False)
    assert not (tmp / "out.zarr").exists()


def test_a_chunk_depth_past_the_stack_holds_all_its_planes(stacks: Path, tmp: Path) -> None:
    zarr_jpeg.convert(stacks / "tczyx.ome.tif", tmp / "out.zarr", chunk_depth=2000, progress=False)
    level0 = zarr.open_array(tmp / "out.zarr" / "0", mode="r")
    assert level0.chunks[2] == Z
    assert psnr(level0[:], expected(stacks, "tczyx.ome.tif")) >= 35


def test_chunk_depth_applies_to_z_stacks_only(tmp: Path) -> None:
    plane = (np.arange(64 * 80).reshape(64, 80) % 256).astype(np.uint8)
    tifffile.imwrite(tmp / "plane.tif", plane)
    tifffile.imwrite(tmp / "series.ome.tif", np.stack([plane, plane]), ome=True, metadata={"axes": "TYX"})
    for name, what in (("plane.tif", "one plane"), ("series.ome.tif", "time points but one z plane")):
        with pytest.raises(zarr_jpeg.ConvertError, match=f"chunkDepth applies to a stack of z planes; .*{name} has {what}"):
            zarr_jpeg.convert(tmp / name, tmp / "out.zarr", chunk_depth=2, progress=False)
        assert not (tmp / "out.zarr").exists()
    js = node_convert(tmp / "plane.tif", tmp / "js.zarr", ["--chunk-z", "2"])
    assert js.returncode == 1 and "chunkDepth applies to a stack of z planes" in js.stderr, js.stderr
    py = script_convert(tmp / "plane.tif", tmp / "py.zarr", ["--chunk-z", "2"])
    assert py.returncode == 1 and "chunkDepth applies to a stack of z planes" in py.stderr, py.stderr
    with pytest.raises(zarr_jpeg.ConvertError, match="downsampleZ applies to a stack of z planes; .*plane.tif has one plane"):
        zarr_jpeg.convert(tmp / "plane.tif", tmp / "out.zarr", downsample_z=True, progress=False)
    js = node_convert(tmp / "plane.tif", tmp / "js.zarr", ["--downsample-z"])
    assert js.returncode == 1 and "downsampleZ applies to a stack of z planes" in js.stderr, js.stderr


def test_levels_that_halve_z_too(stacks: Path, tmp: Path) -> None:
    """downsample_z: level l has ceil(Z / 2^l) planes, each the mean of a 2^l-plane box of
    level 0 (checked against numpy's 2 × 2 × 2 means of tifffile's read), with z's scale
    doubled per level; chunks of 2 z planes where a level has 2 or more. The npm CLI writes
    the same store."""
    zarr_jpeg.convert(stacks / "tczyx.ome.tif", tmp / "out.zarr", chunk=64, chunk_depth=2, downsample_z=True, progress=False)
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    ms = group.attrs["ome"]["multiscales"][0]
    assert [d["coordinateTransformations"][0]["scale"] for d in ms["datasets"]] == [[30, 1, 2, 0.5, 0.5], [30, 1, 4, 1, 1], [30, 1, 8, 2, 2]]
    assert [group[str(l)].shape for l in range(3)] == [(T, C, 4, 150, 210), (T, C, 2, 75, 105), (T, C, 1, 38, 53)]
    assert [group[str(l)].chunks[2] for l in range(3)] == [2, 2, 1]
    assert group["2"].metadata.to_dict()["codecs"][0]["configuration"]["shape"] == [40, 56]  # one plane of 38 × 53, in whole 8 × 8 blocks
    source = expected(stacks, "tczyx.ome.tif").astype(float)
    mean = sum(source[:, :, dz::2, dy::2, dx::2] for dz in (0, 1) for dy in (0, 1) for dx in (0, 1)) / 8
    level1 = group["1"][:]
    for t in range(T):
        for c in range(C):
            for z in range(2):
                assert psnr(level1[t, c, z], mean[t, c, z]) >= 35, (t, c, z)
    # level 2: the mean of all 4 planes, 2 × 2 of level 1's 2 × 2 (the last row repeated)
    box = source.mean(axis=2)
    padded = np.pad(box, ((0, 0), (0, 0), (0, 2), (0, 2)), mode="edge")
    level2_expected = sum(padded[:, :, dy:dy + 152:4, dx:dx + 212:4] for dy in range(4) for dx in range(4)) / 16
    assert psnr(group["2"][:][:, :, 0], level2_expected[:, :, :38, :53]) >= 33
    js = node_convert(stacks / "tczyx.ome.tif", tmp / "js.zarr", ["--chunk", "64", "--chunk-z", "2", "--downsample-z", "--quiet"])
    assert js.returncode == 0, js.stderr
    py = script_convert(stacks / "tczyx.ome.tif", tmp / "py.zarr", ["--chunk", "64", "--chunk-z", "2", "--downsample-z", "--quiet"])
    assert py.returncode == 0, py.stderr
    assert_same_store(tmp / "js.zarr", tmp / "py.zarr")
    assert_same_store(tmp / "out.zarr", tmp / "py.zarr")


def test_pixel_sizes_from_the_resolution_tags(tmp: Path) -> None:
    """An ImageJ file's XResolution/YResolution are pixels per its unit= (tifffile writes them
    from resolution=); a plain TIFF's are not a pixel size (libvips writes 10 per centimetre
    by default, others 72 per inch) and are left alone. The expected size is computed from
    tifffile's read of the tags."""
    stack = (np.arange(3 * 64 * 96).reshape(3, 64, 96) % 251).astype(np.uint8)
    tifffile.imwrite(tmp / "imagej.tif", stack, imagej=True, resolution=(4.0, 4.0), metadata={"axes": "ZYX", "spacing": 0.5, "unit": "um"})
    tifffile.imwrite(tmp / "cm.tif", stack[0], resolution=(20000.0, 20000.0), resolutionunit="CENTIMETER")
    tifffile.imwrite(tmp / "inch.tif", stack[0], resolution=(300.0, 300.0), resolutionunit="INCH")
    with tifffile.TiffFile(tmp / "imagej.tif") as tif:
        numerator, denominator = tif.pages[0].tags["XResolution"].value
        assert tif.imagej_metadata["unit"] == "um"
        imagej_um = denominator / numerator
    for name, xy, z in (("imagej.tif", imagej_um, 0.5), ("cm.tif", 1.0, None), ("inch.tif", 1.0, None)):
        zarr_jpeg.convert(tmp / name, tmp / f"{name}.zarr", progress=False)
        ms = zarr.open_group(tmp / f"{name}.zarr", mode="r").attrs["ome"]["multiscales"][0]
        scale = ms["datasets"][0]["coordinateTransformations"][0]["scale"]
        assert scale[-2:] == pytest.approx([xy, xy]), name
        if z is not None:
            assert scale[0] == pytest.approx(z)
        if name == "imagej.tif":
            assert ms["axes"][-1]["unit"] == "micrometer"
        else:
            assert "unit" not in ms["axes"][-1], name
    assert imagej_um == pytest.approx(0.25)
