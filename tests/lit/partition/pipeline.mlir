// RUN: kiln-opt %s --kiln-partition-pipeline="devices=2 rank=0" | FileCheck %s --check-prefix=FIRST
// RUN: kiln-opt %s --kiln-partition-pipeline="devices=2 rank=1" | FileCheck %s --check-prefix=SECOND
// RUN: not kiln-opt %s --kiln-partition-pipeline="devices=2 rank=5" 2>&1 | FileCheck %s --check-prefix=RANK

// Tests a chain of four equal layers cut into two stages: the cut goes between the second and
// the third layer (half the modeled cost on each side, one value crossing). Device 0 keeps the
// first two layers' ops and weights and broadcasts what it computed; device 1 receives it where
// it was defined, keeps the last two layers, and broadcasts the result, which device 0 receives:
// both return the model's output, and both make the same collective calls in the same order.
// FIRST: "pipeline over 2 devices (this program: device 0): 2 stages, 2 values broadcast"
// FIRST-SAME: "stage 0: ops 0-3 (graph.matmul 'l1' to graph.tanh 't2'), {{[0-9.]+}} ms modeled, sends 0.00 MiB"
// FIRST-SAME: "stage 1: ops 4-7 (graph.matmul 'l3' to graph.tanh 't4'), {{[0-9.]+}} ms modeled, sends 0.00 MiB"
// FIRST-LABEL: func.func @main
// FIRST-NEXT: graph.constant dense<1.000000e+00>
// FIRST-NEXT: graph.constant dense<2.000000e+00>
// FIRST-NOT: graph.constant
// FIRST: graph.tanh
// FIRST: %[[T2:.+]] = graph.tanh
// FIRST-NEXT: call @gloo.broadcast_{{[0-9]+}}(%[[T2]]) {devices = 2 : i64, root = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
// FIRST-NEXT: %[[Y:.+]] = call @gloo.receive_{{[0-9]+}}() {devices = 2 : i64, root = 1 : i64} : () -> tensor<4x8xf32>
// FIRST-NEXT: return %[[Y]]
// SECOND-LABEL: func.func @main
// SECOND-NEXT: graph.constant dense<3.000000e+00>
// SECOND-NEXT: graph.constant dense<4.000000e+00>
// SECOND-NEXT: %[[X:.+]] = call @gloo.receive_{{[0-9]+}}() {devices = 2 : i64, root = 0 : i64} : () -> tensor<4x8xf32>
// SECOND-NEXT: graph.matmul %[[X]],
// SECOND: graph.tanh
// SECOND: %[[T4:.+]] = graph.tanh
// SECOND-NEXT: call @gloo.broadcast_{{[0-9]+}}(%[[T4]]) {devices = 2 : i64, root = 1 : i64}
// SECOND-NEXT: return %[[T4]]
// RANK: error: kiln-partition-pipeline: rank 5 is not one of 2 devices
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = graph.constant dense<1.0> : tensor<8x8xf32>
  %w2 = graph.constant dense<2.0> : tensor<8x8xf32>
  %w3 = graph.constant dense<3.0> : tensor<8x8xf32>
  %w4 = graph.constant dense<4.0> : tensor<8x8xf32>
  %a1 = graph.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("l1")
  %t1 = graph.tanh %a1 : tensor<4x8xf32>
  %a2 = graph.matmul %t1, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t2 = graph.tanh %a2 : tensor<4x8xf32> loc("t2")
  %a3 = graph.matmul %t2, %w3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32> loc("l3")
  %t3 = graph.tanh %a3 : tensor<4x8xf32>
  %a4 = graph.matmul %t3, %w4 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %t4 = graph.tanh %a4 : tensor<4x8xf32> loc("t4")
  return %t4 : tensor<4x8xf32>
}
