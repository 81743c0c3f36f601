//===- onednn_call.h - Reading oneDNN library calls and their epilogues -*- C++ -*-===//
//
// What the convolution and matmul kernels share: typed access to a LibraryCall's bindings and
// parameters with errors that name the call (runtime/src/library_call_view.h), the post-op
// epilogue (onednn_kernels.h documents its encoding), and the execution of a primitive with
// per-run streams and scratchpads.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_CALL_H_
#define KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_CALL_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "oneapi/dnnl/dnnl.hpp"
#include "runtime/src/cpu/kernel/library_call_kernel.h"
#include "runtime/src/library_call_view.h"

namespace kiln::runtime::cpu::onednn {

/// The process-wide CPU engine (oneDNN engines are thread-safe).
const dnnl::engine& cpuEngine();

/// A binding as the kernels see it, and a call with its parameters indexed by key
/// (runtime/src/library_call_view.h, shared with the CUDA device's library calls).
using BindingInfo = LibraryCallBinding;
using CallView = LibraryCallView;

/// A oneDNN memory layout passed between calls (LibraryCallKernel::nativeLayout).
class Layout : public ActivationLayout {
 public:
  explicit Layout(dnnl::memory::desc desc) : desc_(std::move(desc)) {}
  const char* library() const override { return kLibrary; }
  uint64_t byteSize() const override { return desc_.get_size(); }
  /// The descriptor of a oneDNN layout, or null for another library's.
  static const dnnl::memory::desc* descOf(const ActivationLayout& layout) {
    if (std::strcmp(layout.library(), kLibrary) != 0) return nullptr;
    return &static_cast<const Layout&>(layout).desc_;
  }

 private:
  static constexpr const char* kLibrary = "onednn";
  dnnl::memory::desc desc_;
};

/// The epilogue of a call: oneDNN post-ops plus the dims of each "add" operand, broadcast to the
/// destination's rank.
struct Epilogue {
  dnnl::post_ops ops;
  /// Per "add" post-op done as a binary post-op: its index in `ops` and its operand's memory
  /// descriptor, in the order of `extra`.
  std::vector<std::pair<int, dnnl::memory::desc>> addends;
  /// Which entry of `extra` each of `addends` reads.
  std::vector<int> addend_extras;
  /// The entry of `extra` done as a sum post-op (accumulated into the destination, which must
  /// hold it before the primitive runs), or -1.
  int sum_extra = -1;
};

/// Reads post_ops / post_op_args. `extra` are the bindings that feed the "add" post-ops (their
/// count must equal the number of "add" entries); `dst` the destination's dims. With `allow_sum`,
/// the first "add" whose operand has the destination's dims becomes a sum post-op: the fast
/// convolution implementations of oneDNN 2.6 take sums but fall back to a slow one for binary
/// post-ops.
/// With `channels_last`, `dst` and the operands are stored N x D1..Dn x C and the binary
/// post-ops' descriptors are over N x C x D1..Dn, as the primitive's destination is.
Status buildEpilogue(const CallView& call, const std::vector<BindingInfo>& extra,
                     const std::vector<int64_t>& dst, Epilogue* out, bool allow_sum = false,
                     bool channels_last = false);

/// Reads the optional `channels_last` parameter (0 or 1) of a convolution or pooling call.
Status readChannelsLast(const CallView& call, bool* out);

/// `stored` dims with the last one moved to position `leading`: N x D1..Dn x C as the
/// N x C x D1..Dn oneDNN's primitives are described over (leading = 1; grouped weights
/// G x K/G x D1..Dn x C/G: leading = 2). Unchanged without `channels_last`.
std::vector<int64_t> channelsFirstDims(const std::vector<int64_t>& stored, bool channels_last,
                                       size_t leading = 1);

/// A row-major buffer of `stored` dims described over channelsFirstDims(stored): plain when not
/// `channels_last`, its channels innermost (nhwc, ohwi) otherwise.
dnnl::memory::desc storedDesc(const std::vector<int64_t>& stored, dnnl::memory::data_type type,
                              bool channels_last, size_t leading = 1);

/// The number of "add" entries of post_ops (how many extra bindings the call has).
int countAddPostOps(const CallView& call);

/// oneDNN's data type of a binding's element type (f32 or bf16: what createOneDnnKernel admits).
dnnl::memory::data_type dataType(kiln_element_type_t type);

/// A plain row-major descriptor of `dims` (f32 unless `type` says otherwise).
dnnl::memory::desc plainDesc(const std::vector<int64_t>& dims,
                             dnnl::memory::data_type type = dnnl::memory::data_type::f32);

/// Runs `body(stream)` on a stream of its own (one per run, so concurrent runs share nothing) and
/// waits for it. oneDNN errors become INTERNAL and allocation failures RESOURCE_EXHAUSTED statuses
/// naming the call.
template <typename Body>
Status runOnStream(const std::string& label, Body&& body) {
  try {
    dnnl::stream stream(cpuEngine());
    body(stream);
    stream.wait();
  } catch (const dnnl::error& e) {
    return Status(KILN_STATUS_INTERNAL, label + ": oneDNN failed: " + e.what());
  } catch (const std::bad_alloc&) {
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED, label + ": out of memory");
  }
  return Status();
}

/// Adds a scratchpad of `desc` for one run to `args` when the primitive needs one (primitives are
/// created with user-mode scratchpads so that concurrent runs never share one).
void addScratchpad(const dnnl::memory::desc& desc, std::unordered_map<int, dnnl::memory>* args);

/// A memory of `desc` over `data` (the caller's buffer; const only in the caller's view).
dnnl::memory wrap(const dnnl::memory::desc& desc, void* data);

/// Copies the Constant binding `binding`, laid out as `source`, into a new memory of `packed` (the
/// layout the primitive chose) once at load time. Fails naming the call when the artifact has no
/// constants.
Status packConstant(const CallView& call, const BindingInfo& binding, const uint8_t* constants,
                    const dnnl::memory::desc& source, const dnnl::memory::desc& packed,
                    dnnl::memory* out);

/// Creates a primitive descriptor through `make`, turning a dnnl::error into UNIMPLEMENTED (the
/// combination of shapes, formats and post-ops has no implementation) naming the call.
template <typename PrimitiveDesc, typename Make>
Status makePrimitiveDesc(const CallView& call, Make&& make, PrimitiveDesc* out) {
  try {
    *out = make();
  } catch (const dnnl::error& e) {
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  call.label() + ": oneDNN has no implementation for these shapes and post-ops (" +
                      e.what() + ")");
  }
  return Status();
}

}  // namespace kiln::runtime::cpu::onednn

namespace kiln::runtime::cpu {

/// The kernel factories of the calls (onednn_convolution.cpp, onednn_matmul.cpp,
/// onednn_pooling.cpp).
Status createOneDnnConvolution(const onednn::CallView& call, const uint8_t* constants,
                               std::unique_ptr<LibraryCallKernel>* out);
Status createOneDnnMatmul(const onednn::CallView& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out);
Status createOneDnnPooling(const onednn::CallView& call, std::unique_ptr<LibraryCallKernel>* out);

}  // namespace kiln::runtime::cpu

#endif  // KILN_RUNTIME_SRC_CPU_ONEDNN_ONEDNN_CALL_H_
