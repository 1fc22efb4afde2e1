#!/usr/bin/env bash
# Installs vkc's build and test dependencies from Debian 12 packages, only those missing.
# Idempotent: a second run installs nothing. Nothing else is downloaded at build time.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config ccache
  clang libclang-rt-14-dev valgrind          # libFuzzer targets (scripts/fuzz.sh), leak checks
  libvulkan-dev libvulkan-volk-dev            # Vulkan headers/loader; volk.c is compiled into vkc
  glslang-dev glslang-tools spirv-tools spirv-headers   # GLSL -> SPIR-V, optimizer, validator
  mesa-vulkan-drivers vulkan-validationlayers vulkan-tools  # lavapipe, Khronos validation
  googletest libgtest-dev libbenchmark-dev nlohmann-json3-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libstb-dev python3-numpy python3-onnx python3-sklearn   # samples: digits data, china.jpg
  pybind11-dev python3-dev libdlpack-dev      # the Python module (python/)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
