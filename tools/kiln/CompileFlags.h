//===- CompileFlags.h - kiln's compile flags, bound from the option table -*- C++ -*-===//
//
// `kiln compile`, `run` and `bench` take the compile options as flags, each bound once from
// kiln::compileOptionTable (compiler/options/CompileOptions.h): its name, help and arity make the
// CLI11 option, and its parser reads the text given once the command line is parsed.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_COMPILEFLAGS_H
#define KILN_TOOLS_KILN_COMPILEFLAGS_H

#include "compiler/options/CompileOptions.h"

#include <deque>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
} // namespace CLI

namespace kiln::cli {

/// The compile flags of one subcommand.
class CompileFlags {
public:
  /// Adds every option of the table taken in `scope` to `app`, the defaults shown from
  /// `defaults`.
  void bind(CLI::App *app, OptionScope scope, const CompileOptions &defaults = {});

  /// Sets each flag given into `options`, in the table's order. False, after printing
  /// "kiln: error: --NAME ...", for a value that is not one.
  bool apply(CompileOptions &options) const;

private:
  struct Slot {
    const OptionSpec *spec = nullptr;
    CLI::Option *option = nullptr;
    std::string value;
    std::vector<std::string> values;
    bool flag = false;
  };
  /// Stable addresses: CLI11 writes into the slots.
  std::deque<Slot> slots_;
};

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_COMPILEFLAGS_H
