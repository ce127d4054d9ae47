"""DICOM whole-slide images in, through the Rust converter (``zarr_jpeg.convert``, the
``zarr-jpeg`` script and the npm CLI), on series that independent writers make at test time:

- wsidicomizer converts an Aperio-style SVS (tifffile + libjpeg-turbo tiles) into a TILED_FULL
  instance of JPEG Baseline frames (Photometric RGB);
- pydicom writes a TILED_SPARSE variant with YCbCr 4:2:0 frames from Pillow (libjpeg-turbo),
  some frames absent, without an offset table (or with an extended one), beside a half-size
  level, a label, and a file that is not DICOM; and a native (uncompressed) variant.

Level 0 of each store must equal what pydicom decodes from the frames (max difference 1), its
chunks must be the frames' bytes, and it must equal OpenSlide's read of the same series. Bad
series are refused by name, by both packages alike, with nothing left at the destination."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import numpy as np
import openslide
import pydicom
import pytest
import zarr
from PIL import Image
from pydicom.dataset import Dataset
from pydicom.encaps import encapsulate, encapsulate_extended, generate_frames
from pydicom.pixels import pixel_array
from pydicom.sequence import Sequence
from pydicom.uid import ExplicitVRLittleEndian, JPEGBaseline8Bit, generate_uid

import zarr_jpeg
from conftest import ROOT, rgb_image
from test_convert import assert_same_store, node_convert, script_convert

TILE = 240
#: Max |ours - libjpeg-turbo| on YCbCr 4:2:0 frames: the same stream, but zune-jpeg's IDCT, colour
#: conversion and chroma upsampling are not libjpeg-turbo's (RGB frames, as wsidicomizer writes
#: them, are within 1). Measured: 4 at quality 85 on these noisy tiles.
YCBCR_TOLERANCE = 4


def frames_of(ds: Dataset) -> list[bytes]:
    """The JPEG frames, without the byte that pads an odd-length one after its EOI (PS3.5 A.4)."""
    frames = generate_frames(ds.PixelData, number_of_frames=int(ds.NumberOfFrames))
    return [f[:-1] if f.endswith(b"\xff\xd9\x00") else f for f in frames]


def level0(store: Path) -> np.ndarray:
    """Level 0 as (y, x, c), read by zarr-python with the package's codec."""
    a = zarr.open_group(store, mode="r")["0"][:]
    return np.moveaxis(a, 0, -1) if a.ndim == 3 else a


def chunk_bytes(store: Path, row: int, column: int) -> bytes | None:
    path = store / "0" / "c" / "0" / str(row) / str(column)
    return path.read_bytes() if path.exists() else None


def jpeg(tile: np.ndarray, subsampling: int) -> bytes:
    out = io.BytesIO()
    Image.fromarray(tile).save(out, "JPEG", quality=85, subsampling=subsampling)
    return out.getvalue()


def tiles_of(image: np.ndarray) -> list[tuple[int, int, np.ndarray]]:
    """(row, column, tile) of a TILE-sided grid, edge tiles padded with black as scanners do."""
    h, w, _ = image.shape
    out = []
    for y in range(0, h, TILE):
        for x in range(0, w, TILE):
            tile = np.zeros((TILE, TILE, 3), np.uint8)
            part = image[y:y + TILE, x:x + TILE]
            tile[:part.shape[0], :part.shape[1]] = part
            out.append((y // TILE, x // TILE, tile))
    return out


def positioned(ds: Dataset, cells: list[tuple[int, int]]) -> None:
    """Makes `ds` TILED_SPARSE with one Plane Position (Slide) item per frame at `cells`."""
    ds.DimensionOrganizationType = "TILED_SPARSE"
    items = []
    for row, column in cells:
        position = Dataset()
        position.ColumnPositionInTotalImagePixelMatrix = column * TILE + 1
        position.RowPositionInTotalImagePixelMatrix = row * TILE + 1
        position.XOffsetInSlideCoordinateSystem = 0
        position.YOffsetInSlideCoordinateSystem = 0
        position.ZOffsetInSlideCoordinateSystem = 0
        item = Dataset()
        item.PlanePositionSlideSequence = Sequence([position])
        items.append(item)
    ds.PerFrameFunctionalGroupsSequence = Sequence(items)
    ds.NumberOfFrames = len(cells)


def save(ds: Dataset, path: Path) -> None:
    ds.SOPInstanceUID = generate_uid()
    ds.file_meta.MediaStorageSOPInstanceUID = ds.SOPInstanceUID
    ds.save_as(path, enforce_file_format=True)


@pytest.fixture(scope="module")
def series(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from wsidicomizer import WsiDicomizer
    import write_tiff_inputs

    root = tmp_path_factory.mktemp("dicom")
    image = rgb_image(600, 700, seed=4)
    Image.fromarray(image).save(root / "slide.png")
    np.save(root / "image.npy", image)
    write_tiff_inputs.write_aperio(str(root / "slide.png"), str(root / "slide.svs"))
    WsiDicomizer.convert(str(root / "slide.svs"), str(root / "full"), tile_size=TILE)
    (template,) = (root / "full").glob("*.dcm")

    # TILED_SPARSE, YCbCr 4:2:0 frames from Pillow, every third frame absent, no offset table
    sparse = root / "sparse"
    sparse.mkdir()
    ds = pydicom.dcmread(template)
    cells = [(r, c, t) for r, c, t in tiles_of(image) if (r * 3 + c) % 3 != 1]
    ds.PixelData = encapsulate([jpeg(t, 2) for _, _, t in cells], has_bot=False)
    ds.PhotometricInterpretation = "YBR_FULL_422"
    positioned(ds, [(r, c) for r, c, _ in cells])
    save(ds, sparse / "level0.dcm")
    # the same with an extended offset table, in its own folder
    extended = root / "extended"
    extended.mkdir()
    data, offsets, lengths = encapsulate_extended([jpeg(t, 2) for _, _, t in cells])
    ds.PixelData, ds.ExtendedOffsetTable, ds.ExtendedOffsetTableLengths = data, offsets, lengths
    save(ds, extended / "level0.dcm")
    # beside the sparse level 0: a half-size level, a label and a file that is not DICOM
    half = pydicom.dcmread(template)
    small = np.asarray(Image.fromarray(image).resize((350, 300)))
    half.TotalPixelMatrixColumns, half.TotalPixelMatrixRows = 350, 300
    half.PixelData = encapsulate([jpeg(t, 0) for _, _, t in tiles_of(small)], has_bot=True)
    half.NumberOfFrames = len(tiles_of(small))
    save(half, sparse / "level1.dcm")
    label = pydicom.dcmread(template)
    label.ImageType = ["ORIGINAL", "PRIMARY", "LABEL", "NONE"]
    save(label, sparse / "label.dcm")
    (sparse / "notes.txt").write_text("scanned 2026-12-07\n")

    # native (uncompressed) frames: decoded and re-encoded
    native = root / "native"
    native.mkdir()
    ds = pydicom.dcmread(template)
    ds.PixelData = pixel_array(ds).tobytes()
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    save(ds, native / "level0.dcm")
    return root


def test_tiled_full_frames_are_the_chunks_and_decode_as_pydicom_and_openslide(series: Path, tmp: Path) -> None:
    (dcm,) = (series / "full").glob("*.dcm")
    ds = pydicom.dcmread(dcm)
    assert ds.file_meta.TransferSyntaxUID == JPEGBaseline8Bit and ds.DimensionOrganizationType == "TILED_FULL"
    summary = zarr_jpeg.convert(series / "full", tmp / "out.zarr", progress=False)
    assert summary["source"]["format"] == "dicom"
    assert summary["source"]["pixelSize"]["x"] == pytest.approx(float(ds.SharedFunctionalGroupsSequence[0]
                                                                     .PixelMeasuresSequence[0].PixelSpacing[1]) * 1000)
    got = level0(tmp / "out.zarr")
    assert got.shape == (600, 700, 3)
    # every chunk is its frame's bytes, and decodes as pydicom (Pillow, libjpeg-turbo) decodes it
    columns = -(-700 // TILE)
    frames = frames_of(ds)
    pixels = pixel_array(ds)
    for i, frame in enumerate(frames):
        r, c = divmod(i, columns)
        assert chunk_bytes(tmp / "out.zarr", r, c) == frame, f"frame {i} copied"
        want = pixels[i][: 600 - r * TILE, : 700 - c * TILE]
        have = got[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE]
        assert np.abs(have.astype(int) - want).max() <= 1, f"frame {i}"
    slide = openslide.OpenSlide(str(dcm))
    assert slide.properties["openslide.vendor"] == "dicom"
    region = np.asarray(slide.read_region((0, 0), 0, slide.dimensions).convert("RGB"))
    assert np.abs(region.astype(int) - got).max() <= 1
    assert summary["levels"][1]["shape"] == [3, 300, 350]


def test_a_sparse_series_leaves_absent_frames_empty_and_skips_what_is_not_level_0(series: Path, tmp: Path) -> None:
    warnings: list[str] = []
    zarr_jpeg.convert(series / "sparse", tmp / "out.zarr", progress=False, on_warning=warnings.append)
    ds = pydicom.dcmread(series / "sparse" / "level0.dcm")
    got = level0(tmp / "out.zarr")
    image = np.load(series / "image.npy")
    assert got.shape == image.shape
    present = {}
    for frame, item in zip(frames_of(ds), ds.PerFrameFunctionalGroupsSequence):
        p = item.PlanePositionSlideSequence[0]
        present[(p.RowPositionInTotalImagePixelMatrix - 1) // TILE, (p.ColumnPositionInTotalImagePixelMatrix - 1) // TILE] = frame
    for r, c, _ in tiles_of(image):
        have = got[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE]
        stored = chunk_bytes(tmp / "out.zarr", r, c)
        if (r, c) in present:
            assert stored == present[r, c], f"frame at {r}, {c} copied"
            want = np.asarray(Image.open(io.BytesIO(present[r, c])).convert("RGB"))[: have.shape[0], : have.shape[1]]
            assert np.abs(have.astype(int) - want).max() <= YCBCR_TOLERANCE
            original = image[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE]
            assert np.abs(have.astype(int) - original).mean() < 8, "in its place: the image's own pixels"
        else:
            assert stored is None and not have.any(), f"absent frame at {r}, {c}: an empty chunk (fill value)"
    text = "\n".join(warnings)
    assert "frames are absent (TILED_SPARSE)" in text
    assert "notes.txt" in text and "label" in text
    # the extended offset table gives the same store
    zarr_jpeg.convert(series / "extended", tmp / "extended.zarr", progress=False)
    for r, c in present:
        assert chunk_bytes(tmp / "extended.zarr", r, c) == present[r, c]


def test_native_frames_are_decoded_and_encoded(series: Path, tmp: Path) -> None:
    zarr_jpeg.convert(series / "native", tmp / "out.zarr", progress=False, quality=95, subsampling="4:4:4")
    ds = pydicom.dcmread(series / "native" / "level0.dcm")
    columns = -(-700 // TILE)
    frames = pixel_array(ds)
    got = level0(tmp / "out.zarr").astype(float)
    want = np.zeros((600, 700, 3))
    for i, f in enumerate(frames):
        r, c = divmod(i, columns)
        part = want[r * TILE:(r + 1) * TILE, c * TILE:(c + 1) * TILE]
        part[...] = f[: part.shape[0], : part.shape[1]]
    psnr = 10 * np.log10(255**2 / np.mean((got - want) ** 2))
    assert psnr > 38


@pytest.mark.parametrize("name", ["full", "sparse", "native"])
def test_the_same_store_as_the_npm_cli(series: Path, tmp: Path, name: str) -> None:
    js = node_convert(series / name, tmp / "js.zarr", ["--quiet"])
    assert js.returncode == 0, js.stderr
    py = script_convert(series / name, tmp / "py.zarr", ["--quiet"])
    assert py.returncode == 0, py.stderr
    assert_same_store(tmp / "js.zarr", tmp / "py.zarr")


def test_identifiers_only_when_asked_and_patient_data_never(series: Path, tmp: Path) -> None:
    ds = pydicom.dcmread(next((series / "full").glob("*.dcm")))
    plain = zarr_jpeg.convert(series / "full", tmp / "plain.zarr", progress=False)
    asked = zarr_jpeg.convert(series / "full", tmp / "asked.zarr", progress=False, dicom_identifiers=True)
    assert "identifiers" not in plain["source"]
    assert asked["source"]["identifiers"]["studyInstanceUid"] == ds.StudyInstanceUID
    for store in ("plain.zarr", "asked.zarr"):
        text = b"".join(p.read_bytes() for p in (tmp / store).rglob("zarr.json"))
        for value in (ds.get("PatientName"), ds.get("PatientID"), ds.get("PatientBirthDate")):
            if value:
                assert str(value).encode() not in text, f"patient data {value!r} in {store}"
    meta = b"".join(p.read_bytes() for p in (tmp / "plain.zarr").rglob("zarr.json"))
    assert ds.StudyInstanceUID.encode() not in meta


def broken(series: Path, tmp: Path, kind: str) -> Path:
    (dcm,) = (series / "full").glob("*.dcm")
    raw = dcm.read_bytes()
    out = tmp / "in"
    out.mkdir()
    path = out / "slide.dcm"
    if kind == "truncated":
        path.write_bytes(raw[: len(raw) - 5000])
    elif kind == "offset-past-end":
        ds = pydicom.dcmread(dcm)
        frames = frames_of(ds)
        data = bytearray(encapsulate(frames, has_bot=True))
        # the basic offset table's last entry, pointed far past the end
        data[8 + 4 * (len(frames) - 1): 8 + 4 * len(frames)] = (0x7FFF0000).to_bytes(4, "little")
        ds.PixelData = bytes(data)
        save(ds, path)
    elif kind == "frame-count":
        ds = pydicom.dcmread(dcm)
        ds.NumberOfFrames = int(ds.NumberOfFrames) - 1
        save(ds, path)
    elif kind == "not-wsi":
        ds = Dataset()
        ds.file_meta = pydicom.dataset.FileMetaDataset()
        ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
        ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.7"  # Secondary Capture Image Storage
        ds.file_meta.MediaStorageSOPClassUID = ds.SOPClassUID
        ds.Rows, ds.Columns, ds.SamplesPerPixel, ds.BitsAllocated, ds.BitsStored, ds.HighBit = 4, 4, 1, 8, 8, 7
        ds.PhotometricInterpretation, ds.PixelRepresentation = "MONOCHROME2", 0
        ds.PixelData = bytes(16)
        save(ds, path)
    elif kind == "empty-folder":
        path = out
    return path


BAD = [
    ("truncated", "of the Pixel Data claims"),
    ("offset-past-end", "past the end"),
    ("frame-count", "disagrees with the matrix size"),
    ("not-wsi", "is not a whole-slide image"),
    ("empty-folder", "is an empty directory"),
]


@pytest.mark.parametrize("kind,message", BAD, ids=[k for k, _ in BAD])
def test_bad_series_are_refused_by_name_by_both_packages(series: Path, tmp: Path, kind: str, message: str) -> None:
    source = broken(series, tmp, kind)
    out = tmp / "outputs"
    out.mkdir()
    js = node_convert(source, out / "js.zarr", ["--quiet"])
    py = script_convert(source, out / "py.zarr", ["--quiet"])
    assert py.returncode == 1, py.stderr
    assert message in py.stderr, py.stderr
    assert js.returncode == 1, js.stderr
    assert py.stderr.replace("py.zarr", "js.zarr") == js.stderr
    with pytest.raises(zarr_jpeg.ConvertError, match=message):
        zarr_jpeg.convert(source, out / "api.zarr", progress=False)
    assert list(out.iterdir()) == [], "nothing at the destination, no temporary directory"
