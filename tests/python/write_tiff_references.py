#!/usr/bin/env python3
"""Writes JPEG-compressed TIFFs with independent writers, the kerchunk references tifffile
makes for them, and tifffile's own decode of each (libjpeg-turbo), for the tests that read
TIFFs in place through zarrita's ReferenceStore and the `imagecodecs_jpeg` codec.

Usage: write_tiff_references.py OUT_DIR BASE_URL
  OUT_DIR   where the files go (served at BASE_URL by the test)
  BASE_URL  the URL OUT_DIR is served at, written into the references

Also writes Zarr v2 arrays whose chunks are one Aperio-style tile and a libvips tile,
with imagecodecs_jpeg compressors for each colorspace_jpeg/colorspace_data combination
imagecodecs reads, and what imagecodecs itself decodes them to (or the error it raises).

manifest.json lists: tiffs (name, refs, truth, shape, dtype, writer, compressor) and
combinations (path, shape, compressor, truth or error).
"""

import base64
import json
import struct
import subprocess
import sys
from pathlib import Path

import imagecodecs
import numpy
import tifffile
from imagecodecs.numcodecs import Jpeg
from PIL import Image

ROOT = Path(__file__).resolve().parents[2]
TILE = 128


def vips(*args):
    subprocess.run(["vips", *map(str, args)], check=True, capture_output=True)


def segments(stream):
    """(marker, segment bytes) up to the first scan, then the rest from SOS on."""
    assert stream[:2] == b"\xff\xd8"
    pos, out = 2, []
    while True:
        marker = stream[pos + 1]
        if marker == 0xDA:
            return out, stream[pos:]
        length = struct.unpack(">H", stream[pos + 2 : pos + 4])[0]
        out.append((marker, stream[pos : pos + 2 + length]))
        pos += 2 + length


def aperio_tiles(image):
    """RGB tiles coded without colour transform as Aperio's scanners store them: SOF
    component ids 0, 1, 2, no JFIF or Adobe marker, tables shared in JPEGTables."""
    tables, tiles = None, []
    for y in range(0, image.shape[0], TILE):
        for x in range(0, image.shape[1], TILE):
            tile = numpy.zeros((TILE, TILE, 3), numpy.uint8)
            part = image[y : y + TILE, x : x + TILE]
            tile[: part.shape[0], : part.shape[1]] = part
            stream = imagecodecs.jpeg8_encode(
                tile, level=90, colorspace="RGB", outcolorspace="RGB", subsampling="444"
            )
            head, scan = segments(bytes(stream))
            defs = b"".join(s for m, s in head if m in (0xDB, 0xC4))
            if tables is None:
                tables = b"\xff\xd8" + defs + b"\xff\xd9"
            kept = bytearray(b"\xff\xd8")
            for marker, seg in head:
                if marker in (0xDB, 0xC4, 0xE0, 0xEE):
                    continue
                seg = bytearray(seg)
                if marker == 0xC0:
                    for c in range(seg[9]):
                        seg[10 + 3 * c] = c
                kept += seg
            scan = bytearray(scan)
            for c in range(scan[4]):
                scan[5 + 2 * c] = c
            tiles.append(bytes(kept + scan))
    return tables, tiles


def write_aperio(path, image):
    tables, tiles = aperio_tiles(image)
    description = (
        f"Aperio Image Library v12.0.15 \r\n{image.shape[1]}x{image.shape[0]} [0,0 "
        f"{image.shape[1]}x{image.shape[0]}] ({TILE}x{TILE}) JPEG/RGB Q=90|AppMag = 40|MPP = 0.4990"
    )
    tifffile.imwrite(
        path,
        data=iter(tiles),
        shape=image.shape,
        dtype="uint8",
        tile=(TILE, TILE),
        compression="jpeg",
        photometric="rgb",
        description=description,
        extratags=[(347, 7, len(tables), tables, True)],
    )
    with tifffile.TiffFile(path, mode="r+b") as tif:
        tif.pages[0].tags["PhotometricInterpretation"].overwrite(2)


def main(out_dir, base_url):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    ihc = numpy.asarray(Image.open(ROOT / "samples/ihc.png").convert("RGB"))
    cell = numpy.asarray(Image.open(ROOT / "samples/cell.png").convert("L"))
    # (an odd size, so that edge tiles are partial)
    ihc = ihc[:500, :470]
    writers = {
        "vips_q85": "vips tiffsave --tile --pyramid --compression jpeg --Q 85 (YCbCr 4:2:0, JPEGTables)",
        "vips_q95": "vips tiffsave --tile --pyramid --compression jpeg --Q 95 (RGB, ids R,G,B, JPEGTables)",
        "vips_gray": "vips tiffsave --tile --pyramid --compression jpeg --Q 90 (grayscale)",
        "aperio": "tifffile with precompressed Aperio-style tiles (Photometric RGB, ids 0,1,2, no markers, JPEGTables)",
        "tifffile_ome": "tifffile OME-TIFF, compression jpeg, SubIFD pyramid (Photometric YCbCr, complete JFIF tiles)",
    }
    Image.fromarray(ihc).save(out / "ihc.png")
    Image.fromarray(cell).save(out / "cell.png")
    for name, q, src in (("vips_q85", 85, "ihc.png"), ("vips_q95", 95, "ihc.png"), ("vips_gray", 90, "cell.png")):
        vips(
            "tiffsave", out / src, out / f"{name}.tif", "--tile", "--tile-width", TILE,
            "--tile-height", TILE, "--pyramid", "--compression", "jpeg", "--Q", q,
        )
    write_aperio(out / "aperio.svs", ihc)
    with tifffile.TiffWriter(out / "tifffile_ome.ome.tif", ome=True) as tif:
        options = dict(tile=(TILE, TILE), compression="jpeg", photometric="rgb")
        tif.write(
            ihc, subifds=1, metadata={"axes": "YXS", "PhysicalSizeX": 0.25, "PhysicalSizeY": 0.25},
            **options,
        )
        tif.write(ihc[::2, ::2], subfiletype=1, **options)

    tiffs = []
    for name, file in (
        ("vips_q85", "vips_q85.tif"),
        ("vips_q95", "vips_q95.tif"),
        ("vips_gray", "vips_gray.tif"),
        ("aperio", "aperio.svs"),
        ("tifffile_ome", "tifffile_ome.ome.tif"),
    ):
        with tifffile.TiffFile(out / file) as tif:
            page = tif.pages[0]
            truth = page.asarray()
            (out / f"{name}.truth.bin").write_bytes(truth.tobytes())
            with page.aszarr() as store:
                store.write_fsspec(str(out / f"{name}.refs.json"), url=base_url + "/")
            refs = json.loads((out / f"{name}.refs.json").read_text())
            zarray = json.loads(refs[".zarray"] if ".zarray" in refs else refs["refs"][".zarray"])
            tiffs.append(
                {
                    "name": name,
                    "file": file,
                    "refs": f"{name}.refs.json",
                    "truth": f"{name}.truth.bin",
                    "shape": list(truth.shape),
                    "photometric": int(page.photometric),
                    "writer": writers[name],
                    "compressor": zarray["compressor"],
                }
            )

    combinations = write_combinations(out, ihc)
    v3_arrays = write_zarr_v3_forms(out, ihc)
    (out / "manifest.json").write_text(
        json.dumps(
            {
                "tiffs": tiffs,
                "combinations": combinations,
                "v3": v3_arrays,
                "versions": {
                    "tifffile": tifffile.__version__,
                    "imagecodecs": imagecodecs.__version__,
                    "libjpeg-turbo": imagecodecs.jpeg8_version(),
                },
            },
            indent=1,
        )
    )


def write_combinations(out, ihc):
    """Zarr v2 arrays of one chunk (an Aperio-style tile, a libvips YCbCr tile with its
    tables, a grayscale tile) for each colour-space setting imagecodecs honours, with
    imagecodecs' own decode of it, or the error it raises."""
    tables, tiles = aperio_tiles(ihc[:TILE, :TILE])
    with tifffile.TiffFile(out / "vips_q85.tif") as tif:
        page = tif.pages[0]
        fh = tif.filehandle
        fh.seek(page.dataoffsets[0])
        ycc_tile = fh.read(page.databytecounts[0])
        ycc_tables = page.jpegtables
    gray = imagecodecs.jpeg8_encode(numpy.asarray(Image.open(out / "cell.png"))[:TILE, :TILE], level=90)
    streams = {
        "aperio": (tiles[0], tables, 3),
        "vips_ycc": (ycc_tile, ycc_tables, 3),
        "gray": (bytes(gray), None, 1),
    }
    values = [None, "RGB", "YCbCr", "GRAYSCALE", 2, 3, 1]
    results = []
    for stream_name, (tile, tabs, components) in streams.items():
        for jpeg_cs in values:
            for data_cs in [None, "RGB", "YCbCr", "GRAYSCALE"]:
                compressor = {
                    "id": "imagecodecs_jpeg",
                    "tables": None if tabs is None else base64.b64encode(tabs).decode(),
                    "header": None,
                    "bitspersample": 8,
                    "colorspace_jpeg": jpeg_cs,
                    "colorspace_data": data_cs,
                }
                codec = Jpeg.from_config({k: v for k, v in compressor.items() if k != "id"})
                name = f"{stream_name}_{jpeg_cs}_{data_cs}"
                entry = {"path": f"combinations/{name}", "stream": stream_name, "compressor": compressor}
                try:
                    decoded = numpy.asarray(codec.decode(tile))
                except Exception as error:  # noqa: BLE001 (what imagecodecs raises is the expectation)
                    entry["error"] = f"{type(error).__name__}: {error}"
                    decoded = None
                shape = [TILE, TILE] + ([decoded.shape[2]] if decoded is not None and decoded.ndim == 3 else [])
                if decoded is None and components == 3:
                    shape.append(3)
                entry["shape"] = shape
                array_dir = out / "combinations" / name
                array_dir.mkdir(parents=True, exist_ok=True)
                (array_dir / ".zarray").write_text(
                    json.dumps(
                        {
                            "zarr_format": 2,
                            "shape": shape,
                            "chunks": shape,
                            "dtype": "|u1",
                            "compressor": compressor,
                            "fill_value": 0,
                            "order": "C",
                            "filters": None,
                        }
                    )
                )
                (array_dir / ".".join(["0"] * len(shape))).write_bytes(tile)
                if decoded is not None:
                    entry["truth"] = f"combinations/{name}.truth.bin"
                    (out / entry["truth"]).write_bytes(decoded.astype(numpy.uint8).tobytes())
                results.append(entry)
    return results


def v3_array(path, shape, chunks, codecs, chunk_files):
    path.mkdir(parents=True, exist_ok=True)
    (path / "zarr.json").write_text(json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": "uint8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": codecs,
    }))
    for key, data in chunk_files.items():
        file = path / "c" / key
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)


def write_zarr_v3_forms(out, ihc):
    """imagecodecs_jpeg in Zarr v3, written out as each writer's code writes it (neither
    writer installs here): the array -> bytes codec of imagecodecs' zarr module (its
    to_dict(): the configuration's non-null members), and the bytes -> bytes codec after
    `bytes` that virtual-tiff's parser writes for single-sample JPEG TIFFs (no
    configuration, complete tiles). Chunks are imagecodecs.jpeg8_encode's streams (as that
    codec's encode writes them) and the truth is imagecodecs' decode."""
    arrays = []
    gray = numpy.asarray(Image.open(out / "cell.png"))
    for name, data, codecs in (
        ("imagecodecs_v3_rgb", ihc[:256, :384], [{"name": "imagecodecs_jpeg", "configuration": {"level": 90}}]),
        ("imagecodecs_v3_gray", gray[:256, :384], [{"name": "imagecodecs_jpeg", "configuration": {"level": 90}}]),
        ("virtual_tiff_gray", gray[:256, :384], [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "imagecodecs_jpeg"}]),
    ):
        chunks = [TILE, TILE] + list(data.shape[2:])
        files, truth = {}, numpy.zeros_like(data)
        for y in range(0, data.shape[0], TILE):
            for x in range(0, data.shape[1], TILE):
                tile = numpy.ascontiguousarray(data[y : y + TILE, x : x + TILE])
                stream = bytes(imagecodecs.jpeg8_encode(tile, level=90))
                files[f"{y // TILE}/{x // TILE}" + ("/0" if data.ndim == 3 else "")] = stream
                truth[y : y + TILE, x : x + TILE] = imagecodecs.jpeg8_decode(stream)
        v3_array(out / "v3" / name, list(data.shape), chunks, codecs, files)
        (out / f"v3/{name}.truth.bin").write_bytes(truth.tobytes())
        arrays.append({"path": f"v3/{name}", "shape": list(data.shape), "truth": f"v3/{name}.truth.bin"})
    return arrays


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2].rstrip("/"))
