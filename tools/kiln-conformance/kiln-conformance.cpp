//===- kiln-conformance.cpp - The ONNX backend node tests, run through Kiln -===//
//
// `kiln-conformance [--data DIR] [--filter REGEX] [--jobs N] [--json FILE] [--timeout S]` runs
// every ONNX backend node test (a directory with model.onnx and test_data_set_0/) through import,
// compilation, the runtime and a comparison with the reference outputs. Each test runs in its own
// forked process with a time limit, so a crash or a hang fails that test alone; the supervisor
// creates no threads, and each child builds its MLIR context without multithreading. Prints one
// line per test, the summary `N passed, M failed, K skipped (P% of T passed)` and the failures
// and skips grouped by reason; writes every outcome as JSON when asked.
//
//===----------------------------------------------------------------------===//

#include "tools/kiln-conformance/ConformanceTool.h"
#include "NodeTest.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

using kiln::conformance::TestOutcome;
using kiln::conformance::TestStatus;
using Clock = std::chrono::steady_clock;

/// Exit codes: 0 the run completed (and met --min-passed), 1 fewer tests passed than
/// --min-passed, 2 a bad command line or no tests.
constexpr int kExitBelowFloor = 1;
constexpr int kExitUsage = 2;

struct Settings {
  std::string dataDirectory = KILN_ONNX_NODE_TESTDATA;
  std::string filter;
  unsigned jobs = 1;
  std::string jsonPath;
  double timeoutSeconds = 60;
  uint64_t memoryLimitMiB = 8192;
  int minPassed = -1;
  bool list = false;
  bool quiet = false;
  kiln::conformance::NodeTestOptions test;
};

/// One test's result, as recorded in the JSON report.
struct TestRecord {
  std::string name;
  TestOutcome outcome;
  double seconds = 0;
};

/// The tests under `directory`: its subdirectories holding model.onnx, by name.
std::vector<std::string> listTests(const std::string &directory, const std::string &filter) {
  std::vector<std::string> names;
  std::regex pattern(filter.empty() ? std::string(".*") : filter);
  std::error_code error;
  for (const auto &entry : std::filesystem::directory_iterator(directory, error)) {
    std::string name = entry.path().filename().string();
    if (std::filesystem::is_regular_file(entry.path() / "model.onnx") &&
        std::regex_search(name, pattern))
      names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

//===----------------------------------------------------------------------===//
// The child process
//===----------------------------------------------------------------------===//

/// Writes all of `text` to `fd`, retrying short writes.
void writeAll(int fd, const std::string &text) {
  const char *data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written < 0 && errno == EINTR)
      continue;
    if (written <= 0)
      return;
    data += written;
    left -= static_cast<size_t>(written);
  }
}

/// Runs one test in the child and reports to the parent through `fd`: a "stage NAME" line as
/// each stage starts, then one "result JSON" line.
[[noreturn]] void runChild(const Settings &settings, const std::string &name, int fd) {
  // The CUDA driver reserves address space beyond the GPU's memory when it starts, which an
  // address-space limit turns into a failed initialization: on a GPU the tests run without one.
  if (settings.memoryLimitMiB > 0 && settings.test.device != "cuda") {
    rlimit limit{};
    limit.rlim_cur = limit.rlim_max = settings.memoryLimitMiB * 1024 * 1024;
    setrlimit(RLIMIT_AS, &limit);
  }
  std::string directory = (std::filesystem::path(settings.dataDirectory) / name).string();
  TestOutcome outcome =
      kiln::conformance::runNodeTest(directory, settings.test, [fd](const std::string &stage) {
        writeAll(fd, "stage " + stage + "\n");
      });
  nlohmann::json result = {{"status", testStatusName(outcome.status)},
                           {"stage", outcome.stage},
                           {"reason", outcome.reason},
                           {"message", outcome.message}};
  writeAll(fd, "result " + result.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                   "\n");
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(0);
}

//===----------------------------------------------------------------------===//
// The supervisor
//===----------------------------------------------------------------------===//

/// A test running in a child process.
struct RunningTest {
  std::string name;
  pid_t pid = -1;
  int fd = -1;
  Clock::time_point started;
  std::string received;
  bool timedOut = false;
};

/// The last stage a child announced, from what it wrote so far.
std::string lastStage(const std::string &received) {
  std::string stage = "load";
  size_t position = 0;
  while ((position = received.find("stage ", position)) != std::string::npos) {
    if (position == 0 || received[position - 1] == '\n') {
      size_t end = received.find('\n', position);
      stage = received.substr(position + 6,
                              end == std::string::npos ? std::string::npos : end - position - 6);
    }
    position += 6;
  }
  return stage;
}

/// Turns what a finished child wrote and how it ended into the test's outcome.
TestOutcome finishOutcome(const RunningTest &test, int waitStatus, double timeoutSeconds) {
  std::string stage = lastStage(test.received);
  auto failure = [&](const std::string &reason) {
    return TestOutcome{TestStatus::Fail, stage, reason, reason};
  };
  if (test.timedOut) {
    std::ostringstream text;
    text << "timeout: no result within " << timeoutSeconds << " s";
    return failure(text.str());
  }
  size_t result = test.received.rfind("result ");
  if (WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) == 0 && result != std::string::npos &&
      (result == 0 || test.received[result - 1] == '\n')) {
    nlohmann::json json = nlohmann::json::parse(test.received.substr(result + 7), nullptr,
                                                /*allow_exceptions=*/false);
    if (!json.is_discarded()) {
      TestOutcome outcome;
      std::string status = json.value("status", "fail");
      outcome.status = status == "pass"   ? TestStatus::Pass
                       : status == "skip" ? TestStatus::Skip
                                          : TestStatus::Fail;
      outcome.stage = json.value("stage", "");
      outcome.reason = json.value("reason", "");
      outcome.message = json.value("message", "");
      return outcome;
    }
  }
  if (WIFSIGNALED(waitStatus)) {
    int signal = WTERMSIG(waitStatus);
    const char *description = strsignal(signal);
    return failure("crash: killed by signal " + std::to_string(signal) + " (" +
                   (description ? description : "?") + ")");
  }
  if (WIFEXITED(waitStatus))
    return failure("crash: exited with status " + std::to_string(WEXITSTATUS(waitStatus)) +
                   " before reporting a result");
  return failure("crash: ended without a result");
}

/// A grouping key for a reason: quoted names, numbers and tensor types are replaced, so failures
/// that differ only in those fall in one group.
std::string reasonGroup(const TestRecord &record) {
  const TestOutcome &outcome = record.outcome;
  if (outcome.status == TestStatus::Skip)
    return outcome.reason;
  static const std::regex quoted("'[^']*'"), types("(tensor|memref|vector)<[^>]*>"),
      numbers("[0-9]+"), nodePrefix("^node '…' \\(([A-Za-z0-9_]+), opset N\\): ");
  std::string text = std::regex_replace(outcome.reason, quoted, "'…'");
  text = std::regex_replace(text, types, "$1<…>");
  text = std::regex_replace(text, numbers, "N");
  text = std::regex_replace(text, nodePrefix, "$1: ");
  if (text.size() > 120)
    text = text.substr(0, 117) + "...";
  return outcome.stage + ": " + text;
}

/// Prints the groups of `status`, largest first.
void printGroups(const std::vector<TestRecord> &records, TestStatus status, const char *title) {
  std::map<std::string, std::vector<const TestRecord *>> groups;
  for (const TestRecord &record : records)
    if (record.outcome.status == status)
      groups[reasonGroup(record)].push_back(&record);
  if (groups.empty())
    return;
  std::vector<std::pair<std::string, std::vector<const TestRecord *>>> sorted(groups.begin(),
                                                                              groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second.size() > b.second.size(); });
  std::printf("%s:\n", title);
  for (const auto &[group, members] : sorted)
    std::printf("  %4zu  %s  (e.g. %s)\n", members.size(), group.c_str(),
                members.front()->name.c_str());
}

void writeJson(const Settings &settings, const std::vector<TestRecord> &records, int passed,
               int failed, int skipped, double seconds) {
  nlohmann::json tests = nlohmann::json::array();
  for (const TestRecord &record : records)
    tests.push_back({{"name", record.name},
                     {"status", testStatusName(record.outcome.status)},
                     {"stage", record.outcome.stage},
                     {"reason", record.outcome.reason},
                     {"group", reasonGroup(record)},
                     {"message", record.outcome.message},
                     {"seconds", record.seconds}});
  nlohmann::json report = {{"data", settings.dataDirectory},
                           {"filter", settings.filter},
                           {"total", records.size()},
                           {"passed", passed},
                           {"failed", failed},
                           {"skipped", skipped},
                           {"seconds", seconds},
                           {"tests", tests}};
  std::ofstream out(settings.jsonPath);
  out << report.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  if (!out)
    std::fprintf(stderr, "kiln-conformance: error: cannot write '%s'\n", settings.jsonPath.c_str());
}

int runAll(const Settings &settings, const std::vector<std::string> &names) {
  // Children that die are reaped here; a closed pipe must not kill the supervisor.
  std::signal(SIGPIPE, SIG_IGN);
  std::vector<TestRecord> records(names.size());
  std::vector<RunningTest> running;
  size_t next = 0, done = 0;
  std::map<std::string, size_t> indexOf;
  for (size_t i = 0; i < names.size(); ++i)
    indexOf[names[i]] = i;
  Clock::time_point start = Clock::now();
  int passed = 0, failed = 0, skipped = 0;

  auto finish = [&](RunningTest &test, int waitStatus) {
    TestRecord &record = records[indexOf[test.name]];
    record.name = test.name;
    record.outcome = finishOutcome(test, waitStatus, settings.timeoutSeconds);
    record.seconds = std::chrono::duration<double>(Clock::now() - test.started).count();
    ++done;
    const char *label = "PASS";
    switch (record.outcome.status) {
    case TestStatus::Pass:
      ++passed;
      break;
    case TestStatus::Fail:
      ++failed;
      label = "FAIL";
      break;
    case TestStatus::Skip:
      ++skipped;
      label = "SKIP";
      break;
    }
    if (!settings.quiet || record.outcome.status == TestStatus::Fail) {
      std::printf("[%zu/%zu] %s %s (%.2f s)", done, names.size(), label, test.name.c_str(),
                  record.seconds);
      if (record.outcome.status != TestStatus::Pass)
        std::printf(": %s: %s", record.outcome.stage.c_str(), record.outcome.reason.c_str());
      std::printf("\n");
      std::fflush(stdout);
    }
  };

  while (next < names.size() || !running.empty()) {
    while (next < names.size() && running.size() < settings.jobs) {
      int pipeFds[2];
      if (::pipe(pipeFds) != 0) {
        std::perror("kiln-conformance: pipe");
        return kExitUsage;
      }
      std::fflush(nullptr);
      pid_t pid = ::fork();
      if (pid < 0) {
        std::perror("kiln-conformance: fork");
        return kExitUsage;
      }
      if (pid == 0) {
        ::close(pipeFds[0]);
        runChild(settings, names[next], pipeFds[1]);
      }
      ::close(pipeFds[1]);
      RunningTest test;
      test.name = names[next++];
      test.pid = pid;
      test.fd = pipeFds[0];
      test.started = Clock::now();
      running.push_back(std::move(test));
    }

    std::vector<pollfd> fds;
    for (const RunningTest &test : running)
      fds.push_back(pollfd{test.fd, POLLIN, 0});
    int ready = ::poll(fds.data(), fds.size(), 100);
    if (ready < 0 && errno != EINTR) {
      std::perror("kiln-conformance: poll");
      return kExitUsage;
    }
    Clock::time_point now = Clock::now();
    for (size_t i = 0; i < running.size();) {
      RunningTest &test = running[i];
      bool ended = false;
      if (ready > 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
        char buffer[65536];
        ssize_t count = ::read(test.fd, buffer, sizeof(buffer));
        if (count > 0)
          test.received.append(buffer, static_cast<size_t>(count));
        else if (count == 0 || errno != EINTR)
          ended = true;
      }
      if (!ended &&
          std::chrono::duration<double>(now - test.started).count() > settings.timeoutSeconds) {
        ::kill(test.pid, SIGKILL);
        test.timedOut = true;
        ended = true;
      }
      if (!ended) {
        ++i;
        continue;
      }
      int waitStatus = 0;
      while (::waitpid(test.pid, &waitStatus, 0) < 0 && errno == EINTR) {
      }
      ::close(test.fd);
      finish(test, waitStatus);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
      fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(i));
    }
  }

  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::printf("\n");
  printGroups(records, TestStatus::Fail, "Failures by reason");
  printGroups(records, TestStatus::Skip, "Skips by reason");
  if (!settings.jsonPath.empty())
    writeJson(settings, records, passed, failed, skipped, seconds);
  size_t total = names.size();
  std::printf("\n%d passed, %d failed, %d skipped (%.1f%% of %zu passed) in %.0f s\n", passed,
              failed, skipped, total ? 100.0 * passed / static_cast<double>(total) : 0.0, total,
              seconds);
  if (settings.minPassed >= 0 && passed < settings.minPassed) {
    std::printf("kiln-conformance: %d passed, fewer than the floor of %d\n", passed,
                settings.minPassed);
    return kExitBelowFloor;
  }
  return 0;
}

} // namespace

int kiln::conformance::runConformanceTool(int argc, char **argv) {
  Settings settings;
  CLI::App app{"Runs the ONNX backend node tests through Kiln: import, compile, run, compare."};
  app.add_option("--data", settings.dataDirectory, "the directory of node tests")
      ->capture_default_str();
  app.add_option("--filter", settings.filter, "run only tests whose name matches this regex");
  app.add_option("--jobs,-j", settings.jobs, "tests run at once")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  app.add_option("--json", settings.jsonPath, "write every outcome to this JSON file");
  app.add_option("--timeout", settings.timeoutSeconds, "seconds one test may take")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--memory-limit-mib", settings.memoryLimitMiB,
                 "address-space limit of each test process (0: none; none with --device cuda)")
      ->capture_default_str();
  app.add_option("--rtol", settings.test.tolerance.relative, "relative tolerance")
      ->capture_default_str();
  app.add_option("--atol", settings.test.tolerance.absolute, "absolute tolerance")
      ->capture_default_str();
  app.add_option("--device", settings.test.device,
                 "compile for and run on this device: cpu, cuda, or cuda-sim (the simulated "
                 "CUDA device, on the CPU)")
      ->check(CLI::IsMember({"cpu", "cuda", "cuda-sim"}))
      ->capture_default_str();
  app.add_flag("--compile-only", settings.test.compileOnly,
               "stop after compiling: a test passes when its artifact is complete and loads "
               "(for cuda: a cubin from ptxas per architecture and the PTX fallback)");
  app.add_flag("--inputs-at-run-time", settings.test.inputsAtRunTime,
               "import each model as kiln compile does, every input fed at run time (only its "
               "shape bound), instead of specializing the import for the test's input values");
  app.add_option("--streams", settings.test.streams,
                 "compile each test to run independent steps on up to N streams (cpu)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--dump-ir", settings.test.dumpIrDirectory,
                 "write each test's IR after every compiler stage below this directory");
  app.add_option("--min-passed", settings.minPassed,
                 "exit with status 1 when fewer tests pass (a regression floor)");
  app.add_flag("--list", settings.list, "list the selected tests and exit");
  app.add_flag("--quiet,-q", settings.quiet, "print only failures and the summary");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &error) {
    int code = app.exit(error);
    return code == 0 ? 0 : kExitUsage;
  }
  std::vector<std::string> names;
  try {
    names = listTests(settings.dataDirectory, settings.filter);
  } catch (const std::regex_error &error) {
    std::fprintf(stderr, "kiln-conformance: error: bad --filter '%s': %s\n",
                 settings.filter.c_str(), error.what());
    return kExitUsage;
  }
  if (names.empty()) {
    std::fprintf(stderr, "kiln-conformance: error: no tests under '%s'%s\n",
                 settings.dataDirectory.c_str(),
                 settings.filter.empty() ? "" : " match the filter");
    return kExitUsage;
  }
  if (settings.list) {
    for (const std::string &name : names)
      std::printf("%s\n", name.c_str());
    return 0;
  }
  return runAll(settings, names);
}
