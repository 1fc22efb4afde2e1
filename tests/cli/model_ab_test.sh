#!/usr/bin/env bash
# bench/model_ab.py on lavapipe: a tiny exported-style model (input "input", as model_zoo.py
# writes them) timed by two variants of one build; the table has both times, their ratio and no
# output difference; a variant whose vk-run fails leaves "-" in its columns instead of a crash.
# usage: model_ab_test.sh BIN_DIR DEBIAN_PYTHON SOURCE_DIR WORK_DIR
set -euo pipefail
bin=$1 py=$2 src=$3 work=$4
rm -rf "$work" && mkdir -p "$work/onnx"
"$py" - "$work/onnx" <<'PY'
import sys
import numpy as np
from onnx import TensorProto, helper, numpy_helper
d = sys.argv[1]
w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
g = helper.make_graph([helper.make_node("Conv", ["input", "w"], ["c"], pads=[1, 1, 1, 1]),
                       helper.make_node("Relu", ["c"], ["output"])], "tiny",
                      [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 4, 8, 8])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
open(f"{d}/tiny_b1_fp32.onnx", "wb").write(m.SerializeToString())
np.save(f"{d}/tiny_b1_fp32_input.npy", np.random.default_rng(2).standard_normal((1, 3, 8, 8)).astype(np.float32))
PY
ab() { "$py" "$src/bench/model_ab.py" "$bin" "$bin" "$work/out$1" --models tiny --batches 1 --rounds 2 --runs 2 \
         --onnx-dir "$work/onnx" "${@:2}"; }
out=$(ab 1)
echo "$out"
row=$(grep '^| tiny | 1 |' <<<"$out")
[[ $row =~ ^\|\ tiny\ \|\ 1\ \|\ [0-9.]+\ [0-9.]+\ \|\ [0-9.]+\ [0-9.]+\ \|\ [0-9.]+\ \|\ 0\.0e\+00\ \|$ ]] ||
  { echo "FAIL: unexpected row: $row"; exit 1; }
out=$(ab 2 --new-env VKC_DEVICE=no-such-device)
echo "$out"
grep -q 'tiny_b1_fp32: vk-run failed' <<<"$out" || { echo "FAIL: the failing variant was not reported"; exit 1; }
row=$(grep '^| tiny | 1 |' <<<"$out")
[[ $row =~ ^\|\ tiny\ \|\ 1\ \|\ [0-9.]+\ [0-9.]+\ \|\ -\ \|\ -\ \| ]] || { echo "FAIL: unexpected row: $row"; exit 1; }
echo "model_ab: ok"
