//===- ArtifactWriter.h - Translating the program into a .kiln artifact -*- C++ -*-===//
//
// Translates a module's planned program.program and the program.executables it dispatches into
// the .kiln FlatBuffers file (contract/artifact.fbs): the signature, the constants, the code
// objects and the steps with their bindings. It decides nothing: every buffer's place, every
// step and every kernel is already in the program.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
#define KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H

#include "dialects/program/ProgramOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

struct ArtifactInfo {
  /// The model the artifact was compiled from, and the tool that wrote it.
  std::string source;
  std::string producer;
  /// A partitioned model (kiln compile --devices N): the mode ("tensor"), the devices and which one
  /// this program is. Empty mode: a single-device artifact.
  std::string partitionMode;
  uint32_t devices = 1;
  uint32_t rank = 0;
  /// Device 0 only: the complete artifacts of devices 1 to devices - 1, written after its own
  /// constants and located by its Partition table.
  const std::vector<std::string> *deviceArtifacts = nullptr;
};

/// The module's one program.program, or an error on the module.
mlir::FailureOr<program::ProgramOp> findProgram(mlir::ModuleOp module);

/// Writes the artifact of the module's program to `os`: the FlatBuffers table, then the
/// constants section streamed from the module's constants (no copy of the weights is made).
/// Fails, with a diagnostic on the op and before anything is written, for a program that is not
/// planned, a dispatch of a kernel that was not compiled, a constant whose data does not fill
/// its type, or a step the runtime cannot run.
mlir::LogicalResult writeArtifact(mlir::ModuleOp module, const ArtifactInfo &info,
                                  llvm::raw_ostream &os);

/// The same, into memory.
mlir::FailureOr<std::string> writeArtifact(mlir::ModuleOp module, const ArtifactInfo &info);

/// Prints the program's steps and its memory plan (`kiln compile --report`).
void printProgramReport(program::ProgramOp program, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
