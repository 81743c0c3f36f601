// RUN: kiln-opt %s --split-input-file --kiln-partition-batch="devices=2 rank=1" --verify-diagnostics | FileCheck %s
// RUN: kiln-opt %s --split-input-file --kiln-partition-batch="devices=2 rank=0" --verify-diagnostics | FileCheck %s --check-prefix=RANK0

// Tests batch parallelism: a batch of 4 over 2 devices. Device 1 takes samples 2 and 3 of `x`
// and of `m`; `p` (6 rows, not the batch's 4) is read whole. The product splits by rows; the
// constant of the batch's size is sliced at compile time (device 1 keeps its rows 2 and 3); the
// replicated transpose of `p` is read in part at run time (its rows viewed as [k, devices, block]
// and device 1's index taken). The first output is gathered as it is; the second holds the batch
// in its columns, so the gathered parts are put back in order by a transpose.
// CHECK: kiln.partition_report = ["batch parallel over 2 devices (this program: device 1): a batch of 4 in parts of 2; inputs split: x, m; read whole: p; 5 ops split, 1 computed whole on every device; 2 outputs gathered (0.00 MiB)",
// CHECK-DAG: func.func private @gloo.all_gather_{{[0-9]+}}(tensor<2x6xf32>) -> tensor<2x2x6xf32> attributes {kiln.library_call = "gloo.all_gather"}
// CHECK-DAG: func.func private @gloo.all_gather_{{[0-9]+}}(tensor<6x2xf32>) -> tensor<2x6x2xf32> attributes {kiln.library_call = "gloo.all_gather"}
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.+]] = graph.slice %arg0 {limits = array<i64: 4, 6>, starts = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<2x6xf32>
// CHECK: %[[M:.+]] = graph.slice %arg1 {limits = array<i64: 4, 1>, starts = array<i64: 2, 0>, strides = array<i64: 1, 1>} : (tensor<4x1xf32>) -> tensor<2x1xf32>
// CHECK: %[[Y:.+]] = graph.matmul %[[X]], %{{.+}} : (tensor<2x6xf32>, tensor<6x6xf32>) -> tensor<2x6xf32>
// CHECK: %[[B:.+]] = graph.constant dense<{{\[\[}}3.000000e+00, {{.*}}], [4.000000e+00, {{.*}}]]> : tensor<2x6xf32>
// CHECK: %[[Z:.+]] = graph.add %[[Y]], %[[B]] : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK: %[[S:.+]] = graph.mul %[[Z]], %[[M]] : (tensor<2x6xf32>, tensor<2x1xf32>) -> tensor<2x6xf32>
// CHECK: %[[PT:.+]] = graph.transpose %arg2, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
// CHECK: %[[PV:.+]] = graph.reshape %[[PT]] to [1, 2, 2, 6] : tensor<4x6xf32> -> tensor<1x2x2x6xf32>
// CHECK: %[[PS:.+]] = graph.slice %[[PV]] {limits = array<i64: 1, 2, 2, 6>, starts = array<i64: 0, 1, 0, 0>, strides = array<i64: 1, 1, 1, 1>}
// CHECK: %[[P:.+]] = graph.reshape %[[PS]] to [2, 6] : tensor<1x1x2x6xf32> -> tensor<2x6xf32>
// CHECK: %[[Q:.+]] = graph.add %[[S]], %[[P]] : (tensor<2x6xf32>, tensor<2x6xf32>) -> tensor<2x6xf32>
// CHECK: %[[T:.+]] = graph.transpose %[[Q]], [1, 0] : tensor<2x6xf32> -> tensor<6x2xf32>
// CHECK: %[[G1:.+]] = call @gloo.all_gather_{{[0-9]+}}(%[[Q]]) {devices = 2 : i64} : (tensor<2x6xf32>) -> tensor<2x2x6xf32>
// CHECK: %[[O1:.+]] = graph.reshape %[[G1]] to [4, 6] : tensor<2x2x6xf32> -> tensor<4x6xf32>
// CHECK: %[[G2:.+]] = call @gloo.all_gather_{{[0-9]+}}(%[[T]]) {devices = 2 : i64} : (tensor<6x2xf32>) -> tensor<2x6x2xf32>
// CHECK: %[[V2:.+]] = graph.reshape %[[G2]] to [2, 6, 1, 2] : tensor<2x6x2xf32> -> tensor<2x6x1x2xf32>
// CHECK: %[[T2:.+]] = graph.transpose %[[V2]], [1, 2, 0, 3] : tensor<2x6x1x2xf32> -> tensor<6x1x2x2xf32>
// CHECK: %[[O2:.+]] = graph.reshape %[[T2]] to [6, 4] : tensor<6x1x2x2xf32> -> tensor<6x4xf32>
// CHECK: return %[[O1]], %[[O2]]
// RANK0: graph.slice %arg0 {limits = array<i64: 2, 6>, starts = array<i64: 0, 0>
// RANK0: graph.constant dense<{{\[\[}}1.000000e+00, {{.*}}], [2.000000e+00, {{.*}}]]> : tensor<2x6xf32>
// RANK0: graph.slice %{{.+}} {limits = array<i64: 1, 1, 2, 6>, starts = array<i64: 0, 0, 0, 0>
func.func @main(%x: tensor<4x6xf32> {kiln.name = "x"}, %m: tensor<4x1xf32> {kiln.name = "m"},
                %p: tensor<6x4xf32> {kiln.name = "p"}) -> (tensor<4x6xf32>, tensor<6x4xf32>) {
  %w = graph.constant dense<0.5> : tensor<6x6xf32>
  %y = graph.matmul %x, %w : (tensor<4x6xf32>, tensor<6x6xf32>) -> tensor<4x6xf32>
  %b = graph.constant dense<[[1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0, 2.0, 2.0],
                             [3.0, 3.0, 3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0, 4.0, 4.0]]> : tensor<4x6xf32>
  %z = graph.add %y, %b : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = graph.mul %z, %m : (tensor<4x6xf32>, tensor<4x1xf32>) -> tensor<4x6xf32>
  %pt = graph.transpose %p, [1, 0] : tensor<6x4xf32> -> tensor<4x6xf32>
  %q = graph.add %s, %pt : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  %t = graph.transpose %q, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  return %q, %t : tensor<4x6xf32>, tensor<6x4xf32>
}

// -----

// A sum over the batch would need every device's samples: the split refuses it, naming the op.
func.func @main(%x: tensor<4x6xf32> {kiln.name = "x"}) -> tensor<6xf32> {
  // expected-error @+1 {{kiln-partition-batch: graph.reduce_sum does not keep the samples of the batch apart: it reduces over the dimension that holds the batch}}
  %r = graph.reduce_sum %x {axes = array<i64: 0>} : (tensor<4x6xf32>) -> tensor<6xf32>
  return %r : tensor<6xf32>
}

// -----

// So would a product summing over it (x transposed, then multiplied along the samples).
func.func @main(%x: tensor<4x6xf32> {kiln.name = "x"}) -> tensor<6x6xf32> {
  %t = graph.transpose %x, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
  // expected-error @+1 {{it sums over the dimension that holds the batch}}
  %g = graph.matmul %t, %x : (tensor<6x4xf32>, tensor<4x6xf32>) -> tensor<6x6xf32>
  return %g : tensor<6x6xf32>
}

// -----

// expected-error @+1 {{the batch of 3 (dimension 0 of input 'x') does not divide into 2 devices}}
func.func @main(%x: tensor<3x6xf32> {kiln.name = "x"}) -> tensor<3x6xf32> {
  %r = graph.tanh %x : tensor<3x6xf32>
  return %r : tensor<3x6xf32>
}
