#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool, from the repository root), with carry
# [".gl", "build/gpu-carry"] as bench/build-carry.sh prints:
#   bash bench/run-gpu.sh              smoke checks, then the benchmark against PyTorch
#   bash bench/run-gpu.sh smoke        unpack the loader, list devices, run the sample and an example
#   bash bench/run-gpu.sh bench [ARGS] the benchmark only; ARGS go to vkc_bench (--cases a,b --runs N)
#   bash bench/run-gpu.sh models       ResNet-18 / MobileNetV2 from torchvision through ONNX, batch 1
#                                      and 8: vk-run against PyTorch eager (bench/models.py)
#   bash bench/run-gpu.sh zoo [ARGS]   torchvision models against PyTorch eager and a CUDA-graph
#                                      replay (bench/model_zoo.py; ARGS pick models, batches,
#                                      precisions); results in $OUT/zoo, merged across calls
#                                      with `python3 bench/model_zoo.py --table DIR` here
#   bash bench/run-gpu.sh decode [ARGS] GPT-2-sized decoding with the KV cache: vkc tokens/s against
#                                      PyTorch eager's (bench/decode_bench.py; ARGS: --ctx, --steps)
#   bash bench/run-gpu.sh ort-cases    ONNX Runtime test cases for ops Debian's test data lacks, and
#                                      the int8 cases (8-bit outputs; check them all in)
#   bash bench/run-gpu.sh int8-ort     int8 bit-exactness against ONNX Runtime (CPU) on the NVIDIA
#                                      device: the int8 ORT cases (ORT against the numpy formula,
#                                      vkc against ORT and against the formula) and the seed QDQ
#                                      conv (1x64x512x512, 256 filters, 3x3) through compare_onnxruntime
#                                      (needs vk-conformance in the carry: bench/build-carry.sh)
#   bash bench/run-gpu.sh caches       process start of vk-run on resnet50 (exported here): cold,
#                                      with the module cache, with the pipeline cache, each with
#                                      the NVIDIA driver's own shader cache off and on (issue 24)
#   bash bench/run-gpu.sh forms [CASES] [N]  VK_NV_ against VK_KHR_cooperative_matrix, alternating N
#                                      times on the cases matching CASES (default _fp16)
#   bash bench/run-gpu.sh host-copy [ARGS] GB/s of host copies into and out of staging memory,
#                                      one memcpy against 2-8 threads (issue 21; ARGS go to
#                                      vkc-host-copy-bench: --threads, --sizes, --runs), then
#                                      vkc-host-outputs-bench (outputs into caller memory)
#   bash bench/run-gpu.sh ab BASE [N]  before/after on one card: BASE/vkc_bench(.gz) (the old build,
#                                      carried too) and build/gpu-carry/vkc_bench alternate N times
#                                      each (default 2), then bench/compare_runs.py prints the table
# The benchmark writes vkc.json, bench.json and table.md to $OUT (so they come back) and prints the
# table last.
set -uo pipefail
mode=${1:-all}
[ $# -gt 0 ] && shift
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
export XDG_RUNTIME_DIR=/tmp
# The NVIDIA ICD normally registers itself; point the loader at it where it does not.
nv=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
if [ -f "$nv" ] && ! ls /usr/share/vulkan/icd.d/*nvidia* /etc/vulkan/icd.d/*nvidia* >/dev/null 2>&1; then
  export VK_DRIVER_FILES=$nv __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
bin=build/gpu-carry
# bench/build-carry.sh gzips the binaries (the carry set is limited to 64 MiB).
for f in $bin/*.gz; do [ -f "$f" ] && gunzip -kf "$f" && chmod +x "${f%.gz}"; done
out=${OUT:-/tmp/vkcbench-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader 2>/dev/null

if [ "$mode" = all ] || [ "$mode" = smoke ]; then
  ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null
  echo "== devices"; $bin/vk-run --list-devices
  echo "== sample"; $bin/vkc-sample-convnet
  echo "== example"; $bin/vk-compile examples/small_convnet.vkir -o /tmp/net --target host --report &&
    $bin/vk-run /tmp/net --random-inputs 1 --check --profile --benchmark 20
  # Cold vs warm process start (pipeline cache) and per-execution overhead of 50 dispatches.
  echo "== startup"; $bin/vkc-startup-bench 2>&1 | tee "$out/startup_bench.txt"
fi

if [ "$mode" = all ] || [ "$mode" = bench ]; then
  commit=$(cat $bin/COMMIT 2>/dev/null || echo unknown)
  work=/tmp/vkcbench
  rm -rf "$work"
  echo "== vkc_bench (commit $commit)"
  # Each half is bounded so that a pathological kernel still leaves the other half's numbers.
  # Clocks and power every 50 ms while vkc runs: a GPU that idles between executions lowers its
  # clocks, which shows up as kernels slowing down in steps (bench/RESULTS.md, Run F2).
  nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,utilization.gpu \
    --format=csv,noheader -lms 50 >"$out/clocks.csv" 2>/dev/null &
  smi=$!
  timeout 300 $bin/vkc_bench --out "$work" "$@" 2>&1 | tee "$out/vkc_bench.log"
  kill $smi 2>/dev/null
  cp "$work/vkc.json" "$out/" 2>/dev/null
  echo "== torch_reference"
  PYTHONUNBUFFERED=1 timeout 220 python3 bench/torch_reference.py "$work" --out "$out" --commit "$commit" 2>&1 |
    tee "$out/torch_reference.log" | grep -v '^[a-z_0-9^x]*: {' 
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null
fi

if [ "$mode" = ab ]; then
  base=${1:?usage: run-gpu.sh ab BASE_DIR [N]}; n=${2:-2}
  [ -f "$base/vkc_bench.gz" ] && gunzip -kf "$base/vkc_bench.gz" && chmod +x "$base/vkc_bench"
  echo "== A/B: base $(cat "$base/COMMIT" 2>/dev/null) against new $(cat $bin/COMMIT 2>/dev/null), $n runs each"
  bases=(); news=()
  for i in $(seq 1 "$n"); do
    for side in base new; do
      exe=$bin/vkc_bench; [ $side = base ] && exe=$base/vkc_bench
      timeout 240 "$exe" --out "/tmp/ab_${side}_$i" --runs 20 >"$out/ab_${side}_$i.log" 2>&1
      tail -1 "$out/ab_${side}_$i.log"
      [ $side = base ] && bases+=("/tmp/ab_base_$i/vkc.json") || news+=("/tmp/ab_new_$i/vkc.json")
    done
  done
  cp /tmp/ab_base_1/vkc.json "$out/ab_base_vkc.json"; cp /tmp/ab_new_1/vkc.json "$out/ab_new_vkc.json"
  python3 "$(dirname "$0")/compare_runs.py" "$(IFS=,; echo "${bases[*]}")" "$(IFS=,; echo "${news[*]}")" | tee "$out/ab.md"
fi

if [ "$mode" = forms ]; then
  # The two cooperative-matrix forms on one card (issue 22): NV as base, KHR as new, alternating.
  cases=${1:-_fp16}; n=${2:-2}
  echo "== tensor-core forms: VK_NV_cooperative_matrix (base) against VK_KHR_cooperative_matrix (new), cases $cases, $n runs each"
  bases=(); news=()
  for i in $(seq 1 "$n"); do
    for form in nv khr; do
      timeout 240 $bin/vkc_bench --out "/tmp/forms_${form}_$i" --runs 20 --cases "$cases" --tensor-cores $form \
        >"$out/forms_${form}_$i.log" 2>&1
      tail -1 "$out/forms_${form}_$i.log"
      [ $form = nv ] && bases+=("/tmp/forms_nv_$i/vkc.json") || news+=("/tmp/forms_khr_$i/vkc.json")
    done
  done
  cp /tmp/forms_nv_1/vkc.json "$out/forms_nv_vkc.json"; cp /tmp/forms_khr_1/vkc.json "$out/forms_khr_vkc.json"
  python3 "$(dirname "$0")/compare_runs.py" "$(IFS=,; echo "${bases[*]}")" "$(IFS=,; echo "${news[*]}")" --limit 1.10 |
    tee "$out/forms.md"
fi

if [ "$mode" = caches ]; then
  echo "== caches: vk-run resnet50 (batch 1) process wall time, 3 runs each"
  python3 - <<'PY' 2>&1 | grep -v -i warn
import torch, torchvision
m = torchvision.models.resnet50(weights=None).eval()
torch.onnx.export(m, torch.randn(1, 3, 224, 224), "/tmp/r50.onnx", opset_version=17, dynamo=False)
PY
  wall() {  # label, then the command: prints the median of 3 process wall times
    local label=$1; shift
    local ts=()
    for i in 1 2 3; do
      local t0=$(date +%s%N); "$@" >/tmp/caches.out 2>&1 || tail -2 /tmp/caches.out; local t1=$(date +%s%N)
      ts+=("$(( (t1 - t0) / 1000000 ))")
    done
    printf '%-62s median %s ms (runs: %s)\n' "$label" "$(printf '%s\n' "${ts[@]}" | sort -n | sed -n 2p)" "${ts[*]}"
  }
  run="$bin/vk-run /tmp/r50.onnx --random-inputs 1"
  for driver_cache in 0 1; do
    export __GL_SHADER_DISK_CACHE=$driver_cache __GL_SHADER_DISK_CACHE_PATH=/tmp/nvcache
    rm -rf /tmp/nvcache; mkdir -p /tmp/nvcache
    wall "driver cache $driver_cache: no vkc caches (--no-cache)" $run --no-cache
    export VKC_CACHE_DIR=/tmp/vkc-cache; rm -rf $VKC_CACHE_DIR; $run >/dev/null 2>&1
    wall "driver cache $driver_cache: module cache, no pipeline cache" $run --no-pipeline-cache
    wall "driver cache $driver_cache: module and pipeline caches warm" $run
    unset VKC_CACHE_DIR
  done
fi

if [ "$mode" = zoo ]; then
  echo "== model zoo (commit $(cat $bin/COMMIT 2>/dev/null))"
  PYTHONUNBUFFERED=1 python3 bench/model_zoo.py $bin "$out/zoo" --commit "$(cut -c1-7 $bin/COMMIT 2>/dev/null)" "$@" 2>&1 |
    grep -v -i "warning\|warn(" | tee "$out/zoo.log"
fi

if [ "$mode" = decode ]; then
  # Issue 23's decode target: GPT-2-small-sized decoder, vkc-sample-charlm --benchmark (KV cache on
  # the device) against PyTorch eager with its own torch.cat KV cache; ARGS go to the script
  # (--ctx 256 --steps 255 by default; --ctx 1024 for the long context).
  python3 bench/decode_bench.py --bin $bin "$@" 2>&1 | tee "$out/decode_bench.log"
fi

if [ "$mode" = ort-cases ]; then
  # Test cases with ONNX Runtime's outputs for ops Debian's test data lacks (check them in under
  # tests/conformance/ort_cases/).
  # Made outside $OUT, which returns at most 8 files: the archive comes back (unpack it there).
  python3 bench/make_ort_cases.py /tmp/ort_cases 2>&1 | tee "$out/ort_cases.log"
  cp /tmp/ort_cases.tar "$out/"
fi

if [ "$mode" = int8-ort ]; then
  # Issue 22, item 5: vkc's 8-bit outputs against ONNX Runtime's, exactly, with the tensor-core
  # kernels running (live NVIDIA device). One line per case: "exact" or how many elements differ.
  summary() {  # vk-conformance's lines -> "<case>: exact" / "<case>: <detail>"
    awk -F'\t' '$1 == "pass" {n = split($2, p, "/"); print "  " p[n] ": exact"}
                $1 != "pass" && NF >= 2 {n = split($2, p, "/"); print "  " p[n] ": " toupper($1) ": " $4}'
  }
  echo "== int8 cases: ONNX Runtime's outputs (and ORT against the numpy formula)"
  python3 bench/make_ort_cases.py /tmp/int8_ort --only '^ort_int8_' 2>&1 | tee "$out/int8_ort.log"
  cp /tmp/int8_ort.tar "$out/"  # the cases (outside $OUT, which returns at most 8 files)
  echo "== vkc against ONNX Runtime (vk-conformance, $($bin/vk-run --list-devices 2>/dev/null | head -1))"
  $bin/vk-conformance /tmp/int8_ort >"$out/int8_vs_ort.txt" 2>&1; tail -1 "$out/int8_vs_ort.txt"
  summary <"$out/int8_vs_ort.txt"
  echo "== vkc against the numpy formula"
  python3 bench/make_ort_cases.py /tmp/int8_formula --numpy-expected >/dev/null 2>&1
  $bin/vk-conformance /tmp/int8_formula >"$out/int8_vs_formula.txt" 2>&1; tail -1 "$out/int8_vs_formula.txt"
  summary <"$out/int8_vs_formula.txt"
  echo "== seed QDQ conv (f32 1x64x512x512 -> u8, s8 per-channel 256x64x3x3, bias, pad 1 -> u8)"
  python3 -c "import sys; sys.path.insert(0, 'bench'); import int8_cases; int8_cases.seed_conv('/tmp/seed_qdq_conv.onnx')"
  $bin/vk-compile /tmp/seed_qdq_conv.onnx -o /tmp/seed.vkcm --report 2>&1 | grep -E '^d[0-9]' | cut -c1-100
  PYTHONUNBUFFERED=1 timeout 300 python3 bench/compare_onnxruntime.py /tmp/seed_qdq_conv.onnx --vk-run $bin/vk-run 2>&1 |
    tee "$out/int8_seed_conv.log"
fi

if [ "$mode" = host-copy ]; then
  echo "== host copies (VKC_COPY_THREADS is what the runtime would use; default min(cores, 8))"
  $bin/vkc-host-copy-bench --threads 1,2,4,8 "$@" 2>&1 | tee "$out/host_copy_bench.txt"
  echo "== outputs into a new HostTensor vs into the caller's memory (RunOptions::output_to_host)"
  $bin/vkc-host-outputs-bench 2>&1 | tee "$out/host_outputs_bench.txt"
fi

if [ "$mode" = all ] || [ "$mode" = models ]; then
  echo "== models"
  PYTHONUNBUFFERED=1 timeout 200 python3 bench/models.py $bin "$out" 2>&1 | grep -v Warning | tee "$out/models.log"
fi
