//===- Main.cpp - kiln-conformance's entry point ----------------------------===//

#include "runtime/src/cuda/sim/register_simulated_cuda.h"
#include "tools/kiln-conformance/ConformanceTool.h"

int main(int argc, char **argv) {
#if defined(KILN_HAVE_CUDA_SIM) && KILN_HAVE_CUDA_SIM
  // `--device cuda-sim`: the simulator is a library of its own, which this tool links.
  kiln::runtime::registerSimulatedCuda();
#endif
  return kiln::conformance::runConformanceTool(argc, argv);
}
