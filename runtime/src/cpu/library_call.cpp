//===- library_call.cpp - Library calls of the CPU device -----------------===//
//
// Routes each LibraryCall step to the library that implements it, by the prefix of its name.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cpu/library_call.h"

#include <string>
#include <string_view>

#include "contract/library_calls.h"
#include "runtime/src/cpu/attention.h"
#include "runtime/src/cpu/collectives.h"
#include "runtime/src/cpu/onednn/onednn_kernels.h"

namespace kiln::runtime::cpu {

Status createLibraryCallKernel(const kiln::artifact::LibraryCall& call, const uint8_t* constants,
                               const std::shared_ptr<Collectives>& collectives,
                               std::unique_ptr<LibraryCallKernel>* out,
                               const std::vector<std::vector<int64_t>>* run_dims) {
  std::string_view name = call.name()->string_view();
  constexpr std::string_view kOneDnnPrefix = "onednn.";
  if (name.substr(0, kOneDnnPrefix.size()) == kOneDnnPrefix) {
    return createOneDnnKernel(call, constants, out, run_dims);
  }
  namespace callee = contract::callee;
  if (name == callee::kKilnAttention) return createAttentionKernel(call, out, run_dims);
  if (run_dims != nullptr)
    return Status(KILN_STATUS_UNIMPLEMENTED, "library call '" + std::string(name) +
                                                 "' cannot be set up for a shape of the run");
  if (name == callee::kGlooAllReduce) return createAllReduceKernel(call, collectives, out);
  if (name == callee::kGlooAllGather) return createAllGatherKernel(call, collectives, out);
  if (name == callee::kGlooSend || name == callee::kGlooRecv)
    return createPointToPointKernel(call, collectives, out);
  if (name == callee::kGlooBroadcast || name == callee::kGlooReceive)
    return createBroadcastKernel(call, collectives, out);
  return Status(KILN_STATUS_UNIMPLEMENTED, "library call '" + std::string(name) +
                                               "' is not available on the cpu device (it runs the "
                                               "'onednn.*' calls, 'kiln.attention' and "
                                               "the 'gloo.*' collectives)");
}

}  // namespace kiln::runtime::cpu
