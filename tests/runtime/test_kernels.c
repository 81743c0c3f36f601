/*===- test_kernels.c - Kernels for the runtime's artifact tests -----------===//
 *
 * Built as a shared object whose bytes the tests put into .kiln artifacts. The kernels follow the
 * dispatch convention of kiln/kernel_abi.h; each workgroup handles one block of
 * KILN_TEST_BLOCK consecutive f32 elements, so a tensor of R x KILN_TEST_BLOCK elements is
 * dispatched over R workgroups.
 *
 *===----------------------------------------------------------------------===*/

#include <stddef.h>
#include <stdint.h>

#include "kiln/kernel_abi.h"
#include "tests/runtime/test_kernels.h"

/* out = a + b. Bindings: a, b, out. */
void kiln_test_add_f32(void* const* bindings, int64_t workgroup_id) {
  const float* a = (const float*)bindings[0];
  const float* b = (const float*)bindings[1];
  float* out = (float*)bindings[2];
  size_t base = (size_t)workgroup_id * KILN_TEST_BLOCK;
  for (size_t i = base; i < base + KILN_TEST_BLOCK; ++i) out[i] = a[i] + b[i];
}

/* out = x * coefficients[0] + coefficients[1]. Bindings: x, coefficients (2 floats), out. */
void kiln_test_affine_f32(void* const* bindings, int64_t workgroup_id) {
  const float* x = (const float*)bindings[0];
  const float* coefficients = (const float*)bindings[1];
  float* out = (float*)bindings[2];
  size_t base = (size_t)workgroup_id * KILN_TEST_BLOCK;
  for (size_t i = base; i < base + KILN_TEST_BLOCK; ++i) {
    out[i] = x[i] * coefficients[0] + coefficients[1];
  }
}
