//===- artifact_format.h - The .kiln artifact format version -----*- C -*-===//
//
// The format version of the .kiln artifact (contract/artifact.fbs) that this build writes
// and reads. The compiler's writer stores it in `Artifact.format_version`; the runtime refuses
// any other version with FAILED_PRECONDITION. Bump it whenever a field changes meaning or a
// reader would need a field an older file might not have.
//
// The header is valid C99 and C++.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INCLUDE_KILN_ARTIFACT_FORMAT_H_
#define KILN_RUNTIME_INCLUDE_KILN_ARTIFACT_FORMAT_H_

/// The one .kiln format version this build writes and reads.
#define KILN_ARTIFACT_FORMAT_VERSION 4

/// The instructions of a DimExpr's code (artifact.fbs), which the compiler writes and the
/// runtime evaluates: a constant or a symbol's value pushed (each followed by its operand), or
/// a binary operation on the two values on top of the stack.
enum kiln_dim_opcode {
  KILN_DIM_CONSTANT = 0,
  KILN_DIM_SYMBOL = 1,
  KILN_DIM_ADD = 2,
  KILN_DIM_MUL = 3,
  KILN_DIM_FLOOR_DIV = 4,
  KILN_DIM_CEIL_DIV = 5,
  KILN_DIM_MOD = 6,
};

/// The FlatBuffers file identifier at bytes [4, 8) of every .kiln file.
#define KILN_ARTIFACT_FILE_IDENTIFIER "KILN"

#endif  // KILN_RUNTIME_INCLUDE_KILN_ARTIFACT_FORMAT_H_
