//===- Main.cpp - kiln-conformance's entry point ----------------------------===//

#include "tools/kiln-conformance/ConformanceTool.h"

int main(int argc, char **argv) { return kiln::conformance::runConformanceTool(argc, argv); }
