#!/usr/bin/env bash
# `plan --dot/--svg`: the picture's nodes, colours, fused clusters, edge labels and storage
# conversions; the file parses with Graphviz's dot when it is installed (else that skips).
# Usage: test_plan_dot.sh <switchyard binary> <source dir> [fake-device plugin .so]
set -u
bin=$1; src=$2; fake=${3:-}
here=$(cd "$(dirname "$0")" && pwd); . "$here/expect.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
demo=$src/tools/demo/mlp.json
cfg=$src/configs/example.toml  # example runs relu/add/mul, aten the rest

expect dot-written 0 "plan picture \(Graphviz DOT\) written to .*mlp.dot" -- "$bin" plan "$demo" --config "$cfg" --dot "$tmp/mlp.dot"
f=$tmp/mlp.dot
check dot-digraph grep -q '^digraph switchyard {' "$f"
check dot-node-aten grep -q '"node:fc1" \[label="fc1\\naten::linear\\n\[aten\]", fillcolor="#a6cee3"' "$f"
check dot-node-example grep -q '"node:act" \[label="act\\naten::relu\\n\[example\]", fillcolor="#b2df8a"' "$f"
check dot-legend grep -q '"legend:example" \[label="example", fillcolor="#b2df8a"\]' "$f"
check dot-edge-shape grep -q '"node:fc1" -> "node:act" \[label="float32\[2, 16\]"\]' "$f"
check dot-input grep -q '"value:x" -> "node:fc1" \[label="float32\[2, 8\]"\]' "$f"
check dot-output grep -q '"node:softmax" -> "output:out";' "$f"
check dot-no-weights [ -z "$(grep 'fc1.weight' "$f")" ]
check dot-edges-count [ "$(grep -c -- '-> "node:' "$f")" = 8 ]

# Fused kernels are clusters (the family plugins fuse fc2 -> relu into one linalg kernel).
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
  expect dot-fused 0 "written" -- "$bin" plan "$tmp/fuse.json" --config "$src/configs/default.toml" --dot "$tmp/fuse.dot"
  check dot-cluster grep -q 'subgraph cluster_fused_0 {' "$tmp/fuse.dot"
  check dot-cluster-label grep -q 'label="fused: aten::linear+aten::relu on linalg"' "$tmp/fuse.dot"
  check dot-cluster-members sh -c "grep -A3 cluster_fused_0 '$tmp/fuse.dot' | grep -q '\"node:head_relu\";'"
  check dot-fused-inner-edge grep -q '"node:fc2" -> "node:head_relu"' "$tmp/fuse.dot"
else
  echo "note: skipping the fused-cluster case: the linalg plugin is not built"
fi

# Storage conversions: a fake-device plugin runs relu/add/mul; the copies in and out are red edges.
if [ -n "$fake" ] && [ -f "$fake" ]; then
  printf '[plugins]\nload = ["%s", "aten"]\n[selection]\ndefault = ["fake", "aten"]\n' "$fake" > "$tmp/fake.toml"
  expect dot-fake 0 "written" -- "$bin" plan "$demo" --config "$tmp/fake.toml" --dot "$tmp/fake.dot" --log-level error
  check dot-copy-in grep -q '"node:fc1" -> "node:act" \[color="#d62728".*label="float32\[2, 16\]\\nconvert host -> fake/fake\\n128 B"' "$tmp/fake.dot"
  check dot-copy-out grep -q '"node:gated" -> "node:fc2" \[color="#d62728".*convert fake/fake -> host\\n128 B' "$tmp/fake.dot"
else
  echo "note: skipping the storage-conversion case: no fake-device plugin given"
fi

if command -v dot >/dev/null 2>&1; then
  for d in "$tmp"/*.dot; do check "dot-parses-$(basename "$d")" dot -Tsvg "$d" -o "$d.svg"; done
  expect svg-written 0 "plan picture \(SVG\) written to .*mlp.svg" -- "$bin" plan "$demo" --config "$cfg" --svg "$tmp/mlp.svg"
  check svg-is-svg grep -q '<svg' "$tmp/mlp.svg"
  check svg-has-node grep -q '>fc1<' "$tmp/mlp.svg"
  expect svg-no-dot nonzero "--svg needs Graphviz's \`dot\` on PATH" -- env PATH=/nonexistent "$bin" plan "$demo" --config "$cfg" --svg "$tmp/x.svg"
else
  echo "note: skipping the parse and --svg cases: Graphviz's dot is not installed (apt-get install graphviz)"
  expect svg-no-dot nonzero "--svg needs Graphviz's \`dot\` on PATH" -- "$bin" plan "$demo" --config "$cfg" --svg "$tmp/x.svg"
fi
expect dot-unwritable nonzero "cannot be written" -- "$bin" plan "$demo" --config "$cfg" --dot /nonexistent/dir/x.dot
finish
