"""Batch scoring of a dask array with a .nnn model, chunk by chunk on the workers.

Every worker process opens the model once (a cache in the process, keyed by the
model's path, its plugins and the file's contents) and scores each chunk it is
given with a Plan. dask itself is imported only here, when this module is.
"""
import os
import threading

import numpy as np

import dask.array as da

from . import _lib
from . import errors as _errors
from . import model as _model

__all__ = ["predict"]

# The per-process cache: one open Model per (path, plugins, size and digest), and
# one Plan per thread for each chunk shape (a Plan is not shared by threads).
# This is the one piece of mutable module state the package keeps besides the
# library handle: opening the model once per worker is the point of it.
_lock = threading.Lock()
_models = {}
_opens = {}
_scored = {}
_local = threading.local()


def _key(path, plugins):
    path = os.path.abspath(os.fspath(path))
    plugins = tuple(os.path.abspath(os.fspath(p)) for p in plugins) if plugins is not None else None
    return (path, plugins, _model._file_identity(path))


def _open(key):
    """The process's Model for key, opened on first use."""
    with _lock:
        m = _models.get(key)
        if m is None:
            path, plugins, ident = key
            # Drop the models of an older version of this file (and plugins).
            for old in [k for k in _models if k[:2] == key[:2]]:
                _models.pop(old).close()
            m = _model.load(path, plugins=list(plugins) if plugins is not None else None)
            if _model._file_identity(path) != ident:
                m.close()
                raise _errors.usage("%s: the file changed after predict() was called: call predict() again"
                                    % path, cls=_errors.FileError)
            _models[key] = m
            _opens[key] = _opens.get(key, 0) + 1
        return m


# Rows per Plan call (nnn/run.h's NNN_RUN_BATCH, as Model.run and nnnkit
# run): a chunk of 10,000 images is scored 256 rows at a time, which keeps a
# plan's buffers small (tens of MB for MNIST-shaped inputs, not GBs) and is
# as fast as any batch is; the outputs are the same bits whatever the batch
# (tests/python/test_dask.py compares with a run of 1,000 rows).
_ROWS = _lib.RUN_BATCH


def _plan(key, shape, threads):
    """This thread's Plan for inputs of shape (a Plan runs one call at a time)."""
    plans = getattr(_local, "plans", None)
    if plans is None:
        plans = _local.plans = {}
    pk = (key, shape, threads)
    p = plans.get(pk)
    if p is None:
        for old in [k for k in plans if k[0][:2] == key[:2] and k[0] != key]:
            plans.pop(old).close()
        p = plans[pk] = _open(key).plan(shape, threads=threads)
    return p


def _score(block, key, threads, out_shape):
    """One chunk's outputs, through this process's model."""
    x = np.ascontiguousarray(block, dtype=np.float32)
    n = x.shape[0]
    out = np.empty((n,) + out_shape, np.float32)
    for i in range(0, n, _ROWS):
        rows = min(_ROWS, n - i)
        _plan(key, (rows,) + x.shape[1:], threads).run(x[i:i + rows], out[i:i + rows])
    with _lock:
        _scored[key] = _scored.get(key, 0) + 1
    return out


def _open_counts():
    """{(path, plugins, identity): times opened} in this process (the tests read it)."""
    with _lock:
        return dict(_opens)


def _chunks_scored():
    """{(path, plugins, identity): chunks scored} in this process."""
    with _lock:
        return dict(_scored)


def predict(model_path, array, plugins=None, threads=1):
    """The model's outputs for every row of a dask array, as a lazy dask array.

    model_path must name the same file on every worker (a shared or copied
    path); array is channels-last with the batch on its first axis, in any
    dtype numpy converts to float32. Chunks are split along the batch axis only
    (the others are merged first when they are not). Each worker process opens
    the model once and scores its chunks with a Plan of `threads` threads.
    plugins: extra plugin .so paths, as for nnnkit.load. The result's chunks
    follow the input's batch chunks; its dtype is float32. A model that does not
    fit the rows' shape raises here, before anything is computed.
    """
    key = _key(model_path, plugins)
    if not isinstance(array, da.Array):
        array = da.asarray(array)
    if array.ndim < 2:
        raise _errors.usage("predict: the array needs a batch axis and at least one more (got %d axes)"
                            % array.ndim)
    # The output shape from the library's shape engine, here and once: a
    # model that does not fit fails now, not on the workers.
    out_shape = _open(key).shapes((1,) + tuple(array.shape[1:]))[-1]
    if out_shape[0] != 1:
        raise _errors.usage("predict: the model's output has %s rows for one input row" % out_shape[0])
    if any(len(c) > 1 for c in array.chunks[1:]):
        array = array.rechunk({i: -1 for i in range(1, array.ndim)})
    n_in, n_out = array.ndim, len(out_shape)
    in_ind = tuple(range(n_in))
    out_ind = (0,) + tuple(range(n_in, n_in + n_out - 1))
    new_axes = {n_in + i: int(s) for i, s in enumerate(out_shape[1:])}
    # Every non-batch axis of the input is contracted (one chunk, concatenated);
    # the output's are new, whole.
    return da.blockwise(_score, out_ind, array, in_ind, new_axes=new_axes, concatenate=True, dtype=np.float32,
                        meta=np.empty((0,) * n_out, np.float32),
                        name="nnnkit-predict-" + da.core.tokenize(key, array.name, threads),
                        key=key, threads=threads, out_shape=tuple(out_shape[1:]))
