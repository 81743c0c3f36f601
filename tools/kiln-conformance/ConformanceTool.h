//===- ConformanceTool.h - The ONNX node-test runner as a library -*- C++ -*-===//
//
// The command line of kiln-conformance, callable from another tool: `kiln conformance ARGS` runs
// the same suite, so one binary carries the compiler, the runtime and the suite to a machine
// that has neither LLVM nor the ONNX libraries installed (scripts/gpu-check.sh).
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_KILN_CONFORMANCE_CONFORMANCETOOL_H
#define TOOLS_KILN_CONFORMANCE_CONFORMANCETOOL_H

namespace kiln::conformance {

/// Runs kiln-conformance with `argv` (argv[0] is the program's name) and returns its exit code.
int runConformanceTool(int argc, char **argv);

} // namespace kiln::conformance

#endif // TOOLS_KILN_CONFORMANCE_CONFORMANCETOOL_H
