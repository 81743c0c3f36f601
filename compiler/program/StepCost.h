//===- StepCost.h - The modeled time of a program step -----------*- C++ -*-===//
//
// The fusion planner's roofline (compiler/fusion/CostModel.h) applied to program steps, for the
// program passes that weigh steps against each other: rematerialization (what a recomputation
// costs) and stream assignment (when a step may finish).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAM_STEPCOST_H
#define KILN_COMPILER_PROGRAM_STEPCOST_H

#include "compiler/fusion/CostModel.h"

#include "dialects/program/ProgramOps.h"

namespace kiln {

/// The work of one step: the bytes of its bindings, and for the library calls (matrix products,
/// convolutions) their multiply-adds.
fusion::KernelWork stepWork(mlir::Operation *step);

/// The modeled time of one step on `device`.
double stepSeconds(mlir::Operation *step, const fusion::DeviceDescription &device);

/// The device description of the program's target: the host CPU's, or the A100's for CUDA.
fusion::DeviceDescription programDevice(program::ProgramOp program);

} // namespace kiln

#endif // KILN_COMPILER_PROGRAM_STEPCOST_H
