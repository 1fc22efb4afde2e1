#!/usr/bin/env bash
# Usage: run_consumer.sh BUILD_DIR CONSUMER_SOURCE WORK_DIR
# Installs BUILD_DIR into WORK_DIR/prefix, builds the consumer with find_package(vkc) against that
# prefix only, runs it on the default device, and compiles it once more through pkg-config.
set -euo pipefail
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
# Only include/vkc/ is the public API; the internal headers it needs live under include/vkc/ too.
test -f "$prefix/include/vkc/vkc.h" && test -f "$prefix/include/vkc/support/tensor.h"
test -f "$prefix/lib/cmake/vkc/vkcConfig.cmake" && test -f "$prefix/lib/pkgconfig/vkc.pc"
test -x "$prefix/bin/vk-run" && test -x "$prefix/bin/vk-compile"

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" \
  "${launcher[@]}" >"$work/configure.log"
cmake --build "$work/build" >"$work/build.log"
XDG_CACHE_HOME=$work/cache "$work/build/vkc-consumer" "$work/run"

# pkg-config: the same program compiles and links from the .pc file alone.
if command -v pkg-config >/dev/null; then
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs vkc)
  # shellcheck disable=SC2086
  ${CXX:-c++} "$src/main.cpp" -o "$work/vkc-consumer-pc" $flags
  XDG_CACHE_HOME=$work/cache "$work/vkc-consumer-pc" "$work/run-pc" >/dev/null
fi
echo "install consumer: ok"
