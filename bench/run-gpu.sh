#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool, from the repository root):
#   bash bench/run-gpu.sh
# Unpacks the Vulkan loader carried in .gl/, lists devices, runs the sample network and a compiled
# example with --check and --profile, and prints a short summary last.
set -uo pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
bin=build/gpu-carry
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null
ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null
echo "== devices"; $bin/vk-run --list-devices
echo "== sample"; $bin/vkc-sample-convnet
echo "== example"; $bin/vk-compile examples/small_convnet.vkir -o /tmp/net --target host --report &&
  $bin/vk-run /tmp/net --random-inputs 1 --check --profile --benchmark 20
