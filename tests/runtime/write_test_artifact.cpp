//===- write_test_artifact.cpp - Writes the tests' affine artifact to a file ===//
//
// kiln_runtime_write_test_artifact OUT.kiln: the add-affine program of artifact_builder.h, for
// tests that run a tool (kiln-serve-example) on a real .kiln file.
//
//===----------------------------------------------------------------------===//

#include <cstdio>
#include <fstream>
#include <string>

#include "tests/runtime/artifact_builder.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.kiln\n", argv[0]);
    return 2;
  }
  std::string bytes = kiln::testing::buildArtifact(kiln::testing::addAffineSpec());
  std::ofstream stream(argv[1], std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!stream.good()) {
    std::fprintf(stderr, "%s: cannot write %s\n", argv[0], argv[1]);
    return 1;
  }
  return 0;
}
