func.func @main(%x: tensor<64x2048xf32> {kiln.name = "x"}) -> (tensor<64x2048xf32> {kiln.name = "y"}) {
  %0 = graph.softmax %x {axis = 1 : i64} : tensor<64x2048xf32>
  return %0 : tensor<64x2048xf32>
}
