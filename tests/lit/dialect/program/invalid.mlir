// RUN: kiln-opt --split-input-file --verify-diagnostics %s
// One case per verifier error of the program dialect.

// Tests that an alignment that is not a power of two is refused.
// expected-error @+1 {{alignment 48 is not a power of two}}
program.program @p device(cpu) attributes {alignment = 48 : i64} {
}

// -----

// Tests that an input number used twice is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<4xf32>
  // expected-error @+1 {{repeats input 0}}
  %b = program.input 0 "b" : memref<4xf32>
}

// -----

// Tests that a gap in the output numbers is refused.
// expected-error @+1 {{has 1 outputs but none is output 0}}
program.program @p device(cpu) {
  %a = program.output 1 "a" : memref<4xf32>
}

// -----

// Tests that a negative input number is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{has the negative index -1}}
  %a = program.input -1 "a" : memref<4xf32>
}

// -----

// Tests that an allocation without an offset in a planned program is refused.
program.program @p device(cpu) attributes {arena_size = 64 : i64} {
  // expected-error @+1 {{has no offset in a planned program}}
  %t = program.alloc : memref<4xf32>
}

// -----

// Tests that an allocation with an offset in a program not yet planned is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{has an offset in a program not yet planned}}
  %t = program.alloc {offset = 0 : i64} : memref<4xf32>
}

// -----

// Tests that an allocation past the end of the arena is refused.
program.program @p device(cpu) attributes {arena_size = 64 : i64} {
  // expected-error @+1 {{ends at byte 80, past the arena's 64}}
  %t = program.alloc {offset = 64 : i64} : memref<4xf32>
}

// -----

// Tests that a step that writes the caller's input is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{writes an input; steps write only allocations and outputs}}
  program.copy %t to %x : memref<4xf32> to memref<4xf32>
}

// -----

// Tests that a step that writes a constant through a view is refused.
program.program @p device(cpu) {
  %c = program.constant dense<1.0> : tensor<4xf32> -> memref<4xf32>
  %v = program.view %c : memref<4xf32> to memref<2x2xf32>
  %t = program.alloc : memref<2x2xf32>
  // expected-error @+1 {{writes a constant; steps write only allocations and outputs}}
  program.copy %t to %v : memref<2x2xf32> to memref<2x2xf32>
}

// -----

// Tests that a declared type of another width is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{declares the type 'tensor<4xui16>', which is not 'memref<4xi8>' with an element type of the same width}}
  %x = program.input 0 "x" {declared_type = tensor<4xui16>} : memref<4xi8>
}

// -----

// Tests that dimension names that do not match the rank is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{names 1 dimensions; the buffer has 2}}
  %y = program.output 0 "y" {dim_symbols = ["batch"]} : memref<2x4xf32>
}

// -----

// Tests that a buffer with a dynamic dimension is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{a buffer must be a static, dense memref of integers or floats, not 'memref<?xf32>'}}
  %x = program.input 0 "x" : memref<?xf32>
}

// -----

// Tests that a constant whose value has another type than its buffer is refused.
program.program @p device(cpu) {
  // expected-error @+1 {{holds a value of type 'tensor<4xf32>' in a buffer of type 'memref<4xf16>'}}
  %c = program.constant dense<1.0> : tensor<4xf32> -> memref<4xf16>
}

// -----

// Tests that a negative offset is refused.
program.program @p device(cpu) attributes {arena_size = 64 : i64} {
  // expected-error @+1 {{has the negative offset -64}}
  %t = program.alloc {offset = -64 : i64} : memref<4xf32>
}

// -----

// Tests that an offset that breaks the program's alignment is refused.
program.program @p device(cpu) attributes {alignment = 64 : i64, arena_size = 128 : i64} {
  // expected-error @+1 {{has the offset 32, not a multiple of the program's alignment 64}}
  %t = program.alloc {offset = 32 : i64} : memref<4xf32>
}

// -----

// Tests that a view that changes the byte size is refused.
program.program @p device(cpu) {
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{views the 16 bytes of 'memref<4xf32>' as 'memref<4xf16>', which has 8}}
  %v = program.view %t : memref<4xf32> to memref<4xf16>
}

// -----

// Tests that a copy between buffers of different sizes is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<8xf32>
  // expected-error @+1 {{copies 16 bytes into a buffer of 32}}
  program.copy %x to %t : memref<4xf32> to memref<8xf32>
}

// -----

// Tests that a dispatch that writes nothing is refused.
module {
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  // expected-error @+1 {{writes no buffer}}
  program.dispatch @kernels::@d ins(%x : memref<4xf32>)
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that in_place numbers that are not pairs is refused.
module {
program.program @p device(cpu) {
  %x = program.alloc : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{in_place lists 3 numbers; it holds (input, output) pairs}}
  program.dispatch @kernels::@d ins(%x : memref<4xf32>) outs(%t : memref<4xf32>) {in_place = array<i64: 0, 0, 0>}
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that an in_place pair naming a binding the dispatch lacks is refused.
module {
program.program @p device(cpu) {
  %x = program.alloc : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{in_place pair (1, 0) names a binding the step does not have}}
  program.dispatch @kernels::@d ins(%x : memref<4xf32>) outs(%t : memref<4xf32>) {in_place = array<i64: 1, 0>}
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that an in_place pair of buffers of different sizes is refused.
module {
program.program @p device(cpu) {
  %x = program.alloc : memref<2xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{in_place pair (0, 0) binds buffers of different sizes}}
  program.dispatch @kernels::@d ins(%x : memref<2xf32>) outs(%t : memref<4xf32>) {in_place = array<i64: 0, 0>}
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that a dispatch of a kernel the module lacks is refused.
module {
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{dispatches @kernels::@missing, which is not in the module}}
  program.dispatch @kernels::@missing ins(%x : memref<4xf32>) outs(%t : memref<4xf32>)
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that a dispatch of a function that is not a dispatch function is refused.
module {
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{dispatches @kernels::@plain, a function that is not a dispatch function}}
  program.dispatch @kernels::@plain ins(%x : memref<4xf32>) outs(%t : memref<4xf32>)
}
module @kernels {
  func.func private @plain(%a: tensor<4xf32>) -> tensor<4xf32> {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that a dispatch that binds more tensors than its function takes is refused.
module {
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{binds 2 inputs and 1 outputs; @kernels::@d takes 1 and returns 1}}
  program.dispatch @kernels::@d ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%t : memref<4xf32>)
}
module @kernels {
  func.func private @d(%a: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
    return %a : tensor<4xf32>
  }
}
}

// -----

// Tests that a dispatch that omits its kernel's scratch buffers is refused.
module {
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<4xf32>
  %t = program.alloc : memref<4xf32>
  // expected-error @+1 {{binds 1 outputs; @kernels::@k needs 2 scratch buffers after the outputs}}
  program.dispatch @kernels::@k ins(%x : memref<4xf32>) outs(%t : memref<4xf32>)
}
program.executable @kernels {
  program.kernel @k {launches = [], scratch = [memref<4xf32>, memref<4xf32>]}
}
}

// -----

// Tests that an unknown library entry point is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{calls 'mkl.gemm', which is not a library entry point Kiln knows (onednn.convolution, onednn.matmul, cudnn.convolution, cublaslt.matmul,}}
  program.library_call "mkl.gemm" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({})
}

// -----

// Tests that an all-reduce says how many devices it sums over.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %t = program.alloc : memref<2x8xf32>
  // expected-error @+1 {{'gloo.all_reduce' needs the parameter 'devices'}}
  program.library_call "gloo.all_reduce" ins(%a : memref<2x8xf32>) outs(%t : memref<2x8xf32>) params({})
}

// -----

// Tests that the fused attention takes f32 tensors only.
program.program @p device(cpu) {
  %q = program.input 0 "q" : memref<2x8x16xbf16>
  %t = program.alloc : memref<2x8x16xbf16>
  // expected-error @+1 {{'kiln.attention' takes f32 tensors, not 'bf16'}}
  program.library_call "kiln.attention" ins(%q, %q, %q : memref<2x8x16xbf16>, memref<2x8x16xbf16>, memref<2x8x16xbf16>) outs(%t : memref<2x8x16xbf16>) params({q_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 1, 16>, v_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, dst_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, scale = array<f32: 0.25>})
}

// -----

// Tests that cuDNN's fused attention takes f16 and bf16 tensors only.
program.program @p device(cuda) {
  %q = program.input 0 "q" : memref<2x8x16xf32>
  %t = program.alloc : memref<2x8x16xf32>
  // expected-error @+1 {{'cudnn.attention' takes f16 or bf16 tensors, not 'f32'}}
  program.library_call "cudnn.attention" ins(%q, %q, %q : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>) outs(%t : memref<2x8x16xf32>) params({q_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 1, 16>, v_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, dst_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, scale = array<f32: 0.25>})
}

// -----

// Tests that the fused attention needs its views and scale.
program.program @p device(cpu) {
  %q = program.input 0 "q" : memref<2x8x16xf32>
  %t = program.alloc : memref<2x8x16xf32>
  // expected-error @+1 {{'kiln.attention' needs the parameter 'scale'}}
  program.library_call "kiln.attention" ins(%q, %q, %q : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>) outs(%t : memref<2x8x16xf32>) params({q_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 1, 16>, v_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, dst_view = array<i64: 0, 2, 8, 16, 128, 16, 1>})
}

// -----

// Tests that a mask view without the mask tensor is refused.
program.program @p device(cpu) {
  %q = program.input 0 "q" : memref<2x8x16xf32>
  %t = program.alloc : memref<2x8x16xf32>
  // expected-error @+1 {{parameter 'mask_view' views input 3, which the call does not have}}
  program.library_call "kiln.attention" ins(%q, %q, %q : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>) outs(%t : memref<2x8x16xf32>) params({q_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 1, 16>, v_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, mask_view = array<i64: 0, 2, 8, 8, 0, 0, 1>, dst_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, scale = array<f32: 0.25>})
}

// -----

// Tests that an attention view reaching outside its tensor is refused (V of 2 x 8 x 16 read
// from offset 8).
program.program @p device(cpu) {
  %q = program.input 0 "q" : memref<2x8x16xf32>
  %t = program.alloc : memref<2x8x16xf32>
  // expected-error @+1 {{parameter 'v_view' (offset 8, dims [2, 8, 16]) reaches outside its 256-element buffer}}
  program.library_call "kiln.attention" ins(%q, %q, %q : memref<2x8x16xf32>, memref<2x8x16xf32>, memref<2x8x16xf32>) outs(%t : memref<2x8x16xf32>) params({q_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, k_view = array<i64: 0, 2, 16, 8, 128, 1, 16>, v_view = array<i64: 8, 2, 8, 16, 128, 16, 1>, dst_view = array<i64: 0, 2, 8, 16, 128, 16, 1>, scale = array<f32: 0.25>})
}

// -----

// Tests that a half-precision tensor passed to oneDNN is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf16>
  %b = program.input 1 "b" : memref<8x4xf16>
  %t = program.alloc : memref<2x4xf16>
  // expected-error @+1 {{'onednn.matmul' takes f32 or bf16 tensors, not 'f16'}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf16>, memref<8x4xf16>) outs(%t : memref<2x4xf16>) params({})
}

// -----

// Tests that a view reaching past its buffer is refused: rows 16 apart in an 8-column operand.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{parameter 'a_view' (offset 0, dims [2, 8]) reaches outside its 16-element buffer}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({a_view = array<i64: 0, 2, 8, 16, 1>})
}

// -----

// Tests that a written view reaching an element twice is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{parameter 'dst_view' writes some elements twice (a stride of 2 inside an extent of 4)}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({dst_view = array<i64: 0, 2, 4, 2, 1>})
}

// -----

// Tests that a parameter the entry point does not take is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{'onednn.matmul' takes no parameter 'allow_tf32'}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({allow_tf32 = true})
}

// -----

// Tests that cuDNN's own switches are cuDNN's: a oneDNN convolution takes no allow_tf32.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<1x3x8x8xf32>
  %w = program.input 1 "w" : memref<4x3x3x3xf32>
  %t = program.alloc : memref<1x4x6x6xf32>
  // expected-error @+1 {{'onednn.convolution' takes no parameter 'allow_tf32'}}
  program.library_call "onednn.convolution" ins(%x, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%t : memref<1x4x6x6xf32>) params({strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, groups = 1 : i64, allow_tf32 = true})
}

// -----

// Tests that a parameter of the wrong kind is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{parameter 'trans_a' must be a boolean, not 1 : i64}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({trans_a = 1 : i64})
}

// -----

// Tests that a convolution without its groups is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<1x3x8x8xf32>
  %w = program.input 1 "w" : memref<4x3x3x3xf32>
  %t = program.alloc : memref<1x4x6x6xf32>
  // expected-error @+1 {{'onednn.convolution' needs the parameter 'groups'}}
  program.library_call "onednn.convolution" ins(%x, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%t : memref<1x4x6x6xf32>) params({strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>})
}

// -----

// Tests that a post-op the library does not fuse is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<1x3x8x8xf32>
  %w = program.input 1 "w" : memref<4x3x3x3xf32>
  %t = program.alloc : memref<1x4x6x6xf32>
  // expected-error @+1 {{post-op 0 is 'clip'; 'cudnn.convolution' fuses add, relu}}
  program.library_call "cudnn.convolution" ins(%x, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%t : memref<1x4x6x6xf32>) params({strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, groups = 1 : i64, post_ops = ["clip"], post_op_args = array<f32: 0.0, 6.0>})
}

// -----

// Tests that post-op arguments that do not match the post-ops is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{'post_op_args' has 1 values; the post-ops take 2}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({post_ops = ["linear"], post_op_args = array<f32: 2.0>})
}

// -----

// Tests that an 'add' post-op without its operand is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{'onednn.matmul' takes a, b, an optional bias and 1 'add' operand(s); it has 2 inputs}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t : memref<2x4xf32>) params({post_ops = ["add"]})
}

// -----

// Tests that a library call with two results is refused.
program.program @p device(cpu) {
  %a = program.input 0 "a" : memref<2x8xf32>
  %b = program.input 1 "b" : memref<8x4xf32>
  %t = program.alloc : memref<2x4xf32>
  %u = program.alloc : memref<2x4xf32>
  // expected-error @+1 {{'onednn.matmul' writes one tensor, not 2}}
  program.library_call "onednn.matmul" ins(%a, %b : memref<2x8xf32>, memref<8x4xf32>) outs(%t, %u : memref<2x4xf32>, memref<2x4xf32>) params({})
}

// -----

// Tests that a convolution of a rank-2 tensor is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<3x8xf32>
  %w = program.input 1 "w" : memref<4x3xf32>
  %t = program.alloc : memref<4x8xf32>
  // expected-error @+1 {{'onednn.convolution' takes a first tensor of rank 3 to 5, not 2}}
  program.library_call "onednn.convolution" ins(%x, %w : memref<3x8xf32>, memref<4x3xf32>) outs(%t : memref<4x8xf32>) params({strides = array<i64>, dilations = array<i64>, pads_begin = array<i64>, pads_end = array<i64>, groups = 1 : i64})
}

// -----

// Tests that strides for another number of spatial dimensions is refused.
program.program @p device(cpu) {
  %x = program.input 0 "x" : memref<1x3x8x8xf32>
  %w = program.input 1 "w" : memref<4x3x3x3xf32>
  %t = program.alloc : memref<1x4x6x6xf32>
  // expected-error @+1 {{parameter 'strides' has 3 values; the 2 spatial dimensions need 2}}
  program.library_call "onednn.convolution" ins(%x, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%t : memref<1x4x6x6xf32>) params({strides = array<i64: 1, 1, 1>, dilations = array<i64: 1, 1>, pads_begin = array<i64: 0, 0>, pads_end = array<i64: 0, 0>, groups = 1 : i64})
}

// -----

// Tests that a kernel that is both a CPU and a CUDA kernel is refused.
program.executable @k {
  // expected-error @+1 {{describes both a CPU (symbol, workgroups) and a CUDA (launches) kernel}}
  program.kernel @d {symbol = "kiln_d", workgroups = 1 : i64, launches = []}
}

// -----

// Tests that a kernel that is neither is refused.
program.executable @k {
  // expected-error @+1 {{describes neither a CPU (symbol, workgroups) nor a CUDA (launches) kernel}}
  program.kernel @d
}

// -----

// Tests that a CPU kernel without its workgroup count is refused.
program.executable @k {
  // expected-error @+1 {{a CPU kernel has both a symbol and a workgroup count}}
  program.kernel @d {symbol = "kiln_d"}
}

// -----

// Tests that a CPU kernel over no workgroups is refused.
program.executable @k {
  // expected-error @+1 {{runs over 0 workgroups}}
  program.kernel @d {symbol = "kiln_d", workgroups = 0 : i64}
}

// -----

// Tests that a code object that lacks a kernel's symbol is refused.
program.executable @k {
  program.kernel @d {symbol = "kiln_d", workgroups = 1 : i64}
  // expected-error @+1 {{does not export 'kiln_d', which a kernel uses}}
  program.binary "x86_64" elf {symbols = ["kiln_e"], data = ""}
}

// -----

// Tests that code objects that list different symbols is refused.
program.executable @k {
  program.kernel @d {launches = [#program.cuda_launch<"d_k0", block = 256, items = 4>]}
  program.binary "sm_80" cubin {symbols = ["d_k0"], data = ""}
  // expected-error @+1 {{lists other symbols than the executable's first binary}}
  program.binary "sm_80" ptx {symbols = ["d_k0", "d_k1"], data = ""}
}

// -----

// Tests that a CUDA launch with more threads per block than CUDA allows is refused.
program.executable @k {
  // expected-error @+1 {{CUDA launch of 'd_k0' has 2048 threads per block; CUDA allows 1 to 1024}}
  program.kernel @d {launches = [#program.cuda_launch<"d_k0", block = 2048, items = 4>]}
}

// -----

// Tests that a CUDA launch with a negative number of work items is refused.
program.executable @k {
  // expected-error @+1 {{CUDA launch of 'd_k0' has -1 work items}}
  program.kernel @d {launches = [#program.cuda_launch<"d_k0", block = 32, items = -1>]}
}

// -----

// Tests that a view into part of a buffer must end inside it.
program.program @p device(cpu) {
  %t = program.alloc : memref<2x64xf32>
  // expected-error @+1 {{views bytes [256, 768) of 'memref<2x64xf32>', which has 512}}
  %v = program.view %t {byte_offset = 256 : i64} : memref<2x64xf32> to memref<2x64xf32>
}
