func.func @main(%x: tensor<3x3xf32> {kiln.name = "x"}, %i: tensor<2x3xi64> {kiln.name = "i"}, %u: tensor<2x3xf32> {kiln.name = "u"}) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %one = graph.constant dense<1.0> : tensor<f32>
  %a = graph.add %x, %one : (tensor<3x3xf32>, tensor<f32>) -> tensor<3x3xf32>
  %0 = graph.scatter_elements %a, %i, %u {axis = 0 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
  %b = graph.mul %a, %a : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0, %b : tensor<3x3xf32>, tensor<3x3xf32>
}
