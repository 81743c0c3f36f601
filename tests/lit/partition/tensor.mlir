// RUN: kiln-opt %s --kiln-partition-tensor="devices=2 rank=1" | FileCheck %s
// RUN: kiln-opt %s --kiln-partition-tensor="devices=2 rank=0" | FileCheck %s --check-prefix=RANK0
// RUN: kiln-opt %s --kiln-partition-tensor="devices=3 rank=0" | FileCheck %s --check-prefix=THREE
// RUN: not kiln-opt %s --kiln-partition-tensor="devices=2 rank=2" 2>&1 | FileCheck %s --check-prefix=RANK

// Tests tensor parallelism on one transformer layer (hidden 4, two heads of 2, a fused QKV
// projection, an MLP of 8) and a head: the attention and the MLP each become one region ended by
// an all-reduce; the fused QKV weight is split in blocks of one head's columns, so that each
// device keeps its head's query, key and value columns (device 1: columns 2, 3, 6, 7, 10, 11);
// the head, normalized over its columns, stays whole.
// CHECK: kiln.partition_report = ["tensor parallel over 2 devices (this program: device 1): 2 regions, 2 all-reduces; weights: 0.00 MiB split (a device holds 1/2), 0.00 MiB replicated",
// CHECK-SAME: "region 1: graph.matmul 'qkv' split by columns in blocks of 2, 15 ops, ended by graph.matmul 'out' (row-parallel, then all-reduce)"
// CHECK-SAME: "region 2: graph.matmul 'up' split by columns in blocks of 4, 3 ops, ended by graph.matmul 'down' (row-parallel, then all-reduce)"
// CHECK-SAME: "replicated: graph.matmul 'head' (graph.layer_norm 'norm' normalizes over the split dimension)"
// CHECK: func.func private @gloo.all_reduce_0(tensor<1x2x4xf32>) -> tensor<1x2x4xf32> attributes {kiln.library_call = "gloo.all_reduce"}
// CHECK-LABEL: func.func @main
// CHECK-NOT: tensor<4x12xf32>
// CHECK: %[[QKV_W:.+]] = graph.constant dense<{{\[\[}}2.000000e+00, 3.000000e+00, 6.000000e+00, 7.000000e+00, 1.000000e+01, 1.100000e+01], {{.*}}> : tensor<4x6xf32>
// CHECK: graph.matmul %arg0, %[[QKV_W]] {{.*}} -> tensor<1x2x6xf32>
// CHECK: graph.reshape {{.*}} to [1, 2, 3, 1, 2] {{.*}} -> tensor<1x2x3x1x2xf32>
// CHECK: graph.split {{.*}} -> (tensor<1x1x1x2x2xf32>, tensor<1x1x1x2x2xf32>, tensor<1x1x1x2x2xf32>)
// CHECK: graph.softmax {{.*}} : tensor<1x1x2x2xf32>
// CHECK: graph.reshape {{.*}} to [1, 2, 2] {{.*}} -> tensor<1x2x2xf32>
// CHECK: %[[OUT:.+]] = graph.matmul {{.*}} : (tensor<1x2x2xf32>, tensor<2x4xf32>) -> tensor<1x2x4xf32>
// CHECK: %[[SUM:.+]] = call @gloo.all_reduce_0(%[[OUT]]) {devices = 2 : i64}
// CHECK: graph.add %[[SUM]],
// CHECK: %[[UP_B:.+]] = graph.constant dense<[4.500000e+00, 5.500000e+00, 6.500000e+00, 7.500000e+00]> : tensor<4xf32>
// CHECK: %[[DOWN_W:.+]] = graph.constant dense<{{\[\[}}4.000000e+00, {{.*}} [7.000000e+00, 7.000000e+00, 7.000000e+00, 7.000000e+00]]> : tensor<4x4xf32>
// CHECK: %[[DOWN:.+]] = graph.matmul {{.*}}, %[[DOWN_W]] : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32>
// CHECK: call @gloo.all_reduce_0(%[[DOWN]])
// CHECK: graph.matmul {{.*}} : (tensor<1x2x4xf32>, tensor<4x6xf32>) -> tensor<1x2x6xf32>
// CHECK: graph.layer_norm {{.*}} -> tensor<1x2x6xf32>
// RANK0: graph.constant dense<{{\[\[}}0.000000e+00, 1.000000e+00, 4.000000e+00, 5.000000e+00, 8.000000e+00, 9.000000e+00], {{.*}}> : tensor<4x6xf32>
// RANK0: graph.constant dense<[5.000000e-01, 1.500000e+00, 2.500000e+00, 3.500000e+00]> : tensor<4xf32>
// Three devices do not divide two heads (the 12 QKV columns would be split across query, key
// and value): the attention stays whole, the MLP (8 columns) too.
// THREE: "tensor parallel over 3 devices (this program: device 0): 0 regions, 0 all-reduces; weights: 0.00 MiB split (a device holds 1/3), 0.00 MiB replicated"
// THREE-SAME: "replicated: graph.matmul 'qkv' (graph.split cuts the split dimension into parts that are not whole blocks)"
// THREE-SAME: "replicated: graph.matmul 'up' (its 8 columns do not divide into 3 devices)"
// THREE-NOT: gloo.all_reduce
// RANK: error: kiln-partition-tensor: rank 2 is not one of 2 devices
func.func @main(%x: tensor<1x2x4xf32>) -> (tensor<1x2x4xf32>, tensor<1x2x6xf32>) {
  %wqkv = graph.constant dense<[[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0], [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]]> : tensor<4x12xf32>
  %qkv = graph.matmul %x, %wqkv : (tensor<1x2x4xf32>, tensor<4x12xf32>) -> tensor<1x2x12xf32> loc("qkv")
  %heads = graph.reshape %qkv to [1, 2, 3, 2, 2] : tensor<1x2x12xf32> -> tensor<1x2x3x2x2xf32>
  %t = graph.transpose %heads, [2, 0, 3, 1, 4] : tensor<1x2x3x2x2xf32> -> tensor<3x1x2x2x2xf32>
  %s:3 = graph.split %t {axis = 0 : i64, sizes = array<i64: 1, 1, 1>} : (tensor<3x1x2x2x2xf32>) -> (tensor<1x1x2x2x2xf32>, tensor<1x1x2x2x2xf32>, tensor<1x1x2x2x2xf32>)
  %q = graph.squeeze %s#0 {axes = array<i64: 0>} : (tensor<1x1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %k = graph.squeeze %s#1 {axes = array<i64: 0>} : (tensor<1x1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %v = graph.squeeze %s#2 {axes = array<i64: 0>} : (tensor<1x1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %scores = graph.matmul %q, %kt : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %scale = graph.constant dense<1.414> : tensor<f32>
  %scaled = graph.div %scores, %scale : (tensor<1x2x2x2xf32>, tensor<f32>) -> tensor<1x2x2x2xf32>
  %mask = graph.constant dense<[[0.0, -1.0e4], [0.0, 0.0]]> : tensor<2x2xf32>
  %masked = graph.add %scaled, %mask : (tensor<1x2x2x2xf32>, tensor<2x2xf32>) -> tensor<1x2x2x2xf32>
  %p = graph.softmax %masked {axis = 3 : i64} : tensor<1x2x2x2xf32>
  %ctx = graph.matmul %p, %v : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %ctxt = graph.transpose %ctx, [0, 2, 1, 3] : tensor<1x2x2x2xf32> -> tensor<1x2x2x2xf32>
  %merged = graph.reshape %ctxt to [1, 2, 4] : tensor<1x2x2x2xf32> -> tensor<1x2x4xf32>
  %wo = graph.constant dense<0.25> : tensor<4x4xf32>
  %o = graph.matmul %merged, %wo : (tensor<1x2x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4xf32> loc("out")
  %bo = graph.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %ob = graph.add %o, %bo : (tensor<1x2x4xf32>, tensor<4xf32>) -> tensor<1x2x4xf32>
  %h = graph.add %x, %ob : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %wup = graph.constant dense<0.5> : tensor<4x8xf32>
  %up = graph.matmul %h, %wup : (tensor<1x2x4xf32>, tensor<4x8xf32>) -> tensor<1x2x8xf32> loc("up")
  %bup = graph.constant dense<[0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5]> : tensor<8xf32>
  %upb = graph.add %up, %bup : (tensor<1x2x8xf32>, tensor<8xf32>) -> tensor<1x2x8xf32>
  %act = graph.tanh %upb : tensor<1x2x8xf32>
  %wdown = graph.constant dense<[[0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0], [4.0, 4.0, 4.0, 4.0], [5.0, 5.0, 5.0, 5.0], [6.0, 6.0, 6.0, 6.0], [7.0, 7.0, 7.0, 7.0]]> : tensor<8x4xf32>
  %down = graph.matmul %act, %wdown : (tensor<1x2x8xf32>, tensor<8x4xf32>) -> tensor<1x2x4xf32> loc("down")
  %y = graph.add %h, %down : (tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %whead = graph.constant dense<0.125> : tensor<4x6xf32>
  %head = graph.matmul %y, %whead : (tensor<1x2x4xf32>, tensor<4x6xf32>) -> tensor<1x2x6xf32> loc("head")
  %g = graph.constant dense<1.0> : tensor<6xf32>
  %n = graph.layer_norm %head, %g {axis = 2 : i64} : (tensor<1x2x6xf32>, tensor<6xf32>) -> tensor<1x2x6xf32> loc("norm")
  return %y, %n : tensor<1x2x4xf32>, tensor<1x2x6xf32>
}
