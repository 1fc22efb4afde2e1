#!/usr/bin/env bash
# Builds what the GPU machine needs and prints the `carry` list for the device tool.
# The GPU machine has no network and no Vulkan SDK: vkc links glslang/SPIRV-Tools statically
# (Debian ships only .a files) and compiles volk in, so the binaries need libc/libstdc++ and the
# Vulkan loader, which travels as a .deb in .gl/ (unpacked there with dpkg -x).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
# libvulkan1: the loader. libegl1 + libglvnd0: the NVIDIA Vulkan ICD (libGLX_nvidia.so.0) dlopens
# GLVND's libEGL.so.1 while it initializes and fails its loader negotiation with
# VK_ERROR_INITIALIZATION_FAILED when it is missing, as it is on the GPU image (found 2026-11-21).
# libonnx1 + libprotobuf32: vkc links Debian's shared ONNX/protobuf libraries for ONNX import.
for p in libvulkan1 libegl1 libglvnd0 libonnx1 libprotobuf32; do
  ls .gl/${p}_*.deb >/dev/null 2>&1 || ../shared/gpu/fetch-debs.sh .gl "$p"
done
exclude=$(git rev-parse --git-path info/exclude)  # a worktree's .git is a file
mkdir -p "$(dirname "$exclude")"; grep -qx ".gl/" "$exclude" 2>/dev/null || echo ".gl/" >> "$exclude"
# VKC_CARRY_FROM=build/test reuses README's test build (Release, -Werror) with the benchmarks
# added instead of configuring build/gpu from scratch: on a 2-core machine that saves a cold build.
build=${VKC_CARRY_FROM:-build/gpu}
if [ "$build" = build/gpu ]; then
  scripts/build.sh build/gpu Release -DVKC_BUILD_TESTS=OFF -DVKC_BUILD_BENCH=ON
else
  scripts/build.sh "$build" Release -DVKC_BUILD_BENCH=ON
fi
# Only the binaries travel (the carry set is limited to 64 MiB); vk-conformance for run-gpu.sh int8-ort.
rm -rf build/gpu-carry && mkdir -p build/gpu-carry
# VKC_CARRY_TESTS=1 (needs a build with tests, VKC_CARRY_FROM=build/test): the kernel tests instead
# of the sample and the startup benchmark, for the tests only a GPU can run (the tensor-core path:
# `build/gpu-carry/vkc_kernel_tests --gtest_filter='CoopMatrix*'`).
if [ "${VKC_CARRY_TESTS:-0}" = 1 ]; then
  cp $build/tools/vk-compile $build/tools/vk-run $build/tools/vk-conformance $build/bench/vkc_bench \
    $build/bench/vkc-host-copy-bench $build/bench/vkc-host-outputs-bench $build/tests/vkc_kernel_tests build/gpu-carry/
else
  cp $build/tools/vk-compile $build/tools/vk-run $build/tools/vk-conformance $build/samples/vkc-sample-convnet \
    $build/bench/vkc_bench $build/bench/vkc-startup-bench $build/samples/vkc-sample-charlm \
    $build/bench/vkc-host-copy-bench $build/bench/vkc-host-outputs-bench build/gpu-carry/
fi
strip build/gpu-carry/*
# Each binary is about 11 MB (glslang and SPIRV-Tools are linked in) and 4.3 MB gzipped; the
# carry set is limited to 64 MiB. bench/run-gpu.sh unpacks them.
gzip -f build/gpu-carry/*
# The commit the numbers belong to (RESULTS.md rows name it); "-dirty": uncommitted changes built in.
echo "$(git rev-parse HEAD)$(git diff --quiet HEAD 2>/dev/null || echo -dirty)" > build/gpu-carry/COMMIT
du -sh build/gpu-carry .gl
echo 'carry: [".gl", "build/gpu-carry"]'
