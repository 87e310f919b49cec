#!/usr/bin/env bash
# CLI behaviour: help, the demo run, and clear errors with non-zero exits.
# Usage: test_cli.sh <switchyard binary> <source dir>
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache  # --profile's calibration cache: never the user's own
here=$(cd "$(dirname "$0")" && pwd); . "$here/expect.sh"  # expect, check, finish

demo=$src/tools/demo/mlp.json
cfg=$src/configs/example.toml  # the demo: example runs the element-wise nodes, aten the rest

expect help 0 "Subcommands" -- "$bin" --help
expect no-subcommand nonzero "subcommand" -- "$bin"
expect run-demo 0 "fc1 +aten::linear +fc1 +aten" -- "$bin" run "$demo" --config "$cfg"
expect run-demo-example 0 "act +aten::relu +act +example" -- "$bin" run "$demo" --config "$cfg"
expect options-after-subcommand 0 "nodes per backend" -- "$bin" run "$demo" -c "$cfg" --log-level warn
expect plan 0 "no kernel in +example" -- "$bin" plan "$demo" --config "$cfg"

# Fusion: with the family plugins (default.toml), fc2 -> relu runs as one linalg kernel.
if [ -f "$(dirname "$bin")/../plugins/libswitchyard-linalg.so" ]; then
  cp "$src/tools/demo/mlp.bin" "$tmp/"
  /usr/bin/python3 - "$demo" "$tmp/fuse.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    if n["name"] == "softmax":
        n.update(name="head_relu", op="aten::relu", module_path="head", attrs={})
g["weights"] = "mlp.bin"
json.dump(g, open(sys.argv[2], "w"))
PY
  expect plan-fused 0 "fc2 +aten::linear\+aten::relu +fc2 +linalg" -- "$bin" plan "$tmp/fuse.json" --config "$src/configs/default.toml"
  expect plan-fused-replaces 0 "fused +replaces nodes fc2, head_relu" -- "$bin" plan "$tmp/fuse.json" --config "$src/configs/default.toml"
  expect plan-folded 0 "head_relu +aten::relu +head +linalg +\[[0-9, ]+\] +fused into 'fc2'" -- "$bin" plan "$tmp/fuse.json" --config "$src/configs/default.toml"
  printf '[selection]\ndefault = ["linalg", "aten"]\nfuse = false\n' > "$tmp/nofuse.toml"
  expect plan-fuse-off 0 "head_relu +aten::relu +head +aten" -- "$bin" plan "$tmp/fuse.json" --config "$tmp/nofuse.toml"
fi
expect plugins 0 "aten::linear" -- "$bin" plugins --kernels
expect plugins-example 0 "^example " -- "$bin" plugins

printf '[selection]\ndefault = ["example"\n' > "$tmp/syntax.toml"
expect config-syntax nonzero "syntax.toml:[0-9]+:[0-9]+" -- "$bin" run "$demo" --config "$tmp/syntax.toml"
printf '[selection]\ndefault = ["exampel", "aten"]\n' > "$tmp/unknown.toml"
expect config-unknown-backend nonzero "unknown.toml:2:[0-9]+: unknown backend 'exampel'" -- "$bin" run "$demo" --config "$tmp/unknown.toml"
printf '[selection]\ndefault = ["aten"]\n[[rules]]\nop = "aten::relu"\nbackend = ["example"]\n' > "$tmp/nearmiss.toml"
expect config-near-miss nonzero "did you mean 'backends'" -- "$bin" run "$demo" --config "$tmp/nearmiss.toml"
expect missing-model nonzero "nope.json" -- "$bin" run "$tmp/nope.json" --config "$cfg"
expect bad-log-level nonzero "log-level" -- "$bin" run "$demo" --log-level loud
expect missing-plugin nonzero "plugin 'ghost' not found" -- "$bin" plugins --config <(printf '[plugins]\nload = ["ghost"]\n')

# An op nobody implements: the error names the op, the node, its module and the plugins asked.
sed -e 's/"aten::softmax"/"aten::frobnicate"/' "$demo" > "$tmp/mystery.json"
cp "$src/tools/demo/mlp.bin" "$tmp/"
expect unsupported-op nonzero "no backend can run node 'softmax' \(op aten::frobnicate, module softmax\)" -- "$bin" run "$tmp/mystery.json" --config "$cfg"
expect unsupported-op-asked nonzero "aten: no kernel for aten::frobnicate" -- "$bin" run "$tmp/mystery.json" --config "$cfg"

# Inputs and outputs as JSON files round-trip.
printf '{"x": {"dtype": "float32", "shape": [2, 8], "data": [%s]}}\n' "$(seq -s, 1 16)" > "$tmp/in.json"
expect save-outputs 0 "outputs written" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/in.json" --save-outputs "$tmp/out.json"
expect saved-outputs-shape 0 '"shape"' -- cat "$tmp/out.json"
printf '{"x": {"dtype": "float32", "shape": [2, 3], "data": [1,2,3,4,5,6]}}\n' > "$tmp/bad_in.json"
expect wrong-input-shape nonzero "input 'x' expects \[2, 8\] \(dim 1 is fixed to 8 by fc1.weight\), got \[2, 3\]" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/bad_in.json"
printf '{"x": {"dtype": "float32", "shape": [2, 8], "data": [%s]}, "y": {"dtype": "float32", "shape": [1], "data": [0]}}\n' "$(seq -s, 1 16)" > "$tmp/extra_in.json"
expect extra-input-entry nonzero "extra_in.json: entry 'y' is not an input of the model \(it takes 'x'\)" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/extra_in.json"
printf '{"x": {"dtype": "float32", "shape": [2000000000, 2000000000], "data": [1]}}\n' > "$tmp/huge_in.json"
expect huge-input-shape nonzero "input 'x': shape \[2000000000, 2000000000\] needs 4000000000000000000 values" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/huge_in.json"
expect no-preflight-flag 0 "--no-preflight" -- "$bin" --help
# The memory pre-flight of a model's first signature (docs/reliability.md): the demo with a
# free batch, run at batch 256 under a 20,000-byte budget, is refused before it runs.
cp "$src/tools/demo/mlp.bin" "$tmp/"
/usr/bin/python3 -c 'import json, sys; g = json.load(open(sys.argv[1])); g["inputs"][0]["shape"] = [-1, 8]; json.dump(g, open(sys.argv[2], "w"))' "$demo" "$tmp/anybatch.json"
printf '{"x": {"dtype": "float32", "shape": [256, 8], "data": [%s]}}\n' "$(seq -s, 1 2048)" > "$tmp/in256.json"
expect preflight-first-signature nonzero "error: memory pre-flight: inputs x float32 \[256, 8\] need about [0-9.]+ KiB \([0-9]+ bytes, extrapolated from planning runs on the inputs' first rows: batch 1 peaked at [0-9]+ bytes, batch 8 at [0-9]+ bytes; memory taken as linear in the batch\), but this process may use only 19.5 KiB \(20000 bytes\) more \(SWITCHYARD_MEMORY_AVAILABLE=20000\); the largest batch that fits is about [0-9]+\. Nothing ran at batch 256" -- env SWITCHYARD_MEMORY_AVAILABLE=20000 "$bin" run "$tmp/anybatch.json" --config "$cfg" --inputs "$tmp/in256.json"
expect preflight-first-signature-off 0 "out +float32 \[256, 4\]" -- env SWITCHYARD_MEMORY_AVAILABLE=20000 "$bin" run "$tmp/anybatch.json" --config "$cfg" --inputs "$tmp/in256.json" --no-preflight
expect node-io 0 "node_io \(6 records\)" -- "$bin" run "$demo" --config "$cfg" --save-node-io "$tmp/io.json"
expect node-io-fields 0 '"input_sources"' -- cat "$tmp/io.json"

# ---- .pt tensor files, convert and verify (builds with LibTorch) --------------------------
py=/usr/bin/python3
if ! "$bin" --help 2>&1 | grep -q "convert"; then
  echo "note: skipping the .pt, convert and verify cases: this switchyard was built without LibTorch"
elif ! $py -c "import torch" 2>/dev/null; then
  echo "note: skipping the .pt, convert and verify cases: $py cannot import torch"
else
  # pycheck NAME CODE: runs CODE in Python with torch imported and `d` the temp dir; passes on exit 0.
  pycheck() { expect "$1" 0 "^ok$" -- $py -c "import torch, json, sys; d = '$tmp'
$2
print('ok')"; }

  # The demo graph with .pt inputs and outputs, checked against its reference outputs.
  $py -c "import torch, json; e = json.load(open('$src/tools/demo/mlp_expected.json'))
torch.save((torch.tensor(e['cases'][1]['x']),), '$tmp/in.pt'); torch.save(torch.tensor(e['cases'][1]['x']), '$tmp/in1.pt')"
  expect pt-inputs 0 "inputs: 1 tensor\(s\) from .*in.pt" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/in.pt" --save-outputs "$tmp/out.pt" --save-node-io "$tmp/io.pt"
  pycheck pt-outputs-match-reference "e = json.load(open('$src/tools/demo/mlp_expected.json'))
out = torch.load(d + '/out.pt')
assert isinstance(out, tuple) and len(out) == 1 and out[0].shape == (2, 4), out
assert torch.allclose(out[0], torch.tensor(e['cases'][1]['out']), atol=1e-5), out"
  pycheck pt-node-io "io = torch.load(d + '/io.pt')
assert list(io) == ['fc1', 'act', 'residual', 'gated', 'fc2', 'softmax'], list(io)
assert io['fc1']['outputs'][0].shape == (2, 16) and io['fc1']['backend'] == 'aten', io['fc1']
assert io['fc1']['input_sources'] == ['x', 'fc1.weight', 'fc1.bias'] and io['fc1']['module_path'] == 'fc1'
assert io['act']['op'] == 'aten::relu' and torch.equal(io['act']['inputs'][0], io['fc1']['outputs'][0])
assert torch.equal(io['softmax']['outputs'][0], torch.load(d + '/out.pt')[0])"
  # node_io capture "stream": the same file, written as the run goes; tools/node_io_stream.py reads it.
  expect stream 0 "node_io \(6 records\) streamed to .*stream.pt" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/in.pt" --node-io stream --save-node-io "$tmp/stream.pt"
  pycheck stream-reader "sys.path.insert(0, '$src/tools'); import node_io_stream as reader
a = torch.load(d + '/io.pt')
def same(b):
    assert list(a) == list(b), list(b)
    for k in a:
        for f in ('op', 'backend', 'module_path', 'input_sources'): assert a[k][f] == b[k][f], (k, f)
        for f in ('inputs', 'outputs'):
            assert len(a[k][f]) == len(b[k][f]) and all(torch.equal(x, y) for x, y in zip(a[k][f], b[k][f])), (k, f)
same(reader.load_all(d + '/stream.pt'))
same(dict(reader.iter_records(d + '/stream.pt')))
assert next(reader.iter_records(d + '/stream.pt'))[0] == 'fc1'"
  expect stream-list 0 "^ +4  fc2  aten::linear  \[aten\]  inputs: float32\[2, 16\], float32\[4, 16\], float32\[4\]  outputs: float32\[2, 4\]" -- $py "$src/tools/node_io_stream.py" "$tmp/stream.pt"
  expect stream-needs-file nonzero "--node-io stream writes each node's record to a file as the node runs: pass --save-node-io FILE.pt" -- "$bin" run "$demo" --config "$cfg" --node-io stream
  expect stream-needs-pt nonzero "io.json: node_io capture 'stream' writes a .pt file" -- "$bin" run "$demo" --config "$cfg" --node-io stream --save-node-io "$tmp/io.json"
  expect node-io-unknown-mode nonzero "stream" -- "$bin" run "$demo" --config "$cfg" --node-io inputs
  printf '[selection]\ndefault = ["example", "aten"]\n[runtime]\nnode_io = "stream"\n' > "$tmp/stream.toml"
  expect stream-config-needs-file nonzero "the config's node_io = \"stream\" writes each node's record .*--save-node-io FILE.pt" -- "$bin" run "$demo" --config "$tmp/stream.toml"
  expect stream-config 0 "node_io \(6 records\) streamed to" -- "$bin" run "$demo" --config "$tmp/stream.toml" --inputs "$tmp/in.pt" --save-node-io "$tmp/stream2.pt" --repeat 2
  expect stream-config-same-file 0 "^same$" -- bash -c "cmp -s '$tmp/stream.pt' '$tmp/stream2.pt' && echo same"
  expect stream-overridden 0 "node_io \(6 records\) written to" -- "$bin" run "$demo" --config "$tmp/stream.toml" --node-io all --save-node-io "$tmp/io2.pt"
  expect pt-single-tensor-input 0 "outputs written" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/in1.pt" --save-outputs "$tmp/out1.pt"
  $py -c "import torch; torch.save((torch.zeros(2, 8), torch.zeros(2, 8)), '$tmp/two.pt')"
  expect pt-too-many-inputs nonzero "two.pt: holds 2 tensor\(s\); the model takes 1 input\(s\) \(x\)" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/two.pt"
  head -c 100 "$tmp/out.pt" > "$tmp/cut.pt"
  expect pt-truncated-input nonzero "cut.pt: not a tensor file written by torch.save" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/cut.pt"
  expect pt-missing-input nonzero "nope.pt: cannot open" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/nope.pt"

  # A traced 2-layer MLP: convert to the portable format, run both forms, verify against LibTorch.
  $py -c "import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4)).eval()
x = torch.randn(3, 8)
t = torch.jit.trace(m, x); torch.save(x, '$tmp/x2.pt'); t.save('$tmp/mlp2_noshape.pt')
torch.jit.save(t, '$tmp/mlp2.pt', _extra_files={'switchyard_inputs.json': '[{\"shape\": [3, 8]}]'})
with torch.no_grad(): torch.save(t(x), '$tmp/want2.pt')
class Noisy(torch.nn.Module):  # dropout in training mode: no two runs agree
    def forward(self, x): return torch.nn.functional.dropout(x, 0.5, training=True)
torch.jit.trace(Noisy(), torch.ones(4, 16), check_trace=False).save('$tmp/noisy.pt'); torch.save(torch.ones(4, 16), '$tmp/ones.pt')"
  expect convert 0 "nodes: [0-9]+ \(.*aten::linear 2" -- "$bin" convert "$tmp/mlp2.pt" "$tmp/mlp2.json"
  expect convert-summary 0 "constants: 4, weights file .*mlp2.bin" -- "$bin" convert "$tmp/mlp2.pt" "$tmp/mlp2.json"
  expect run-converted 0 "outputs written" -- "$bin" run "$tmp/mlp2.json" --config "$cfg" --inputs "$tmp/x2.pt" --save-outputs "$tmp/got2.pt"
  expect run-torchscript 0 "outputs written" -- "$bin" run "$tmp/mlp2.pt" --config "$cfg" --inputs "$tmp/x2.pt" --save-outputs "$tmp/got2b.pt"
  pycheck converted-matches-torch "want = torch.load(d + '/want2.pt')
for f in ('/got2.pt', '/got2b.pt'):
    got = torch.load(d + f)[0]
    assert got.shape == (3, 4) and torch.allclose(got, want, atol=1e-5), (f, got, want)"
  expect verify 0 "verify: PASS" -- "$bin" verify "$tmp/mlp2.pt" --config "$cfg"
  expect verify-stream-config 0 "verify: PASS" -- "$bin" verify "$tmp/mlp2.pt" --config "$tmp/stream.toml"
  expect verify-inputs 0 "\[3, 4\] +float32 .* ok$" -- "$bin" verify "$tmp/mlp2.pt" --config "$cfg" --inputs "$tmp/x2.pt"
  expect verify-tolerance 0 "verify .*mlp2.pt \(tolerance 0.001\)" -- "$bin" verify "$tmp/mlp2.pt" --config "$cfg" --tolerance 1e-3
  expect verify-no-shapes nonzero "mlp2_noshape.pt: the model does not declare the shape of input 0 .*--inputs" -- "$bin" verify "$tmp/mlp2_noshape.pt" --config "$cfg"
  expect verify-no-shapes-inputs 0 "verify: PASS" -- "$bin" verify "$tmp/mlp2_noshape.pt" --config "$cfg" --inputs "$tmp/x2.pt"
  # A plain trace (no recorded shapes): plan shows symbolic dims, --inputs concrete ones.
  $py -c "import torch
torch.manual_seed(0)
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
    def forward(self, x): return self.conv(x).flatten(1)
torch.jit.trace(Net().eval(), torch.randn(1, 3, 8, 8)).save('$tmp/plain_conv.pt'); torch.save(torch.randn(5, 3, 6, 7), '$tmp/conv_in.pt')"
  expect plan-symbolic-input 0 "input 'x[^']*': \[B, 3, H, W\] \(planned at \[2, 3, 64, 64\]\)" -- "$bin" plan "$tmp/plain_conv.pt" --config "$cfg"
  expect plan-symbolic-shape 0 "aten::_convolution .*\[B, 4, H, W\]" -- "$bin" plan "$tmp/plain_conv.pt" --config "$cfg"
  expect plan-symbolic-derived 0 "aten::flatten .*\[B, \?\]" -- "$bin" plan "$tmp/plain_conv.pt" --config "$cfg"
  expect plan-concrete-shape 0 "aten::_convolution .*\[5, 4, 6, 7\]" -- "$bin" plan "$tmp/plain_conv.pt" --config "$cfg" --inputs "$tmp/conv_in.pt"
  expect plan-copies 0 "storage copies: 0 \(0 bytes per run\)" -- "$bin" plan "$tmp/plain_conv.pt" --config "$cfg" --inputs "$tmp/conv_in.pt"
  expect plan-no-rank nonzero "input '[^']*' takes \[\.\.\., 8\], which has no rank to plan with: pass --inputs" -- "$bin" plan "$tmp/mlp2_noshape.pt" --config "$cfg"
  expect verify-bad-tolerance nonzero "tolerance: '-1' is not a number >= 0" -- "$bin" verify "$tmp/mlp2.pt" --tolerance -1
  expect verify-mismatch 1 "verify failed: .*noisy.pt: output 0 .*max_abs .* > allowed" -- "$bin" verify "$tmp/noisy.pt" --config "$cfg" --inputs "$tmp/ones.pt"
  expect verify-wrong-inputs nonzero "two.pt: holds 2 tensor" -- "$bin" verify "$tmp/mlp2.pt" --inputs "$tmp/two.pt"
  expect verify-needs-reference nonzero "mlp.json: verify compares a .pt with LibTorch" -- "$bin" verify "$demo"
  expect verify-pt2-expected 0 "verify: PASS" -- "$bin" verify "$src/tests/host/pt2/fixtures/torch-2.6/bert.pt2" --inputs "$src/tests/host/pt2/fixtures/torch-2.6/bert.b3_s7.inputs.json" --expected "$src/tests/host/pt2/fixtures/torch-2.6/bert.b3_s7.expected.json"
  expect verify-pt2-reference 0 "the aten reference backend" -- "$bin" verify "$src/tests/host/pt2/fixtures/torch-2.6/cnn.pt2"
  expect convert-pt2 0 "converted" -- "$bin" convert "$src/tests/host/pt2/fixtures/torch-2.6/cnn.pt2" "$tmp/cnn_pt2.json"
  expect convert-missing nonzero "nope.pt" -- "$bin" convert "$tmp/nope.pt" "$tmp/x.json"
  expect convert-not-torchscript nonzero "in.pt" -- "$bin" convert "$tmp/in.pt" "$tmp/x.json"
  expect help-verify 0 "--tolerance" -- "$bin" verify --help
  expect help-convert 0 "portable graph format" -- "$bin" convert --help
fi

# --check-finite names the first node that makes a NaN: the demo's softmax swapped for log
# of the logits (some are negative).
/usr/bin/python3 - "$demo" "$tmp/nan.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))
for n in g["nodes"]:
    if n["op"] == "aten::softmax":
        n["op"], n["attrs"] = "aten::log", {}
g["weights"] = sys.argv[1].replace(".json", ".bin")
json.dump(g, open(sys.argv[2], "w"))
PY
expect check-finite-off 0 "nan" -- "$bin" run "$tmp/nan.json" --config "$cfg"
expect check-finite nonzero "check-finite: node 'softmax' \(op aten::log, module softmax\) on plugin 'aten' is the first node" -- "$bin" run "$tmp/nan.json" --config "$cfg" --check-finite
# A failed run's stream file holds the nodes that ran before the failure.
if "$bin" --help 2>&1 | grep -q "convert" && $py -c "import torch" 2>/dev/null; then
  expect stream-partial nonzero "node_io \(5 records, the nodes before the failure\) streamed to .*partial.pt" -- "$bin" run "$tmp/nan.json" --config "$cfg" --check-finite --node-io stream --save-node-io "$tmp/partial.pt"
  pycheck stream-partial-file "io = torch.load(d + '/partial.pt')
assert list(io) == ['fc1', 'act', 'residual', 'gated', 'fc2'], list(io)"
fi
expect top-k 0 "row 1 top 3: [0-9]+ \(" -- "$bin" run "$demo" --config "$cfg" --top 3

# Timing: --repeat N prints exactly one parseable 'median_ms: X' line (sample or file inputs).
median_of() { "$@" 2>/dev/null | awk '$1 == "median_ms:" { n++; m = $2 } END { if (n == 1) print m; else print "lines:" n }'; }
is_ms() { awk -v m="$1" 'BEGIN { if (m ~ /^[0-9]+\.[0-9]+$/ && m + 0 > 0) print "ok"; else print "not a latency: [" m "]" }'; }
expect repeat-median 0 "^ok$" -- is_ms "$(median_of "$bin" run "$demo" --config "$cfg" --repeat 3)"
expect repeat-median-inputs 0 "^ok$" -- is_ms "$(median_of "$bin" run "$demo" --config "$cfg" --inputs "$tmp/in.json" --repeat 2)"
expect repeat-min-max 0 "^min_ms: [0-9]+\.[0-9]+ max_ms: [0-9]+\.[0-9]+$" -- "$bin" run "$demo" --config "$cfg" --repeat 1
expect repeat-zero nonzero "--repeat: '0' is not a whole number >= 1" -- "$bin" run "$demo" --config "$cfg" --repeat 0
expect repeat-negative nonzero "--repeat: '-2' is not a whole number >= 1" -- "$bin" run "$demo" --config "$cfg" --repeat -2
expect no-repeat-no-median 0 "^absent$" -- bash -c "\"$bin\" run \"$demo\" --config \"$cfg\" | grep -q median_ms && echo present || echo absent"

# Profiling: per-node and per-backend tables; --trace writes a Chrome trace, one event per node.
expect profile-nodes 0 "top 6 nodes by time" -- "$bin" run "$demo" --config "$cfg" --profile
expect profile-node-row 0 "^fc1 +aten::linear +aten +[0-9]+\.[0-9]{3} +[0-9.]+% +0\.00 +0\.00 +host +[0-9.]+ +[0-9.]+ +[0-9.]+% +(compute|bandwidth|overhead)$" -- "$bin" run "$demo" --config "$cfg" --profile
expect profile-backends 0 "^example +[0-9]+\.[0-9]{3} +[0-9.]+% +3$" -- "$bin" run "$demo" --config "$cfg" --profile --repeat 2
expect profile-top 0 "top 2 nodes by time" -- "$bin" run "$demo" --config "$cfg" --profile --profile-top 2
expect profile-top-zero nonzero "--profile-top: '0' is not a whole number >= 1" -- "$bin" run "$demo" --config "$cfg" --profile --profile-top 0
expect trace 0 "trace of the last run \(6 events\) written to .*trace.json" -- "$bin" run "$demo" --config "$cfg" --trace "$tmp/trace.json"
expect trace-valid 0 "^ok$" -- /usr/bin/python3 -c "import json
t = json.load(open('$tmp/trace.json'))
ev = t['traceEvents']
assert [e['name'] for e in ev] == ['fc1', 'act', 'residual', 'gated', 'fc2', 'softmax'], ev
assert all(e['ph'] == 'X' and e['dur'] >= 0 and e['ts'] >= 0 for e in ev), ev
a = ev[0]['args']
assert ev[0]['cat'] == 'aten' and a['op'] == 'aten::linear' and a['module_path'] == 'fc1', ev[0]
assert a['flops'] == 512 and a['bound'] in ('compute', 'bandwidth', 'overhead'), a  # the roofline (test_roofline.sh)
print('ok')"
expect trace-unwritable nonzero "cannot write the trace file" -- "$bin" run "$demo" --config "$cfg" --trace "$tmp/no/such/dir/t.json"

# [precision] compute = "bf16": plan shows each node's answer with its bytes. Where oneDNN
# may not use bfloat16 dot products (ONEDNN_MAX_CPU_ISA caps it, as on an older CPU), the
# kernels compute in float32, plan says why, and the log warns once.
printf '[selection]\ndefault = ["linalg", "attention", "elementwise", "aten"]\n[precision]\ncompute = "bf16"\n' \
  > "$tmp/bf16.toml"
if grep -q avx512_bf16 /proc/cpuinfo; then
  expect bf16-plan 0 "compute: 'fc1' in bfloat16: 32 bytes converted per run, 256 bytes of weights once" \
    -- "$bin" plan "$demo" --config "$tmp/bf16.toml"
fi
expect bf16-plan-relu 0 "compute: 'act' asked bfloat16, computes float32: plugin 'elementwise' has no bfloat16 kernel for it" \
  -- "$bin" plan "$demo" --config "$tmp/bf16.toml"
expect bf16-fallback 0 "compute: 'fc1' asked bfloat16, computes float32: oneDNN finds no bfloat16 dot products" \
  -- env ONEDNN_MAX_CPU_ISA=AVX512_CORE "$bin" plan "$demo" --config "$tmp/bf16.toml"
expect bf16-fallback-warns 0 "warning.*bf16: 2 node\(s\) compute in float32 instead: oneDNN finds no bfloat16" \
  -- env ONEDNN_MAX_CPU_ISA=AVX512_CORE "$bin" run "$demo" --config "$tmp/bf16.toml"
# [precision] compute = "as-is" on a bfloat16 model: linear routed to linalg (float32 only)
# runs as a float32 island, which plan shows with its bytes and the log warns about once.
if [ -f "$(dirname "$bin")/../plugins/libswitchyard-linalg.so" ]; then
  /usr/bin/python3 - "$demo" "$tmp/mlp_bf16.json" <<'PY'
import json, struct, sys
g = json.load(open(sys.argv[1]))
raw = open(sys.argv[1][:-5] + ".bin", "rb").read()
out, offset = bytearray(), 0
for c in g["constants"]:
    floats = struct.unpack("<%df" % (c["nbytes"] // 4), raw[c["offset"]:c["offset"] + c["nbytes"]])
    halves = [(struct.unpack("<I", struct.pack("<f", v))[0] + 0x8000) >> 16 for v in floats]  # to bfloat16
    data = struct.pack("<%dH" % len(halves), *halves)
    c.update(dtype="bfloat16", offset=offset, nbytes=len(data))
    out += data + bytes(-len(data) % 64)
    offset = len(out)
g["inputs"][0]["dtype"] = "bfloat16"
g["weights"] = "mlp_bf16.bin"
json.dump(g, open(sys.argv[2], "w"))
open(sys.argv[2][:-5] + ".bin", "wb").write(out)
PY
  printf '[selection]\ndefault = ["aten"]\n[[rules]]\nop = "aten::linear"\nbackends = ["linalg"]\n[precision]\ncompute = "as-is"\n' \
    > "$tmp/as_is.toml"
  expect as-is-island 0 "compute: 'fc1' in float32, an island in a bfloat16 model \(no backend takes bfloat16; plugin 'linalg' takes it in float32\): 192 bytes converted per run, 576 bytes of weights once" \
    -- "$bin" plan "$tmp/mlp_bf16.json" --config "$tmp/as_is.toml"
  expect as-is-islands-total 0 "float32 islands: 2 node\(s\)" -- "$bin" plan "$tmp/mlp_bf16.json" --config "$tmp/as_is.toml"
  expect as-is-islands-warn 0 "warning.*2 node\(s\) of this bfloat16 model run as float32 islands \(aten::linear x2\)" \
    -- "$bin" run "$tmp/mlp_bf16.json" --config "$tmp/as_is.toml"
  expect as-is-output-dtype 0 "^  out  bfloat16 \[2, 4\]" -- "$bin" run "$tmp/mlp_bf16.json" --config "$tmp/as_is.toml"
fi
expect bf16-rule-as-is nonzero "bf16rule.toml:3:11: .*a rule chooses \"fp32\" or \"bf16\" per node" \
  -- sh -c "printf '[[precision.rules]]\\nop = \"aten::linear\"\\ncompute = \"as-is\"\\n' > '$tmp/bf16rule.toml' && '$bin' plan '$demo' --config '$tmp/bf16rule.toml'"

finish
