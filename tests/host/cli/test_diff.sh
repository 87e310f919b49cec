#!/usr/bin/env bash
# `switchyard diff`: a plugin whose relu is slightly wrong (leaky for x < 0) must be caught
# at the relu node, with the backends of both sides named, and exit 1; equal configs pass.
# Usage: test_diff.sh <switchyard binary> <source dir> <subtly_wrong plugin .so>
set -u
bin=$1; src=$2; plugin=$3
here=$(cd "$(dirname "$0")" && pwd); . "$here/expect.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
demo=$src/tools/demo/mlp.json  # fc1 -> act (relu) -> residual -> gated -> fc2 -> softmax
ref=$src/configs/reference.toml
printf '[plugins]\npaths = ["%s"]\nload = ["subtly_wrong", "aten"]\n[selection]\ndefault = ["subtly_wrong", "aten"]\n' \
  "$(dirname "$plugin")" > "$tmp/wrong.toml"
# Inputs with negative pre-activations, so that the leaky relu shows.
printf '{"x": {"dtype": "float32", "shape": [2, 8], "data": [%s]}}\n' "$(seq -s, -8 7)" > "$tmp/in.json"

expect diff-fails 1 "FAIL: first node over the tolerance: 'act' \(op aten::relu, module act\): backend A 'subtly_wrong' vs backend B 'aten'" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
expect diff-fc1-ok 1 "^fc1 +aten::linear +aten +aten +0 .* ok$" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
expect diff-marks-first 1 "^act +aten::relu +subtly_wrong +aten +[0-9.e-]+ .*FIRST OVER TOLERANCE" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
# The reference by default: configs/reference.toml from the working folder.
expect diff-default-against 1 "B \(reference\) = configs/reference.toml.*" \
  -- sh -c "cd '$src' && '$bin' diff '$demo' --inputs '$tmp/in.json' --config '$tmp/wrong.toml'"
expect diff-builtin-reference 1 "built-in reference .*FAIL: first node over the tolerance: 'act'|FAIL: first node over the tolerance: 'act'" \
  -- sh -c "cd '$tmp' && '$bin' diff '$demo' --inputs in.json --config wrong.toml"
expect diff-same-passes 0 "PASS: every compared node is within the tolerance" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$ref" --against "$ref"
expect diff-example-passes 0 "compared 6 node\(s\), 0 over" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$src/configs/example.toml" --against "$ref"
# A loose enough tolerance lets the leak (0.01 x the most negative input) through.
expect diff-tolerance 0 "PASS" \
  -- "$bin" diff "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref" --tolerance 1
# --added: only the relu adds error; the nodes after it carry it.
expect diff-added-names-the-node 1 "^act +aten::relu +subtly_wrong +[0-9.e-]+ +[0-9.e-]+ +over$" \
  -- "$bin" diff --added "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
expect diff-added-counts 1 "compared 6 node\(s\), 1 adding more than the tolerance" \
  -- "$bin" diff --added "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
expect diff-added-carried 1 "^residual +aten::add +aten +0 +[0-9.e-]+ +ok$" \
  -- "$bin" diff --added -v "$demo" --inputs "$tmp/in.json" --config "$tmp/wrong.toml" --against "$ref"
expect diff-added-same-passes 0 "compared 6 node\(s\), 0 adding" \
  -- "$bin" diff --added "$demo" --inputs "$tmp/in.json" --config "$ref" --against "$ref"
# A bfloat16 conv -> batch norm -> relu computing as-is against the reference, which computes
# it in float32 with the batch norm folded into the convolution: values of two precisions
# are compared by value, and B's folded conv is matched with A's batch norm, the node that
# makes the same value.
/usr/bin/python3 - "$tmp/convbn_bf16.pt" <<'PY'
import sys, torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU()).eval()
with torch.no_grad():
    m[1].running_mean.uniform_(-0.5, 0.5); m[1].running_var.uniform_(0.5, 2.0)
m = m.to(torch.bfloat16)
torch.jit.trace(m, torch.randn(1, 3, 8, 8).to(torch.bfloat16)).save(sys.argv[1])
torch.save((torch.randn(2, 3, 8, 8).to(torch.bfloat16),), sys.argv[1][:-3] + ".in.pt")
PY
printf '[selection]\ndefault = ["conv", "aten"]\n[precision]\ncompute = "as-is"\n' > "$tmp/as_is.toml"
expect diff-as-is-by-value 0 "node\(s\) with outputs of two precisions \(bfloat16 vs float32, A vs B\), compared by value" \
  -- "$bin" diff "$tmp/convbn_bf16.pt" --inputs "$tmp/convbn_bf16.in.pt" --config "$tmp/as_is.toml" --against "$ref" --tolerance 0.05
expect diff-as-is-folded-match 0 "^0 \(A: 1\) +aten::batch_norm +aten +aten .* ok$" \
  -- "$bin" diff "$tmp/convbn_bf16.pt" --inputs "$tmp/convbn_bf16.in.pt" --config "$tmp/as_is.toml" --against "$ref" --tolerance 0.05 -v
expect diff-bad-tolerance nonzero "tolerance" -- "$bin" diff "$demo" --tolerance -1
expect diff-missing-against nonzero "nope.toml" -- "$bin" diff "$demo" --against "$tmp/nope.toml"
finish
