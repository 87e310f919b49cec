#!/usr/bin/python3
"""Reads a switchyard node_io file one node at a time.

    /usr/bin/python3 tools/node_io_stream.py IO.pt     # lists the nodes, their ops and shapes

`switchyard run MODEL --node-io stream --save-node-io IO.pt` writes each node's record
as the node runs, so that a big model's node_io never sits in memory whole. The file is
the one `--node-io all` writes: `torch.load("IO.pt")` returns the dict {node name: {"op",
"backend", "module_path", "input_sources", "inputs", "outputs"}} in graph order. That
loads every tensor at once; this reader loads one record at a time instead:

    import sys; sys.path.insert(0, "tools")
    import node_io_stream
    for name, record in node_io_stream.iter_records("IO.pt"):
        record["outputs"][0].abs().max()     # only this record's tensors are in memory
    io = node_io_stream.load_all("IO.pt")    # the whole dict, as torch.load gives it

How: the file is a torch.save zip archive, `<archive>/data.pkl` (the dict, with each
tensor as a reference to a storage) and `<archive>/data/<key>` (each storage's bytes,
stored uncompressed). iter_records unpickles data.pkl with the tensors left as
references, then for each record reads just the storages its tensors use. Use Debian's
/usr/bin/python3 (python3-torch); it works with torch 1.13 and later.
"""
import collections
import io
import pickle
import sys
import zipfile

import torch


class TensorRef:
    """A tensor in the file, not loaded: its storage key, dtype, offset, shape and strides."""

    def __init__(self, key, dtype, offset, shape, stride):
        self.key, self.dtype, self.offset = key, dtype, offset
        self.shape, self.stride = torch.Size(shape), tuple(stride)

    def __repr__(self):
        return f"TensorRef({self.dtype}, {list(self.shape)})"


class _StorageRef:
    def __init__(self, key, dtype):
        self.key, self.dtype = key, dtype


def _rebuild_tensor(storage, offset, shape, stride, requires_grad=False, hooks=None, *metadata):
    return TensorRef(storage.key, storage.dtype, offset, shape, stride)


class _MetadataUnpickler(pickle.Unpickler):
    """Unpickles data.pkl with every tensor left as a TensorRef; refuses anything else."""

    def find_class(self, module, name):
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor
        if module == "torch" and name.endswith("Storage") and hasattr(torch, name):
            return getattr(torch, name)
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        raise pickle.UnpicklingError(f"unexpected global {module}.{name}: not a switchyard node_io file")

    def persistent_load(self, pid):
        kind, storage_class, key, _location, _numel = pid
        if kind != "storage":
            raise pickle.UnpicklingError(f"unexpected persistent id {pid!r}")
        return _StorageRef(key, storage_class.dtype)


def _archive_prefix(zf):
    for name in zf.namelist():
        if name.endswith("/data.pkl") and name.count("/") == 1:
            return name[: -len("data.pkl")]
    raise ValueError(f"{zf.filename}: no data.pkl: not a finished torch.save file "
                     "(a stream file is finished when the run ends)")


def _materialize(zf, prefix, value):
    if not isinstance(value, TensorRef):
        return value  # None: an absent optional input
    data = bytearray(zf.read(f"{prefix}data/{value.key}"))
    flat = torch.frombuffer(data, dtype=value.dtype) if data else torch.empty(0, dtype=value.dtype)
    return flat.as_strided(value.shape, value.stride, value.offset)


def iter_records(path, tensors=True):
    """Yields (node name, record) in graph order, one record's tensors loaded at a time.

    A record is {"op", "backend", "module_path", "input_sources", "inputs", "outputs"};
    "inputs" and "outputs" are lists of tensors (None for an absent input). With
    tensors=False they are TensorRef (dtype and shape only) and no tensor data is read.
    """
    with zipfile.ZipFile(path) as zf:
        prefix = _archive_prefix(zf)
        doc = _MetadataUnpickler(io.BytesIO(zf.read(prefix + "data.pkl"))).load()
        if not isinstance(doc, dict):
            raise ValueError(f"{path}: holds {type(doc).__name__}, not a node_io dict")
        for name, record in doc.items():
            if tensors:
                record = dict(record)
                for field in ("inputs", "outputs"):
                    record[field] = [_materialize(zf, prefix, v) for v in record[field]]
            yield name, record


def load_all(path):
    """The whole node_io dict, as a `--node-io all` file gives it (every tensor loaded)."""
    return torch.load(path, map_location="cpu")


def _describe(values):
    return ", ".join("None" if v is None else f"{str(v.dtype).replace('torch.', '')}{list(v.shape)}" for v in values)


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print("usage: node_io_stream.py IO.pt   (lists each node's op, backend and tensor shapes)", file=sys.stderr)
        return 2
    count = 0
    for count, (name, r) in enumerate(iter_records(argv[1], tensors=False), start=1):  # reads no tensor data
        print(f"{count - 1:5d}  {name}  {r['op']}  [{r['backend']}]  "
              f"inputs: {_describe(r['inputs'])}  outputs: {_describe(r['outputs'])}")
    print(f"{count} records")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
