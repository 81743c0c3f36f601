//===- NodeTest.h - Running one ONNX backend node test through Kiln ---------===//
//
// One test is a directory with model.onnx and test_data_set_0/. It goes through the stages
// load (model and tensors) → import (specialized for the test's inputs) → compile (a .kiln
// artifact for the CPU) → run (the runtime's C API) → compare (each output with output_K.pb),
// and ends as a pass, a failure at one stage, or a skip for a reason Kiln does not claim to cover
// (strings, control flow, an operator without a translator, an element type the runtime lacks).
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_KILN_CONFORMANCE_NODETEST_H
#define TOOLS_KILN_CONFORMANCE_NODETEST_H

#include "TensorComparison.h"

#include <functional>
#include <string>

namespace kiln::conformance {

enum class TestStatus { Pass, Fail, Skip };

/// Returns "pass", "fail" or "skip".
const char *testStatusName(TestStatus status);

/// How one test ended.
struct TestOutcome {
  TestStatus status = TestStatus::Fail;
  /// The stage it ended in: "load", "import", "compile", "run", "compare" (or "done").
  std::string stage;
  /// For a skip, its category ("unsupported op: If"); for a failure, the first line of the error.
  std::string reason;
  /// Every error message, for a failure; empty otherwise.
  std::string message;
};

/// What a test run may change.
struct NodeTestOptions {
  Tolerance tolerance;
  /// When not empty, the IR after each compiler stage is written below it (one folder per test).
  std::string dumpIrDirectory;
  /// "cpu", "cuda" or "cuda-sim": the device the session runs on, and the target compiled for
  /// ("cuda" with only the simulator's code object for "cuda-sim").
  std::string device = "cpu";
  /// Stop after compiling: the test passes when the artifact is complete (for CUDA, a cubin
  /// ptxas assembled for every architecture and the PTX fallback) and loads.
  bool compileOnly = false;
  /// The most streams independent steps run on (kiln compile --streams; CPU).
  int64_t streams = 1;
  /// Import the model as `kiln compile` does, every input a value of the run (only its shape
  /// bound), instead of specializing the import for the test's inputs: an operand an operator
  /// reads (Trilu's k, CumSum's axis, ...) is then a run-time value.
  bool inputsAtRunTime = false;
};

/// Runs the test in `directory` in this process. `onStage` is called as each stage starts, so a
/// supervisor can say where a crash or hang happened. Builds its own MLIRContext with
/// multithreading off and runs sessions on the calling thread only.
TestOutcome runNodeTest(const std::string &directory, const NodeTestOptions &options,
                        const std::function<void(const std::string &stage)> &onStage);

} // namespace kiln::conformance

#endif // TOOLS_KILN_CONFORMANCE_NODETEST_H
