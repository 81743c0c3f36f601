// RUN: kiln-opt --split-input-file --kiln-split-reductions %s | FileCheck %s

// Tests that a sum of a whole tensor is split in two: its two reduced dimensions collapsed into
// one of 262144 elements, 1024 chunks (chunk c the elements c, c + 1024, ...) reduced into 1024
// partial values with the chunks' loop outermost (the kernel's parallel points), then the
// partial values summed.
// CHECK-LABEL: func.func private @whole_sum
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %{{.+}} {{\[}}[0, 1]] : tensor<64x4096xf32> into tensor<262144xf32>
// CHECK: %[[CHUNKS:.+]] = tensor.expand_shape %[[FLAT]] {{\[}}[0, 1]] output_shape [256, 1024]
// CHECK: %[[ZEROS:.+]] = linalg.fill {{.+}} -> tensor<1024xf32>
// CHECK: %[[PARTIAL:.+]] = linalg.generic {indexing_maps = [#[[IN:.+]], #[[OUT:.+]]], iterator_types = ["parallel", "reduction"]} ins(%[[CHUNKS]] : tensor<256x1024xf32>) outs(%[[ZEROS]] : tensor<1024xf32>)
// CHECK: arith.addf
// CHECK: linalg.generic {{.+}} iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<1024xf32>)
// CHECK: arith.addf
func.func private @whole_sum(%x: tensor<64x4096xf32>) -> tensor<f32> attributes {kiln.dispatch} {
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<f32>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                       iterator_types = ["reduction", "reduction"]}
      ins(%x : tensor<64x4096xf32>) outs(%fill : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests that the maxima of 8 rows of 65536 become 8 x 256 partial maxima (the fill is the
// maximum's neutral element, -inf), then 8 maxima of 256.
// CHECK-LABEL: func.func private @long_row_max
// CHECK: tensor.expand_shape %{{.+}} {{\[}}[0], [1, 2]] output_shape [8, 256, 256]
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<8x256xf32>)
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.+}} : tensor<8x256x256xf32>) outs(%{{.+}} : tensor<8x256xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%{{.+}} : tensor<8x256xf32>) outs(%{{.+}} : tensor<8xf32>)
func.func private @long_row_max(%x: tensor<8x65536xf32>, %init: tensor<8xf32>) -> tensor<8xf32> attributes {kiln.dispatch} {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x65536xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %m = arith.maximumf %in, %acc : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that reductions with many results (64 rows) or short ones (4096 elements) stay whole:
// their rows already spread over the threads, or there is too little to split.
// CHECK-LABEL: func.func private @stays
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<64x65536xf32>)
// CHECK: linalg.generic {{.+}} ins(%{{.+}} : tensor<4096xf32>)
// CHECK-NOT: tensor.expand_shape
func.func private @stays(%x: tensor<64x65536xf32>, %rows: tensor<64xf32>, %y: tensor<4096xf32>, %one: tensor<f32>) -> (tensor<64xf32>, tensor<f32>) attributes {kiln.dispatch} {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<64x65536xf32>) outs(%rows : tensor<64xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"]}
      ins(%y : tensor<4096xf32>) outs(%one : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %t = arith.addf %in, %acc : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %r, %s : tensor<64xf32>, tensor<f32>
}
