/*===- test_kernels.h - Kernels for the runtime's artifact tests -*- C -*-===//
 *
 * The block size and symbols of test_kernels.c, shared with the tests that build artifacts
 * around them.
 *
 *===----------------------------------------------------------------------===*/

#ifndef KILN_TESTS_RUNTIME_TEST_KERNELS_H_
#define KILN_TESTS_RUNTIME_TEST_KERNELS_H_

/* The f32 elements one workgroup of a test kernel handles. */
#define KILN_TEST_BLOCK 256

#endif /* KILN_TESTS_RUNTIME_TEST_KERNELS_H_ */
