//===- collectives.h - Collectives between the CPU devices of a partition --*- C++ -*-===//
//
// A partitioned artifact (kiln compile --devices N) runs as N sessions, one per device, in one
// process or in several. Each session joins a Gloo context of N ranks through a rendezvous
// directory (a Gloo FileStore: every rank writes its TCP address there and reads the others'),
// connects a full mesh over loopback TCP, and runs its "gloo.*" library calls on it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_COLLECTIVES_H_
#define KILN_RUNTIME_SRC_CPU_COLLECTIVES_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"

namespace gloo {
class Context;
namespace transport {
class UnboundBuffer;
}
}  // namespace gloo

namespace kiln::runtime::cpu {

class LibraryCallKernel;

/// The devices of one partitioned model, as seen from one of them.
class Collectives {
 public:
  /// Joins the `devices` ranks that meet in the directory `rendezvous` as rank `rank`, waiting up
  /// to `timeout` for the others. UNAVAILABLE naming the directory when they do not come or the
  /// connection fails.
  static Result<std::shared_ptr<Collectives>> connect(uint32_t rank, uint32_t devices,
                                                      const std::string& rendezvous,
                                                      std::chrono::milliseconds timeout);

  uint32_t rank() const { return rank_; }
  uint32_t devices() const { return devices_; }

  /// Sums `count` floats at `data` over every device, in place. `tag` tells the calls of one run
  /// apart (each call site has its own).
  Status allReduceSum(float* data, size_t count, uint32_t tag);

  /// Writes the `bytes` bytes at `input` of every device to `output`, device after device
  /// (`output` holds devices() times `bytes`).
  Status allGather(const void* input, void* output, size_t bytes, uint32_t tag);

  /// Copies `bytes` bytes at `data` on device `root` to `data` on every other device.
  Status broadcast(void* data, size_t bytes, uint32_t root, uint32_t tag);

  /// A buffer over `bytes` bytes at `data` that sends them to, or receives them from, one other
  /// device (Gloo's unbound buffer; point-to-point transfers name a slot both ends agree on).
  std::unique_ptr<gloo::transport::UnboundBuffer> createBuffer(void* data, size_t bytes);
  /// How long a transfer may wait for the other device.
  std::chrono::milliseconds timeout() const;

  /// A new tag for a call site.
  uint32_t nextTag() { return next_tag_++; }

  /// Held for a whole run: every device must make its collective calls in the same order, so
  /// the runs of a session take turns.
  std::mutex& runMutex() { return run_mutex_; }

 private:
  Collectives(uint32_t rank, uint32_t devices, std::shared_ptr<gloo::Context> context)
      : rank_(rank), devices_(devices), context_(std::move(context)) {}

  uint32_t rank_;
  uint32_t devices_;
  std::shared_ptr<gloo::Context> context_;
  uint32_t next_tag_ = 1;
  std::mutex run_mutex_;
};

/// The session's side of a collective `call` (its label, e.g. "'gloo.all_reduce'") that `verb`
/// ("sums over") `devices` devices: FAILED_PRECONDITION when the session has no collectives (a
/// single device's), INVALID_ARGUMENT when its partition has another number of devices.
Status checkSessionDevices(const std::string& call, const std::string& verb, int64_t devices,
                           const Collectives* collectives);

/// Prepares a "gloo.broadcast" call (the root's: its input sent, and written to its result) or a
/// "gloo.receive" call (another device's: the root's tensor written to its result).
Status createBroadcastKernel(const kiln::artifact::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out);

/// Prepares a "gloo.all_reduce" call (operand and result of one f32 type; `devices` must be the
/// session's). INVALID_ARGUMENT naming what is wrong; FAILED_PRECONDITION when the session was
/// created without collectives (a single device).
Status createAllReduceKernel(const kiln::artifact::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out);

/// Prepares a "gloo.send" call (its operand sent to device `peer` under slot `tag`, without
/// waiting: the bytes are staged, and the call's next run waits for the previous transfer) or a
/// "gloo.recv" call (the tensor device `peer` sends under `tag`, written to its result).
Status createPointToPointKernel(const kiln::artifact::LibraryCall& call,
                                const std::shared_ptr<Collectives>& collectives,
                                std::unique_ptr<LibraryCallKernel>* out);

/// Prepares a "gloo.all_gather" call (any element type; the result holds `devices` times the
/// operand's bytes; `devices` must be the session's).
Status createAllGatherKernel(const kiln::artifact::LibraryCall& call,
                             const std::shared_ptr<Collectives>& collectives,
                             std::unique_ptr<LibraryCallKernel>* out);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_COLLECTIVES_H_
