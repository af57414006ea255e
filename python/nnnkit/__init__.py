"""nnnkit: .nnn models in Python, over libnnn (ctypes; no compiler needed).

    import nnnkit
    m = nnnkit.load("mnistdemo.nnn")     # zero-copy: tensors view the file
    print(m)                             # as `nnnkit info` shows it
    problems = m.validate((1, 28, 28, 1))
    y = m.run(x)                         # channels-last float32, batch first
"""

from ._lib import lib as _lib_handle
from .errors import (Error, FileError, FormatError, KernelError, LimitError, PluginError, Problem, UsageError,
                     ValidationError)
from .model import Model, Plan, Record, load, validate
from .torch import UnsupportedModuleError  # torch itself is imported only by from_torch

__version__ = _lib_handle.nnn_version().decode()
"""libnnn's version."""

__all__ = ["load", "validate", "Model", "Plan", "Record", "Problem", "Error", "FormatError", "ValidationError",
           "UsageError", "PluginError", "KernelError", "LimitError", "FileError", "UnsupportedModuleError", "from_torch",
           "__version__"]


def from_torch(module, input_shape, description=None):
    """A PyTorch nn.Sequential as a channels-last Model (nnnkit.torch.from_torch;
    imports torch on first use)."""
    from .torch import from_torch as convert
    return convert(module, input_shape, description=description)
