// RUN: kiln-opt --kiln-plan-fusion="entry=forward" %s | FileCheck %s
// RUN: kiln-opt --kiln-plan-fusion="entry=forward device=%S/Inputs/sixteen_units.json" %s | FileCheck %s --check-prefix=SIXTEEN
// RUN: not kiln-opt --kiln-plan-fusion="entry=forward device=%S/Inputs/missing_bandwidth.json" %s 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not kiln-opt --kiln-plan-fusion="entry=forward device=nosuch" %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// Tests that the device description decides, and that a description file is read: an
// arithmetic-heavy producer (32 ops per element over 2 x 262144 elements) feeding a reduction of
// its 2 rows. Fused, the kernel has 2 workgroups (the rows). On the published two-core CPU they
// fill the device, and fusing saves the 2 MiB the producer writes and the reduction reads back.
// The same figures over sixteen units leave 14 idle: the fused kernel computes at 1/8 of the
// peak (wave quantization charges the idle units): 87 us of arithmetic become 699 us, and the
// fused kernel (729 us) is modeled slower than the two apart (326 us).
// CHECK: kiln.fusion_report = ["1 kernels from 2 ops (cpu device model)
// CHECK-SAME: "kernel of 2 ops: linalg.reduce (heavy, rowsum);
// SIXTEEN: kiln.fusion_report = ["2 kernels from 2 ops (sixteen device model, the published CPU's figures over sixteen units)
// SIXTEEN-SAME: "not fused: linalg.generic (heavy): the fused kernel is modeled slower ({{7[0-9.]+}} us vs {{3[0-9.]+}} us)"
// SIXTEEN-NOT: kiln.fusion_group
// MISSING: error: the fusion cost model: {{.*}}missing_bandwidth.json: 'bytes_per_second' is missing
// UNKNOWN: error: the fusion cost model: 'nosuch' is neither a device the cost model knows (cpu, a100, h100, l4) nor a readable description file
#map = affine_map<(d0, d1) -> (d0, d1)>
module @heavy_producer {
  func.func @forward(%x: tensor<2x262144xf32>) -> tensor<2xf32> {
    %zero = arith.constant 0.0 : f32
    %e2 = tensor.empty() : tensor<2x262144xf32>
    %heavy = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<2x262144xf32>) outs(%e2 : tensor<2x262144xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m0 = arith.mulf %a, %a : f32
      %s0 = arith.addf %m0, %a : f32
      %m1 = arith.mulf %s0, %a : f32
      %s1 = arith.addf %m1, %a : f32
      %m2 = arith.mulf %s1, %a : f32
      %s2 = arith.addf %m2, %a : f32
      %m3 = arith.mulf %s2, %a : f32
      %s3 = arith.addf %m3, %a : f32
      %m4 = arith.mulf %s3, %a : f32
      %s4 = arith.addf %m4, %a : f32
      %m5 = arith.mulf %s4, %a : f32
      %s5 = arith.addf %m5, %a : f32
      %m6 = arith.mulf %s5, %a : f32
      %s6 = arith.addf %m6, %a : f32
      %m7 = arith.mulf %s6, %a : f32
      %s7 = arith.addf %m7, %a : f32
      %m8 = arith.mulf %s7, %a : f32
      %s8 = arith.addf %m8, %a : f32
      %m9 = arith.mulf %s8, %a : f32
      %s9 = arith.addf %m9, %a : f32
      %m10 = arith.mulf %s9, %a : f32
      %s10 = arith.addf %m10, %a : f32
      %m11 = arith.mulf %s10, %a : f32
      %s11 = arith.addf %m11, %a : f32
      %m12 = arith.mulf %s11, %a : f32
      %s12 = arith.addf %m12, %a : f32
      %m13 = arith.mulf %s12, %a : f32
      %s13 = arith.addf %m13, %a : f32
      %m14 = arith.mulf %s13, %a : f32
      %s14 = arith.addf %m14, %a : f32
      %m15 = arith.mulf %s14, %a : f32
      %s15 = arith.addf %m15, %a : f32
      linalg.yield %s15 : f32
    } -> tensor<2x262144xf32> loc("heavy")
    %e1 = tensor.empty() : tensor<2xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2xf32>) -> tensor<2xf32>
    %sum = linalg.reduce ins(%heavy : tensor<2x262144xf32>) outs(%s0 : tensor<2xf32>) dimensions = [1]
      (%in: f32, %acc: f32) {
        %r = arith.addf %in, %acc : f32
        linalg.yield %r : f32
      } loc("rowsum")
    return %sum : tensor<2xf32>
  }
}
