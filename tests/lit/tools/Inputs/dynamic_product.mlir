// A product whose contraction length is a range (kiln_shape_range_sequence.test): a oneDNN call
// set up per shape, its operands' lengths one symbol.
func.func @main(%a: tensor<4x?xf32> {kiln.name = "a"}, %b: tensor<?x3xf32> {kiln.name = "b"}) -> (tensor<4x3xf32> {kiln.name = "y"}) {
  %0 = graph.matmul %a, %b : (tensor<4x?xf32>, tensor<?x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
