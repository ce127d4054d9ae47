"""A cohort of slides converted one task per slide: ``zarr_jpeg.convert`` is a plain function
of picklable arguments returning a picklable summary, so Dask distributed (a LocalCluster of
worker *processes* here), ``concurrent.futures`` or any scheduler maps it over the slides.
Every store is the one a local call writes, byte for byte; a slide that is refused comes back
as ``zarr_jpeg.ConvertError`` with its kind, and leaves nothing at its destination."""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import tifffile
from PIL import Image

import zarr_jpeg
from test_convert import assert_same_store
from test_convert_tiff import gradient

distributed = pytest.importorskip("distributed", reason="distributed is in tests/python/requirements.txt")


@pytest.fixture(scope="module")
def cohort(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    d = tmp_path_factory.mktemp("cohort")
    slides = []
    for i in range(4):
        image = gradient(600 + 50 * i, 900, seed=10 + i)
        path = d / f"slide-{i}.svs"
        tifffile.imwrite(path, image, compression="jpeg", compressionargs={"level": 80}, tile=(256, 256), photometric="rgb",
                         metadata=None, description=f"Aperio Image Library v12.0.5\r\nslide {i}|AppMag = 20|MPP = 0.25")
        slides.append(path)
    Image.fromarray(gradient(500, 700, seed=20)).save(d / "overview.png")
    slides.append(d / "overview.png")
    return slides


def outputs(slides: list[Path], where: Path) -> list[str]:
    return [str(where / (s.stem + ".zarr")) for s in slides]


def test_a_cohort_on_a_dask_cluster_of_processes(cohort: list[Path], tmp_path: Path) -> None:
    (tmp_path / "dask").mkdir()
    (tmp_path / "local").mkdir()
    targets = outputs(cohort, tmp_path / "dask")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        futures = client.map(zarr_jpeg.convert, [str(s) for s in cohort], targets, workers=1, progress=False, quality=85)
        summaries = client.gather(futures)
        pids = client.run(os.getpid)
    assert len(set(pids.values()) - {os.getpid()}) == 2, "two worker processes, not this one"
    for slide, target, summary in zip(cohort, targets, summaries):
        assert isinstance(summary, zarr_jpeg.Summary) and summary["output"] == target
        assert str(summary).startswith(f"wrote {target} in ")
        local = zarr_jpeg.convert(slide, tmp_path / "local" / (slide.stem + ".zarr"), workers=1, progress=False, quality=85)
        assert_same_store(Path(target), Path(local["output"]))
    assert [s["tiles"]["copied"] for s in summaries[:4]] == [12, 12, 12, 12]


def test_a_refused_slide_comes_back_as_convert_error(cohort: list[Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken.svs"
    broken.write_bytes(cohort[0].read_bytes()[:4000])
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        future = client.submit(zarr_jpeg.convert, str(broken), str(tmp_path / "broken.zarr"), progress=False)
        error = future.exception()
    assert isinstance(error, zarr_jpeg.ConvertError)
    assert error.kind == "InvalidInput" and "lies past the end of the file" in str(error)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.svs"]


def test_the_same_function_on_another_scheduler(cohort: list[Path], tmp_path: Path) -> None:
    (tmp_path / "pool").mkdir()
    targets = outputs(cohort[:2], tmp_path / "pool")
    with ProcessPoolExecutor(max_workers=2) as pool:
        summaries = list(pool.map(_convert_quietly, [str(s) for s in cohort[:2]], targets))
    for slide, summary in zip(cohort, summaries):
        local = zarr_jpeg.convert(slide, tmp_path / (slide.stem + ".zarr"), progress=False)
        assert summary["levels"] == local["levels"]
        assert_same_store(Path(summary["output"]), Path(local["output"]))


def _convert_quietly(source: str, target: str) -> zarr_jpeg.Summary:
    return zarr_jpeg.convert(source, target, progress=False, workers=1)
