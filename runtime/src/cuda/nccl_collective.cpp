//===- nccl_collective.cpp - The collectives between a split model's GPUs -===//
//
// nccl.all_reduce and nccl.all_gather (cuda_library_problem.h, CollectiveProblem): read and
// checked here for both CUDA devices, run by NCCL on a GPU (enqueued on the step's stream, so they
// are captured into the program's CUDA graph like any other call) and on the host by the
// simulated device (sim_cuda_api.cpp).
//
//===----------------------------------------------------------------------===//

#include <nccl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime::cuda {

namespace param = contract::param;

Status readCollectiveProblem(const LibraryCallView& view, CollectiveProblem* out) {
  CollectiveProblem problem;
  problem.gather = view.name() == contract::callee::kNcclAllGather;
  if (Status s = view.integer(param::kDevices, 0, &problem.devices); !s.ok()) return s;
  if (problem.devices < 2) return view.invalid("needs 'devices' of 2 or more");
  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  if (bindings.size() != 2)
    return view.invalid("takes one tensor and writes one, not " +
                        std::to_string(bindings.size()) + " bindings");
  if (Status s = readCudaCallBindings(view, &problem.common); !s.ok()) return s;
  problem.count = 1;
  for (int64_t dim : bindings[0].dims) problem.count *= static_cast<uint64_t>(dim);
  uint64_t results = 1;
  for (int64_t dim : bindings[1].dims) results *= static_cast<uint64_t>(dim);
  problem.bytes = computeByteSize(bindings[0].element_type, bindings[0].dims).value();
  uint64_t expected = problem.gather ? problem.count * static_cast<uint64_t>(problem.devices)
                                     : problem.count;
  if (results != expected)
    return view.invalid(std::string(problem.gather ? "gathers" : "sums") + " " +
                        std::to_string(problem.count) + " elements from " +
                        std::to_string(problem.devices) + " devices into " +
                        std::to_string(results) + "; the result must hold " +
                        std::to_string(expected));
  *out = std::move(problem);
  return Status();
}

namespace {

ncclDataType_t ncclType(kiln_element_type_t type) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16:
      return ncclFloat16;
    case KILN_ELEMENT_TYPE_BF16:
      return ncclBfloat16;
    default:
      return ncclFloat32;
  }
}

class NcclCollective final : public CudaLibraryCall {
 public:
  NcclCollective(const CollectiveProblem& problem, ncclComm_t comm)
      : problem_(problem), comm_(comm) {}

  size_t workspaceSize() const override { return 0; }

  Status enqueue(cudaStream_t stream, void* const* buffers, void*) const override {
    if (problem_.gather) {
      // Bytes, whatever the element type: each device's part lands after the previous device's.
      KILN_CUDA_RETURN_IF_ERROR(
          ncclAllGather(buffers[0], buffers[1], problem_.bytes, ncclUint8, comm_, stream));
    } else {
      KILN_CUDA_RETURN_IF_ERROR(ncclAllReduce(buffers[0], buffers[1], problem_.count,
                                              ncclType(problem_.common.element_type), ncclSum,
                                              comm_, stream));
    }
    return Status();
  }

 private:
  CollectiveProblem problem_;
  ncclComm_t comm_;
};

}  // namespace

Status createNcclCollective(const CollectiveProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out) {
  if (context.nccl == nullptr)
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  problem.common.label + " runs between " + std::to_string(problem.devices) +
                      " GPUs, but the session is a single device's (a split artifact runs one "
                      "session per device, each with options.device_rank and options.rendezvous)");
  *out = std::make_unique<NcclCollective>(problem, context.nccl);
  return Status();
}

}  // namespace kiln::runtime::cuda
