"""The Python module beside PyPI's torch 2 (docs/python.md, "Beside PyPI's torch 2"): run by
CTest with a torch 2 venv's python when tools/torch2/setup_venv.sh made one.

It imports, loads a .pt2 on the family plugins, exports an nn.Module with torch.export, and
refuses the aten plugin (LibTorch 1.13) with a PluginError rather than aborting."""
import os
import sys
import tempfile

import torch
import switchyard

assert not switchyard.TORCHSCRIPT, "torch 1.13 here: this smoke test is for torch 2"
families = ("linalg", "conv", "attention", "elementwise", "shape")
with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
    f.write(f"[plugins]\nload = {list(families)!r}\n[selection]\ndefault = {list(families)!r}\n".replace("'", '"'))
    config = f.name


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 8), torch.nn.Linear(8, 3)

    def forward(self, x, y):
        return self.b(self.a(x) * y + 1.0)


rt = switchyard.Runtime(config=config, log_level="warn")
net = Net().eval()
batch = torch.export.Dim("batch", min=1, max=64)
m = rt.load(net, (torch.randn(2, 4), torch.randn(2, 8)), dynamic_shapes=({0: batch}, {0: batch}))
x, y = torch.randn(5, 4), torch.randn(5, 8)
(out,), node_io = m.run(x, y, node_io="all")
with torch.no_grad():
    diff = (out - net(x, y)).abs().max().item()
assert diff <= 1e-4, diff
assert list(node_io) == ["linear", "mul", "add", "linear_1"], list(node_io)

try:
    switchyard.Runtime(config=os.path.join(os.environ["SWITCHYARD_SOURCE_DIR"], "configs", "default.toml"))
    raise AssertionError("the aten plugin (LibTorch 1.13) loaded beside torch 2")
except switchyard.PluginError as e:
    assert "another torch build" in str(e), e
os.unlink(config)
print(f"torch2_smoke: ok with torch {torch.__version__} (max|diff| {diff:.2g})")
sys.exit(0)
