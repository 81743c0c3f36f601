//===- denormals.h - Flushing denormal floats to zero on the CPU -----------*- C++ -*-===//
//
// Arithmetic whose operands or results are denormal (below 1.2e-38 in f32) runs tens of times
// slower on x86 cores than on normal numbers: a sigmoid of a large negative number makes one,
// and EfficientNet's activations on CPU ran 5x slower for it. Like TensorFlow and XLA, the CPU
// device runs its steps with denormals flushed to zero (MXCSR's flush-to-zero and
// denormals-are-zero bits): a result below the normal range becomes a zero of its sign, and a
// denormal operand reads as zero, an absolute change of at most 1.2e-38. The runtime's own
// threads keep the mode; a caller's thread has it only while its run executes.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_DENORMALS_H_
#define KILN_RUNTIME_SRC_CPU_DENORMALS_H_

#if defined(__SSE__) || defined(__x86_64__)
#include <xmmintrin.h>
#define KILN_HAS_MXCSR 1
#endif

namespace kiln::runtime::cpu {

#ifdef KILN_HAS_MXCSR
/// MXCSR's flush-to-zero (bit 15) and denormals-are-zero (bit 6).
inline constexpr unsigned kFlushDenormalBits = 0x8040;
#endif

/// Sets the calling thread to flush denormals for good (the runtime's own threads).
inline void flushDenormalsOnThisThread() {
#ifdef KILN_HAS_MXCSR
  _mm_setcsr(_mm_getcsr() | kFlushDenormalBits);
#endif
}

/// Flushes denormals on the calling thread while it lives, then restores the thread's mode.
class ScopedFlushDenormals {
 public:
  ScopedFlushDenormals() {
#ifdef KILN_HAS_MXCSR
    saved_ = _mm_getcsr();
    _mm_setcsr(saved_ | kFlushDenormalBits);
#endif
  }
  ~ScopedFlushDenormals() {
#ifdef KILN_HAS_MXCSR
    _mm_setcsr(saved_);
#endif
  }
  ScopedFlushDenormals(const ScopedFlushDenormals&) = delete;
  ScopedFlushDenormals& operator=(const ScopedFlushDenormals&) = delete;

 private:
  unsigned saved_ = 0;
};

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_DENORMALS_H_
