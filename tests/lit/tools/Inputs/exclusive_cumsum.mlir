func.func @main(%x: tensor<3x1xf32> {kiln.name = "x"}) -> tensor<3x1xf32> {
  %0 = graph.cumsum %x {axis = 1 : i64, exclusive = true} : tensor<3x1xf32>
  return %0 : tensor<3x1xf32>
}
