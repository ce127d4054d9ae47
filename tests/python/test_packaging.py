"""The wheel `maturin build` makes from python/: the package, its typing stubs and py.typed
marker, the abi3 extension, and the `zarr.codecs` entry point that registers `jpeg`."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

from conftest import ROOT


def test_maturin_builds_a_wheel_with_stubs_and_the_entry_point(tmp):
    maturin = Path(sys.executable).with_name("maturin")
    env = {**os.environ, "PATH": f"{maturin.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    # (setup.sh's install built the same profile in python/target: this relinks at most)
    r = subprocess.run([str(maturin), "build", "--release", "--out", str(tmp)], cwd=ROOT / "python", capture_output=True, text=True, env=env, timeout=1200)
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp.glob("zarr_jpeg-*.whl")
    assert "-cp311-abi3-" in wheel.name  # one wheel for CPython 3.11 and later
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert {"zarr_jpeg/__init__.py", "zarr_jpeg/_codec.py", "zarr_jpeg/_convert.py", "zarr_jpeg/cli.py",
                "zarr_jpeg/_zarr_jpeg.pyi", "zarr_jpeg/py.typed"} <= names
        assert any(n.startswith("zarr_jpeg/_zarr_jpeg.") and n.endswith(".so") for n in names)
        info = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
        # the codecs for zarr-python (jpeg, and the reshape it lacks), and the converter's console script
        assert z.read(info).decode().split() == [
            "[console_scripts]", "zarr-jpeg=zarr_jpeg.cli:main", "[zarr.codecs]", "jpeg=zarr_jpeg:JpegCodec",
            "reshape=zarr_jpeg:ReshapeCodec"]
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert "Name: zarr-jpeg" in meta and "Requires-Python: >=3.11" in meta and "Requires-Dist: zarr>=3.1" in meta
