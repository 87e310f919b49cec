"""switchyard from Python: run TorchScript and torch.export models through switchyard's
plugins, with torch tensors in and out (shared by DLPack, never copied) and every node's
inputs and outputs (node_io) as an ordered dict. See docs/python.md.

    rt = switchyard.Runtime()                  # or Runtime(config="configs/default.toml")
    m = rt.load("model.pt2")                   # or "model.pt", or rt.load(module, example_inputs)
    (y,) = m.run(x)
    (y,), node_io = m.run(x, node_io="all")    # {node: {op, backend, module, ...}}
    switchyard.run_dataset("model.pt", "inputs/", "out/", client=dask_client)  # a dataset, per-sample files
"""
import os
import tempfile

import torch

from . import _core
from ._core import (ConfigError, Error, GraphError, InputError, InternalError, IoError,  # noqa: F401
                    KernelError, Model, OutOfMemoryError, PluginError, UnsupportedError)

__all__ = ["Runtime", "Model", "run_dataset", "DatasetRun", "Error", "ConfigError", "GraphError", "PluginError", "InputError",
           "KernelError", "UnsupportedError", "IoError", "InternalError", "OutOfMemoryError"]

_HERE = os.path.dirname(os.path.abspath(__file__))

# TorchScript .pt files are read through LibTorch 1.13, which can only share a process with
# the torch it is (Debian's python3-torch). Beside PyPI's torch 2, _core alone runs .pt2
# and .json models, and load(module) exports with torch.export instead of tracing.
TORCHSCRIPT = torch.__version__.startswith("1.13")
if TORCHSCRIPT:
    from . import _torchscript  # noqa: F401  (registers the .pt loader)


def _default_plugin_paths():
    """The plugins beside this package: installed (lib/switchyard/plugins) or in the build tree."""
    candidates = [os.path.join(_HERE, "lib", "switchyard", "plugins"),
                  os.path.normpath(os.path.join(_HERE, "..", "..", "plugins"))]
    return [d for d in candidates if os.path.isdir(d)]


class Runtime(_core.Runtime):
    """Plugins and a config. `config`: a TOML file (None: the built-in defaults).
    `plugin_paths` are searched first, then $SWITCHYARD_PLUGIN_PATH, then this package's."""

    def __init__(self, config=None, plugin_paths=(), strict=False, log_level=None, check_finite=False):
        paths = [os.fspath(p) for p in plugin_paths] + _default_plugin_paths()
        super().__init__(None if config is None else os.fspath(config), paths, strict, log_level, check_finite)

    def load(self, model, example_inputs=None, dynamic_shapes=None):
        """A Model from a .pt2 (torch.export.save), .pt (TorchScript) or .json (portable
        graph) file, or from a torch.nn.Module: traced with torch.jit.trace on
        `example_inputs` (a tensor or tuple) under torch 1.13, exported with torch.export
        (with `dynamic_shapes`, as torch.export.export takes them) under torch 2."""
        if isinstance(model, (str, os.PathLike)):
            if example_inputs is not None:
                raise TypeError("example_inputs is for tracing a torch.nn.Module, not for a file")
            path = os.fspath(model)
            if path.endswith((".pt", ".pth")) and not TORCHSCRIPT:
                raise IoError(f"{path}: TorchScript .pt files need Debian's torch 1.13 (python3-torch) in "
                              f"the process; beside torch {torch.__version__} switchyard reads .pt2 files "
                              "(torch.export.save) and .json graphs")
            return self._load_file(path)
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"load() takes a file path or a torch.nn.Module, not {type(model).__name__}")
        if example_inputs is None:
            raise TypeError("load(module) needs example_inputs to trace it with")
        if isinstance(example_inputs, torch.Tensor):
            example_inputs = (example_inputs,)
        if not TORCHSCRIPT:
            exported = torch.export.export(model, tuple(example_inputs), dynamic_shapes=dynamic_shapes)
            with tempfile.TemporaryDirectory(prefix="switchyard-") as folder:
                path = os.path.join(folder, "exported.pt2")
                torch.export.save(exported, path)
                return self._load_file(path)
        if dynamic_shapes is not None:
            raise TypeError("dynamic_shapes is for torch.export (torch 2); a torch 1.13 trace takes any shape")
        with torch.no_grad():
            traced = torch.jit.trace(model, tuple(example_inputs))
        with tempfile.TemporaryDirectory(prefix="switchyard-") as folder:
            path = os.path.join(folder, "traced.pt")
            torch.jit.save(traced, path)
            return self._load_file(path)


from .dataset import DatasetRun, run_dataset  # noqa: E402  (Dask is imported only when a client is passed)
