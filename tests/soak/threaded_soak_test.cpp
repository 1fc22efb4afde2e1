// Several modules interleaved from several threads, each with its own Context and Program
// (rt::Program::execute is not thread-safe; Contexts are independent): every thread's results
// stay identical to its first run, none sees a validation message, and host memory does not grow
// over a second round once the first has warmed everything up.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "codegen/compiler.h"
#include "common/gpu_harness.h"
#include "ir/text_format.h"
#include "soak/soak_util.h"

namespace vkc::soak {
namespace {

constexpr int kRunsPerThread = 300;
constexpr int kWarmupRounds = 2;
constexpr int kMeasuredRounds = 4;

struct Job {
  ModuleImage module;
  std::map<std::string, HostTensor> inputs;
};

// Compiled up front on the test thread: codegen is not what this test stresses.
std::vector<Job> make_jobs() {
  codegen::CompileOptions o;
  o.target = test::shared_context().limits();
  std::vector<Job> jobs;
  for (const char* example : {"small_convnet.vkir", "topk.vkir", "conv1d_layouts.vkir"}) {
    ir::Graph g = ir::parse_graph_file(test::source_path(std::string("examples/") + example));
    jobs.push_back({codegen::compile_graph(g, o), test::random_inputs(g, 11)});
  }
  return jobs;
}

// Runs every job's module `runs` times on one thread; returns the number of failures.
int run_round(const std::vector<Job>& jobs, int runs, std::vector<std::string>& errors) {
  std::atomic<int> failures{0};
  std::vector<std::string> thread_errors(jobs.size());
  std::vector<std::thread> threads;
  for (size_t t = 0; t < jobs.size(); ++t) {
    threads.emplace_back([&, t] {
      try {
        rt::Context ctx;
        rt::Program program(ctx, jobs[t].module);
        auto first = program.execute(jobs[t].inputs);
        for (int i = 1; i < runs; ++i)
          if (program.execute(jobs[t].inputs) != first) {
            ++failures;
            thread_errors[t] = "execution " + std::to_string(i) + " differs from the first";
            break;
          }
        if (!ctx.validation_messages().empty()) {
          ++failures;
          thread_errors[t] = ctx.validation_messages().front();
        }
      } catch (const std::exception& e) {
        ++failures;
        thread_errors[t] = e.what();
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::string& e : thread_errors)
    if (!e.empty()) errors.push_back(e);
  return failures;
}

TEST(SoakThreads, InterleavedModulesOnePerThread) {
  std::vector<Job> jobs = make_jobs();
  std::vector<std::string> errors;
  // Two warm-up rounds: the loader, the layer and glibc's per-thread arenas settle in them.
  for (int round = 0; round < kWarmupRounds; ++round)
    EXPECT_EQ(run_round(jobs, kRunsPerThread, errors), 0) << (errors.empty() ? "" : errors.front());
  int64_t before = resident_kib();
  for (int round = 0; round < kMeasuredRounds; ++round)
    EXPECT_EQ(run_round(jobs, kRunsPerThread, errors), 0) << (errors.empty() ? "" : errors.front());
  int64_t after = resident_kib();
  std::printf("RSS after %d warm-up rounds %lld KiB, after %d more %lld KiB\n", kWarmupRounds, (long long)before,
              kMeasuredRounds, (long long)after);
  if (built_with_asan()) GTEST_SKIP() << "ASan quarantine inflates RSS; LeakSanitizer checks leaks instead";
  // Three contexts are created and destroyed per round; a leak per Context or Program would add
  // up over the measured rounds.
  EXPECT_LT(after - before, 16 * 1024) << "host memory grew by " << (after - before) << " KiB";
}

}  // namespace
}  // namespace vkc::soak
