//===- CrashContext.h - What the compiler was doing when it crashed -*- C++ -*-===//
//
// A crash in a pass (a null dereference, an assertion, a stack overflow on a user's model) must
// reach the user as an error naming the pass and the op it was working on, with an exit code of
// its own, never as a bare signal. The driver instruments every pass manager it runs: each thread
// records, as a pass starts, the pass and the op it runs on (pre-formatted, so that printing them
// needs no allocation), and work outside passes (importing a model, writing the artifact) is
// recorded by a scope. A tool installs the handler once: on SIGSEGV, SIGBUS, SIGFPE, SIGILL or
// SIGABRT it prints the crashing thread's innermost record and the model, and exits with
// kExitInternalError.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_CRASHCONTEXT_H_
#define KILN_COMPILER_DRIVER_CRASHCONTEXT_H_

#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"

namespace kiln::crash {

/// The exit code of a process the handler ends: an internal error, not the user's.
constexpr int kExitInternalError = 3;

/// Names what the process is compiling (the model's file) in a crash's message.
void setSubject(llvm::StringRef subject);

/// Adds to `pm` the instrumentation that records, per thread, each pass as it runs and the op it
/// runs on.
void instrument(mlir::PassManager &pm);

/// Records work outside passes on this thread for as long as it lives ("importing the ONNX
/// model", "writing the artifact").
class Scope {
public:
  explicit Scope(llvm::StringRef what);
  ~Scope();
  Scope(const Scope &) = delete;
  Scope &operator=(const Scope &) = delete;
};

/// Installs the handler of fatal signals (once; later calls do nothing). `tool` opens its
/// message ("kiln").
void installHandler(const char *tool);

/// The message the handler prints for `signal` on this thread now (for tests).
std::string describeCrash(int signal);

} // namespace kiln::crash

#endif // KILN_COMPILER_DRIVER_CRASHCONTEXT_H_
