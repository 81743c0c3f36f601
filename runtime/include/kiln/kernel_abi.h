//===- kernel_abi.h - The calling convention of generated CPU kernels -*- C -*-===//
//
// Every kernel group the compiler generates for the CPU is exported from the artifact's code
// object (an ELF shared object) as a dispatch function:
//
//   void <symbol>(void *const *bindings, int64_t workgroup_id);
//
//   - `bindings[i]` is the address of binding i of the Dispatch step (its inputs first, then its
//     outputs), in the step's order. Arena buffers are aligned to Program.arena_alignment; inputs
//     and outputs to at least 16 bytes.
//   - `workgroup_id` is in [0, workgroup_count[0]). The workgroups of one dispatch are independent:
//     each writes a disjoint part of the outputs, so the runtime may run them in any order and on
//     any threads. A kernel that was not split has one workgroup.
//   - In a program compiled for a range of shapes (Artifact.symbols not empty), `bindings[n]`,
//     after the step's n bindings, points to the run's sizes of every dimension of every binding,
//     in binding order (int64_t), which kernels with dynamic bindings read their shapes from
//     and others ignore. A binding's bytes are then row-major with those sizes.
//   - Kernels are reentrant: the same kernel may run concurrently for different runs (different
//     bindings). They touch no global state and call only the C library (libm, malloc/free for
//     scratch buffers).
//
// This is the CPU form of the convention CUDA uses for the same kernel groups (a grid of
// workgroups over buffer bindings). A CUDA kernel's parameters are the bindings' device
// addresses, then, in a program for a range of shapes, the device address of the same array of
// the run's sizes (artifact.fbs, CudaLaunch). The header is valid C99 and C++.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_INCLUDE_KILN_KERNEL_ABI_H_
#define KILN_RUNTIME_INCLUDE_KILN_KERNEL_ABI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The type of a generated CPU kernel group (see above).
typedef void (*kiln_cpu_dispatch_fn)(void* const* bindings, int64_t workgroup_id);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // KILN_RUNTIME_INCLUDE_KILN_KERNEL_ABI_H_
