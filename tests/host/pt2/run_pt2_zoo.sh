#!/usr/bin/env bash
# The full .pt2 zoo parity run (issue: torch.export programs): the plain zoo's families
# exported with torch.export by each torch 2 venv present (tools/torch2/setup_venv.sh), then
# every model on default.toml and reference.toml at two shapes other than the exported one,
# against torch 2's eager outputs (test_pt2's Pt2Zoo suite).
#   run_pt2_zoo.sh SOURCE_DIR BUILD_DIR
# Without a venv it says so in one line and exits 77 (CTest: skipped). The export is cached
# in BUILD_DIR/pt2_zoo/torch-VERSION and redone when tools/torch2/ changes.
set -euo pipefail
src="$1"
build="$2"
found=0
for version in 2.6.0 latest; do
  python="$("$src/tools/torch2/find_python.sh" "$version")" || continue
  found=1
  tag="$("$python" -c 'import torch; v = torch.__version__.split("+")[0].split("."); print("torch-" + v[0] + "." + v[1])')"
  out="$build/pt2_zoo/$tag"
  if [ ! -f "$out/manifest.json" ] || [ -n "$(find "$src/tools/torch2" "$src/tools/zoo/plain_zoo_models.py" -newer "$out/manifest.json" -name '*.py' | head -1)" ]; then
    echo "run_pt2_zoo: exporting the zoo with $tag into $out (a few minutes)"
    rm -rf "$out"
    "$python" "$src/tools/torch2/make_fixtures.py" "$out" --set zoo 2>&1 | grep -E '^\[|wrote|FAILED' || true
  fi
  [ -f "$out/manifest.json" ] || { echo "run_pt2_zoo: $tag: the export wrote no manifest" >&2; exit 1; }
  "$python" - "$out/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
for f in m["failed"]:
    print(f"run_pt2_zoo: torch {m['torch']} cannot export {f['stem']}: {f['reason']}")
for e in m["models"]:
    for dim, why in e.get("static_dims", {}).items():
        print(f"run_pt2_zoo: torch {m['torch']} exports {e['stem']} with a static {dim}: {why}")
PY
  SWITCHYARD_PT2_ZOO_DIR="$out" "$build/tests/test_pt2" --gtest_filter='Zoo/Pt2Zoo.*' --gtest_brief=1
done
if [ "$found" = 0 ]; then
  echo "test_pt2_zoo: skipped: no torch 2 venv (tools/torch2/setup_venv.sh makes one; PyPI's CUDA wheels, ~5 GB)"
  exit 77
fi
