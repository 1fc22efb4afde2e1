// Graph passes, each a named ir::Pass for the PassManager.
#pragma once

#include "ir/pass_manager.h"

namespace vkc::ir {

// Removes ops none of whose results are used (and thereby constants only they used). Multi-result
// ops stay while any result is used; unused results of kept ops simply get no consumer.
Pass dead_code_elimination_pass();

}  // namespace vkc::ir
