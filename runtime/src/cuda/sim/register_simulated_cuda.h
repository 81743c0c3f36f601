//===- register_simulated_cuda.h - Installing the simulated CUDA device -*- C++ -*-===//
//
// The simulated CUDA device (`--device cuda-sim`, KILN_DEVICE_KIND_CUDA_SIM) is a library of its
// own, kiln_cuda_sim, which the runtime does not link. A program that links it (the kiln CLI,
// kiln-conformance, the tests) calls registerSimulatedCuda() once before it creates a cuda-sim
// session; without the call, such a session fails with UNIMPLEMENTED naming the library.
//
// The header needs neither CUDA's headers nor the runtime's; linking kiln_cuda_sim defines
// KILN_HAVE_CUDA_SIM=1, which a program built with and without CUDA tests before the call.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CUDA_SIM_REGISTER_SIMULATED_CUDA_H_
#define KILN_RUNTIME_SRC_CUDA_SIM_REGISTER_SIMULATED_CUDA_H_

namespace kiln::runtime {

/// Installs the simulated CUDA device in the runtime this program links (kiln_runtime).
/// Thread-safe; calling it again changes nothing.
void registerSimulatedCuda();

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_CUDA_SIM_REGISTER_SIMULATED_CUDA_H_
