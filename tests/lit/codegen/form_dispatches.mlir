// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-form-dispatches="entry=forward" %s | FileCheck %s
// RUN: kiln-opt --split-input-file --verify-diagnostics --kiln-form-dispatches="entry=forward inline-constant-limit=4" %s | FileCheck %s --check-prefix=LIMIT

// Each case is a module of its own whose entry function is @forward, named by the entry option as
// the compiler names the model's function.

// Tests that an elementwise chain already fused into one linalg.generic becomes one dispatch:
// its tensor.empty destination and the scalar constants its body captures are cloned into the
// kernel (and gone from the entry), its tensor operands become arguments, and the description
// names the model nodes recorded in the generic's fused location. A function other than the
// entry (here one named like the option's default) is left alone.
// CHECK-LABEL: module @elementwise_chain
// CHECK-LABEL: func.func @main
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.generic
// CHECK: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<4x8xf32>, %[[B:[a-z0-9]+]]: tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-SAME: attributes {kiln.description = "linalg.generic (scale, bias_add, relu)", kiln.dispatch}
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4x8xf32>
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[R:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<4x8xf32>, tensor<8xf32>) outs(%[[EMPTY]] : tensor<4x8xf32>)
// CHECK: arith.mulf %{{.+}}, %[[SCALE]]
// CHECK: arith.addf
// CHECK: arith.maximumf %{{.+}}, %[[ZERO]]
// CHECK: return %[[R]] : tensor<4x8xf32>
// CHECK-NOT: @dispatch_1
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG0:.+]]: tensor<4x8xf32>, %[[ARG1:.+]]: tensor<8xf32>)
// CHECK-NEXT: %[[CALL:.+]] = call @dispatch_0(%[[ARG0]], %[[ARG1]]) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[CALL]] : tensor<4x8xf32>
module @elementwise_chain {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = math.exp %in : f32
      linalg.yield %1 : f32
    } -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func @forward(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
    %scale = arith.constant 2.0 : f32
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4x8xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %bias: f32, %out: f32):
      %1 = arith.mulf %in, %scale : f32
      %2 = arith.addf %1, %bias : f32
      %3 = arith.maximumf %2, %zero : f32
      linalg.yield %3 : f32
    } -> tensor<4x8xf32> loc(fused["scale", "bias_add", "relu"])
    return %0 : tensor<4x8xf32>
  }
}

// -----

// Tests that a reduction whose init is a linalg.fill of an expand_shape of tensor.empty (global
// average pooling after canonicalization) is one dispatch with the constant, the empty tensor,
// its reshape and the fill cloned in: the fill gets no dispatch of its own. The reshape of the
// entry's argument is a view and stays in the entry, its result passed to the kernel. Without
// named locations the description is the root op's name.
// CHECK-LABEL: module @reduction_init
// CHECK: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<2x16x1x1x16x16xf32>) -> tensor<2x16x1x1xf32>
// CHECK-SAME: attributes {kiln.description = "linalg.generic", kiln.dispatch}
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<2x16xf32>
// CHECK: %[[INIT:.+]] = tensor.expand_shape %[[EMPTY]] {{\[}}[0], [1, 2, 3]] output_shape [2, 16, 1, 1]
// CHECK: %[[FILL:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[INIT]] : tensor<2x16x1x1xf32>)
// CHECK: %[[SUM:.+]] = linalg.generic
// CHECK-SAME: ins(%[[X]] : tensor<2x16x1x1x16x16xf32>) outs(%[[FILL]] : tensor<2x16x1x1xf32>)
// CHECK: return %[[SUM]]
// CHECK-NOT: @dispatch_1
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG:.+]]: tensor<2x16x16x16xf32>)
// CHECK-NEXT: %[[VIEW:.+]] = tensor.expand_shape %[[ARG]] {{\[}}[0], [1, 2, 3], [4], [5]] output_shape [2, 16, 1, 1, 16, 16]
// CHECK-NEXT: %[[CALL:.+]] = call @dispatch_0(%[[VIEW]])
// CHECK-NEXT: return %[[CALL]]
module @reduction_init {
  func.func @forward(%x: tensor<2x16x16x16xf32>) -> tensor<2x16x1x1xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<2x16xf32>
    %init = tensor.expand_shape %e [[0], [1, 2, 3]] output_shape [2, 16, 1, 1] : tensor<2x16xf32> into tensor<2x16x1x1xf32>
    %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<2x16x1x1xf32>) -> tensor<2x16x1x1xf32>
    %xe = tensor.expand_shape %x [[0], [1, 2, 3], [4], [5]] output_shape [2, 16, 1, 1, 16, 16] : tensor<2x16x16x16xf32> into tensor<2x16x1x1x16x16xf32>
    %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%xe : tensor<2x16x1x1x16x16xf32>) outs(%fill : tensor<2x16x1x1xf32>) {
    ^bb0(%in: f32, %acc: f32):
      %0 = arith.addf %in, %acc : f32
      linalg.yield %0 : f32
    } -> tensor<2x16x1x1xf32>
    return %sum : tensor<2x16x1x1xf32>
  }
}

// -----

// Tests that a scalar read from another kernel's result (tensor.extract) is cloned into each
// kernel that uses it, the pad value of a tensor.pad and a value captured by a generic's body,
// with the tensor it reads passed as an argument; and that the roots are outlined last first,
// the entry calling them in program order.
// CHECK-LABEL: module @scalar_extract
// CHECK: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<4xf32>, %[[M:[a-z0-9]+]]: tensor<f32>) -> tensor<4xf32>
// CHECK-SAME: kiln.description = "linalg.generic"
// CHECK-DAG: %[[V:.+]] = tensor.extract %[[M]][] : tensor<f32>
// CHECK-DAG: %[[EMPTY:.+]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {
// CHECK-SAME: ins(%[[X]] : tensor<4xf32>) outs(%[[EMPTY]] : tensor<4xf32>)
// CHECK: arith.subf %{{.+}}, %[[V]] : f32
// CHECK: func.func private @dispatch_1(%[[Y:[a-z0-9]+]]: tensor<2x3xf32>, %[[M:[a-z0-9]+]]: tensor<f32>) -> tensor<4x3xf32>
// CHECK-SAME: kiln.description = "tensor.pad"
// CHECK: %[[V:.+]] = tensor.extract %[[M]][] : tensor<f32>
// CHECK: tensor.pad %[[Y]] low[1, 0] high[1, 0]
// CHECK: tensor.yield %[[V]] : f32
// CHECK: func.func private @dispatch_2(%[[X:[a-z0-9]+]]: tensor<4xf32>) -> tensor<f32>
// CHECK-SAME: kiln.description = "linalg.reduce"
// CHECK: %[[FILL:.+]] = linalg.fill
// CHECK: linalg.reduce ins(%[[X]] : tensor<4xf32>) outs(%[[FILL]] : tensor<f32>)
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG0:.+]]: tensor<4xf32>, %[[ARG1:.+]]: tensor<2x3xf32>)
// CHECK-NEXT: %[[MAX:.+]] = call @dispatch_2(%[[ARG0]])
// CHECK-NEXT: %[[PAD:.+]] = call @dispatch_1(%[[ARG1]], %[[MAX]])
// CHECK-NEXT: %[[SHIFT:.+]] = call @dispatch_0(%[[ARG0]], %[[MAX]])
// CHECK-NEXT: return %[[PAD]], %[[SHIFT]]
module @scalar_extract {
  func.func @forward(%x: tensor<4xf32>, %y: tensor<2x3xf32>) -> (tensor<4x3xf32>, tensor<4xf32>) {
    %ninf = arith.constant 0xFF800000 : f32
    %e0 = tensor.empty() : tensor<f32>
    %f0 = linalg.fill ins(%ninf : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %max = linalg.reduce ins(%x : tensor<4xf32>) outs(%f0 : tensor<f32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %0 = arith.maximumf %in, %acc : f32
        linalg.yield %0 : f32
      }
    %v = tensor.extract %max[] : tensor<f32>
    %padded = tensor.pad %y low[1, 0] high[1, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %v : f32
    } : tensor<2x3xf32> to tensor<4x3xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %shifted = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e1 : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %0 = arith.subf %in, %v : f32
      linalg.yield %0 : f32
    } -> tensor<4xf32>
    return %padded, %shifted : tensor<4x3xf32>, tensor<4xf32>
  }
}

// -----

// Tests that views (collapse_shape), constants and library calls (calls to functions marked
// kiln.library_call) stay in the entry as program steps, and only the generic between them
// becomes a dispatch, reading the library call's result.
// CHECK-LABEL: module @program_steps
// CHECK: func.func private @onednn.matmul_0(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> attributes {kiln.library_call = "onednn.matmul"}
// CHECK: func.func private @dispatch_0(%[[IN:[a-z0-9]+]]: tensor<4x8xf32>) -> tensor<4x8xf32>
// CHECK: linalg.generic {
// CHECK-SAME: ins(%[[IN]] : tensor<4x8xf32>)
// CHECK: math.tanh
// CHECK-NOT: @dispatch_1
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG:.+]]: tensor<4x2x4xf32>)
// CHECK-NEXT: %[[W:.+]] = arith.constant dense<5.000000e-01> : tensor<8x8xf32>
// CHECK-NEXT: %[[XC:.+]] = tensor.collapse_shape %[[ARG]] {{\[}}[0], [1, 2]]
// CHECK-NEXT: %[[MM:.+]] = call @onednn.matmul_0(%[[XC]], %[[W]])
// CHECK-NEXT: %[[T:.+]] = call @dispatch_0(%[[MM]])
// CHECK-NEXT: %[[OUT:.+]] = tensor.collapse_shape %[[T]] {{\[}}[0, 1]]
// CHECK-NEXT: return %[[OUT]] : tensor<32xf32>
module @program_steps {
  func.func private @onednn.matmul_0(tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> attributes {kiln.library_call = "onednn.matmul"}
  func.func @forward(%x: tensor<4x2x4xf32>) -> tensor<32xf32> {
    %w = arith.constant dense<0.5> : tensor<8x8xf32>
    %xc = tensor.collapse_shape %x [[0], [1, 2]] : tensor<4x2x4xf32> into tensor<4x8xf32>
    %0 = call @onednn.matmul_0(%xc, %w) : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
    %e = tensor.empty() : tensor<4x8xf32>
    %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%0 : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.tanh %in : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32>
    %2 = tensor.collapse_shape %1 [[0, 1]] : tensor<4x8xf32> into tensor<32xf32>
    return %2 : tensor<32xf32>
  }
}

// -----

// Tests which tensor constants are cloned into the kernel: splats of any size and constants of
// at most inline-constant-limit elements (16 by default); a larger constant stays in the entry and
// is passed as a constant buffer. With a limit of 4, the 5-element constant is passed too.
// CHECK-LABEL: module @constants
// CHECK: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<4x5xf32>, %[[LARGE:[a-z0-9]+]]: tensor<4x5xf32>) -> tensor<4x5xf32>
// CHECK-DAG: %[[SPLAT:.+]] = arith.constant dense<5.000000e-01> : tensor<4x5xf32>
// CHECK-DAG: %[[SMALL:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>
// CHECK: linalg.generic {
// CHECK-SAME: ins(%[[X]], %[[LARGE]], %[[SPLAT]], %[[SMALL]] : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>)
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG:.+]]: tensor<4x5xf32>)
// CHECK-NEXT: %[[CST:.+]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, {{.*}}]]> : tensor<4x5xf32>
// CHECK-NEXT: %[[CALL:.+]] = call @dispatch_0(%[[ARG]], %[[CST]])
// CHECK-NEXT: return %[[CALL]]
// LIMIT-LABEL: module @constants
// LIMIT: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<4x5xf32>, %[[LARGE:[a-z0-9]+]]: tensor<4x5xf32>, %[[SMALL:[a-z0-9]+]]: tensor<5xf32>) -> tensor<4x5xf32>
// LIMIT: %[[SPLAT:.+]] = arith.constant dense<5.000000e-01> : tensor<4x5xf32>
// LIMIT: linalg.generic {
// LIMIT-SAME: ins(%[[X]], %[[LARGE]], %[[SPLAT]], %[[SMALL]] : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>)
// LIMIT-LABEL: func.func @forward
// LIMIT-SAME: (%[[ARG:.+]]: tensor<4x5xf32>)
// LIMIT-DAG: %[[SMALLC:.+]] = arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00, 5.000000e+00]> : tensor<5xf32>
// LIMIT-DAG: %[[LARGEC:.+]] = arith.constant dense<{{\[}}[0.000000e+00, 1.000000e+00, {{.*}}]]> : tensor<4x5xf32>
// LIMIT: call @dispatch_0(%[[ARG]], %[[LARGEC]], %[[SMALLC]])
module @constants {
  func.func @forward(%x: tensor<4x5xf32>) -> tensor<4x5xf32> {
    %small = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
    %large = arith.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0, 9.0], [10.0, 11.0, 12.0, 13.0, 14.0], [15.0, 16.0, 17.0, 18.0, 19.0]]> : tensor<4x5xf32>
    %splat = arith.constant dense<0.5> : tensor<4x5xf32>
    %e = tensor.empty() : tensor<4x5xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x, %large, %splat, %small : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<5xf32>) outs(%e : tensor<4x5xf32>) {
    ^bb0(%a: f32, %l: f32, %s: f32, %m: f32, %out: f32):
      %1 = arith.mulf %a, %l : f32
      %2 = arith.mulf %s, %m : f32
      %3 = arith.addf %1, %2 : f32
      linalg.yield %3 : f32
    } -> tensor<4x5xf32>
    return %0 : tensor<4x5xf32>
  }
}

// -----

// Tests that a chain of tensor.insert_slice ops into one destination (a lowered concat) is one
// dispatch writing both slices into a cloned tensor.empty, while the generic producing a slice
// is a dispatch of its own; the description names the nodes of all the chain's ops, from call
// site and fused locations, each once.
// CHECK-LABEL: module @insert_slice_chain
// CHECK: func.func private @dispatch_0(%[[A:[a-z0-9]+]]: tensor<2x3xf32>, %[[B:[a-z0-9]+]]: tensor<2x5xf32>) -> tensor<2x8xf32>
// CHECK-SAME: attributes {kiln.description = "tensor.insert_slice (concat_a, concat_b)", kiln.dispatch}
// CHECK-NEXT: %[[EMPTY:.+]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT: %[[FIRST:.+]] = tensor.insert_slice %[[A]] into %[[EMPTY]][0, 0] [2, 3] [1, 1]
// CHECK-NEXT: %[[SECOND:.+]] = tensor.insert_slice %[[B]] into %[[FIRST]][0, 3] [2, 5] [1, 1]
// CHECK-NEXT: return %[[SECOND]]
// CHECK: func.func private @dispatch_1(%{{[a-z0-9]+}}: tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-SAME: kiln.description = "linalg.generic (exp)"
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG0:.+]]: tensor<2x3xf32>, %[[ARG1:.+]]: tensor<2x5xf32>)
// CHECK-NEXT: %[[EXP:.+]] = call @dispatch_1(%[[ARG0]])
// CHECK-NEXT: %[[CAT:.+]] = call @dispatch_0(%[[EXP]], %[[ARG1]])
// CHECK-NEXT: return %[[CAT]]
module @insert_slice_chain {
  func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> tensor<2x8xf32> {
    %e = tensor.empty() : tensor<2x3xf32>
    %ea = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = math.exp %in : f32
      linalg.yield %t : f32
    } -> tensor<2x3xf32> loc("exp")
    %dest = tensor.empty() : tensor<2x8xf32>
    %0 = tensor.insert_slice %ea into %dest[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32> loc(callsite("concat_a" at "model.onnx":3:1))
    %1 = tensor.insert_slice %b into %0[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32> loc(fused["concat_b", "concat_a"])
    return %1 : tensor<2x8xf32>
  }
}

// -----

// Tests that an insert_slice whose result has another use ends the chain: each insert_slice is a
// dispatch, the second reading the first's result as its destination.
// CHECK-LABEL: module @insert_slice_shared
// CHECK: func.func private @dispatch_0(%[[B:[a-z0-9]+]]: tensor<2x5xf32>, %[[DEST:[a-z0-9]+]]: tensor<2x8xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[R:.+]] = tensor.insert_slice %[[B]] into %[[DEST]][0, 3] [2, 5] [1, 1]
// CHECK-NEXT: return %[[R]]
// CHECK: func.func private @dispatch_1(%[[A:[a-z0-9]+]]: tensor<2x3xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %[[EMPTY:.+]] = tensor.empty() : tensor<2x8xf32>
// CHECK-NEXT: %[[R:.+]] = tensor.insert_slice %[[A]] into %[[EMPTY]][0, 0] [2, 3] [1, 1]
// CHECK-NEXT: return %[[R]]
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[ARG0:.+]]: tensor<2x3xf32>, %[[ARG1:.+]]: tensor<2x5xf32>)
// CHECK-NEXT: %[[FIRST:.+]] = call @dispatch_1(%[[ARG0]])
// CHECK-NEXT: %[[SECOND:.+]] = call @dispatch_0(%[[ARG1]], %[[FIRST]])
// CHECK-NEXT: return %[[FIRST]], %[[SECOND]]
module @insert_slice_shared {
  func.func @forward(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
    %dest = tensor.empty() : tensor<2x8xf32>
    %0 = tensor.insert_slice %a into %dest[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x8xf32>
    %1 = tensor.insert_slice %b into %0[0, 3] [2, 5] [1, 1] : tensor<2x5xf32> into tensor<2x8xf32>
    return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
  }
}

// -----

// Tests that kernels over dynamically shaped tensors (a program for a range of shapes) are
// formed like any other: the dispatch function takes and returns the dynamic types, and sizes it
// needs are computed inside it from its arguments.
// CHECK-LABEL: module @dynamic_operand
// CHECK: func.func private @dispatch_0(%[[X:.+]]: tensor<?x4xf32>) -> tensor<4xf32>
// CHECK: linalg.reduce ins(%[[X]] : tensor<?x4xf32>)
// CHECK: func.func @forward(%[[A:.+]]: tensor<?x4xf32>)
// CHECK-NEXT: call @dispatch_0(%[[A]]) : (tensor<?x4xf32>) -> tensor<4xf32>
module @dynamic_operand {
  func.func @forward(%x: tensor<?x4xf32>) -> tensor<4xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<4xf32>
    %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    %sum = linalg.reduce ins(%x : tensor<?x4xf32>) outs(%init : tensor<4xf32>) dimensions = [0]
      (%in: f32, %acc: f32) {
        %0 = arith.addf %in, %acc : f32
        linalg.yield %0 : f32
      }
    return %sum : tensor<4xf32>
  }
}

// -----

// CHECK-LABEL: module @dynamic_result
// CHECK: func.func private @dispatch_0(%[[X:.+]]: tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[N:.+]] = tensor.dim %[[X]], %c0
// CHECK: tensor.empty(%[[N]]) : tensor<?x4xf32>
module @dynamic_result {
  func.func @forward(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %c0 = arith.constant 0 : index
    %n = tensor.dim %x, %c0 : tensor<?x4xf32>
    %e = tensor.empty(%n) : tensor<?x4xf32>
    %0 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %1 = math.exp %in : f32
      linalg.yield %1 : f32
    } -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
}

// -----

// Tests that a module without the entry function named by the option is rejected, even when it
// has a function with the option's default name.
// expected-error @+1 {{no entry function 'forward' to form kernels from}}
module @no_entry {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that an entry function with control flow between blocks is rejected.
module @multi_block {
  // expected-error @+1 {{the entry function must be a single block}}
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    cf.br ^bb1
  ^bb1:
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that the ops kiln-plan-fusion put in one group (the same kiln.fusion_group) become one
// dispatch whose result is the group's root, with the other members inside it and their
// markers dropped; the root keeps kiln.tile_dims for kiln-tile-dispatches, and the description
// names every member's model node.
// CHECK-LABEL: module @fused_group
// CHECK: func.func private @dispatch_0(%[[X:[a-z0-9]+]]: tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK-SAME: kiln.description = "linalg.generic (sum, divide)"
// CHECK: %[[SUM:.+]] = linalg.reduce ins(%[[X]] : tensor<64x128xf32>)
// CHECK-NOT: kiln.fusion_group
// CHECK: linalg.generic {{.*}}ins(%[[X]], %[[SUM]] : tensor<64x128xf32>, tensor<64xf32>)
// CHECK-SAME: attrs = {kiln.tile_dims = array<i64: 0>}
// CHECK-LABEL: func.func @forward
// CHECK-NEXT: call @dispatch_0
// CHECK-NEXT: return
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
module @fused_group {
  func.func @forward(%x: tensor<64x128xf32>) -> tensor<64x128xf32> {
    %zero = arith.constant 0.0 : f32
    %e1 = tensor.empty() : tensor<64xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<64xf32>) -> tensor<64xf32>
    %sum = linalg.reduce ins(%x : tensor<64x128xf32>) outs(%s0 : tensor<64xf32>) dimensions = [1]
      {kiln.fusion_group = 7 : i64}
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("sum")
    %e2 = tensor.empty() : tensor<64x128xf32>
    %div = linalg.generic {indexing_maps = [#rows, #row, #rows], iterator_types = ["parallel", "parallel"]}
        ins(%x, %sum : tensor<64x128xf32>, tensor<64xf32>) outs(%e2 : tensor<64x128xf32>)
        attrs = {kiln.fusion_group = 7 : i64, kiln.tile_dims = array<i64: 0>} {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %q = arith.divf %a, %b : f32
      linalg.yield %q : f32
    } -> tensor<64x128xf32> loc("divide")
    return %div : tensor<64x128xf32>
  }
}

// -----

// Tests that a slice reading one contiguous run of its source from a multiple of 256 bytes (a
// row of 64 floats, as a split along the outer axis makes) stays in the entry function as a view,
// while a slice across rows (a column) and one starting at 32 bytes are copied by kernels.
// CHECK-LABEL: module @slices
// CHECK-LABEL: func.func @forward
// CHECK: %[[ROW:.+]] = tensor.extract_slice %{{.+}}[1, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<64xf32>
// CHECK: %[[COLUMN:.+]] = call @dispatch_{{[0-9]+}}(%{{.+}}) : (tensor<4x64xf32>) -> tensor<4x1xf32>
// CHECK: %[[UNALIGNED:.+]] = call @dispatch_{{[0-9]+}}(%{{.+}}) : (tensor<4x8xf32>) -> tensor<1x8xf32>
// CHECK: return %[[ROW]], %[[COLUMN]], %[[UNALIGNED]]
module @slices {
  func.func @forward(%x: tensor<4x64xf32>, %y: tensor<4x8xf32>) -> (tensor<64xf32>, tensor<4x1xf32>, tensor<1x8xf32>) {
    %row = tensor.extract_slice %x[1, 0] [1, 64] [1, 1] : tensor<4x64xf32> to tensor<64xf32>
    %column = tensor.extract_slice %x[0, 3] [4, 1] [1, 1] : tensor<4x64xf32> to tensor<4x1xf32>
    %unaligned = tensor.extract_slice %y[1, 0] [1, 8] [1, 1] : tensor<4x8xf32> to tensor<1x8xf32>
    return %row, %column, %unaligned : tensor<64xf32>, tensor<4x1xf32>, tensor<1x8xf32>
  }
}
