#!/usr/bin/env bash
# Formats switchyard's C and C++ sources with clang-format (the style is .clang-format),
# or checks them.
#
#   tools/format.sh           format every tracked .c/.h/.cpp/.hpp in place
#   tools/format.sh --check   change nothing; list the files that are not formatted, exit 1
#
# Exits 77 when no clang-format is installed.
#
# The SDK fixtures (tests/sdk/fixtures: the 1.0-1.2 headers as shipped) are left as they
# are. Needs clang-format 14 or newer (tools/setup.sh installs clang-format-14).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
check=0
case "${1:-}" in
  --check) check=1 ;;
  -h|--help) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "format.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$fmt" ]; then
  echo "format.sh: missing resource: clang-format (tools/setup.sh installs clang-format-14)" >&2
  exit 77  # CTest's test_format counts this as skipped
fi
mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp' | grep -v '^tests/sdk/fixtures/')
if [ "$check" = 0 ]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted (tools/format.sh fixes them):\n'
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
echo "format.sh: ${#files[@]} files formatted as .clang-format says"
