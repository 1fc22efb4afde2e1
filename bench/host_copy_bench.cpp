// vkc-host-copy-bench: GB/s of the runtime's host copies into and out of mapped Vulkan memory,
// one memcpy against the threaded copy (runtime/host_copy.h; issue 21), at the two sizes the
// issue names: r2plus1d_18's batch-1 input (2.4 MB) and resnet50's batch-128 input (77 MB).
//
//   vkc-host-copy-bench [--runs N] [--threads 1,2,4,8] [--sizes BYTES,BYTES] [--device SPEC]
//
// "upload": host vector -> upload staging buffer (BufferUse::Upload, what Program::submit writes
// on a discrete GPU); "download": download staging buffer (BufferUse::Download, host cached where
// offered) -> host vector; "upload-cached": host vector -> the download buffer, i.e. what an upload
// would cost if upload staging were allocated host cached too (on NVIDIA the upload type is
// write-combined: 4-6 GB/s from one thread on the H200 host). Each line: median and best GB/s over
// N copies after one warm-up copy (which also faults in the destination's pages). Threads 1 is the
// plain memcpy vkc used before.
// Last, per size: a download into a new HostTensor each time, as Program::wait returns outputs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include "runtime/context_internal.h"
#include "runtime/host_copy.h"
#include "runtime/memory.h"
#include "support/error.h"
#include "support/tensor.h"

namespace {

using namespace vkc;

std::vector<size_t> parse_list(const std::string& s) {
  std::vector<size_t> v;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) v.push_back(size_t(std::stoull(item)));
  return v;
}

int bench(int argc, char** argv) {
  int runs = 20;
  std::vector<size_t> threads{1, 2, 4, 8}, sizes{2408448, 77070336};
  rt::ContextOptions co;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--runs") runs = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = parse_list(argv[i + 1]);
    else if (a == "--sizes") sizes = parse_list(argv[i + 1]);
    else if (a == "--device") co.device = argv[i + 1];
    else throw Error(cat("unknown option ", a));
  }
  check(runs > 0, "--runs must be positive");
  rt::Context ctx(co);
  std::printf("device %s (%s); %u hardware threads; %d copies per line\n", ctx.device_info().name.c_str(),
              ctx.device_info().type.c_str(), std::thread::hardware_concurrency(), runs);
  std::mt19937 rng(1);
  for (size_t bytes : sizes) {
    std::vector<uint8_t> host(bytes);
    for (size_t i = 0; i < bytes; i += 4096) host[i] = uint8_t(rng());  // fault the pages in
    rt::Buffer upload(ctx.impl(), bytes, rt::BufferUse::Upload, "bench upload");
    rt::Buffer download(ctx.impl(), bytes, rt::BufferUse::Download, "bench download");
    check(upload.mapped() && download.mapped(), "staging buffers are not mapped");
    for (const char* direction : {"upload", "upload-cached", "download"}) {
      const std::string d = direction;
      uint8_t* dst = d == "upload" ? upload.mapped() : d == "upload-cached" ? download.mapped() : host.data();
      const uint8_t* src = d == "download" ? download.mapped() : host.data();
      for (size_t t : threads) {
        rt::HostCopy copy{unsigned(t)};
        copy.copy(dst, src, bytes);  // warm-up: starts the pool, touches every page
        std::vector<double> gbps;
        for (int r = 0; r < runs; ++r) {
          auto t0 = std::chrono::steady_clock::now();
          copy.copy(dst, src, bytes);
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          gbps.push_back(double(bytes) / s / 1e9);
        }
        std::sort(gbps.begin(), gbps.end());
        std::printf("%-13s %10zu bytes  threads %2zu: median %6.2f GB/s (%.3f ms), best %6.2f GB/s\n", direction,
                    bytes, t, gbps[gbps.size() / 2], double(bytes) / gbps[gbps.size() / 2] / 1e6, gbps.back());
        std::fflush(stdout);
      }
    }
    // What Program::wait does per output: a new HostTensor (allocated and zero-filled, its pages
    // faulted in) and the read into it, against the read alone above.
    for (size_t t : threads) {
      rt::HostCopy copy{unsigned(t)};
      std::vector<double> ms;
      for (int r = 0; r <= runs; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        HostTensor out(DType::u8, {int64_t(bytes)});
        copy.copy(out.data(), download.mapped(), bytes);
        const double m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0) ms.push_back(m);
      }
      std::sort(ms.begin(), ms.end());
      std::printf("download into a new HostTensor, %10zu bytes, threads %2zu: median %.3f ms, best %.3f ms\n", bytes, t,
                  ms[ms.size() / 2], ms.front());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return bench(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vkc-host-copy-bench: %s\n", e.what());
    return 1;
  }
}
