//===- cuda_library_call.cpp - Library calls of the CUDA device -----------===//
//
// Routes each call to its library by name and reads what the two calls share: one element type,
// allow_tf32, the binding count and the post-op epilogue, which both libraries fuse only in the
// form [linear] [add] [relu | gelu] (cuda_library_call.h).
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/cuda_library_call.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/element_type.h"

namespace kiln::runtime::cuda {

using contract::PostOp;
namespace callee = contract::callee;
namespace param = contract::param;

namespace {

constexpr std::string_view kMatmulName = callee::kCublasLtMatmul;
constexpr std::string_view kConvolutionName = callee::kCudnnConvolution;
constexpr std::string_view kAttentionName = callee::kCudnnAttention;

Status createView(const kiln::artifact::LibraryCall& call, LibraryCallView* out,
                  const std::vector<std::vector<int64_t>>* run_dims = nullptr) {
  return LibraryCallView::create(
      call, {KILN_ELEMENT_TYPE_F32, KILN_ELEMENT_TYPE_F16, KILN_ELEMENT_TYPE_BF16},
      "CUDA library calls take f32, f16 or bf16 tensors", out, run_dims);
}

Status unknownCall(const LibraryCallView& view) {
  return Status(KILN_STATUS_UNIMPLEMENTED,
                view.label() + " is not available on the cuda device (it runs '" +
                    std::string(kMatmulName) + "', '" + std::string(kConvolutionName) + "', '" +
                    std::string(kAttentionName) + "', '" + std::string(callee::kNcclAllReduce) +
                    "' and '" + std::string(callee::kNcclAllGather) + "')");
}

bool isCollective(const LibraryCallView& view) {
  return view.name() == callee::kNcclAllReduce || view.name() == callee::kNcclAllGather;
}

}  // namespace

uint32_t assumedAlignment(const LibraryCallBinding& binding) {
  constexpr uint64_t kAllocationAlignment = 256;
  if (binding.kind == kiln::artifact::BufferKind::Input ||
      binding.kind == kiln::artifact::BufferKind::Output)
    return 16;
  if (binding.offset == 0) return kAllocationAlignment;
  uint64_t lowest_bit = binding.offset & (~binding.offset + 1);
  return static_cast<uint32_t>(std::min(lowest_bit, kAllocationAlignment));
}

Status checkAlignments(const CudaCallCommon& common, void* const* buffers) {
  for (size_t i = 0; i < common.alignments.size(); ++i) {
    auto address = reinterpret_cast<uintptr_t>(buffers[i]);
    if (address % common.alignments[i] != 0) {
      std::ostringstream text;
      text << common.label << ": binding " << i << " is at address 0x" << std::hex << address
           << std::dec << ", which is not " << common.alignments[i]
           << "-byte aligned as the call was prepared for";
      return Status(KILN_STATUS_INVALID_ARGUMENT, text.str());
    }
  }
  return Status();
}

Status readCudaCallBindings(const LibraryCallView& view, CudaCallCommon* out) {
  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  CudaCallCommon common;
  common.label = view.label();
  // The libraries take one data type for the operands and the result here (cuBLASLt's mixed
  // A/B/C/D types and cuDNN's mixed graphs are not worth their restrictions for inference).
  if (bindings.empty()) return view.invalid("has no bindings");
  common.element_type = bindings[0].element_type;
  for (size_t i = 1; i < bindings.size(); ++i)
    if (bindings[i].element_type != common.element_type)
      return view.invalid("binding " + std::to_string(i) + " is " +
                          describeElementType(bindings[i].element_type) + " but binding 0 is " +
                          describeElementType(common.element_type) +
                          "; every binding of a CUDA library call has the same element type");
  common.result_binding = static_cast<int>(bindings.size()) - 1;
  for (const LibraryCallBinding& binding : bindings)
    common.alignments.push_back(assumedAlignment(binding));
  *out = std::move(common);
  return Status();
}

Status readCudaCallCommon(const LibraryCallView& view, const CudaCallShape& shape,
                          CudaCallCommon* out) {
  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  CudaCallCommon common;
  Status status = readCudaCallBindings(view, &common);
  if (!status.ok()) return status;

  status = view.flag(param::kAllowTf32, false, &common.allow_tf32);
  if (!status.ok()) return status;

  // The call's entry in the contract has checked that its library fuses each of them
  // (cuBLASLt: linear, add, relu, gelu; cuDNN: add, relu).
  std::vector<PostOp> ops = view.postOps();
  std::vector<float> args = view.floats(param::kPostOpArgs);
  int adds = static_cast<int>(std::count(ops.begin(), ops.end(), PostOp::Add));
  int bias_count = static_cast<int>(bindings.size()) - 3 - adds;
  if (bias_count != 0 && bias_count != 1)
    return view.invalid("has " + std::to_string(bindings.size()) + " bindings; expected " +
                        shape.operands + ", an optional bias, " + std::to_string(adds) +
                        " 'add' post-op operand(s) and the result");
  CudaEpilogue& epilogue = common.epilogue;
  if (bias_count == 1) epilogue.bias_binding = 2;
  if (adds > 0) epilogue.addend_binding = 2 + bias_count;

  // Both libraries apply their epilogue in one fixed order, so the post-ops must already be in
  // it: the product's scale first, then the addend, then the activation.
  size_t next_arg = 0;
  bool seen_add = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PostOp op = ops[i];
    std::string where =
        "post-op " + std::to_string(i) + " ('" + std::string(contract::postOpName(op)) + "')";
    if (epilogue.activation != Activation::kNone)
      return view.invalid(where + " follows the activation; relu and gelu must come last");
    if (op == PostOp::Linear) {
      if (i != 0)
        return view.invalid(where + " must come first: it scales the product (cuBLASLt's alpha)");
      if (next_arg + 2 > args.size())
        return view.invalid(where + " needs 2 values of 'post_op_args', which has " +
                            std::to_string(args.size()) + " in all");
      if (args[next_arg + 1] != 0.0f)
        return view.invalid(where + " has shift " + std::to_string(args[next_arg + 1]) +
                            "; cuBLASLt's alpha scales without a shift (expected 0)");
      // With a bias, alpha scales the product alone: the bias is added after it.
      epilogue.alpha = args[next_arg];
      next_arg += 2;
    } else if (op == PostOp::Add) {
      if (seen_add)
        return view.invalid(where + " is a second 'add'; the libraries fuse one addend");
      seen_add = true;
    } else if (op == PostOp::Relu) {
      epilogue.activation = Activation::kRelu;
    } else if (op == PostOp::Gelu) {
      epilogue.activation = Activation::kGelu;
    } else {
      return view.unimplemented(where + " is not fused by the CUDA library calls");
    }
  }
  if (next_arg != args.size())
    return view.invalid("'post_op_args' has " + std::to_string(args.size()) +
                        " values, the post-ops use " + std::to_string(next_arg));
  if (epilogue.addend_binding >= 0 &&
      bindings[epilogue.addend_binding].dims != bindings.back().dims)
    return view.invalid(
        "the 'add' operand (" + formatTypeDims(bindings[epilogue.addend_binding].dims) +
        ") must have the result's dims (" + formatTypeDims(bindings.back().dims) + ")");

  *out = std::move(common);
  return Status();
}

Status checkCudaLibraryCall(const kiln::artifact::LibraryCall& call) {
  LibraryCallView view;
  Status status = createView(call, &view);
  if (!status.ok()) return status;
  if (isCollective(view)) {
    CollectiveProblem problem;
    return readCollectiveProblem(view, &problem);
  }
  if (view.name() == kMatmulName) {
    MatmulProblem problem;
    return readMatmulProblem(view, &problem);
  }
  if (view.name() == kConvolutionName) {
    ConvolutionProblem problem;
    return readConvolutionProblem(view, &problem);
  }
  if (view.name() == kAttentionName) {
    // Also what the cuDNN frontend can check without a GPU: its graph for the architectures
    // Kiln compiles for by default (Ampere and Hopper), against the installed cuDNN.
    AttentionProblem problem;
    if (!(status = readAttentionProblem(view, &problem)).ok()) return status;
    for (int sm_version : {80, 90})
      if (!(status = checkCudnnAttentionGraph(problem, sm_version)).ok()) return status;
    return Status();
  }
  return unknownCall(view);
}

Status createCudaLibraryCall(const kiln::artifact::LibraryCall& call,
                             const CudaLibraryFactory& factory,
                             std::unique_ptr<CudaLibraryCall>* out,
                             const std::vector<std::vector<int64_t>>* run_dims) {
  LibraryCallView view;
  Status status = createView(call, &view, run_dims);
  if (!status.ok()) return status;
  if (view.name() == kMatmulName) {
    MatmulProblem problem;
    if (!(status = readMatmulProblem(view, &problem)).ok()) return status;
    return factory.matmul(view, problem, out);
  }
  if (view.name() == kConvolutionName) {
    ConvolutionProblem problem;
    if (!(status = readConvolutionProblem(view, &problem)).ok()) return status;
    return factory.convolution(view, problem, out);
  }
  if (view.name() == kAttentionName) {
    AttentionProblem problem;
    if (!(status = readAttentionProblem(view, &problem)).ok()) return status;
    return factory.attention(view, problem, out);
  }
  if (isCollective(view)) {
    CollectiveProblem problem;
    if (!(status = readCollectiveProblem(view, &problem)).ok()) return status;
    return factory.collective(view, problem, out);
  }
  return unknownCall(view);
}

Status createCudaLibraryCall(const kiln::artifact::LibraryCall& call,
                             const CudaLibraryContext& context,
                             std::unique_ptr<CudaLibraryCall>* out,
                             const std::vector<std::vector<int64_t>>* run_dims) {
  CudaLibraryFactory factory;
  factory.matmul = [&](const LibraryCallView&, const MatmulProblem& problem,
                       std::unique_ptr<CudaLibraryCall>* result) {
    return createCublasLtMatmul(problem, context, result);
  };
  factory.convolution = [&](const LibraryCallView&, const ConvolutionProblem& problem,
                            std::unique_ptr<CudaLibraryCall>* result) {
    return createCudnnConvolution(problem, context, result);
  };
  factory.attention = [&](const LibraryCallView&, const AttentionProblem& problem,
                          std::unique_ptr<CudaLibraryCall>* result) {
    return createCudnnAttention(problem, context, result);
  };
  factory.collective = [&](const LibraryCallView&, const CollectiveProblem& problem,
                           std::unique_ptr<CudaLibraryCall>* result) {
    return createNcclCollective(problem, context, result);
  };
  return createCudaLibraryCall(call, factory, out, run_dims);
}

}  // namespace kiln::runtime::cuda
