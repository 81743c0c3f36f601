//===- ArtifactWriter.h - Writing the program into a .kiln artifact -*- C++ -*-===//
//
// Turns the entry function of a compiled module (calls to dispatch functions and library
// calls, views, constants) into the .kiln program: buffers with a static arena plan, steps with
// their bindings, the constants and the code objects (runtime/schema/artifact.fbs).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
#define KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace kiln {

/// A compiled code object and where each dispatch function went.
struct CodeObjectImage {
  std::string target;
  /// 0: ELF shared object, 1: cubin, 2: PTX (artifact.fbs CodeFormat).
  int format = 0;
  std::string data;
  /// The exported symbol of each kernel.
  std::vector<std::string> kernels;
};

struct KernelTable {
  std::vector<CodeObjectImage> codeObjects;
  /// One CUDA kernel launch (artifact.fbs CudaLaunch).
  struct CudaLaunch {
    unsigned kernel = 0;
    int64_t blockSize = 256;
    int64_t workItems = 1;
  };
  struct Entry {
    unsigned codeObject = 0;
    unsigned kernel = 0;
    int64_t workgroupCount = 1;
    /// CUDA: the kernels that compute the dispatch, launched in order with its bindings (a
    /// dispatch that writes nothing has none). Empty for the CPU, where `kernel` runs over
    /// `workgroupCount` workgroups.
    std::vector<CudaLaunch> cudaLaunches;
  };
  /// Dispatch function name → its code object, kernel and workgroup count.
  llvm::StringMap<Entry> dispatches;
};

struct ArtifactInfo {
  std::string device = "cpu";
  std::string source;
  std::string producer;
  /// The signature's element types as the graph declared them (the lowering turns unsigned
  /// integers signless); when empty, the entry function's own types.
  std::vector<mlir::Type> inputTypes, outputTypes;
};

/// Writes the artifact for `entry`. Fails, with a diagnostic on the op, for an op the program
/// cannot hold (anything but dispatch and library calls, views, constants and the return).
/// When `report` is set, prints the steps and the memory plan to it.
mlir::FailureOr<std::string> writeArtifact(mlir::func::FuncOp entry, const KernelTable &kernels,
                                           const ArtifactInfo &info, llvm::raw_ostream *report);

} // namespace kiln

#endif // KILN_COMPILER_ARTIFACT_ARTIFACTWRITER_H
