// RUN: kiln-opt --split-input-file --verify-diagnostics %s

// Tests that a misspelled kiln attribute on an op is refused instead of being ignored by the pass
// that looks for the right name.
func.func @misspelled(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{unknown attribute 'kiln.fusion_grop'}}
  %y = graph.abs %x {kiln.fusion_grop = 1 : i64} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that a kiln attribute holding another kind of value is refused, naming the kind.
func.func @wrong_kind(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'kiln.fusion_group' must be an integer, not "one"}}
  %y = graph.abs %x {kiln.fusion_group = "one"} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an argument's kiln attributes are checked too: kiln.name is a string.
// expected-error @+1 {{attribute 'kiln.name' must be a string, not 3 : i64}}
func.func @argument(%x: tensor<4xf32> {kiln.name = 3 : i64}) -> tensor<4xf32> {
  %y = graph.abs %x : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// Tests that an attribute declared for arguments and results does not stand on an op.
func.func @place(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'kiln.check' does not stand on an operation}}
  %y = graph.abs %x {kiln.check = "x > 0"} : tensor<4xf32>
  return %y : tensor<4xf32>
}
