// RUN: kiln-opt --split-input-file --kiln-convert-graph-to-linalg %s | FileCheck %s

// Tests that broadcasting is expressed in the indexing maps: a size-1 dimension reads index 0 and
// missing leading dimensions are dropped, and a dynamic result size comes from the operand.
// CHECK-DAG: #[[ID:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.+]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-LABEL: func.func @broadcast_add
// CHECK-SAME: (%[[X:.+]]: tensor<?x3xf32>, %[[B:.+]]: tensor<1x3xf32>)
// CHECK: %[[DIM:.+]] = tensor.dim %[[X]], %{{.+}} : tensor<?x3xf32>
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[DIM]]) : tensor<?x3xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ROW]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%[[X]], %[[B]] : tensor<?x3xf32>, tensor<1x3xf32>) outs(%[[EMPTY]] : tensor<?x3xf32>)
// CHECK: arith.addf
func.func @broadcast_add(%x: tensor<?x3xf32>, %b: tensor<1x3xf32>) -> tensor<?x3xf32> {
  %0 = graph.add %x, %b : (tensor<?x3xf32>, tensor<1x3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

// Tests that integer ops use signed arith ops and float comparisons are ordered.
// CHECK-LABEL: func.func @int_and_compare
// CHECK: arith.divsi
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf une
func.func @int_and_compare(%i: tensor<4xi32>, %f: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xi1>, tensor<4xi1>) {
  %0 = graph.div %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = graph.compare lt, %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %2 = graph.compare ne, %f, %f : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0, %1, %2 : tensor<4xi32>, tensor<4xi1>, tensor<4xi1>
}

// -----

// Tests that a reduction with kept dimensions reduces, then re-inserts them as size 1.
// CHECK-LABEL: func.func @reduce_max_keepdims
// CHECK: %[[INIT:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<2xf32>)
// CHECK: %[[R:.+]] = linalg.reduce ins(%{{.+}} : tensor<2x3x4xf32>) outs(%[[INIT]] : tensor<2xf32>) dimensions = [1, 2]
// CHECK: arith.maximumf
// CHECK: tensor.expand_shape %[[R]] {{\[}}[0, 1, 2]] output_shape [2, 1, 1] : tensor<2xf32> into tensor<2x1x1xf32>
func.func @reduce_max_keepdims(%x: tensor<2x3x4xf32>) -> tensor<2x1x1xf32> {
  %0 = graph.reduce_max %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}

// -----

// Tests that softmax subtracts the maximum before exponentiating.
// CHECK-LABEL: func.func @softmax
// CHECK: linalg.reduce
// CHECK: arith.maximumf
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK: math.exp
// CHECK: linalg.reduce
// CHECK: arith.addf
// CHECK: arith.divf
func.func @softmax(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

// Tests that matmul is a contraction: parallel batch, row and column loops, a reduction loop,
// and a zero-filled accumulator; a size-1 batch dimension of one operand broadcasts.
// CHECK-DAG: #[[LHS:.+]] = affine_map<(d0, d1, d2, d3) -> (0, d1, d3)>
// CHECK-DAG: #[[RHS:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmul
// CHECK: %[[ZERO:.+]] = linalg.fill
// CHECK: linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME: outs(%[[ZERO]] : tensor<5x2x4xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @matmul(%a: tensor<1x2x3xf32>, %b: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = graph.matmul %a, %b : (tensor<1x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// Tests that an op whose shapes the lowering does not handle (a convolution over dynamic
// spatial dimensions) stays for later stages while the ops around it lower.
// CHECK-LABEL: func.func @not_lowered
// CHECK: graph.conv
// CHECK: linalg.generic
func.func @not_lowered(%x: tensor<1x3x?x?xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32> {
  %0 = graph.conv %x, %w {dilations = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x?x?xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x?x?xf32>
  %1 = graph.tanh %0 : tensor<1x4x?x?xf32>
  return %1 : tensor<1x4x?x?xf32>
}

// -----

// Tests that unsigned elements become signless ones with unsigned arith ops, the function's
// signature included, which records the declared types (kiln.declared_type) for the program.
// CHECK-LABEL: func.func @unsigned_ops
// CHECK-SAME: (%{{.+}}: tensor<4xi8> {kiln.declared_type = tensor<4xui8>}, %{{.+}}: tensor<4xi8> {kiln.declared_type = tensor<4xui8>}) -> (tensor<4xi8> {kiln.declared_type = tensor<4xui8>}, tensor<4xi1>, tensor<4xf32>, tensor<i8> {kiln.declared_type = tensor<ui8>})
// CHECK: arith.divui
// CHECK: arith.cmpi ult
// CHECK: arith.uitofp
// CHECK: linalg.reduce
// CHECK: arith.maxui
// CHECK-NOT: ui8
func.func @unsigned_ops(%a: tensor<4xui8>, %b: tensor<4xui8>) -> (tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>) {
  %0 = graph.div %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  %1 = graph.compare lt, %a, %b : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  %2 = graph.cast %a : tensor<4xui8> to f32
  %3 = graph.reduce_max %a {axes = array<i64: 0>} : (tensor<4xui8>) -> tensor<ui8>
  return %0, %1, %2, %3 : tensor<4xui8>, tensor<4xi1>, tensor<4xf32>, tensor<ui8>
}

// -----

// Tests that gather_elements reads the input inside a generic over the indices, with the index
// wrapped when negative.
// CHECK-LABEL: func.func @gather_elements
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.+}} : tensor<3x2xi64>) outs(%{{.+}} : tensor<3x2xf32>)
// CHECK: arith.cmpi slt
// CHECK: tensor.extract
func.func @gather_elements(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = graph.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// Tests that gather_nd reads each index vector's components from the indices in the body.
// CHECK-LABEL: func.func @gather_nd
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}} : tensor<2x6xf32>)
// CHECK-COUNT-3: tensor.extract
func.func @gather_nd(%x: tensor<4x5x6xf32>, %i: tensor<2x2xi64>) -> tensor<2x6xf32> {
  %0 = graph.gather_nd %x, %i : (tensor<4x5x6xf32>, tensor<2x2xi64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// Tests that scatter_elements applies its updates in order through a loop nest over the indices
// carrying the result, combining with the element already there.
// CHECK-LABEL: func.func @scatter_elements_add
// CHECK-SAME: (%[[X:.+]]: tensor<3x3xf32>
// CHECK: scf.for {{.+}} iter_args(%[[OUTER:.+]] = %[[X]])
// CHECK: scf.for {{.+}} iter_args(%[[INNER:.+]] = %[[OUTER]])
// CHECK: %[[OLD:.+]] = tensor.extract %[[INNER]]
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]]
// CHECK: tensor.insert %[[NEW]] into %[[INNER]]
func.func @scatter_elements_add(%x: tensor<3x3xf32>, %i: tensor<2x3xi64>, %u: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = graph.scatter_elements %x, %i, %u {axis = 0 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// Tests that scatter_nd without a reduction overwrites: no read of the current element.
// CHECK-LABEL: func.func @scatter_nd
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: arith.addf
// CHECK: tensor.insert
func.func @scatter_nd(%x: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.scatter_nd %x, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

// Tests that arg_max reduces the axis into a (value, index) pair and keeps the axis as size 1.
// CHECK-LABEL: func.func @arg_max
// CHECK: %[[R:.+]]:2 = linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<8xf32>, tensor<8xi64>)
// CHECK: linalg.index 1
// CHECK: arith.cmpf ogt
// CHECK: tensor.expand_shape %[[R]]#1
func.func @arg_max(%x: tensor<8x10xf32>) -> tensor<8x1xi64> {
  %0 = graph.arg_max %x {axis = 1 : i64, keepdims = true} : (tensor<8x10xf32>) -> tensor<8x1xi64>
  return %0 : tensor<8x1xi64>
}

// -----

// Tests that cumsum walks the axis with a loop carrying the result and the running sum.
// CHECK-LABEL: func.func @cumsum
// CHECK: scf.for {{.+}} iter_args
// CHECK: tensor.extract_slice {{.+}} : tensor<2x5xf32> to tensor<2xf32>
// CHECK: arith.addf
// CHECK: tensor.insert_slice
func.func @cumsum(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.cumsum %x {axis = 1 : i64, exclusive = true, reverse = true} : tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that cumprod is the same scan with a product, and that an exclusive one starts from 1.
// CHECK-LABEL: func.func @cumprod
// CHECK: %[[ONE:.+]] = arith.constant 1 : i32
// CHECK: linalg.fill ins(%[[ONE]] : i32)
// CHECK: scf.for {{.+}} iter_args
// CHECK: arith.muli
// CHECK: tensor.insert_slice
func.func @cumprod(%x: tensor<2x5xi32>) -> tensor<2x5xi32> {
  %0 = graph.cumprod %x {axis = 1 : i64, exclusive = true} : tensor<2x5xi32>
  return %0 : tensor<2x5xi32>
}

// -----

// Tests that top_k loops over its k picks, each a reduction of the axis to a (value, index) pair.
// CHECK-LABEL: func.func @top_k
// CHECK: %[[K:.+]] = arith.constant 3 : index
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[K]]
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.+}}, %{{.+}} : tensor<8xf32>, tensor<8xi64>)
// CHECK-COUNT-2: tensor.insert_slice
func.func @top_k(%x: tensor<8x100xf32>) -> (tensor<8x3xf32>, tensor<8x3xi64>) {
  %v, %i = graph.top_k %x {axis = 1 : i64, k = 3 : i64} : (tensor<8x100xf32>) -> (tensor<8x3xf32>, tensor<8x3xi64>)
  return %v, %i : tensor<8x3xf32>, tensor<8x3xi64>
}

// -----

// Tests that linear resize of two dimensions reads four taps, and the unchanged ones none.
// CHECK-LABEL: func.func @resize_linear
// CHECK: linalg.generic
// CHECK-COUNT-4: tensor.extract
// CHECK-NOT: tensor.extract
// CHECK: linalg.yield
func.func @resize_linear(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32> {
  %0 = graph.resize %x {mode = #graph<resize_mode linear>, scales = array<f32: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 8, 8>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x8x8xf32>
  return %0 : tensor<1x3x8x8xf32>
}

// -----

// Tests that conv_transpose spreads the input by its strides into zeros and convolves it with
// the flipped filter at stride 1.
// CHECK-LABEL: func.func @conv_transpose
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 2, 2] [1, 16, 8, 8] [1, 1, 2, 2] : tensor<1x16x8x8xf32> into tensor<1x16x20x20xf32>
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 1, 1] [1, 16, 18, 18] [1, 1, 1, 1]
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
func.func @conv_transpose(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32> {
  %0 = graph.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32>
  return %0 : tensor<1x8x16x16xf32>
}

// -----

// Tests that a bitcast reads each element's bits as the new type (signless, so ui16 to i16 is
// the identity), and a bool, stored as a byte, widens to 0 or 1.
// CHECK-LABEL: func.func @bitcasts
// CHECK: linalg.generic
// CHECK: arith.bitcast %{{.+}} : f32 to i32
// CHECK: linalg.generic
// CHECK-NOT: arith.bitcast
// CHECK: linalg.yield
// CHECK: linalg.generic
// CHECK: arith.extui %{{.+}} : i1 to i8
func.func @bitcasts(%f: tensor<3xf32>, %u: tensor<3xui16>, %b: tensor<3xi1>) -> (tensor<3xi32>, tensor<3xi16>, tensor<3xui8>) {
  %0 = graph.bitcast %f : tensor<3xf32> to i32
  %1 = graph.bitcast %u : tensor<3xui16> to i16
  %2 = graph.bitcast %b : tensor<3xi1> to ui8
  return %0, %1, %2 : tensor<3xi32>, tensor<3xi16>, tensor<3xui8>
}
