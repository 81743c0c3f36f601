// RUN: kiln-opt --split-input-file --kiln-deduplicate-kernels %s | FileCheck %s

// Tests that two dispatch functions alike but for their names and descriptions become one:
// both dispatches name the first, each keeps its own description; a function that differs (here
// in one constant) stays.
// CHECK-LABEL: program.program @layers
// CHECK: program.dispatch @kernels::@layer0_relu {{.*}}description = "layer 0"
// CHECK: program.dispatch @kernels::@layer0_relu {{.*}}description = "layer 1"
// CHECK: program.dispatch @kernels::@layer1_clip {{.*}}description = "layer 1 clip"
// CHECK: module @kernels
// CHECK: func.func private @layer0_relu
// CHECK-NOT: func.func private @layer1_relu
// CHECK: func.func private @layer1_clip
module {
  program.program @layers device(cpu) {
    %x = program.input 0 "x" : memref<4xf32>
    %y = program.output 0 "y" : memref<4xf32>
    %t0 = program.alloc : memref<4xf32>
    %t1 = program.alloc : memref<4xf32>
    program.dispatch @kernels::@layer0_relu ins(%x : memref<4xf32>) outs(%t0 : memref<4xf32>) {description = "layer 0"}
    program.dispatch @kernels::@layer1_relu ins(%t0 : memref<4xf32>) outs(%t1 : memref<4xf32>) {description = "layer 1"}
    program.dispatch @kernels::@layer1_clip ins(%t1 : memref<4xf32>) outs(%y : memref<4xf32>) {description = "layer 1 clip"}
  }
  module @kernels {
    func.func private @layer0_relu(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.description = "relu (layer 0)", kiln.dispatch} {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %in, %zero : f32
        linalg.yield %1 : f32
      } -> tensor<4xf32> loc("layer0")
      return %0 : tensor<4xf32>
    }
    func.func private @layer1_relu(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.description = "relu (layer 1)", kiln.dispatch} {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %in, %zero : f32
        linalg.yield %1 : f32
      } -> tensor<4xf32> loc("layer1")
      return %0 : tensor<4xf32>
    }
    func.func private @layer1_clip(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {kiln.dispatch} {
      %zero = arith.constant 1.0 : f32
      %e = tensor.empty() : tensor<4xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%arg0 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%in: f32, %out: f32):
        %1 = arith.maximumf %in, %zero : f32
        linalg.yield %1 : f32
      } -> tensor<4xf32>
      return %0 : tensor<4xf32>
    }
  }
}
