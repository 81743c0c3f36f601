// A graph whose batch and sequence dimensions vary from run to run (kiln_shape_range.test):
// a product, a softmax along the sequence, a layer norm and a sum over the sequence.
func.func @main(%x: tensor<?x?x8xf32> {kiln.name = "x"}, %w: tensor<8x8xf32> {kiln.name = "w"}, %g: tensor<8xf32> {kiln.name = "g"}, %bb: tensor<8xf32> {kiln.name = "bb"}) -> (tensor<?x?x8xf32> {kiln.name = "y"}, tensor<?x8xf32> {kiln.name = "s"}) {
  %0 = graph.matmul %x, %w : (tensor<?x?x8xf32>, tensor<8x8xf32>) -> tensor<?x?x8xf32>
  %1 = graph.softmax %0 {axis = 1 : i64} : tensor<?x?x8xf32>
  %2 = graph.layer_norm %1, %g, %bb {axis = 2 : i64} : (tensor<?x?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x?x8xf32>
  %3 = graph.reduce_sum %2 {axes = array<i64: 1>, keepdims = false} : (tensor<?x?x8xf32>) -> tensor<?x8xf32>
  return %2, %3 : tensor<?x?x8xf32>, tensor<?x8xf32>
}
