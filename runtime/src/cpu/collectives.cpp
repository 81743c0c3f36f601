//===- collectives.cpp - Gloo collectives between CPU devices ------------===//

#include "runtime/src/cpu/collectives.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/common/error.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <vector>
#include <exception>
#include <string_view>
#include <utility>

#include "contract/library_calls.h"
#include "runtime/src/cpu/library_call.h"
#include "runtime/src/element_type.h"

namespace kiln::runtime::cpu {

namespace fb = kiln::artifact;

Result<std::shared_ptr<Collectives>> Collectives::connect(uint32_t rank, uint32_t devices,
                                                          const std::string& rendezvous,
                                                          std::chrono::milliseconds timeout) {
  std::string where = "rendezvous '" + rendezvous + "' (device " + std::to_string(rank) + " of " +
                      std::to_string(devices) + ")";
  // The directory holds the addresses the devices connect to: another user who could write
  // there could have a device connect to them instead. It must be a directory of this user's
  // that nobody else may read, write or enter (mode 0700), not a link to one.
  struct stat info;
  if (::lstat(rendezvous.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  where + ": not a directory; give every device the same new, empty directory");
  }
  if (info.st_uid != ::geteuid() || (info.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(info.st_mode & 07777));
    return Status(KILN_STATUS_PERMISSION_DENIED,
                  where + ": the directory must be this user's and private (mode 0700), since " +
                      "the devices find each other's addresses in it; it is " +
                      (info.st_uid != ::geteuid() ? "another user's" : "mode " + std::string(mode)) +
                      " (mkdir -m 700 DIR)");
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
    options.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
    options.setTag(tag);
    gloo::allreduce(options);
    return Status();
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_UNAVAILABLE, "all-reduce on device " + std::to_string(rank_) +
                                               " of " + std::to_string(devices_) +
                                               " failed: " + error.what());
  }
}

std::unique_ptr<gloo::transport::UnboundBuffer> Collectives::createBuffer(void* data,
                                                                          size_t bytes) {
  return context_->createUnboundBuffer(data, bytes);
}

std::chrono::milliseconds Collectives::timeout() const { return context_->getTimeout(); }

Status Collectives::allGather(const void* input, void* output, size_t bytes, uint32_t tag) {
  try {
    gloo::AllgatherOptions options(context_);
    // Gloo's input is not written; its API takes a mutable pointer.
    options.setInput(static_cast<uint8_t*>(const_cast<void*>(input)), bytes);
    options.setOutput(static_cast<uint8_t*>(output), bytes * devices_);
    options.setTag(tag);
    gloo::allgather(options);
    return Status();
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_UNAVAILABLE, "all-gather on device " + std::to_string(rank_) +
                                               " of " + std::to_string(devices_) +
                                               " failed: " + error.what());
  }
}

Status Collectives::broadcast(void* data, size_t bytes, uint32_t root, uint32_t tag) {
  try {
    gloo::BroadcastOptions options(context_);
    options.setOutput(static_cast<uint8_t*>(data), bytes);
    options.setRoot(static_cast<int>(root));
    options.setTag(tag);
    gloo::broadcast(options);
    return Status();
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_UNAVAILABLE, "broadcast from device " + std::to_string(root) +
                                               " to device " + std::to_string(rank_) +
                                               " failed: " + error.what());
  }
}

namespace {

class BroadcastKernel final : public LibraryCallKernel {
 public:
  BroadcastKernel(std::shared_ptr<Collectives> collectives, bool sends, size_t bytes, uint32_t root,
                  uint32_t tag)
      : collectives_(std::move(collectives)),
        sends_(sends),
        bytes_(bytes),
        root_(root),
        tag_(tag) {}

  Status run(void* const* buffers) const override {
    void* result = buffers[sends_ ? 1 : 0];
    if (sends_ && buffers[0] != result) std::memcpy(result, buffers[0], bytes_);
    return collectives_->broadcast(result, bytes_, root_, tag_);
  }
  bool writes(size_t binding) const override { return binding == (sends_ ? 1u : 0u); }

 private:
  std::shared_ptr<Collectives> collectives_;
  bool sends_;
  size_t bytes_;
  uint32_t root_;
  uint32_t tag_;
};

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

/// Point-to-point transfers use slots above every collective's tag.
constexpr uint64_t kPointToPointSlots = uint64_t{1} << 40;

class SendKernel final : public LibraryCallKernel {
 public:
  SendKernel(std::shared_ptr<Collectives> collectives, size_t bytes, int peer, uint64_t slot)
      : collectives_(std::move(collectives)), staging_(bytes), peer_(peer), slot_(slot) {
    buffer_ = collectives_->createBuffer(staging_.data(), staging_.size());
  }
  ~SendKernel() override {
    // The other device took the last transfer in its own run; nothing is left to report to.
    if (pending_) {
      try {
        buffer_->waitSend(collectives_->timeout());
      } catch (const std::exception&) {
      }
    }
  }

  Status run(void* const* buffers) const override {
    try {
      // The previous run's transfer must be done before its bytes are overwritten.
      if (pending_ && !buffer_->waitSend(collectives_->timeout())) return timedOut();
      pending_ = false;
      std::memcpy(staging_.data(), buffers[0], staging_.size());
      buffer_->send(peer_, slot_);
      pending_ = true;
      return Status();
    } catch (const std::exception& error) {
      return Status(KILN_STATUS_UNAVAILABLE, "sending to device " + std::to_string(peer_) +
                                                 " failed: " + error.what());
    }
  }
  // The result is a placeholder nothing reads.
  bool writes(size_t binding) const override { return false; }

 private:
  Status timedOut() const {
    return Status(KILN_STATUS_UNAVAILABLE,
                  "device " + std::to_string(collectives_->rank()) + " waited " +
                      std::to_string(collectives_->timeout().count()) + " ms for device " +
                      std::to_string(peer_) + " to take a transfer");
  }

  std::shared_ptr<Collectives> collectives_;
  mutable std::vector<uint8_t> staging_;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  int peer_;
  uint64_t slot_;
  // The runs of a split session take turns (Collectives::runMutex).
  mutable bool pending_ = false;
};

class ReceiveKernel final : public LibraryCallKernel {
 public:
  ReceiveKernel(std::shared_ptr<Collectives> collectives, size_t bytes, int peer, uint64_t slot)
      : collectives_(std::move(collectives)), staging_(bytes), peer_(peer), slot_(slot) {
    buffer_ = collectives_->createBuffer(staging_.data(), staging_.size());
  }

  Status run(void* const* buffers) const override {
    try {
      buffer_->recv(peer_, slot_);
      if (!buffer_->waitRecv(collectives_->timeout())) {
        return Status(KILN_STATUS_UNAVAILABLE,
                      "device " + std::to_string(collectives_->rank()) + " waited " +
                          std::to_string(collectives_->timeout().count()) +
                          " ms for a transfer from device " + std::to_string(peer_));
      }
      std::memcpy(buffers[0], staging_.data(), staging_.size());
      return Status();
    } catch (const std::exception& error) {
      return Status(KILN_STATUS_UNAVAILABLE, "receiving from device " + std::to_string(peer_) +
                                                 " failed: " + error.what());
    }
  }
  bool writes(size_t binding) const override { return binding == 0; }

 private:
  std::shared_ptr<Collectives> collectives_;
  mutable std::vector<uint8_t> staging_;
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer_;
  int peer_;
  uint64_t slot_;
};

class AllGatherKernel final : public LibraryCallKernel {
 public:
  AllGatherKernel(std::shared_ptr<Collectives> collectives, size_t bytes, uint32_t tag)
      : collectives_(std::move(collectives)), bytes_(bytes), tag_(tag) {}

  Status run(void* const* buffers) const override {
    return collectives_->allGather(buffers[0], buffers[1], bytes_, tag_);
  }
  bool writes(size_t binding) const override { return binding == 1; }

 private:
  std::shared_ptr<Collectives> collectives_;
  size_t bytes_;
  uint32_t tag_;
};

}  // namespace

namespace {

/// The integer parameter `key` of `call`, or `fallback`.
int64_t intParam(const fb::LibraryCall& call, const contract::IntKey& wanted, int64_t fallback) {
  std::string_view key = wanted.name;
  if (const auto* params = call.int_params())
    for (const fb::IntParam* param : *params)
      if (param->key()->string_view() == key && param->values() && param->values()->size() == 1)
        return param->values()->Get(0);
  return fallback;
}

uint64_t bindingBytes(const fb::Binding& binding) { return binding.buffer()->size(); }

}  // namespace

Status createBroadcastKernel(const fb::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out) {
  std::string name = call.name()->str();
  bool sends = name == contract::callee::kGlooBroadcast;
  const auto& bindings = *call.bindings();
  if (bindings.size() != (sends ? 2u : 1u)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'" + name + "' takes " +
                      (sends ? "one tensor and writes one" : "no tensor and writes one") +
                      ", not " + std::to_string(bindings.size()) + " bindings");
  }
  uint64_t bytes = bindingBytes(*bindings.Get(bindings.size() - 1));
  if (sends && bindingBytes(*bindings.Get(0)) != bytes) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "'" + name + "' sends " +
                                                    std::to_string(bindingBytes(*bindings.Get(0))) +
                                                    " bytes into " + std::to_string(bytes));
  }
  namespace param = contract::param;
  int64_t devices = intParam(call, param::kDevices, 0), root = intParam(call, param::kRoot, -1);
  if (!collectives) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  "'" + name + "' moves a value between " + std::to_string(devices) +
                      " devices, but the session is a single device's");
  }
  if (devices != static_cast<int64_t>(collectives->devices()) || root < 0 || root >= devices ||
      sends != (root == static_cast<int64_t>(collectives->rank()))) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'" + name + "' from device " + std::to_string(root) + " of " +
                      std::to_string(devices) + " does not fit device " +
                      std::to_string(collectives->rank()) + " of " +
                      std::to_string(collectives->devices()));
  }
  *out = std::make_unique<BroadcastKernel>(collectives, sends, bytes, static_cast<uint32_t>(root),
                                           collectives->nextTag());
  return Status();
}

Status checkSessionDevices(const std::string& call, const std::string& verb, int64_t devices,
                           const Collectives* collectives) {
  if (collectives == nullptr) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  call + " " + verb + " " + std::to_string(devices) +
                      " devices, but the session is a single device's (a partitioned artifact "
                      "runs one session per device, each with options.device_rank and "
                      "options.rendezvous)");
  }
  if (devices != static_cast<int64_t>(collectives->devices())) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, call + " " + verb + " " + std::to_string(devices) +
                                                    " devices, the session's partition has " +
                                                    std::to_string(collectives->devices()));
  }
  return Status();
}

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
  if (in.element_type() != KILN_ELEMENT_TYPE_F32 ||
      result.element_type() != KILN_ELEMENT_TYPE_F32 || !sameDims(in, result)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_reduce' sums an f32 tensor into one of the same type");
  }
  if (Status s = checkSessionDevices("'" + std::string(contract::callee::kGlooAllReduce) + "'",
                                     "sums over", intParam(call, contract::param::kDevices, 0),
                                     collectives.get());
      !s.ok())
    return s;
  size_t count = 1;
  if (in.dims())
    for (int64_t dim : *in.dims()) count *= static_cast<size_t>(dim);
  *out = std::make_unique<AllReduceKernel>(collectives, count, collectives->nextTag());
  return Status();
}

Status createPointToPointKernel(const fb::LibraryCall& call,
                                const std::shared_ptr<Collectives>& collectives,
                                std::unique_ptr<LibraryCallKernel>* out) {
  std::string name = call.name()->str();
  bool sends = name == contract::callee::kGlooSend;
  const auto& bindings = *call.bindings();
  if (bindings.size() != (sends ? 2u : 1u)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'" + name + "' takes " + (sends ? "one tensor" : "no tensor") +
                      " and writes one, not " + std::to_string(bindings.size()) + " bindings");
  }
  namespace param = contract::param;
  int64_t devices = intParam(call, param::kDevices, 0), peer = intParam(call, param::kPeer, -1),
          tag = intParam(call, param::kTag, -1);
  if (!collectives) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  "'" + name + "' moves a value between " + std::to_string(devices) +
                      " devices, but the session is a single device's");
  }
  if (devices != static_cast<int64_t>(collectives->devices()) || peer < 0 || peer >= devices ||
      peer == static_cast<int64_t>(collectives->rank()) || tag < 0) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'" + name + "' with device " + std::to_string(peer) + " of " +
                      std::to_string(devices) + " (tag " + std::to_string(tag) +
                      ") does not fit device " + std::to_string(collectives->rank()) + " of " +
                      std::to_string(collectives->devices()));
  }
  size_t bytes = bindingBytes(*bindings.Get(0));
  uint64_t slot = kPointToPointSlots + static_cast<uint64_t>(tag);
  if (sends)
    *out = std::make_unique<SendKernel>(collectives, bytes, static_cast<int>(peer), slot);
  else
    *out = std::make_unique<ReceiveKernel>(collectives, bytes, static_cast<int>(peer), slot);
  return Status();
}

Status createAllGatherKernel(const fb::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out) {
  const auto& bindings = *call.bindings();
  if (bindings.size() != 2) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_gather' takes one tensor and writes one, not " +
                      std::to_string(bindings.size()) + " bindings");
  }
  int64_t devices = intParam(call, contract::param::kDevices, 0);
  if (Status s =
          checkSessionDevices("'gloo.all_gather'", "gathers from", devices, collectives.get());
      !s.ok())
    return s;
  uint64_t bytes = bindingBytes(*bindings.Get(0));
  const fb::TensorType& in = *bindings.Get(0)->type();
  const fb::TensorType& result = *bindings.Get(1)->type();
  if (in.element_type() != result.element_type() ||
      bindingBytes(*bindings.Get(1)) != bytes * static_cast<uint64_t>(devices)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "'gloo.all_gather' writes " + std::to_string(devices) + " times its operand's " +
                      std::to_string(bytes) + " bytes of one element type, not " +
                      std::to_string(bindingBytes(*bindings.Get(1))));
  }
  *out = std::make_unique<AllGatherKernel>(collectives, bytes, collectives->nextTag());
  return Status();
}

}  // namespace kiln::runtime::cpu
