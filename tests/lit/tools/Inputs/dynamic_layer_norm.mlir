// A layer norm over a dynamic batch and sequence (kiln_shape_range_cuda.test): fused into one
// kernel as at the largest static shape, the mean's division repeated along the row.
func.func @main(%x: tensor<?x?x768xf32> {kiln.name = "x"}, %g: tensor<768xf32> {kiln.name = "g"}, %b: tensor<768xf32> {kiln.name = "b"}) -> (tensor<?x?x768xf32> {kiln.name = "y"}) {
  %0 = graph.layer_norm %x, %g, %b {axis = 2 : i64} : (tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<?x?x768xf32>
  return %0 : tensor<?x?x768xf32>
}
