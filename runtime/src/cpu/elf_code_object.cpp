//===- elf_code_object.cpp - Loading CPU code objects ---------------------===//

#include "runtime/src/cpu/elf_code_object.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <utility>

#include "runtime/src/status.h"

namespace kiln::runtime::cpu {
namespace {

/// Writes all `size` bytes to `fd`.
Status writeAll(int fd, const uint8_t* data, size_t size, const std::string& what) {
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return statusFromErrno(errno, what + ": cannot write the code object to a memory file");
    }
    done += static_cast<size_t>(n);
  }
  return Status();
}

/// dlerror() reports the last error of the calling thread; the mutex keeps the dlopen/dlsym and
/// dlerror pairs of concurrent session creations from mixing up on libcs where it is global.
std::mutex& dlMutex() {
  static std::mutex mutex;
  return mutex;
}

/// glibc's dlopen returns an object already loaded under the same name without opening the file
/// again. An object that cannot be unloaded (one linked with `-z nodelete`, or one holding unique
/// symbols) keeps its "/proc/self/fd/N" name after its descriptor is closed, so a later code
/// object written to a descriptor with the same number would silently get the old object's code.
/// Moves `fd` to a number no loaded object is named after and returns it; -1 with errno set when
/// no descriptor can be made. Called with dlMutex() held.
int descriptorWithAnUnusedName(int fd) {
  while (true) {
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    void* loaded = ::dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (loaded == nullptr) return fd;
    ::dlclose(loaded);
    // The next free number above: the names of lower ones may be taken as well.
    int next = ::fcntl(fd, F_DUPFD_CLOEXEC, fd + 1);
    int saved = errno;
    ::close(fd);
    if (next < 0) {
      errno = saved;
      return -1;
    }
    fd = next;
  }
}

std::string lastDlError() {
  const char* error = ::dlerror();
  return error ? error : "unknown dynamic loader error";
}

}  // namespace

Result<std::unique_ptr<ElfCodeObject>> ElfCodeObject::load(const uint8_t* data, size_t size,
                                                           const std::string& what) {
  // The mutex also keeps another thread from loading under the name chosen for this object.
  std::unique_lock<std::mutex> lock(dlMutex());
  int fd = ::memfd_create("kiln-code-object", MFD_CLOEXEC);
  std::string path;
  bool temporary_file = false;
  if (fd >= 0) {
    fd = descriptorWithAnUnusedName(fd);
    if (fd < 0) return statusFromErrno(errno, what + ": cannot create a memory file");
    path = "/proc/self/fd/" + std::to_string(fd);
  } else {
    const char* tmpdir = std::getenv("TMPDIR");
    path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/kiln-code-object-XXXXXX";
    fd = ::mkstemp(path.data());
    if (fd < 0) {
      return statusFromErrno(errno, what + ": cannot create a memory file or a temporary file");
    }
    temporary_file = true;
  }
  Status written = writeAll(fd, data, size, what);
  void* handle = nullptr;
  std::string error;
  if (written.ok()) {
    handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) error = lastDlError();
  }
  lock.unlock();
  if (temporary_file) {
    ::unlink(path.c_str());
    ::close(fd);
    fd = -1;
  }
  if (!written.ok()) {
    if (fd >= 0) ::close(fd);
    return written;
  }
  if (handle == nullptr) {
    if (fd >= 0) ::close(fd);
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  what + ": the shared object does not load: " + error);
  }
  return std::unique_ptr<ElfCodeObject>(new ElfCodeObject(handle, fd, what));
}

ElfCodeObject::~ElfCodeObject() {
  {
    std::lock_guard<std::mutex> lock(dlMutex());
    ::dlclose(handle_);
  }
  if (fd_ >= 0) ::close(fd_);
}

Result<void*> ElfCodeObject::symbol(const std::string& name) const {
  std::lock_guard<std::mutex> lock(dlMutex());
  ::dlerror();  // Clear a stale error.
  void* address = ::dlsym(handle_, name.c_str());
  if (address == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, what_ + ": kernel '" + name +
                                                    "' is not exported by the shared object (" +
                                                    lastDlError() + ")");
  }
  return address;
}

}  // namespace kiln::runtime::cpu
