#!/usr/bin/env bash
# CLI behaviour: help, the demo run, and clear errors with non-zero exits.
# Usage: test_cli.sh <switchyard binary> <source dir>
set -u
bin=$1; src=$2
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0; passed=0

# expect NAME EXPECTED_RC PATTERN -- command...: the rc matches and stdout+stderr has PATTERN
expect() {
  local name=$1 want_rc=$2 pattern=$3; shift 4
  local out rc
  out=$("$@" 2>&1); rc=$?
  if [ "$want_rc" = "nonzero" ]; then [ $rc -ne 0 ] && rc_ok=1 || rc_ok=0; else [ $rc -eq "$want_rc" ] && rc_ok=1 || rc_ok=0; fi
  if [ $rc_ok -eq 1 ] && grep -qE -- "$pattern" <<<"$out"; then
    passed=$((passed + 1))
  else
    failures=$((failures + 1))
    echo "FAIL: $name (rc=$rc, wanted $want_rc and /$pattern/)"; echo "$out" | head -20
  fi
}

demo=$src/tools/demo/mlp.json
cfg=$src/configs/default.toml

expect help 0 "Subcommands" -- "$bin" --help
expect no-subcommand nonzero "subcommand" -- "$bin"
expect run-demo 0 "fc1 +aten::linear +fc1 +aten" -- "$bin" run "$demo" --config "$cfg"
expect run-demo-example 0 "act +aten::relu +act +example" -- "$bin" run "$demo" --config "$cfg"
expect options-after-subcommand 0 "nodes per backend" -- "$bin" run "$demo" -c "$cfg" --log-level warn
expect plan 0 "rejected: example +no kernel for aten::linear" -- "$bin" plan "$demo" --config "$cfg"
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
expect wrong-input-shape nonzero "input 0 'x': expected shape \[2, 8\]" -- "$bin" run "$demo" --config "$cfg" --inputs "$tmp/bad_in.json"
expect node-io 0 "node_io \(6 records\)" -- "$bin" run "$demo" --config "$cfg" --save-node-io "$tmp/io.json"
expect node-io-fields 0 '"input_sources"' -- cat "$tmp/io.json"

echo "$passed passed, $failures failed"
[ $failures -eq 0 ]
