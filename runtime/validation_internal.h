// The debug-utils messenger that feeds validation-layer messages into a ValidationLog.
#pragma once

#include "runtime/context_internal.h"

namespace vkc::rt {

// Create info for a messenger collecting WARNING and ERROR messages into `log`; also chained into
// VkInstanceCreateInfo so that instance creation itself is covered.
VkDebugUtilsMessengerCreateInfoEXT messenger_create_info(ValidationLog* log);

// Creates the messenger on `handles.instance`.
void create_messenger(InstanceHandles& handles, ValidationLog* log);

}  // namespace vkc::rt
