// switchyard._torchscript: makes Runtime.load read TorchScript .pt files. A module of its own
// because it links LibTorch 1.13 (the bridge, host/torchscript): switchyard/__init__.py
// imports it only beside the torch it was built with, so that _core (no LibTorch) also
// imports into a process that runs PyPI's torch 2, for .pt2 and .json models.
#include <switchyard/torchscript.hpp>

#include <pybind11/pybind11.h>

PYBIND11_MODULE(_torchscript, m) {
  m.doc() = "registers switchyard's TorchScript (.pt) loader (LibTorch 1.13)";
  switchyard::torchscript::register_loader();
}
