"""nnnkit.dask.predict on a local cluster of two worker processes: the outputs
equal a single-process Model.run bit for bit, each worker opens the model once,
and the result is lazy with the shape, chunks and dtype the model gives."""
import json
import logging
import os
import shutil
import subprocess

import numpy as np
import pytest

da = pytest.importorskip("dask.array", reason="needs Debian's python3-dask")
distributed = pytest.importorskip("distributed", reason="needs Debian's python3-distributed")

import nnnkit  # noqa: E402
import nnnkit.dask  # noqa: E402

BUILD = os.environ.get("NNN_BUILD") or os.path.join(os.path.dirname(__file__), "..", "..", "build")
ROWS, CHUNK = 100_000, 10_000


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    """mkexample's MNIST-shaped classifier (28x28x1 channels-last in, 10 out)."""
    path = str(tmp_path_factory.mktemp("dask") / "example.nnn")
    subprocess.run([os.path.join(BUILD, "mkexample"), path], check=True)
    return path


def inputs(rows, chunk):
    """Uniform [0, 1) images, the same values wherever and however often computed."""
    return da.random.RandomState(18).random_sample((rows, 28, 28, 1), chunks=(chunk, 28, 28, 1)).astype(np.float32)


# The single-process run computes its inputs here while the cluster is up
# (dask warns), and tornado's event loop warns under Python 3.11: both harmless.
@pytest.mark.filterwarnings("ignore:Running on a single-machine scheduler", "ignore:make_current is deprecated")
def test_two_workers_score_as_one_process_does(example):
    x = inputs(ROWS, CHUNK)
    y = nnnkit.dask.predict(example, x)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        future = client.compute(y)
        # The single-process run, here, while the workers score.
        with nnnkit.load(example) as m:
            want = m.run(x.compute(scheduler="sync"), batch=1000)
        got = future.result()
        opened = client.run(nnnkit.dask._open_counts)
        scored = client.run(nnnkit.dask._chunks_scored)
    assert got.dtype == np.float32 and got.shape == want.shape == (ROWS, 10)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # Each worker opened the model once and scored some of the chunks; all were scored.
    assert len(opened) == 2
    for worker, counts in opened.items():
        assert list(counts.values()) == [1], (worker, counts)
    assert min(sum(c.values()) for c in scored.values()) > 0, scored
    assert sum(sum(c.values()) for c in scored.values()) == ROWS // CHUNK


def test_lazy_with_the_models_shape_chunks_and_dtype(example):
    x = inputs(50, 20)
    before = sum(nnnkit.dask._chunks_scored().values())
    y = nnnkit.dask.predict(example, x)
    assert isinstance(y, da.Array)
    assert y.shape == (50, 10) and y.dtype == np.float32 and y.chunks == ((20, 20, 10), (10,))
    assert sum(nnnkit.dask._chunks_scored().values()) == before, "predict computed something"
    got = y.compute(scheduler="sync")
    assert sum(nnnkit.dask._chunks_scored().values()) == before + 3
    with nnnkit.load(example) as m:
        assert np.array_equal(got, m.run(x.compute(scheduler="sync")))


def test_chunks_across_other_axes_are_merged(example):
    x = inputs(30, 10).rechunk((10, 7, 28, 1)).astype(np.float64)
    y = nnnkit.dask.predict(example, x)
    assert y.chunks == ((10, 10, 10), (10,))
    with nnnkit.load(example) as m:
        assert np.array_equal(y.compute(scheduler="sync"), m.run(x.compute(scheduler="sync")))


def test_a_shape_the_model_refuses_raises_before_computing(example):
    nnnkit_cli = os.environ.get("NNNKIT") or os.path.join(BUILD, "nnnkit")
    cli = subprocess.run([nnnkit_cli, "validate", "--json", "--input-shape", "1,27,28,1", example],
                         capture_output=True, text=True)
    want = json.loads(cli.stdout)["error"]
    before = sum(nnnkit.dask._chunks_scored().values())
    with pytest.raises(nnnkit.ValidationError) as e:
        nnnkit.dask.predict(example, da.zeros((10, 27, 28, 1), chunks=5))
    assert (e.value.code, e.value.path, e.value.offset) == (want["code"], want["path"], want["offset"])
    assert sum(nnnkit.dask._chunks_scored().values()) == before


def test_a_file_changed_since_predict_is_refused(example, tmp_path):
    path = str(tmp_path / "m.nnn")
    shutil.copy(example, path)
    key = nnnkit.dask._key(path, None)
    subprocess.run([os.path.join(BUILD, "mkexample"), "--net", "identity", path], check=True)
    with pytest.raises(nnnkit.FileError, match="changed"):
        nnnkit.dask._open(key)


def test_a_copy_at_the_same_path_is_the_same_model(example, tmp_path):
    # As on another machine: another inode, other times, the same bytes.
    path = str(tmp_path / "m.nnn")
    shutil.copy(example, path)
    key = nnnkit.dask._key(path, None)
    shutil.copy(example, path + ".new")
    os.utime(path + ".new", ns=(1, 1))
    os.replace(path + ".new", path)
    assert nnnkit.dask._key(path, None) == key
    nnnkit.dask._open(key)
