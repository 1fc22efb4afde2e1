// Test helper: a device context's host-copy threads (runtime/host_copy.h) and forced staging
// buffers for one scope, restored after it, so that one test runs both the plain and the
// threaded copy, through mapped memory and through staging.
#pragma once

#include "runtime/context_internal.h"

namespace vkc::test {

class CopySetting {
 public:
  CopySetting(rt::Context& ctx, unsigned threads, bool staging) : ctx_(ctx), saved_(ctx.impl().host_copy.threads()) {
    ctx_.impl().host_copy.set_threads(threads);
    ctx_.impl().force_staging = staging;
  }
  ~CopySetting() {
    ctx_.impl().force_staging = false;
    ctx_.impl().host_copy.set_threads(saved_);
  }
  CopySetting(const CopySetting&) = delete;
  CopySetting& operator=(const CopySetting&) = delete;

 private:
  rt::Context& ctx_;
  unsigned saved_;
};

}  // namespace vkc::test
