// Two inputs a kernel reads together (their leading dimensions must agree) and a third that varies
// on its own (kiln_shape_range.test).
func.func @main(%a: tensor<?x16xf32> {kiln.name = "a"}, %b: tensor<?x16xf32> {kiln.name = "b"}, %c: tensor<?x4xf32> {kiln.name = "c"}) -> (tensor<?x16xf32> {kiln.name = "y"}, tensor<?x4xf32> {kiln.name = "z"}) {
  %0 = graph.add %a, %b : (tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
  %1 = graph.tanh %c : tensor<?x4xf32>
  return %0, %1 : tensor<?x16xf32>, tensor<?x4xf32>
}
