// RUN: kiln-opt --split-input-file --kiln-fuse-sibling-matmuls %s | FileCheck %s

// Tests the query, key and value projections of one input, as exporters write them (a product,
// then its bias added first or second): one product with the weights side by side (their
// values interleaved row by row), the biases concatenated (zeros for the product without one),
// and a slice of the columns for each, which the heads' reshapes and the products read.
// CHECK-LABEL: func.func @qkv
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00, 5.000000e+00, 9.000000e+00, 1.000000e+01], [3.000000e+00, 4.000000e+00, 6.000000e+00, 1.100000e+01, 1.200000e+01]]> : tensor<2x5xf32>
// CHECK: %[[P:.+]] = graph.matmul %arg0, %[[W]] : (tensor<3x2xf32>, tensor<2x5xf32>) -> tensor<3x5xf32>
// CHECK: %[[B:.+]] = graph.constant dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, 0.000000e+00, 0.000000e+00]> : tensor<5xf32>
// CHECK: %[[Y:.+]] = graph.add %[[P]], %[[B]] : (tensor<3x5xf32>, tensor<5xf32>) -> tensor<3x5xf32>
// CHECK: %[[Q:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 2>, starts = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x2xf32>
// CHECK: %[[K:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 3>, starts = array<i64: 0, 2>, strides = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x1xf32>
// CHECK: %[[V:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 5>, starts = array<i64: 0, 3>, strides = array<i64: 1, 1>} : (tensor<3x5xf32>) -> tensor<3x2xf32>
// CHECK-NOT: graph.matmul %arg0
// CHECK: graph.transpose %[[K]]
func.func @qkv(%x: tensor<3x2xf32>) -> (tensor<2x1xf32>, tensor<1x2xf32>, tensor<2x2xf32>) {
  %wq = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = graph.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %wv = graph.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %bq = graph.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %bk = graph.constant dense<[0.3]> : tensor<1xf32>
  %two = graph.constant dense<2.0> : tensor<f32>
  %q0 = graph.matmul %x, %wq : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q1 = graph.add %bq, %q0 : (tensor<2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %q = graph.div %q1, %two : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %k0 = graph.matmul %x, %wk : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %k = graph.add %k0, %bk : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  %v = graph.matmul %x, %wv : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %qt = graph.transpose %q, [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %kt = graph.transpose %k, [1, 0] : tensor<3x1xf32> -> tensor<1x3xf32>
  %vt = graph.transpose %v, [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %s = graph.matmul %qt, %k : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %t = graph.matmul %kt, %v : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32>
  %u = graph.matmul %vt, %v : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %s, %t, %u : tensor<2x1xf32>, tensor<1x2xf32>, tensor<2x2xf32>
}

// -----

// Tests that products whose results reach a graph output other than through a product (the
// gated MLP's result is returned: the output would be a copy of the slices' reader) stay apart.
// CHECK-LABEL: func.func @gated_mlp
// CHECK: graph.matmul %arg0, %{{.+}} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK: graph.matmul %arg0, %{{.+}} : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK-NOT: graph.slice
func.func @gated_mlp(%x: tensor<4x2xf32>) -> tensor<4x3xf32> {
  %wg = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wu = graph.constant dense<[[7.0, 8.0, 9.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>
  %g = graph.matmul %x, %wg : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %u = graph.matmul %x, %wu : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %a = graph.sigmoid %g : tensor<4x3xf32>
  %m = graph.mul %g, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = graph.mul %m, %u : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tests that a gated MLP whose result feeds the down projection, as in a transformer layer, has
// its gate and up products fused: the activation and the multiply read the two slices (in place,
// once kiln-fold-data-movement writes them into the generated kernel's indexing maps).
// CHECK-LABEL: func.func @gated_mlp_into_down_projection
// CHECK: %[[FUSED:.+]] = graph.matmul %arg0, %{{.+}} : (tensor<4x2xf32>, tensor<2x6xf32>) -> tensor<4x6xf32>
// CHECK-DAG: %[[GATE:.+]] = graph.slice %[[FUSED]] {limits = array<i64: 4, 3>, starts = array<i64: 0, 0>
// CHECK-DAG: %[[UP:.+]] = graph.slice %[[FUSED]] {limits = array<i64: 4, 6>, starts = array<i64: 0, 3>
// CHECK: graph.sigmoid %[[GATE]]
// CHECK: graph.matmul %{{.+}}, %{{.+}} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
func.func @gated_mlp_into_down_projection(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %wg = graph.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %wu = graph.constant dense<[[7.0, 8.0, 9.0], [1.0, 2.0, 3.0]]> : tensor<2x3xf32>
  %wd = graph.constant dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>
  %g = graph.matmul %x, %wg : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %u = graph.matmul %x, %wu : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %a = graph.sigmoid %g : tensor<4x3xf32>
  %m = graph.mul %g, %a : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %h = graph.mul %m, %u : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = graph.matmul %h, %wd : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}

// -----

// Tests a query scaled after its projection and bias (Whisper's exporter: (x Wq + bq) * 0.125):
// the scale goes into the query's columns of the fused weights and its part of the bias, so
// the query's slice is read in place like the key's and the value's, with no multiplication
// left. A scale by a tensor of several values (the value's per-column scale) is not folded: it
// stays after the value's slice.
// CHECK-LABEL: func.func @scaled_query
// CHECK: %[[W:.+]] = graph.constant dense<{{\[\[}}1.250000e-01, 2.500000e-01, 5.000000e+00, 9.000000e+00, 1.000000e+01], [3.750000e-01, 5.000000e-01, 6.000000e+00, 1.100000e+01, 1.200000e+01]]> : tensor<2x5xf32>
// CHECK: %[[P:.+]] = graph.matmul %arg0, %[[W]]
// CHECK: %[[B:.+]] = graph.constant dense<[1.250000e-02, 2.500000e-02, 3.000000e-01, 0.000000e+00, 0.000000e+00]> : tensor<5xf32>
// CHECK: %[[Y:.+]] = graph.add %[[P]], %[[B]]
// CHECK: %[[Q:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 2>, starts = array<i64: 0, 0>
// CHECK: %[[K:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 3>, starts = array<i64: 0, 2>
// CHECK: %[[V:.+]] = graph.slice %[[Y]] {limits = array<i64: 3, 5>, starts = array<i64: 0, 3>
// CHECK-NEXT: graph.mul %[[V]], %{{.+}} : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: graph.transpose %[[Q]]
func.func @scaled_query(%x: tensor<3x2xf32>) -> (tensor<2x1xf32>, tensor<2x2xf32>) {
  %wq = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %wk = graph.constant dense<[[5.0], [6.0]]> : tensor<2x1xf32>
  %wv = graph.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %bq = graph.constant dense<[0.1, 0.2]> : tensor<2xf32>
  %bk = graph.constant dense<[0.3]> : tensor<1xf32>
  %eighth = graph.constant dense<0.125> : tensor<f32>
  %columns = graph.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %q0 = graph.matmul %x, %wq : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q1 = graph.add %q0, %bq : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %q = graph.mul %q1, %eighth : (tensor<3x2xf32>, tensor<f32>) -> tensor<3x2xf32>
  %k0 = graph.matmul %x, %wk : (tensor<3x2xf32>, tensor<2x1xf32>) -> tensor<3x1xf32>
  %k = graph.add %k0, %bk : (tensor<3x1xf32>, tensor<1xf32>) -> tensor<3x1xf32>
  %v0 = graph.matmul %x, %wv : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %v = graph.mul %v0, %columns : (tensor<3x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %qt = graph.transpose %q, [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %s = graph.matmul %qt, %k : (tensor<2x3xf32>, tensor<3x1xf32>) -> tensor<2x1xf32>
  %vt = graph.transpose %v, [1, 0] : tensor<3x2xf32> -> tensor<2x3xf32>
  %u = graph.matmul %vt, %v : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %s, %u : tensor<2x1xf32>, tensor<2x2xf32>
}
