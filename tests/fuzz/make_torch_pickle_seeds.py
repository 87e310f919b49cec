#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_torch_pickle: small torch.save archives of the kinds the
.pt2 reader meets (a state dict with parameters and buffers, a single tensor as a
use_pickle weight is saved, tensors sharing a storage, views with offsets and strides,
the dtypes switchyard reads, an empty dict, a tuple that is neither).

Run with PyTorch 2 (tools/torch2/setup_venv.sh makes a venv); the output is committed
under tests/fuzz/corpus/torch_pickle/, so the fuzzer itself needs no Python:

    ~/.cache/switchyard/torch2-2.6.0/bin/python tests/fuzz/make_torch_pickle_seeds.py \
        tests/fuzz/corpus/torch_pickle
"""
import collections
import io
import os
import sys
import zipfile

import torch


def restore(data):
    """The archive again with every member stored, without torch's alignment padding (the
    layout fuzz_torch_pickle's mutator writes, so the seeds and their mutants compare)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = [(info.filename, z.read(info)) for info in z.infolist()]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        for name, member in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), member)
    return out.getvalue()


def save(obj, path):
    buf = io.BytesIO()
    torch.save(obj, buf)
    with open(path, "wb") as f:
        f.write(restore(buf.getvalue()))


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)

    # A module's state dict: parameters (_rebuild_parameter), buffers, an int64 counter.
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
    save(model.state_dict(), os.path.join(out_dir, "state_dict_linear_bn.pt"))

    # A plain dict (no OrderedDict) of tensors sharing one storage: views with storage
    # offsets and strides, a transposed one, a 0-dim element, an empty slice.
    base = torch.arange(24, dtype=torch.float32)
    shared = {
        "whole": base,
        "rows": base.view(4, 6)[1:3],
        "cols": base.view(4, 6)[:, ::2],
        "t": base.view(4, 6).t(),
        "item": base[5],
        "empty": base[3:3],
    }
    save(shared, os.path.join(out_dir, "shared_storage_views.pt"))

    # The dtypes switchyard reads, one small tensor each.
    dtypes = {
        "f64": torch.tensor([1.5, -2.0], dtype=torch.float64),
        "f16": torch.tensor([1.0, 2.0], dtype=torch.float16),
        "bf16": torch.tensor([1.0, 2.0], dtype=torch.bfloat16),
        "i64": torch.tensor([1, -1], dtype=torch.int64),
        "i32": torch.tensor([7], dtype=torch.int32),
        "i16": torch.tensor([7], dtype=torch.int16),
        "i8": torch.tensor([-7], dtype=torch.int8),
        "u8": torch.tensor([200], dtype=torch.uint8),
        "bool": torch.tensor([True, False]),
    }
    save(collections.OrderedDict(dtypes), os.path.join(out_dir, "dtypes.pt"))

    # A single tensor (a use_pickle weight of a PT2 archive), a parameter, an empty dict,
    # and a tuple (example inputs: neither a dict nor a tensor).
    save(torch.arange(12, dtype=torch.float32).view(3, 4)[1:, 1:], os.path.join(out_dir, "single_tensor_view.pt"))
    save(torch.nn.Parameter(torch.ones(2, 2)), os.path.join(out_dir, "single_parameter.pt"))
    save({}, os.path.join(out_dir, "empty_dict.pt"))
    save((torch.zeros(1, 2), torch.ones(3)), os.path.join(out_dir, "tuple_of_tensors.pt"))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "corpus", "torch_pickle"))
