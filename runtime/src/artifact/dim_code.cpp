//===- dim_code.cpp - The dimensions of a program for a range of shapes ---===//

#include "runtime/src/artifact/dim_code.h"

#include "kiln/artifact_format.h"

#include <limits>

namespace kiln::runtime {

namespace {

/// The deepest stack a code may use.
constexpr size_t kMaxDepth = 32;

// The quotient rounded down and up, and the remainder of the floor division (the sign of b), for
// b != 0 and not INT64_MIN / -1 (whose quotient does not fit: x86 raises SIGFPE on it). None of
// them negates an operand or multiplies back, so none overflows.
int64_t floorDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t ceilDivide(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

int64_t floorModulo(int64_t a, int64_t b) {
  int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

}  // namespace

std::string checkDimCode(const flatbuffers::Vector<int64_t>& code, size_t symbol_count) {
  size_t depth = 0;
  for (flatbuffers::uoffset_t i = 0; i < code.size(); ++i) {
    int64_t op = code.Get(i);
    if (op == KILN_DIM_CONSTANT || op == KILN_DIM_SYMBOL) {
      if (i + 1 >= code.size()) return "ends inside an instruction";
      int64_t operand = code.Get(++i);
      if (op == KILN_DIM_SYMBOL && (operand < 0 || static_cast<uint64_t>(operand) >= symbol_count))
        return "reads symbol " + std::to_string(operand) + " of " + std::to_string(symbol_count);
      if (++depth > kMaxDepth) return "needs a stack deeper than " + std::to_string(kMaxDepth);
    } else if (op >= KILN_DIM_ADD && op <= KILN_DIM_MOD) {
      if (depth < 2) return "has an operation with fewer than two operands";
      --depth;
    } else {
      return "has the unknown opcode " + std::to_string(op);
    }
  }
  if (depth != 1) return "leaves " + std::to_string(depth) + " values instead of one";
  return "";
}

bool evaluateDimCode(const flatbuffers::Vector<int64_t>& code, const int64_t* values,
                     size_t value_count, int64_t* result) {
  int64_t stack[kMaxDepth];
  size_t depth = 0;
  for (flatbuffers::uoffset_t i = 0; i < code.size(); ++i) {
    int64_t op = code.Get(i);
    if (op == KILN_DIM_CONSTANT || op == KILN_DIM_SYMBOL) {
      if (i + 1 >= code.size() || depth == kMaxDepth) return false;
      int64_t operand = code.Get(++i);
      if (op == KILN_DIM_SYMBOL && (operand < 0 || static_cast<uint64_t>(operand) >= value_count))
        return false;
      stack[depth++] = op == KILN_DIM_CONSTANT ? operand : values[operand];
      continue;
    }
    if (depth < 2) return false;
    int64_t b = stack[--depth], a = stack[depth - 1], r = 0;
    switch (op) {
      case KILN_DIM_ADD:
        if (__builtin_add_overflow(a, b, &r)) return false;
        break;
      case KILN_DIM_MUL:
        if (__builtin_mul_overflow(a, b, &r)) return false;
        break;
      case KILN_DIM_FLOOR_DIV:
      case KILN_DIM_CEIL_DIV:
      case KILN_DIM_MOD:
        // A division by zero, or INT64_MIN / -1, has no 64-bit answer: the code gives no size
        // (a crafted artifact's, refused as one, never a trap).
        if (b == 0 || (b == -1 && a == std::numeric_limits<int64_t>::min())) return false;
        if (op == KILN_DIM_FLOOR_DIV)
          r = floorDivide(a, b);
        else if (op == KILN_DIM_CEIL_DIV)
          r = ceilDivide(a, b);
        else
          r = floorModulo(a, b);
        break;
      default:
        return false;
    }
    stack[depth - 1] = r;
  }
  if (depth != 1) return false;
  *result = stack[0];
  return true;
}

}  // namespace kiln::runtime
