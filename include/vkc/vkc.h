// The vkc public API: compile tensor programs to SPIR-V and run them on Vulkan devices.
//
//   vkc::Device device;                                    // best device (or VKC_DEVICE)
//   vkc::Module module = vkc::Module::load("net.vkcm");    // or Module::compile("net.onnx", device)
//   vkc::Session session(device, module);
//   vkc::Outputs out = session.run({{"image", image}});
//   const vkc::HostTensor& probs = out.at("probabilities");
//
// docs/api.md describes the API, docs/module-format.md the files it loads.
#pragma once

#include "vkc/device.h"
#include "vkc/model_session.h"
#include "vkc/module.h"
#include "vkc/session.h"
#include "vkc/tensor.h"
