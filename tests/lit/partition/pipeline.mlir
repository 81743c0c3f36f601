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

// RUN: kiln-opt %s --kiln-partition-pipeline="devices=2 rank=0 micro-batches=2" | FileCheck %s --check-prefix=MICRO0
// RUN: kiln-opt %s --kiln-partition-pipeline="devices=2 rank=1 micro-batches=2" | FileCheck %s --check-prefix=MICRO1
// RUN: not kiln-opt %s --kiln-partition-pipeline="devices=2 rank=0 micro-batches=3" 2>&1 | FileCheck %s --check-prefix=UNEVEN
// With two micro-batches of 2 rows: device 0 runs the first two layers on rows 0-1, sends the
// result to device 1 (transfer 0), then on rows 2-3 (transfer 1), never waiting for device 1;
// device 1 receives each before using it, runs the last two layers on it, joins the two results
// in order and broadcasts them, which device 0 receives.
// MICRO0: "pipeline over 2 devices (this program: device 0): 2 stages, 2 micro-batches in flight; 2 transfers between stages (0.00 MiB per run), outputs broadcast (0.00 MiB)"
// MICRO0-LABEL: func.func @main
// MICRO0: %[[ROWS0:.+]] = graph.slice %arg0 {limits = array<i64: 2, 8>, starts = array<i64: 0, 0>
// MICRO0: graph.matmul %[[ROWS0]], {{.*}} -> tensor<2x8xf32>
// MICRO0: graph.tanh
// MICRO0: %[[SENT0:.+]] = graph.tanh
// MICRO0-NEXT: call @gloo.send_{{[0-9]+}}(%[[SENT0]]) {devices = 2 : i64, peer = 1 : i64, tag = 0 : i64}
// MICRO0: %[[ROWS1:.+]] = graph.slice %arg0 {limits = array<i64: 4, 8>, starts = array<i64: 2, 0>
// MICRO0: graph.matmul %[[ROWS1]]
// MICRO0: graph.tanh
// MICRO0: %[[SENT1:.+]] = graph.tanh
// MICRO0-NEXT: call @gloo.send_{{[0-9]+}}(%[[SENT1]]) {devices = 2 : i64, peer = 1 : i64, tag = 1 : i64}
// MICRO0-NEXT: %[[Y:.+]] = call @gloo.receive_{{[0-9]+}}() {devices = 2 : i64, root = 1 : i64} : () -> tensor<4x8xf32>
// MICRO0-NEXT: return %[[Y]]
// MICRO1-LABEL: func.func @main
// MICRO1-NOT: graph.constant dense<1.0
// MICRO1: %[[IN0:.+]] = call @gloo.recv_{{[0-9]+}}() {devices = 2 : i64, peer = 0 : i64, tag = 0 : i64} : () -> tensor<2x8xf32>
// MICRO1-NEXT: graph.matmul %[[IN0]]
// MICRO1: graph.tanh
// MICRO1: %[[OUT0:.+]] = graph.tanh
// MICRO1: %[[IN1:.+]] = call @gloo.recv_{{[0-9]+}}() {devices = 2 : i64, peer = 0 : i64, tag = 1 : i64}
// MICRO1-NEXT: graph.matmul %[[IN1]]
// MICRO1: graph.tanh
// MICRO1: %[[OUT1:.+]] = graph.tanh
// MICRO1: %[[P0:.+]] = graph.reshape %[[OUT0]] to [1, 2, 8]
// MICRO1: %[[P1:.+]] = graph.reshape %[[OUT1]] to [1, 2, 8]
// MICRO1: %[[J:.+]] = graph.concat %[[P0]], %[[P1]] {axis = 0 : i64}
// MICRO1: %[[Y1:.+]] = graph.reshape %[[J]] to [4, 8]
// MICRO1-NEXT: call @gloo.broadcast_{{[0-9]+}}(%[[Y1]]) {devices = 2 : i64, root = 1 : i64}
// MICRO1-NEXT: return %[[Y1]]
// UNEVEN: error: kiln-partition-pipeline: the batch of 4 (dimension 0 of input '#0') does not divide into 3 parts
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
