#!/usr/bin/env bash
# Installs every build, test and tool dependency of switchyard from Debian packages.
# Run as root on Debian bookworm. Idempotent: packages already present are skipped.
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev              # LibTorch: the aten plugin and the TorchScript importer
  libopenblas0-pthread      # real BLAS under LibTorch (the reference BLAS is 20-30x slower)
  libopenblas-dev           # cblas for the family plugins (linalg, attention)
  libdnnl-dev               # oneDNN: the conv plugin's convolution and pooling primitives
  libeigen3-dev             # Eigen (header-only): the linalg epilogue's vectorised erf (GELU)
  libboost-dev              # Boost.DLL (header-only with BOOST_DLL_USE_STD_FS)
  libtomlplusplus-dev       # TOML config
  libspdlog-dev             # logging
  libtbb-dev                # oneTBB: parallel scheduling
  libgtest-dev googletest   # tests
  libdlpack-dev             # dlpack.h: the tensor type that crosses the ABI
  libcli11-dev              # CLI parsing
  nlohmann-json3-dev        # portable graph file header (JSON)
  libzip-dev                # .pt2 archives (torch.export.save's zip), read by the host core
  python3-torch python3-torchvision  # model export tools
  python3-dev pybind11-dev python3-pytest  # the Python module (host/python) and its tests
  python3-distributed       # Dask distributed: switchyard.run_dataset on a cluster, and its tests
  clang-format-14           # tools/format.sh, CTest test_format
  clang-14 libclang-rt-14-dev  # fuzzing (tools/fuzz.sh, CTest fuzz_smoke): libFuzzer, ASan, UBSan
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "setup: missing packages: ${missing[*]}" >&2
  echo "setup: run this script as root (or with sudo) to install them" >&2
  exit 1
fi

echo "setup: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
