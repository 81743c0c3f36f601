//===- CompileFlags.cpp - kiln's compile flags, bound from the option table ---===//

#include "CompileFlags.h"

#include "Program.h"

#include <CLI/CLI.hpp>

namespace kiln::cli {

void CompileFlags::bind(CLI::App *app, OptionScope scope, const CompileOptions &defaults) {
  for (const OptionSpec &spec : compileOptionTable()) {
    if (!(spec.scopes & scope))
      continue;
    Slot &slot = slots_.emplace_back();
    slot.spec = &spec;
    std::string name = "--" + std::string(spec.name);
    std::string help(spec.help);
    if (scope != kCompileScope)
      help += " (models compiled just in time)";
    switch (spec.arity) {
    case OptionSpec::Arity::Flag:
      slot.option = app->add_flag(name, slot.flag, help);
      break;
    case OptionSpec::Arity::Value:
      slot.option = app->add_option(name, slot.value, help);
      break;
    case OptionSpec::Arity::List:
      slot.option = app->add_option(name, slot.values, help);
      if (spec.commas)
        slot.option->delimiter(',');
      break;
    }
    if (spec.arity != OptionSpec::Arity::Flag && spec.get) {
      std::vector<std::string> shown = spec.get(defaults);
      std::string text;
      for (const std::string &value : shown)
        text += (text.empty() ? "" : ",") + value;
      if (!text.empty())
        slot.option->default_str(text);
    }
  }
}

bool CompileFlags::apply(CompileOptions &options) const {
  for (const Slot &slot : slots_) {
    if (slot.option->count() == 0)
      continue;
    std::vector<std::string> values;
    switch (slot.spec->arity) {
    case OptionSpec::Arity::Flag:
      values = {slot.flag ? "true" : "false"};
      break;
    case OptionSpec::Arity::Value:
      values = {slot.value};
      break;
    case OptionSpec::Arity::List:
      values = slot.values;
      break;
    }
    if (std::string error = slot.spec->set(options, values); !error.empty()) {
      printError("--" + std::string(slot.spec->name) + " " + error);
      return false;
    }
  }
  return true;
}

} // namespace kiln::cli
