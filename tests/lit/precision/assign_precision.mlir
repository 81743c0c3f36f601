// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=fp16 keep-io-types=1" %s | FileCheck %s
// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=bf16" %s | FileCheck %s --check-prefix=IO
// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=fp16 keep-io-types=1 keep-high=bias" %s | FileCheck %s --check-prefix=HIGH
// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=fp16 keep-io-types=1 explicit-low=1 low=3" %s | FileCheck %s --check-prefix=EXPLICIT
// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=fp16 emulate=1" %s | FileCheck %s --check-prefix=EMULATE
// RUN: kiln-opt --split-input-file --kiln-assign-precision="precision=tf32" %s | FileCheck %s --check-prefix=TF32
// RUN: not kiln-opt --kiln-assign-precision="precision=fp8" %s 2>&1 | FileCheck %s --check-prefix=BAD

// The policy: the matmul (compute) is fp16 with its weights converted once; the bias add follows
// its low operands; the scale's constant (1e6) does not fit fp16, so it stays fp32 and reads the
// sum cast back; softmax (sensitive) stays fp32; the final add has an fp32 operand. The input is
// cast where the matmul reads it and the result type is kept.
// CHECK-LABEL: func.func @policy
// CHECK-SAME: (%[[X:.+]]: tensor<4x8xf32> {kiln.name = "x"}) -> (tensor<4x16xf32>
// CHECK-SAME: kiln.precision_candidates = 5
// CHECK-SAME: "   0  fp16   compute    graph.matmul             mm  (compute op)"
// CHECK-SAME: "   1  fp16   follow     graph.add                bias  (operands low)"
// CHECK-SAME: "   2  fp32   follow     graph.mul                scale  (a constant reaches 1.000000e+06, beyond fp16's range)"
// CHECK-SAME: "   3  fp32   sensitive  graph.softmax            sm  (sensitive op)"
// CHECK-SAME: "   4  fp32   follow     graph.add                out  (an operand is fp32)"
// CHECK-DAG: %[[XH:.+]] = graph.cast %[[X]] : tensor<4x8xf32> to f16
// CHECK-DAG: %[[W:.+]] = graph.constant dense<{{.*}}> : tensor<8x16xf16>
// CHECK-DAG: %[[B:.+]] = graph.constant dense<2.500000e-01> : tensor<16xf16>
// CHECK: %[[M:.+]] = graph.matmul %[[XH]], %[[W]] : (tensor<4x8xf16>, tensor<8x16xf16>) -> tensor<4x16xf16>
// CHECK: %[[A:.+]] = graph.add %[[M]], %[[B]] : (tensor<4x16xf16>, tensor<16xf16>) -> tensor<4x16xf16>
// CHECK: %[[AF:.+]] = graph.cast %[[A]] : tensor<4x16xf16> to f32
// CHECK: graph.mul %[[AF]], %{{.+}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK: graph.softmax %[[AF]] {axis = 1 : i64} : tensor<4x16xf32>
// CHECK: return %{{.+}} : tensor<4x16xf32>

// Without keep-io-types the input becomes bf16 (bf16 holds 1e6, so the scale is low too) and the
// high softmax reads it cast back.
// IO-LABEL: func.func @policy
// IO-SAME: (%{{.+}}: tensor<4x8xbf16> {kiln.name = "x"}) -> (tensor<4x16xf32>
// IO-SAME: "   2  bf16   follow     graph.mul                scale  (operands low)"

// keep-high names an ONNX node: the bias add stays fp32, and so does what follows it.
// HIGH-LABEL: func.func @policy
// HIGH-SAME: "   1  fp32   follow     graph.add                bias  (--keep-high)"

// The search's answer replaces the policy: only softmax (candidate 3) is low.
// EXPLICIT-LABEL: func.func @policy
// EXPLICIT-SAME: "   0  fp32   compute    graph.matmul             mm  (kept high by the search)"
// EXPLICIT-SAME: "   3  fp16   sensitive  graph.softmax            sm  (within the accuracy budget)"
// EXPLICIT: graph.softmax %{{.+}} {axis = 1 : i64} : tensor<4x16xf16>

// emulate keeps every type and adds the mask: candidate 0 rounds its operands and its result
// through fp16 where mask[0] is set.
// EMULATE-LABEL: func.func @policy
// EMULATE-SAME: %[[MASK:arg[0-9]+]]: tensor<5xi1> {kiln.name = "kiln.precision_mask"}
// EMULATE: %[[BIT:.+]] = graph.slice %[[MASK]] {limits = array<i64: 1>, starts = array<i64: 0>, strides = array<i64: 1>}
// EMULATE: %[[B0:.+]] = graph.reshape %[[BIT]] to [] : tensor<1xi1> -> tensor<i1>
// EMULATE: %[[XR:.+]] = graph.select %[[B0]], %{{.+}}, %{{.+}} : (tensor<i1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
// EMULATE: %[[MM:.+]] = graph.matmul %[[XR]], %{{.+}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// EMULATE: %[[DOWN:.+]] = graph.cast %[[MM]] : tensor<4x16xf32> to f16
// EMULATE: %[[UP:.+]] = graph.cast %[[DOWN]] : tensor<4x16xf16> to f32
// EMULATE: graph.select %[[B0]], %[[UP]], %[[MM]]

// tf32 changes no type and marks the compute op.
// TF32: graph.matmul {{.*}}kiln.math = "tf32"
// TF32-NOT: f16

// BAD: Cannot find option named 'fp8'!
func.func @policy(%x: tensor<4x8xf32> {kiln.name = "x"}) -> (tensor<4x16xf32> {kiln.name = "y"}) {
  %w = graph.constant dense<[[0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0],
                             [0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.0, 0.5, -0.25, 1.0, 2.1]]> : tensor<8x16xf32>
  %b = graph.constant dense<0.25> : tensor<16xf32>
  %big = graph.constant dense<1.0e6> : tensor<16xf32>
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("mm")
  %a = graph.add %m, %b : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("bias")
  %s = graph.mul %a, %big : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("scale")
  %e = graph.softmax %a {axis = 1} : tensor<4x16xf32> loc("sm")
  %r = graph.add %e, %s : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> loc("out")
  return %r : tensor<4x16xf32>
}
