"""Neuroglancer precomputed volumes in: tensorstore's `neuroglancer_precomputed` driver writes
JPEG volumes at test time (grayscale and colour, two scales, unsharded and sharded with either
hash and gzip indexes), both packages convert them into the same store, and zarr-python reads
it back. Full-size chunks are the precomputed chunk files byte for byte; the chunks clipped at
the volume's bounds are re-encoded, within JPEG tolerance of tensorstore's read. A wrong chunk
size in the info, or a truncated chunk, is refused by name with nothing left at the
destination."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import zarr

import zarr_jpeg
from test_convert import assert_same_store, node_convert, script_convert

ts = pytest.importorskip("tensorstore")

SIZE = (130, 100, 40)  # x, y, z: chunks clipped along every axis
CHUNK = (64, 64, 16)
SHARDINGS = {
    "identity": {"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 0, "hash": "identity",
                 "minishard_bits": 1, "shard_bits": 1, "minishard_index_encoding": "gzip", "data_encoding": "raw"},
    "murmur": {"@type": "neuroglancer_uint64_sharded_v1", "preshift_bits": 1, "hash": "murmurhash3_x86_128",
               "minishard_bits": 2, "shard_bits": 2, "minishard_index_encoding": "raw", "data_encoding": "gzip"},
}


def psnr(a: np.ndarray, b: np.ndarray) -> float:
    mse = np.mean((a.astype(float) - b.astype(float)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(255**2 / mse)


def volume_data(channels: int, size: tuple[int, int, int]) -> np.ndarray:
    """x, y, z, channel: smooth, and different in every z plane and channel."""
    x, y, z = np.meshgrid(*[np.arange(n) for n in size], indexing="ij")
    rng = np.random.default_rng(3)
    planes = [(np.sin(x / (9 + c) + z / 5) + np.cos(y / 13 - z / 7)) * 55 + 120 + 20 * c + rng.normal(0, 2, size)
              for c in range(channels)]
    return np.stack(planes, axis=-1).clip(0, 255).astype(np.uint8)


def write_volume(path: Path, channels: int, sharding: dict | None = None) -> np.ndarray:
    """Two scales (the second 2× in x and y), written by tensorstore; returns scale 0's data."""
    data = volume_data(channels, SIZE)
    for scale, resolution in [(0, [4, 4, 40]), (1, [8, 8, 40])]:
        size = [SIZE[0] >> scale, SIZE[1] >> scale, SIZE[2]]
        metadata = {"size": size, "encoding": "jpeg", "jpeg_quality": 85, "chunk_size": list(CHUNK), "resolution": resolution}
        if sharding:
            metadata["sharding"] = sharding
        spec = {"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
                "multiscale_metadata": {"type": "image", "data_type": "uint8", "num_channels": channels},
                "scale_metadata": metadata, "open": True, "create": True}
        store = ts.open(spec).result()
        store[...] = data[:: 1 << scale, :: 1 << scale][: size[0], : size[1]]
    return data


@pytest.fixture(scope="module")
def volumes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, np.ndarray]]:
    d = tmp_path_factory.mktemp("precomputed")
    out = {}
    for name, channels, sharding in [("gray", 1, None), ("rgb", 3, None),
                                     ("gray-identity", 1, SHARDINGS["identity"]), ("gray-murmur", 1, SHARDINGS["murmur"]),
                                     ("rgb-murmur", 3, SHARDINGS["murmur"])]:
        out[name] = (d / name, write_volume(d / name, channels, sharding))
    return out


def tensorstore_read(path: Path, scale: int) -> np.ndarray:
    store = ts.open({"driver": "neuroglancer_precomputed", "kvstore": {"driver": "file", "path": str(path)},
                     "scale_index": scale}).result()
    return store.read().result()  # x, y, z, channel


def as_zarr_order(xyzc: np.ndarray) -> np.ndarray:
    """x, y, z, c → (c,) z, y, x as the converted arrays hold it."""
    czyx = np.transpose(xyzc, (3, 2, 1, 0))
    return czyx[0] if czyx.shape[0] == 1 else czyx


def chunk_files(path: Path, scale: int) -> dict[str, bytes]:
    key = json.loads((path / "info").read_text())["scales"][scale]["key"]
    return {p.name: p.read_bytes() for p in (path / key).iterdir()}


@pytest.mark.parametrize("name", ["gray", "rgb", "gray-identity", "gray-murmur", "rgb-murmur"])
def test_a_volume_reads_back_in_zarr_python_with_its_chunks_copied(volumes, tmp: Path, name: str) -> None:
    path, _ = volumes[name]
    summary = zarr_jpeg.convert(path, tmp / "out.zarr", progress=False)
    colour = name.startswith("rgb")
    group = zarr.open_group(tmp / "out.zarr", mode="r")
    ms = group.attrs["ome"]["multiscales"][0]
    assert [a["name"] for a in ms["axes"]] == (["c"] if colour else []) + ["z", "y", "x"]
    assert all(a["unit"] == "nanometer" for a in ms["axes"] if a["type"] == "space")
    lead = [1] if colour else []
    assert [d["coordinateTransformations"][0]["scale"] for d in ms["datasets"]] == [lead + [40, 4, 4], lead + [40, 8, 8]]
    for scale in (0, 1):
        array = group[str(scale)]
        reference = as_zarr_order(tensorstore_read(path, scale))
        assert array.shape == reference.shape
        assert array.chunks == tuple(([3] if colour else []) + [CHUNK[2], CHUNK[1], CHUNK[0]])
        got = array[:]
        assert psnr(got, reference) >= 40, scale
        if scale == 0:
            # the full-size chunks decode to what tensorstore (libjpeg-turbo) decodes of the same
            # bytes, but for rounding (and, in colour, chroma upsampling)
            interior = (..., slice(0, 32), slice(0, 64), slice(0, 128))
            if colour:
                assert psnr(got[interior], reference[interior]) >= 48
            else:
                assert np.abs(got[interior].astype(int) - reference[interior].astype(int)).max() <= 2
    copied = summary["source"]["chunks"]
    # scale 0: 3 × 2 × 3 chunks, 2 × 1 × 2 of them full; scale 1 (65 × 50 × 40): 2 × 1 × 3, none full in y
    assert (copied["copied"], copied["reencoded"], copied["missing"]) == (4, 14 + 6, 0)


@pytest.mark.parametrize("name", ["gray", "rgb"])
def test_full_size_chunks_are_the_precomputed_files_byte_for_byte(volumes, tmp: Path, name: str) -> None:
    path, _ = volumes[name]
    zarr_jpeg.convert(path, tmp / "out.zarr", progress=False)
    files = chunk_files(path, 0)
    prefix = "c/0" if name == "rgb" else "c"
    for z in range(2):
        for x in range(2):
            stored = (tmp / "out.zarr" / "0" / f"{prefix}/{z}/0/{x}").read_bytes()
            assert stored == files[f"{64 * x}-{64 * x + 64}_0-64_{16 * z}-{16 * z + 16}"], (z, x)
    # a clipped chunk is stored whole: re-encoded at the chunk's full size
    edge = (tmp / "out.zarr" / "0" / f"{prefix}/2/1/2").read_bytes()
    assert edge != files["128-130_64-100_32-40"]


def test_sharded_volumes_give_the_unsharded_volumes_chunks(volumes, tmp: Path) -> None:
    """tensorstore writes the same JPEG bytes whether it shards or not: so do our stores."""
    zarr_jpeg.convert(volumes["gray"][0], tmp / "plain.zarr", progress=False)
    for name in ["gray-identity", "gray-murmur"]:
        zarr_jpeg.convert(volumes[name][0], tmp / f"{name}.zarr", progress=False)
        plain = {p.relative_to(tmp / "plain.zarr"): p.read_bytes() for p in (tmp / "plain.zarr").rglob("c/*/*/*")}
        sharded = {p.relative_to(tmp / f"{name}.zarr"): p.read_bytes() for p in (tmp / f"{name}.zarr").rglob("c/*/*/*")}
        assert plain == sharded, name


@pytest.mark.parametrize("args", [[], ["--shard", "128"]])
def test_both_packages_write_the_same_store(volumes, tmp: Path, args: list[str]) -> None:
    for name in ["gray-murmur", "rgb"]:
        path, _ = volumes[name]
        a, b = tmp / f"{name}-npm.zarr", tmp / f"{name}-py.zarr"
        for run, out in [(node_convert, a), (script_convert, b)]:
            done = run(path, out, args)
            assert done.returncode == 0, done.stderr
        assert_same_store(a, b)
        if args:
            level0 = zarr.open_array(b / "0", mode="r")
            assert level0.shards is not None
            assert psnr(level0[:], as_zarr_order(tensorstore_read(path, 0))) >= 40


def test_bad_volumes_are_refused_by_name_with_nothing_written(volumes, tmp: Path) -> None:
    key = json.loads((volumes["gray"][0] / "info").read_text())["scales"][0]["key"]

    def copy(name: str, source: str, chunk_sizes: list[int] | None = None) -> Path:
        path = tmp / name
        shutil.copytree(volumes[source][0], path)
        if chunk_sizes:
            info = json.loads((path / "info").read_text())
            info["scales"][0]["chunk_sizes"] = [chunk_sizes]
            (path / "info").write_text(json.dumps(info))
        return path

    # sharded, chunks are found by their grid position: the first is a JPEG of the wrong size
    wrong = copy("wrong-chunk", "gray-identity", [64, 32, 16])
    # unsharded, chunk files are found by their bounds: none is where the info puts them
    misplaced = copy("misplaced", "gray", [64, 32, 16])
    truncated = copy("truncated", "gray")
    chunk = truncated / key / "0-64_0-64_0-16"
    chunk.write_bytes(chunk.read_bytes()[:-300])
    short_shard = copy("short-shard", "gray-identity")
    shard = short_shard / key / "1.shard"
    shard.write_bytes(shard.read_bytes()[:-100])
    cases = [
        (wrong, "a JPEG of 64 × 1024 pixels, but a chunk of 64 × 32 × 16 voxels"),
        (misplaced, "has none of its 36 chunks (e.g. 4_4_40/0-64_0-32_0-16)"),
        (truncated, "0-64_0-64_0-16: cannot decode"),
        (short_shard, "past the end of the file"),
    ]
    for path, message in cases:
        with pytest.raises(zarr_jpeg.ConvertError, match="") as caught:
            zarr_jpeg.convert(path, tmp / "out.zarr", progress=False)
        assert message in str(caught.value), (path.name, str(caught.value))
        assert not (tmp / "out.zarr").exists()
        for run in (node_convert, script_convert):
            done = run(path, tmp / "cli.zarr", [])
            assert done.returncode == 1 and message in done.stderr, (run.__name__, path.name, done.stderr)
            assert not (tmp / "cli.zarr").exists()


def test_options_that_would_change_the_chunks_are_refused(volumes, tmp: Path) -> None:
    with pytest.raises(zarr_jpeg.ConvertError, match="chunk does not apply to a neuroglancer precomputed volume"):
        zarr_jpeg.convert(volumes["gray"][0], tmp / "out.zarr", chunk=64, progress=False)
    with pytest.raises(zarr_jpeg.ConvertError, match="shard 96 is not a multiple"):
        zarr_jpeg.convert(volumes["gray"][0], tmp / "out.zarr", shard=96, progress=False)
