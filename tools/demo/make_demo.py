#!/usr/bin/env python3
"""Regenerates the demo graph: a tiny MLP in ATen op names, in switchyard's portable graph
format (docs/graph-format.md). Writes mlp.json, mlp.bin and mlp_expected.json (reference
outputs for two fixed inputs, computed here with numpy in float32).

    /usr/bin/python3 tools/demo/make_demo.py        # run from anywhere; writes next to this file

Graph:  x[2,8] -> fc1 = aten::linear -> act = aten::relu -> residual = aten::add(act, fc1)
        -> gated = aten::mul(residual, act) -> fc2 = aten::linear -> out = aten::softmax(dim=-1)
"""
import json
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ALIGNMENT = 64  # every tensor in the weights file starts at a multiple of 64 bytes


def make_weights():
    rng = np.random.default_rng(20240601)  # fixed seed: the files are reproducible
    return {
        "fc1.weight": (rng.standard_normal((16, 8)) * 0.35).astype(np.float32),
        "fc1.bias": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "fc2.weight": (rng.standard_normal((4, 16)) * 0.25).astype(np.float32),
        "fc2.bias": (rng.standard_normal(4) * 0.1).astype(np.float32),
    }


def forward(w, x):
    fc1 = x @ w["fc1.weight"].T + w["fc1.bias"]
    act = np.maximum(fc1, np.float32(0))
    residual = act + fc1
    gated = residual * act
    fc2 = gated @ w["fc2.weight"].T + w["fc2.bias"]
    shifted = np.exp(fc2 - fc2.max(axis=-1, keepdims=True))
    return (shifted / shifted.sum(axis=-1, keepdims=True)).astype(np.float32)


def node(name, op, inputs, outputs, module_path, attrs=None):
    return {"name": name, "op": op, "module_path": module_path, "inputs": inputs,
            "outputs": outputs, "attrs": attrs or {}}


def main():
    weights = make_weights()
    blob = bytearray()
    constants = []
    for name, array in weights.items():
        blob.extend(b"\0" * (-len(blob) % ALIGNMENT))
        constants.append({"name": name, "dtype": "float32", "shape": list(array.shape),
                          "offset": len(blob), "nbytes": array.nbytes})
        blob.extend(array.astype("<f4").tobytes())

    graph = {
        "format": "switchyard-graph",
        "version": 1,
        "weights": "mlp.bin",
        "inputs": [{"name": "x", "dtype": "float32", "shape": [2, 8]}],
        "outputs": ["out"],
        "constants": constants,
        "nodes": [
            node("fc1", "aten::linear", ["x", "fc1.weight", "fc1.bias"], ["fc1"], "fc1"),
            node("act", "aten::relu", ["fc1"], ["act"], "act"),
            # functional ops in the top-level forward(): TorchScript gives them no module path
            node("residual", "aten::add", ["act", "fc1"], ["residual"], "", {"alpha": {"int": 1}}),
            node("gated", "aten::mul", ["residual", "act"], ["gated"], ""),
            node("fc2", "aten::linear", ["gated", "fc2.weight", "fc2.bias"], ["fc2"], "fc2"),
            node("softmax", "aten::softmax", ["fc2"], ["out"], "softmax",
                 {"dim": {"int": -1}, "dtype": {"none": None}}),
        ],
    }
    with open(os.path.join(HERE, "mlp.json"), "w") as f:
        json.dump(graph, f, indent=2)
        f.write("\n")
    with open(os.path.join(HERE, "mlp.bin"), "wb") as f:
        f.write(blob)

    # Reference outputs: all zeros, and a ramp x[i][j] = (8*i + j) / 8 - 1.
    zeros = np.zeros((2, 8), np.float32)
    ramp = (np.arange(16, dtype=np.float32).reshape(2, 8) / 8 - 1).astype(np.float32)
    cases = [{"name": name, "x": x.tolist(), "out": forward(weights, x).tolist()}
             for name, x in (("zeros", zeros), ("ramp", ramp))]
    with open(os.path.join(HERE, "mlp_expected.json"), "w") as f:  # one case per line
        f.write('{"tolerance": 1e-5, "cases": [\n  ')
        f.write(",\n  ".join(json.dumps(case) for case in cases))
        f.write("\n]}\n")
    print(f"wrote mlp.json, mlp.bin ({len(blob)} bytes), mlp_expected.json")


if __name__ == "__main__":
    main()
