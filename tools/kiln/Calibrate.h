//===- Calibrate.h - kiln calibrate: the host's figures for the cost model -*- C++ -*-===//
//
// The fusion planner ranks its decisions by a device description (compiler/fusion/CostModel.h).
// For the CPU the published default is a conservative two-core host; `kiln calibrate` measures
// this host instead (oneDNN's f32 matmul rate, a triad's memory bandwidth, the cost of one
// parallel region of the runtime's threads, the cores and the last-level cache) and writes the
// description as JSON, which `kiln compile --cost-model FILE` reads, or `--cost-model host`
// (the description measured into Kiln's cache, measuring first where there is none).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_CALIBRATE_H
#define KILN_TOOLS_KILN_CALIBRATE_H

#include <string>

namespace kiln::cli {

/// `kiln calibrate [-o FILE] [--threads N]`.
struct CalibrateCommand {
  /// Where to write the description (empty: Kiln's cache, hostDescriptionPath()).
  std::string output;
  /// Threads the measurement runs (0: one per core, as a session does).
  int threads = 0;
  bool force = false;
  bool quiet = false;
};

int runCalibrate(const CalibrateCommand &command);

/// The file `kiln calibrate` writes by default: $XDG_CACHE_HOME/kiln/host-device.json, or
/// ~/.cache/kiln/host-device.json.
std::string hostDescriptionPath();

/// `--cost-model host`: the path of this host's description, measured (with progress unless
/// `quiet`) when the cache has none; empty, with `error` set, when it cannot be written.
std::string ensureHostDescription(bool quiet, std::string &error);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_CALIBRATE_H
