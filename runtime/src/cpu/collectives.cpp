//===- collectives.cpp - Gloo collectives between CPU devices ------------===//

#include "runtime/src/cpu/collectives.h"

#include <gloo/allreduce.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>

#include <sys/stat.h>

#include <cstring>
#include <exception>
#include <string_view>
#include <utility>

#include "runtime/src/cpu/library_call.h"
#include "runtime/src/element_type.h"

namespace kiln::runtime::cpu {

namespace fb = kiln::artifact;

Result<std::shared_ptr<Collectives>> Collectives::connect(uint32_t rank, uint32_t devices,
                                                          const std::string& rendezvous,
                                                          std::chrono::milliseconds timeout) {
  std::string where = "rendezvous '" + rendezvous + "' (device " + std::to_string(rank) + " of " +
                      std::to_string(devices) + ")";
  struct stat info;
  if (::stat(rendezvous.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  where + ": not a directory; give every device the same new, empty directory");
  }
  try {
    gloo::transport::tcp::attr attr;
    attr.hostname = "127.0.0.1";
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore files(rendezvous);
    gloo::rendezvous::PrefixStore store("kiln", files);
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank),
                                                               static_cast<int>(devices));
    context->setTimeout(timeout);
    context->connectFullMesh(store, device);
    return std::shared_ptr<Collectives>(new Collectives(rank, devices, std::move(context)));
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_UNAVAILABLE,
                  where + ": the devices did not connect within " +
                      std::to_string(timeout.count()) + " ms (" + error.what() +
                      "); start every device with the same new, empty directory");
  }
}

Status Collectives::allReduceSum(float* data, size_t count, uint32_t tag) {
  try {
    gloo::AllreduceOptions options(context_);
    options.setOutput(data, count);
    options.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(
        &gloo::sum<float>));
    options.setTag(tag);
    gloo::allreduce(options);
    return Status();
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_UNAVAILABLE, "all-reduce on device " + std::to_string(rank_) +
                                               " of " + std::to_string(devices_) +
                                               " failed: " + error.what());
  }
}

namespace {

class AllReduceKernel final : public LibraryCallKernel {
 public:
  AllReduceKernel(std::shared_ptr<Collectives> collectives, size_t count, uint32_t tag)
      : collectives_(std::move(collectives)), count_(count), tag_(tag) {}

  Status run(void* const* buffers) const override {
    float* result = static_cast<float*>(buffers[1]);
    if (buffers[0] != buffers[1]) std::memcpy(result, buffers[0], count_ * sizeof(float));
    return collectives_->allReduceSum(result, count_, tag_);
  }
  bool writes(size_t binding) const override { return binding == 1; }

 private:
  std::shared_ptr<Collectives> collectives_;
  size_t count_;
  uint32_t tag_;
};

}  // namespace

Status createAllReduceKernel(const fb::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out) {
  const auto& bindings = *call.bindings();
  if (bindings.size() != 2) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_reduce' takes one tensor and writes one, not " +
                      std::to_string(bindings.size()) + " bindings");
  }
  const fb::TensorType& in = *bindings.Get(0)->type();
  const fb::TensorType& result = *bindings.Get(1)->type();
  auto sameDims = [](const fb::TensorType& a, const fb::TensorType& b) {
    size_t rank = a.dims() ? a.dims()->size() : 0;
    if (rank != (b.dims() ? b.dims()->size() : 0)) return false;
    for (size_t i = 0; i < rank; ++i)
      if (a.dims()->Get(i) != b.dims()->Get(i)) return false;
    return true;
  };
  if (in.element_type() != KILN_ELEMENT_TYPE_F32 || result.element_type() != KILN_ELEMENT_TYPE_F32 ||
      !sameDims(in, result)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_reduce' sums an f32 tensor into one of the same type");
  }
  int64_t devices = 0;
  if (const auto* params = call.int_params()) {
    for (const fb::IntParam* param : *params)
      if (param->key()->string_view() == "devices" && param->values() &&
          param->values()->size() == 1)
        devices = param->values()->Get(0);
  }
  if (!collectives) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  "'gloo.all_reduce' sums over " + std::to_string(devices) +
                      " devices, but the session is a single device's (a partitioned artifact "
                      "runs one session per device, each with options.device_rank and "
                      "options.rendezvous)");
  }
  if (devices != static_cast<int64_t>(collectives->devices())) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_reduce' sums over " + std::to_string(devices) +
                      " devices, the session's partition has " +
                      std::to_string(collectives->devices()));
  }
  size_t count = 1;
  if (in.dims())
    for (int64_t dim : *in.dims()) count *= static_cast<size_t>(dim);
  *out = std::make_unique<AllReduceKernel>(collectives, count, collectives->nextTag());
  return Status();
}

}  // namespace kiln::runtime::cpu
