//===- Calibrate.cpp - kiln calibrate: the host's figures for the cost model ------===//

#include "Calibrate.h"

#include "Program.h"

#include "compiler/fusion/CostModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <omp.h>
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

namespace kiln::cli {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The best time of `run` over repetitions lasting about `budget` seconds (at least `minimum`).
template <typename Fn> double bestSeconds(Fn &&run, double budget, int minimum) {
  double best = 1e30;
  Clock::time_point start = Clock::now();
  for (int i = 0; i < minimum || secondsSince(start) < budget; ++i) {
    Clock::time_point begin = Clock::now();
    run();
    best = std::min(best, secondsSince(begin));
  }
  return best;
}

/// oneDNN's f32 matmul of two n x n matrices (weights in the layout it prefers, as the runtime's
/// products with constant weights take them), the best of its repetitions: what a product of the
/// program reaches, the arithmetic peak the roofline charges compute against.
double measureFlops() {
  constexpr int64_t n = 1024;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  using tag = dnnl::memory::format_tag;
  using dt = dnnl::memory::data_type;
  dnnl::memory::desc a({n, n}, dt::f32, tag::ab), b_any({n, n}, dt::f32, tag::any),
      b_plain({n, n}, dt::f32, tag::ab), c({n, n}, dt::f32, tag::ab);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, b_any, c), engine);
  std::vector<float> a_data(n * n), b_data(n * n), c_data(n * n);
  // Never zeros: values in [-1, 1), as the runtime's random inputs.
  uint32_t state = 12345;
  auto next = [&state] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  };
  for (size_t i = 0; i < a_data.size(); ++i) {
    a_data[i] = next();
    b_data[i] = next();
  }
  dnnl::memory a_memory(a, engine, a_data.data()), c_memory(c, engine, c_data.data());
  dnnl::memory b_source(b_plain, engine, b_data.data()), b_memory(pd.weights_desc(), engine);
  dnnl::reorder(b_source, b_memory).execute(stream, b_source, b_memory);
  dnnl::matmul matmul(pd);
  auto run = [&] {
    matmul.execute(
        stream, {{DNNL_ARG_SRC, a_memory}, {DNNL_ARG_WEIGHTS, b_memory}, {DNNL_ARG_DST, c_memory}});
    stream.wait();
  };
  run(); // Creates oneDNN's threads and JIT code.
  double seconds = bestSeconds(run, 0.5, 5);
  return 2.0 * n * n * n / seconds;
}

/// A triad a = b + s * c over arrays four times the last-level cache (64 to 512 MiB each),
/// split over the threads as the runtime's kernels split their tiles: STREAM's figure, counting
/// the three arrays' bytes.
double measureBandwidth(int64_t cacheBytes) {
  size_t bytes =
      std::clamp<size_t>(static_cast<size_t>(cacheBytes) * 4, size_t(64) << 20, size_t(512) << 20);
  size_t count = bytes / sizeof(float);
  std::unique_ptr<float[]> a(new float[count]), b(new float[count]), c(new float[count]);
  // First touch on the threads that use them (each thread's pages near its core).
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < count; ++i) {
    a[i] = 0.5f;
    b[i] = static_cast<float>(i % 1000) * 1e-3f;
    c[i] = 1.0f - b[i];
  }
  float s = 0.75f;
  auto run = [&] {
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < count; ++i)
      a[i] = b[i] + s * c[i];
    s += 1e-3f;
  };
  double seconds = bestSeconds(run, 1.0, 4);
  return 3.0 * static_cast<double>(count * sizeof(float)) / seconds;
}

/// One parallel region of the session's threads doing nothing: what a kernel step costs before
/// its work (the CPU runtime runs each kernel as such a region).
double measureDispatch() {
  constexpr int kRegions = 2000;
  volatile int sink = 0;
  auto run = [&] {
    for (int i = 0; i < kRegions; ++i) {
#pragma omp parallel
      {
        if (omp_get_thread_num() == 0)
          sink = sink + 1;
      }
    }
  };
  run();
  return bestSeconds(run, 0.3, 3) / kRegions;
}

/// The largest cache the kernel reports for CPU 0 (/sys), else sysconf's level 3.
int64_t lastLevelCacheBytes() {
  int64_t best = 0, bestLevel = -1;
  for (int index = 0; index < 8; ++index) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream levelFile(dir + "level"), sizeFile(dir + "size");
    int64_t level = 0;
    std::string size;
    if (!(levelFile >> level) || !(sizeFile >> size) || size.empty())
      continue;
    int64_t scale = 1;
    char unit = size.back();
    if (unit == 'K')
      scale = 1024;
    else if (unit == 'M')
      scale = 1024 * 1024;
    int64_t value = std::atoll(size.c_str()) * scale;
    if (level > bestLevel || (level == bestLevel && value > best)) {
      best = value;
      bestLevel = level;
    }
  }
  if (best > 0)
    return best;
  long level3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return level3 > 0 ? level3 : 0;
}

/// "AMD EPYC" from /proc/cpuinfo, or "an unnamed CPU".
std::string cpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size())
        return line.substr(colon + 2);
    }
  return "an unnamed CPU";
}

std::string today() {
  std::time_t now = std::time(nullptr);
  char buffer[16];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%d", std::gmtime(&now));
  return buffer;
}

/// Measures this host with `threads` threads (0: one per core).
fusion::DeviceDescription measureHost(int threads, bool quiet) {
  if (threads <= 0)
    threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  omp_set_num_threads(threads);
  auto say = [&](const std::string &line) {
    if (!quiet)
      llvm::errs() << line << "\n";
  };
  char host[256] = "this host";
  gethostname(host, sizeof(host) - 1);
  std::string machine = std::string(host) + " (" + cpuModel();
  say("measuring " + machine + ", " + std::to_string(threads) +
      " threads) for the fusion cost model");
  fusion::DeviceDescription d;
  d.name = "host";
  d.parallelUnits = threads;
  d.cacheBytes = lastLevelCacheBytes();
  d.fp32FlopsPerSecond = measureFlops();
  say(llvm::formatv("  fp32 arithmetic: {0:F1} GFLOP/s (oneDNN matmul 1024x1024x1024, best run)",
                    d.fp32FlopsPerSecond * 1e-9)
          .str());
  // The CPU computes half-precision kernels in f32 between conversions.
  d.fp16FlopsPerSecond = d.fp32FlopsPerSecond;
  d.bytesPerSecond = measureBandwidth(d.cacheBytes);
  say(llvm::formatv("  memory bandwidth: {0:F1} GB/s (triad, best run)", d.bytesPerSecond * 1e-9)
          .str());
  d.launchSeconds = measureDispatch();
  say(llvm::formatv("  kernel dispatch: {0:F2} us (one parallel region of {1} threads)",
                    d.launchSeconds * 1e6, threads)
          .str());
  say(llvm::formatv("  units: {0} threads; last-level cache: {1} MiB", threads, d.cacheBytes >> 20)
          .str());
  d.source = "measured on " + machine + "), " + today();
  return d;
}

bool writeDescription(const fusion::DeviceDescription &description, const std::string &path) {
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  if (!directory.empty() && llvm::sys::fs::create_directories(directory)) {
    printError("cannot create " + std::string(directory));
    return false;
  }
  // Written beside and renamed, so a reader never sees half a file.
  std::string partial = path + ".partial";
  {
    std::ofstream file(partial, std::ios::trunc);
    file << description.toJson();
    if (!file.good()) {
      printError("cannot write " + partial);
      return false;
    }
  }
  if (std::error_code error = llvm::sys::fs::rename(partial, path)) {
    printError("cannot write " + path + ": " + error.message());
    return false;
  }
  return true;
}

} // namespace

std::string hostDescriptionPath() {
  std::string base;
  if (std::optional<std::string> xdg = llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
      xdg && !xdg->empty())
    base = *xdg;
  else if (std::optional<std::string> home = llvm::sys::Process::GetEnv("HOME"); home)
    base = *home + "/.cache";
  else
    base = "/tmp";
  return base + "/kiln/host-device.json";
}

int runCalibrate(const CalibrateCommand &command) {
  std::string path = command.output.empty() ? hostDescriptionPath() : command.output;
  // Kiln's own cache is remeasured in place; a file the user named is theirs.
  if (!command.output.empty() && refuseOverwrite(path, command.force))
    return kExitUsage;
  fusion::DeviceDescription description = measureHost(command.threads, command.quiet);
  if (!writeDescription(description, path))
    return kExitFailure;
  llvm::outs() << "wrote " << path << " (kiln compile --cost-model "
               << (command.output.empty() ? std::string("host") : path) << ")\n";
  return 0;
}

std::string ensureHostDescription(bool quiet, std::string &error) {
  std::string path = hostDescriptionPath();
  if (llvm::sys::fs::exists(path))
    return path;
  if (!quiet)
    llvm::errs() << "no measured description of this host yet (" << path << ")\n";
  if (!writeDescription(measureHost(0, quiet), path)) {
    error = "cannot write " + path;
    return "";
  }
  return path;
}

} // namespace kiln::cli
