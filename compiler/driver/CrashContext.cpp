//===- CrashContext.cpp - What the compiler was doing when it crashed ------===//
//
// Records are fixed-size buffers in thread-local storage, written as work starts (where
// formatting may allocate) and only read by the handler, which copies them into a static buffer
// with plain byte copies and write(2), the async-signal-safe calls a handler may make.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/CrashContext.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstring>
#include <unistd.h>

namespace kiln::crash {
namespace {

constexpr size_t kRecordBytes = 400;
constexpr int kDepth = 8;

/// One thread's records, outermost first. Deeper nesting than kDepth is counted, not recorded.
struct Records {
  char text[kDepth][kRecordBytes];
  int depth = 0;
};
thread_local Records records;

char subject[kRecordBytes];
char toolName[32] = "kiln";

void copyTruncated(char *to, size_t size, llvm::StringRef from) {
  size_t n = std::min(from.size(), size - 1);
  std::memcpy(to, from.data(), n);
  to[n] = '\0';
}

void push(llvm::StringRef what) {
  if (records.depth < kDepth)
    copyTruncated(records.text[records.depth], kRecordBytes, what);
  ++records.depth;
}

void pop() {
  if (records.depth > 0)
    --records.depth;
}

/// The pass manager's own adaptors (which run nested pipelines) say nothing the passes they run
/// do not.
bool isAdaptor(mlir::Pass *pass) {
  return pass->getArgument().empty() && pass->getName().starts_with("Pipeline Collection");
}

/// "pass 'kiln-cpu-channels-last' on 'func.func' @main (model.onnx:0:0)".
std::string describePass(mlir::Pass *pass, mlir::Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::StringRef argument = pass->getArgument();
  os << "pass '" << (argument.empty() ? pass->getName() : argument) << "' on '" << op->getName()
     << "'";
  if (auto name = op->getAttrOfType<mlir::StringAttr>(mlir::SymbolTable::getSymbolAttrName()))
    os << " @" << name.getValue();
  os << " at ";
  op->getLoc().print(os);
  return text;
}

class Instrumentation : public mlir::PassInstrumentation {
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    if (!isAdaptor(pass))
      push(describePass(pass, op));
  }
  void runAfterPass(mlir::Pass *pass, mlir::Operation *) override {
    if (!isAdaptor(pass))
      pop();
  }
  void runAfterPassFailed(mlir::Pass *pass, mlir::Operation *) override {
    if (!isAdaptor(pass))
      pop();
  }
};

const char *signalName(int signal) {
  switch (signal) {
  case SIGSEGV:
    return "SIGSEGV, an invalid memory access";
  case SIGBUS:
    return "SIGBUS, an invalid memory access";
  case SIGFPE:
    return "SIGFPE, an arithmetic fault";
  case SIGILL:
    return "SIGILL, an illegal instruction";
  case SIGABRT:
    return "SIGABRT, an abort";
  default:
    return "a fatal signal";
  }
}

/// Appends `text` to the message being built in `out` (async-signal-safe).
struct Message {
  char *out;
  size_t size;
  size_t used = 0;
  void append(const char *text) {
    for (; *text && used + 1 < size; ++text)
      out[used++] = *text;
    out[used] = '\0';
  }
};

/// The message for `signal`, from this thread's records (async-signal-safe).
size_t formatCrash(int signal, char *out, size_t size) {
  Message message{out, size};
  message.append(toolName);
  message.append(": internal error: ");
  message.append(signalName(signal));
  int depth = std::min(records.depth, kDepth);
  if (depth > 0) {
    message.append(" in ");
    message.append(records.text[depth - 1]);
    for (int i = depth - 2; i >= 0; --i) {
      message.append("\n  within ");
      message.append(records.text[i]);
    }
  }
  if (subject[0]) {
    message.append("\n  compiling ");
    message.append(subject);
  }
  message.append("\n  This is a bug in Kiln, not in the model; a report with the model (or the "
                 "IR that --dump-ir writes before the crash) lets it be fixed.\n");
  return message.used;
}

char alternateStack[1 << 16];
char crashMessage[4 * kDepth * kRecordBytes];

void handle(int signal) {
  size_t length = formatCrash(signal, crashMessage, sizeof(crashMessage));
  for (size_t written = 0; written < length;) {
    ssize_t n = ::write(STDERR_FILENO, crashMessage + written, length - written);
    if (n <= 0)
      break;
    written += static_cast<size_t>(n);
  }
  ::_exit(kExitInternalError);
}

} // namespace

void setSubject(llvm::StringRef text) { copyTruncated(subject, sizeof(subject), text); }

void instrument(mlir::PassManager &pm) {
  pm.addInstrumentation(std::make_unique<Instrumentation>());
}

Scope::Scope(llvm::StringRef what) { push(what); }
Scope::~Scope() { pop(); }

void installHandler(const char *tool) {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true))
    return;
  copyTruncated(toolName, sizeof(toolName), tool);
  // A stack overflow (deep recursion over a user's graph) leaves no stack to handle it on.
  stack_t stack{};
  stack.ss_sp = alternateStack;
  stack.ss_size = sizeof(alternateStack);
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = handle;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT})
    ::sigaction(signal, &action, nullptr);
}

std::string describeCrash(int signal) {
  std::string text(sizeof(crashMessage), '\0');
  text.resize(formatCrash(signal, text.data(), text.size()));
  return text;
}

} // namespace kiln::crash
