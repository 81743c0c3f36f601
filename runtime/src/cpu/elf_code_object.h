//===- elf_code_object.h - Loading CPU code objects -------------*- C++ -*-===//
//
// An ElfSharedObject code object of a .kiln artifact, loaded with the dynamic loader straight
// from memory: its bytes go to an anonymous memory file (memfd_create; an unlinked temporary file
// where that is unavailable) that is opened with dlopen("/proc/self/fd/N"). Each load is a
// separate copy of the library, unloaded when the object goes away.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_ELF_CODE_OBJECT_H_
#define KILN_RUNTIME_SRC_CPU_ELF_CODE_OBJECT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "kiln/runtime.hpp"

namespace kiln::runtime::cpu {

class ElfCodeObject {
 public:
  /// Loads the `size` bytes at `data` as a shared object (RTLD_NOW | RTLD_LOCAL). `what` names
  /// the code object in messages (e.g. "model.kiln: code object 0").
  static Result<std::unique_ptr<ElfCodeObject>> load(const uint8_t* data, size_t size,
                                                     const std::string& what);
  ~ElfCodeObject();
  ElfCodeObject(const ElfCodeObject&) = delete;
  ElfCodeObject& operator=(const ElfCodeObject&) = delete;

  /// Returns the address of the exported symbol `name`, or INVALID_ARGUMENT naming it when the
  /// library does not export it.
  Result<void*> symbol(const std::string& name) const;

 private:
  ElfCodeObject(void* handle, int fd, std::string what)
      : handle_(handle), fd_(fd), what_(std::move(what)) {}

  void* handle_;
  /// The memory file, kept open while the library is loaded so that its /proc/self/fd name
  /// cannot be reused (the dynamic loader also matches libraries by name); -1 for a temp file.
  int fd_;
  std::string what_;
};

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_ELF_CODE_OBJECT_H_
