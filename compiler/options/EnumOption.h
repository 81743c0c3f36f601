//===- EnumOption.h - Pass options of the compile options' enums --*- C++ -*-===//
//
// A pass option of one of CompileOptions.h's enums takes the names EnumSpelling gives:
//   Option<"precision", "precision", "::kiln::Precision", "::kiln::Precision::Fp32", "...",
//          "::kiln::EnumValues<::kiln::Precision>()">
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_OPTIONS_ENUMOPTION_H
#define KILN_COMPILER_OPTIONS_ENUMOPTION_H

#include "compiler/options/CompileOptions.h"

#include "llvm/ADT/StringRef.h"

namespace kiln {

/// An llvm::cl modifier that adds each value of Enum to an option's parser under its name.
template <typename Enum> struct EnumValues {
  template <typename Opt> void apply(Opt &option) const {
    constexpr size_t count = std::size(EnumSpelling<Enum>::names);
    for (size_t i = 0; i < count; ++i)
      option.getParser().addLiteralOption(llvm::StringRef(EnumSpelling<Enum>::names[i]),
                                          static_cast<Enum>(i), llvm::StringRef());
  }
};

} // namespace kiln

#endif // KILN_COMPILER_OPTIONS_ENUMOPTION_H
