// RUN: kiln-opt %s --kiln-partition-tensor="devices=2 rank=0" | FileCheck %s

// Tests a layer exported with separate query, key and value projections and a gated MLP: the
// query's region cannot go past Q·Kᵀ while the key is replicated, so the key's projection (and
// then the value's) joins it as a start, split alike (a head each); the gate's region pulls in
// the up projection at their product. Two regions, two all-reduces.
// CHECK: "tensor parallel over 2 devices (this program: device 0): 2 regions, 2 all-reduces
// CHECK-SAME: "region 1: graph.matmul 'q', graph.matmul 'k', graph.matmul 'v' split by columns in blocks of 2, 2, 2, 14 ops, ended by graph.matmul 'o' (row-parallel, then all-reduce)"
// CHECK-SAME: "region 2: graph.matmul 'gate', graph.matmul 'up' split by columns in blocks of 4, 4, 4 ops, ended by graph.matmul 'down' (row-parallel, then all-reduce)"
// CHECK-LABEL: func.func @main
// CHECK-COUNT-3: graph.matmul %arg0, %{{.+}} : (tensor<1x2x4xf32>, tensor<4x2xf32>) -> tensor<1x2x2xf32>
// CHECK: graph.softmax {{.*}} : tensor<1x1x2x2xf32>
// CHECK: %[[O:.+]] = graph.matmul {{.*}} : (tensor<1x2x2xf32>, tensor<2x4xf32>) -> tensor<1x2x4xf32>
// CHECK: call @gloo.all_reduce_0(%[[O]])
// CHECK: %[[GATE:.+]] = graph.matmul {{.*}} -> tensor<1x2x4xf32>
// CHECK: %[[UP:.+]] = graph.matmul {{.*}} -> tensor<1x2x4xf32>
// CHECK: graph.mul {{.*}}, %[[UP]] : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
// CHECK: %[[DOWN:.+]] = graph.matmul {{.*}} : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32>
// CHECK: call @gloo.all_reduce_0(%[[DOWN]])
func.func @main(%x: tensor<1x2x4xf32>) -> tensor<1x2x4xf32> {
  %wq = graph.constant dense<0.5> : tensor<4x4xf32>
  %wk = graph.constant dense<0.25> : tensor<4x4xf32>
  %wv = graph.constant dense<0.125> : tensor<4x4xf32>
  %q = graph.matmul %x, %wq : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32> loc("q")
  %k = graph.matmul %x, %wk : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32> loc("k")
  %v = graph.matmul %x, %wv : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32> loc("v")
  %qh = graph.reshape %q to [1, 2, 2, 2] : tensor<1x2x4xf32> -> tensor<1x2x2x2xf32>
  %kh = graph.reshape %k to [1, 2, 2, 2] : tensor<1x2x4xf32> -> tensor<1x2x2x2xf32>
  %vh = graph.reshape %v to [1, 2, 2, 2] : tensor<1x2x4xf32> -> tensor<1x2x2x2xf32>
  %qt = graph.transpose %qh, [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %kt = graph.transpose %kh, [0, 2, 3, 1] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %vt = graph.transpose %vh, [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %s = graph.matmul %qt, %kt : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = graph.softmax %s {axis = 3 : i64} : tensor<1x2x2x2xf32>
  %c = graph.matmul %p, %vt : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %ct = graph.transpose %c, [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %m = graph.reshape %ct to [1, 2, 4] : tensor<1x2x2x2xf32> -> tensor<1x2x4xf32>
  %wo = graph.constant dense<1.0> : tensor<4x4xf32>
  %o = graph.matmul %m, %wo : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32> loc("o")
  %h = graph.add %x, %o : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %wg = graph.constant dense<0.5> : tensor<4x8xf32>
  %wu = graph.constant dense<0.25> : tensor<4x8xf32>
  %g = graph.matmul %h, %wg : (tensor<1x2x4xf32>, tensor<4x8xf32>) -> tensor<1x2x8xf32> loc("gate")
  %ga = graph.sigmoid %g : tensor<1x2x8xf32>
  %u = graph.matmul %h, %wu : (tensor<1x2x4xf32>, tensor<4x8xf32>) -> tensor<1x2x8xf32> loc("up")
  %gu = graph.mul %ga, %u : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x2x8xf32>
  %wd = graph.constant dense<1.0> : tensor<8x4xf32>
  %d = graph.matmul %gu, %wd : (tensor<1x2x8xf32>, tensor<8x4xf32>) -> tensor<1x2x4xf32> loc("down")
  %y = graph.add %h, %d : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  return %y : tensor<1x2x4xf32>
}
