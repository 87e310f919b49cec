#!/usr/bin/env bash
# The roofline of `run --profile`: calibrate's cache, per-node FLOPs and bytes from the
# host's formulas or, where a plugin reports one, its kernel's own cost (SDK 1.1), each
# checked exactly in the trace's args with its source, and the verdicts against peaks.
# Usage: test_roofline.sh <switchyard binary> <source dir> <costing test plugin .so>
set -u
bin=$1; src=$2; costing=$3
here=$(cd "$(dirname "$0")" && pwd); . "$here/expect.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache   # never the user's own cache
demo=$src/tools/demo/mlp.json      # x[2,8] -> fc1 (16) -> relu, add, mul -> fc2 (4) -> softmax
cfg=$src/configs/example.toml      # intra_op_threads = 2
cache=$tmp/cache/switchyard/calibration.json
py=python3

expect calibrate 0 "measured peaks for intra_op_threads = 2" -- "$bin" calibrate --config "$cfg"
expect calibrate-saved 0 "gemm_gflops: [0-9.]+ .*aten::linear on (example|aten)" -- "$bin" calibrate --config "$cfg"
expect calibrate-cached 0 "cached peaks for intra_op_threads = 2" -- "$bin" calibrate --config "$cfg"
expect calibrate-force 0 "measured peaks" -- "$bin" calibrate --config "$cfg" --force
check calibrate-file $py -c "import json; e = json.load(open('$cache'))['threads']['2']; assert e['gemm_gflops'] > 0 and e['copy_gbs'] > 0, e"

# Peaks written by hand make the verdicts certain. trace_with GEMM COPY: the trace's args.
trace_with() {
  printf '{"threads": {"2": {"gemm_gflops": %s, "copy_gbs": %s}}}\n' "$1" "$2" > "$cache"
  "$bin" run "$demo" --config "$cfg" --profile --repeat 2 --no-table --trace "$tmp/trace.json" > "$tmp/out.txt" 2>&1
}
args() {  # NODE FIELD: that event's arg
  $py -c "import json, sys; ev = [e for e in json.load(open('$tmp/trace.json'))['traceEvents'] if e['name'] == '$1']; print(ev[0]['args']['$2'])"
}
check profile-run trace_with 1e-6 1e6
# The timed runs of --profile keep a sink for node_io streaming (it needs a callback), and
# only then: with none they run as a plain run does.
expect profile-node-io-stream 0 "profile: mean of 2 run" -- "$bin" run "$demo" --config "$cfg" --node-io stream --save-node-io "$tmp/stream.pt" --repeat 2 --profile --no-table
check profile-columns grep -qE "^node +op +backend +ms +share +MFLOP +MB +cost by +GFLOP/s +GB/s +of roof +bound" "$tmp/out.txt"
check profile-roof-line grep -q "roofline against gemm_gflops 0.0, copy_gbs 1000000.0" "$tmp/out.txt"
# linear: 2 x M x N x K = 2 x 2 x 16 x 8; bytes: x, weight, bias and output, fp32.
check fc1-flops [ "$(args fc1 flops)" = "512.0" ]
check fc1-bytes [ "$(args fc1 bytes)" = "$(( (2*8 + 16*8 + 16 + 2*16) * 4 )).0" ]
check fc2-flops [ "$(args fc2 flops)" = "$(( 2*2*4*16 )).0" ]
check fc1-host [ "$(args fc1 cost_source)" = "host" ]
# The example plugin reports its kernels' cost: relu as the host would count it, add with
# 2 FLOPs per element (multiply by alpha, then add) where the host's formula counts 1.
check relu-flops [ "$(args act flops)" = "32.0" ] && check relu-bytes [ "$(args act bytes)" = "256.0" ]
check relu-plugin [ "$(args act cost_source)" = "plugin" ]
check add-flops-plugin [ "$(args residual flops)" = "64.0" ] && check add-plugin [ "$(args residual cost_source)" = "plugin" ]
check add-bytes [ "$(args residual bytes)" = "384.0" ]
check table-cost-by grep -qE "^residual +aten::add +example .* plugin +[0-9.]+ " "$tmp/out.txt"
check table-cost-by-host grep -qE "^fc1 +aten::linear +[a-z]+ .* host +[0-9.]+ " "$tmp/out.txt"
check cost-by-summary grep -q "cost by: plugin 3 node(s) (their kernels' own cost, SDK 1.1), host 3" "$tmp/out.txt"
check trace-has-rates $py -c "import json; a = [e for e in json.load(open('$tmp/trace.json'))['traceEvents'] if e['name'] == 'fc1'][0]['args']; assert a['gflop_per_s'] > 0 and a['gb_per_s'] > 0 and a['op'] == 'aten::linear', a"
check trace-peaks $py -c "import json; m = json.load(open('$tmp/trace.json'))['metadata']; assert m['copy_gbs'] == 1e6 and m['intra_op_threads'] == 2, m"
# A near-zero FLOP roof: every node takes longer at peak compute than it did -> compute-bound.
check verdict-compute [ "$(args fc1 bound)" = "compute" ]
check verdict-compute-table grep -qE "^fc1 +aten::linear .* compute$" "$tmp/out.txt"
# A near-zero bandwidth roof: bandwidth-bound.
trace_with 1e6 1e-6
check verdict-bandwidth [ "$(args fc1 bound)" = "bandwidth" ] && check verdict-bandwidth-relu [ "$(args act bound)" = "bandwidth" ]
# Roofs far above what these tiny nodes need: their time is fixed costs.
trace_with 1e6 1e6
check verdict-overhead [ "$(args fc1 bound)" = "overhead" ]
check verdict-overhead-summary grep -q "bound by time: overhead 100.0%" "$tmp/out.txt"
# A test plugin: a kernel whose cost no formula gives (4242 FLOPs, 777 bytes per element),
# one whose cost fails (a warning naming node, op and plugin; the host's formula used), and
# one without cost. x[5] -> costed -> fails -> plain.
printf '{"format": "switchyard-graph", "version": 1, "inputs": [{"name": "x", "dtype": "float32", "shape": [5]}],
 "outputs": ["c"], "nodes": [{"name": "costed", "op": "test::costed", "inputs": ["x"], "outputs": ["a"]},
 {"name": "fails", "op": "test::cost_fails", "inputs": ["a"], "outputs": ["b"]},
 {"name": "plain", "op": "test::uncosted", "inputs": ["b"], "outputs": ["c"]}]}\n' > "$tmp/costing.json"
printf '[plugins]\nload = ["%s"]\n[runtime]\nintra_op_threads = 2\n' "$costing" > "$tmp/costing.toml"
costing_run() {
  "$bin" run "$tmp/costing.json" --config "$tmp/costing.toml" --profile --no-table --trace "$tmp/trace.json" > "$tmp/out.txt" 2>&1 \
    || { cat "$tmp/out.txt"; return 1; }
}
check costing-run costing_run
check costed-flops [ "$(args costed flops)" = "$(( 4242 * 5 )).0" ] && check costed-bytes [ "$(args costed bytes)" = "$(( 777 * 5 )).0" ]
check costed-plugin [ "$(args costed cost_source)" = "plugin" ]
check costed-table grep -qE "^costed +test::costed +costing +[0-9.]+ +[0-9.%]+ +0.02 +0.00 +plugin " "$tmp/out.txt"
check fails-host [ "$(args fails cost_source)" = "host" ] && check fails-flops [ "$(args fails flops)" = "5.0" ]
check fails-bytes [ "$(args fails bytes)" = "40.0" ]
check fails-warning grep -qE "\[warning\] node 'fails' \(op test::cost_fails\): plugin 'costing': its kernel's cost failed: .*deliberate failure from test::cost_fails's cost; the roofline uses the host's formula" "$tmp/out.txt"
check plain-host [ "$(args plain cost_source)" = "host" ] && check plain-flops [ "$(args plain flops)" = "5.0" ]
check costing-summary grep -q "cost by: plugin 1 node(s) (their kernels' own cost, SDK 1.1), host 2" "$tmp/out.txt"

# A cache that does not parse is measured again, not trusted.
printf 'not json' > "$cache"
expect calibrate-bad-cache 0 "measured peaks" -- "$bin" calibrate --config "$cfg"

# Convolution: 2 x output elements x (Cin/groups x kh x kw) (builds with LibTorch).
if "$bin" --help 2>&1 | grep -q convert && /usr/bin/python3 -c "import torch" 2>/dev/null; then
  /usr/bin/python3 -c "import torch
m = torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, groups=2), torch.nn.ReLU()).eval()
torch.jit.trace(m, torch.randn(1, 4, 10, 10)).save('$tmp/conv.pt'); torch.save((torch.randn(1, 4, 10, 10),), '$tmp/x.pt')"
  "$bin" run "$tmp/conv.pt" --inputs "$tmp/x.pt" --config "$cfg" --profile --no-table --trace "$tmp/trace.json" > "$tmp/out.txt" 2>&1
  conv=$($py -c "import json; print([e['name'] for e in json.load(open('$tmp/trace.json'))['traceEvents'] if e['args']['op'].startswith('aten::_convolution')][0])")
  check conv-flops [ "$(args "$conv" flops)" = "$(( 2 * 8*8*8 * 2*3*3 )).0" ]
else
  echo "note: skipping the convolution case: no LibTorch build or no torch in /usr/bin/python3"
fi
finish
