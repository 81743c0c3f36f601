// RUN: kiln-opt --split-input-file --verify-diagnostics %s

// Tests that a constant must be a ranked tensor of a Kiln element type.
func.func @constant_f64_unranked() {
  // expected-error @+1 {{op result #0 must be ranked tensor}}
  %0 = "graph.constant"() <{value = dense<1> : tensor<2xi4>}> : () -> tensor<2xi4>
  return
}

// -----

// Tests that a constant's result type is its value's type.
func.func @constant_type_mismatch() {
  // expected-error @+2 {{inferred type(s) 'tensor<2xf32>' are incompatible with return type(s) of operation 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = "graph.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  return
}

// -----

// Tests that float-only math rejects integers.
func.func @exp_of_integers(%x: tensor<2xi32>) {
  // expected-error @+1 {{op operand #0 must be ranked tensor of}}
  %0 = graph.exp %x : tensor<2xi32>
  return
}

// -----

// Tests that bitwise ops take integers or booleans only.
func.func @and_of_floats(%x: tensor<2xf32>) {
  // expected-error @+1 {{op operand #0 must be ranked tensor of integer or 1-bit signless integer values}}
  %0 = graph.and %x, %x : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that binary operands must broadcast.
func.func @add_no_broadcast(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+1 {{operand shapes [2x3] and [4x3] do not broadcast}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that binary operands share one element type.
func.func @add_mixed_types(%a: tensor<2xf32>, %b: tensor<2xf16>) {
  // expected-error @+1 {{requires the same element type for all operands and results}}
  %0 = graph.add %a, %b : (tensor<2xf32>, tensor<2xf16>) -> tensor<2xf32>
  return
}

// -----

// Tests that a written result type may refine but not contradict the inferred one.
func.func @add_wrong_result(%a: tensor<?x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{inferred type(s) 'tensor<?x3xf32>' are incompatible with return type(s) of operation 'tensor<4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that comparison operands share one element type.
func.func @compare_mixed_types(%a: tensor<2xf32>, %b: tensor<2xi32>) {
  // expected-error @+1 {{failed to verify that all of {lhs, rhs} have same element type}}
  %0 = graph.compare eq, %a, %b : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xi1>
  return
}

// -----

// Tests that the comparison direction is one of the known keywords.
func.func @compare_bad_direction(%a: tensor<2xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'direction' [eq, ne, lt, le, gt, ge]}}
  %0 = graph.compare less, %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  return
}

// -----

// Tests that select needs a boolean condition.
func.func @select_float_condition(%c: tensor<2xf32>, %a: tensor<2xf32>) {
  // expected-error @+1 {{op operand #0 must be ranked tensor of 1-bit signless integer values}}
  %0 = graph.select %c, %a, %a : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that select's three operands broadcast together.
func.func @select_no_broadcast(%c: tensor<3xi1>, %a: tensor<2xf32>) {
  // expected-error @+1 {{operand shapes [3] and [2] do not broadcast}}
  %0 = graph.select %c, %a, %a : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that cast only targets Kiln element types.
func.func @cast_to_f128(%x: tensor<2xf32>) {
  // expected-error @+1 {{attribute 'to' failed to satisfy constraint: type attribute of Kiln element type}}
  %0 = "graph.cast"(%x) <{to = f128}> : (tensor<2xf32>) -> tensor<2xf128>
  return
}

// -----

// Tests that concat needs at least one operand.
func.func @concat_empty() {
  // expected-error @+1 {{expected 1 or more operands, but found 0}}
  %0 = "graph.concat"() <{axis = 0 : i64}> : () -> tensor<0xf32>
  return
}

// -----

// Tests that concat rejects rank-0 operands.
func.func @concat_scalars(%a: tensor<f32>) {
  // expected-error @+1 {{cannot concatenate rank-0 tensors}}
  %0 = graph.concat %a, %a {axis = 0 : i64} : (tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return
}

// -----

// Tests that the concat axis lies inside the rank.
func.func @concat_bad_axis(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 2 is outside [0, 2)}}
  %0 = graph.concat %a, %a {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// Tests that concat operands share a rank.
func.func @concat_rank_mismatch(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{operand 1 has rank 1, expected 2}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<5x3xf32>
  return
}

// -----

// Tests that concat operands agree off the axis.
func.func @concat_size_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{operand 1 has size 4 in dimension 1, expected 3}}
  %0 = graph.concat %a, %b {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that expand shapes are non-negative.
func.func @expand_negative(%x: tensor<2xf32>) {
  // expected-error @+1 {{shape entries must be non-negative}}
  %0 = graph.expand %x to [-1, 2] : tensor<2xf32> -> tensor<?x2xf32>
  return
}

// -----

// Tests that expand follows broadcasting.
func.func @expand_no_broadcast(%x: tensor<3xf32>) {
  // expected-error @+1 {{input shape [3] does not broadcast to [2, 2]}}
  %0 = graph.expand %x to [2, 2] : tensor<3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that the flatten axis lies in [0, rank].
func.func @flatten_bad_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axis 3 is outside [0, 2]}}
  %0 = graph.flatten %x {axis = 3 : i64} : (tensor<2x3xf32>) -> tensor<6x1xf32>
  return
}

// -----

// Tests that the gather axis lies inside the rank.
func.func @gather_bad_axis(%x: tensor<2x3xf32>, %i: tensor<4xi64>) {
  // expected-error @+1 {{axis 2 is outside [0, 2)}}
  %0 = graph.gather %x, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<4xi64>) -> tensor<2x3x4xf32>
  return
}

// -----

// Tests that gather indices are integers.
func.func @gather_float_indices(%x: tensor<2x3xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = graph.gather %x, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that pad amounts cover every dimension.
func.func @pad_short_low(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{pad_low has 1 entries, expected 2}}
  %0 = graph.pad constant %x low [1] high [1, 1] : (tensor<2x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @pad_short_high(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{pad_high has 3 entries, expected 2}}
  %0 = graph.pad constant %x low [1, 1] high [1, 1, 1] : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return
}

// -----

// Tests that a padding value goes with constant mode only.
func.func @pad_value_with_edge(%x: tensor<2x3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{a padding value is only allowed in constant mode}}
  %0 = graph.pad edge %x, %v low [1, 1] high [1, 1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x5xf32>
  return
}

// -----

// Tests that the padding value is a scalar of the input's element type.
func.func @pad_value_not_scalar(%x: tensor<2x3xf32>, %v: tensor<1xf32>) {
  // expected-error @+1 {{padding value must be a rank-0 tensor of 'f32'}}
  %0 = graph.pad constant %x, %v low [1, 1] high [1, 1] : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<4x5xf32>
  return
}

// -----

// Tests that reflect padding stays smaller than the dimension.
func.func @pad_reflect_too_far(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{reflect padding of dimension 0 must be smaller than its size 2}}
  %0 = graph.pad reflect %x low [2, 0] high [0, 0] : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

// Tests that edge padding needs an element to repeat.
func.func @pad_edge_empty(%x: tensor<0x3xf32>) {
  // expected-error @+1 {{edge padding of empty dimension 0}}
  %0 = graph.pad edge %x low [1, 0] high [0, 0] : (tensor<0x3xf32>) -> tensor<1x3xf32>
  return
}

// -----

// Tests that cropping cannot make a dimension negative.
func.func @pad_crop_below_zero(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{padding crops dimension 1 below zero}}
  %0 = graph.pad constant %x low [0, -2] high [0, -2] : (tensor<2x3xf32>) -> tensor<2x0xf32>
  return
}

// -----

// Tests that reshape infers at most one dimension.
func.func @reshape_two_inferred(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{shape may hold at most one -1}}
  %0 = graph.reshape %x to [-1, -1] : tensor<2x3xf32> -> tensor<?x?xf32>
  return
}

// -----

// Tests that reshape sizes are not negative other than -1.
func.func @reshape_negative(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{shape entry -2 is negative}}
  %0 = graph.reshape %x to [-2, 3] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that a static reshape keeps the element count.
func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 6 elements to [4, 2]}}
  %0 = graph.reshape %x to [4, 2] : tensor<2x3xf32> -> tensor<4x2xf32>
  return
}

// -----

// Tests that the inferred dimension must divide the element count.
func.func @reshape_not_divisible(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{cannot reshape 6 elements to [4, -1]}}
  %0 = graph.reshape %x to [4, -1] : tensor<2x3xf32> -> tensor<4x?xf32>
  return
}

// -----

// Tests that slice attributes cover every dimension.
func.func @slice_short_starts(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{starts has 1 entries, expected 2}}
  %0 = graph.slice %x {starts = array<i64: 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_short_limits(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{limits has 1 entries, expected 2}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @slice_short_strides(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{strides has 1 entries, expected 2}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that a slice stride is never zero.
func.func @slice_zero_stride(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{stride of dimension 1 is zero}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 8>, strides = array<i64: 1, 0>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that slice bounds lie inside the dimension.
func.func @slice_out_of_range(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{slice [0, 9) step 1 of dimension 1 is out of range for size 8}}
  %0 = graph.slice %x {starts = array<i64: 0, 0>, limits = array<i64: 4, 9>, strides = array<i64: 1, 1>} : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

// Tests that split sizes add up to the dimension.
func.func @split_sizes_sum(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{sizes add up to 7 but dimension 1 has size 8}}
  %0:2 = graph.split %x {axis = 1 : i64, sizes = array<i64: 3, 4>} : (tensor<4x8xf32>) -> (tensor<4x3xf32>, tensor<4x4xf32>)
  return
}

// -----

// Tests that the split axis lies inside the rank.
func.func @split_bad_axis(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{axis 2 is outside [0, 2)}}
  %0:2 = graph.split %x {axis = 2 : i64, sizes = array<i64: 4, 4>} : (tensor<4x8xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>)
  return
}

// -----

// Tests that split makes at least one piece.
func.func @split_no_sizes(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{sizes must not be empty}}
  "graph.split"(%x) <{axis = 1 : i64, sizes = array<i64>}> : (tensor<4x8xf32>) -> ()
  return
}

// -----

// Tests that split sizes are non-negative.
func.func @split_negative(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{sizes must be non-negative}}
  %0:2 = graph.split %x {axis = 1 : i64, sizes = array<i64: -1, 9>} : (tensor<4x8xf32>) -> (tensor<4x1xf32>, tensor<4x9xf32>)
  return
}

// -----

// Tests that squeeze removes only dimensions of size one.
func.func @squeeze_not_one(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{dimension 1 has size 3, not 1}}
  %0 = graph.squeeze %x {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that squeeze axes lie inside the rank.
func.func @squeeze_bad_axis(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{axes entry 2 is outside [0, 2)}}
  %0 = graph.squeeze %x {axes = array<i64: 2>} : (tensor<2x1xf32>) -> tensor<2x1xf32>
  return
}

// -----

// Tests that axes lists are sorted and unique.
func.func @unsqueeze_unsorted(%x: tensor<2xf32>) {
  // expected-error @+1 {{axes must be sorted and unique}}
  %0 = graph.unsqueeze %x {axes = array<i64: 2, 0>} : (tensor<2xf32>) -> tensor<1x2x1xf32>
  return
}

// -----

// Tests that transpose takes a permutation of full length.
func.func @transpose_short(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation has 1 entries, expected 2}}
  %0 = graph.transpose %x, [0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}

// -----

// Tests that a permutation does not repeat a dimension.
func.func @transpose_repeat(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{permutation repeats a dimension}}
  %0 = graph.transpose %x, [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}

// -----

// Tests that reductions take sorted, in-range axes.
func.func @reduce_bad_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{axes entry -1 is outside [0, 2)}}
  %0 = graph.reduce_sum %x {axes = array<i64: -1>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}

// -----

// Tests that reduce_mean is for floating-point tensors.
func.func @reduce_mean_int(%x: tensor<2x3xi32>) {
  // expected-error @+1 {{op operand #0 must be ranked tensor of floating-point values}}
  %0 = graph.reduce_mean %x {axes = array<i64: 1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  return
}

// -----

// Tests that gemm takes matrices.
func.func @gemm_vector(%a: tensor<4xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{expects matrices, got ranks 1 and 2}}
  %0 = graph.gemm %a, %b : (tensor<4xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

// Tests that gemm's contracting dimensions agree after transposes.
func.func @gemm_contracting(%a: tensor<3x4xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: 4 and 3}}
  %0 = graph.gemm %a, %b : (tensor<3x4xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  return
}

// -----

// Tests that gemm's addend broadcasts to the result.
func.func @gemm_addend(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{addend of shape [3] does not broadcast to [3x5]}}
  %0 = graph.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<3xf32>) -> tensor<3x5xf32>
  return
}

// -----

// Tests that gemm's addend has the operands' element type.
func.func @gemm_addend_type(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<5xf16>) {
  // expected-error @+1 {{addend element type 'f16' differs from 'f32'}}
  %0 = graph.gemm %a, %b, %c : (tensor<3x4xf32>, tensor<4x5xf32>, tensor<5xf16>) -> tensor<3x5xf32>
  return
}

// -----

// Tests that matmul operands have a rank.
func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{expects operands of rank 1 or more}}
  %0 = graph.matmul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

// Tests that matmul's contracting dimensions agree.
func.func @matmul_contracting(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{contracting dimensions differ: 3 and 4}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

// Tests that matmul batch dimensions broadcast.
func.func @matmul_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x4x5xf32>) {
  // expected-error @+1 {{batch dimensions [2] and [3] do not broadcast}}
  %0 = graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<3x4x5xf32>) -> tensor<2x3x5xf32>
  return
}

// -----

// Tests that conv groups are positive.
func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{groups must be positive, got 0}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 0 : i64} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that the filter has the input's rank.
func.func @conv_filter_rank(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3xf32>) {
  // expected-error @+1 {{filter rank 3 differs from input rank 4}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that input channels divide into groups.
func.func @conv_input_groups(%x: tensor<1x6x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error @+1 {{input channels 6 are not divisible by 4 groups}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 4 : i64} : (tensor<1x6x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that output channels divide into groups.
func.func @conv_output_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{output channels 6 are not divisible by 4 groups}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 4 : i64} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

// Tests that the filter's channel count is the input's per group.
func.func @conv_filter_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>) {
  // expected-error @+1 {{filter has 4 input channels, expected 2}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

// Tests that the bias has one element per output channel.
func.func @conv_bias(%x: tensor<1x4x8x8xf32>, %w: tensor<8x4x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{bias must be a vector of 8 elements}}
  %0 = graph.conv %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<8x4x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

// Tests that convolution takes 1 to 3 spatial dimensions.
func.func @conv_rank(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got 2}}
  %0 = graph.conv %x, %w {strides = array<i64>, dilations = array<i64>, pad_low = array<i64>, pad_high = array<i64>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that window attributes have one entry per spatial dimension.
func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{strides has 1 entries, expected 2}}
  %0 = graph.conv %x, %w {strides = array<i64: 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_dilations_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{dilations has 3 entries, expected 2}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_pad_low_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{pad_low has 1 entries, expected 2}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_pad_high_length(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{pad_high has 1 entries, expected 2}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that strides and dilations are positive.
func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = graph.conv %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

// Tests that padding is non-negative.
func.func @conv_negative_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{padding must be non-negative}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: -1, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x6xf32>
  return
}

// -----

// Tests that the window fits in the padded input.
func.func @conv_window_too_big(%x: tensor<1x4x2x8xf32>, %w: tensor<4x4x3x3xf32>) {
  // expected-error @+1 {{spatial dimension 0 of size 2 is smaller than its window}}
  %0 = graph.conv %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x2x8xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x1x6xf32>
  return
}

// -----

// Tests that pooling kernels have one entry per spatial dimension.
func.func @pool_kernel_length(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel_shape has 1 entries, expected 2}}
  %0 = graph.max_pool %x {kernel_shape = array<i64: 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x7x7xf32>
  return
}

// -----

// Tests that pooling kernels are positive.
func.func @pool_kernel_zero(%x: tensor<1x4x8x8xf32>) {
  // expected-error @+1 {{kernel_shape entries must be positive}}
  %0 = graph.avg_pool %x {kernel_shape = array<i64: 0, 2>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x9x7xf32>
  return
}

// -----

// Tests that global pooling needs spatial dimensions.
func.func @global_pool_rank(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{expects an input of rank 3 or more (N x C x spatial), got 2}}
  %0 = graph.global_avg_pool %x : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// Tests that batch norm needs a channel dimension.
func.func @batch_norm_rank(%x: tensor<4xf32>, %c: tensor<4xf32>) {
  // expected-error @+1 {{expects an input of rank 2 or more, got 1}}
  %0 = graph.batch_norm %x, %c, %c, %c, %c : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

// Tests that batch norm statistics have one entry per channel.
func.func @batch_norm_channels(%x: tensor<1x4x8x8xf32>, %c: tensor<4xf32>, %m: tensor<3xf32>) {
  // expected-error @+1 {{mean must be a vector of 4 elements (the channel count)}}
  %0 = graph.batch_norm %x, %c, %c, %m, %c : (tensor<1x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  return
}

// -----

// Tests that the layer norm axis lies inside the rank.
func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{axis 2 is outside [0, 2)}}
  %0 = graph.layer_norm %x, %g {axis = 2 : i64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

// Tests that layer norm's scale broadcasts to the normalized shape.
func.func @layer_norm_scale(%x: tensor<2x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{scale and bias of shape [4] must broadcast to the normalized shape [8]}}
  %0 = graph.layer_norm %x, %g {axis = 1 : i64} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

// Tests that the softmax axis lies inside the rank.
func.func @softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.softmax' op axis 2 is outside [0, 2)}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.log_softmax' op axis -1 is outside [0, 2)}}
  %0 = graph.log_softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return
}

// -----

// Tests that index reductions take an axis inside the rank.
func.func @arg_max_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.arg_max' op axis 2 is outside [0, 2)}}
  %0 = graph.arg_max %x {axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2xi64>
  return
}

// -----

// Tests that cumsum takes an axis inside the rank.
func.func @cumsum_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.cumsum' op axis 3 is outside [0, 2)}}
  %0 = graph.cumsum %x {axis = 3 : i64} : tensor<2x8xf32>
  return
}

// -----

// Tests that cumprod takes an axis inside the rank.
func.func @cumprod_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.cumprod' op axis -1 is outside [0, 2)}}
  %0 = graph.cumprod %x {axis = -1 : i64} : tensor<2x8xf32>
  return
}

// -----

// Tests that top-k takes an axis inside the rank.
func.func @top_k_axis(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'graph.top_k' op axis 2 is outside [0, 2)}}
  %0:2 = graph.top_k %x {axis = 2 : i64, k = 1 : i64} : (tensor<2x8xf32>) -> (tensor<2x1xf32>, tensor<2x1xi64>)
  return
}

// -----

// Tests that top-k cannot take more elements than the axis holds.
func.func @top_k_too_many(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{k = 9 is outside [0, 8]}}
  %0:2 = graph.top_k %x {axis = 1 : i64, k = 9 : i64} : (tensor<2x8xf32>) -> (tensor<2x9xf32>, tensor<2x9xi64>)
  return
}

// -----

// Tests that gather_elements takes an axis inside the rank.
func.func @gather_elements_axis(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>) {
  // expected-error @+1 {{'graph.gather_elements' op axis 2 is outside [0, 2)}}
  %0 = graph.gather_elements %x, %i {axis = 2 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  return
}

// -----

// Tests that gather_elements indices have the input's rank.
func.func @gather_elements_rank(%x: tensor<3x4xf32>, %i: tensor<6xi64>) {
  // expected-error @+1 {{indices have rank 1, expected the input's rank 2}}
  %0 = graph.gather_elements %x, %i {axis = 0 : i64} : (tensor<3x4xf32>, tensor<6xi64>) -> tensor<6xf32>
  return
}

// -----

// Tests that gather_nd indices have a dimension for the index vectors.
func.func @gather_nd_scalar_indices(%x: tensor<3x4xf32>, %i: tensor<i64>) {
  // expected-error @+1 {{indices must have rank 1 or more}}
  %0 = graph.gather_nd %x, %i : (tensor<3x4xf32>, tensor<i64>) -> tensor<f32>
  return
}

// -----

// Tests that the index vector length is static.
func.func @gather_nd_dynamic_vector(%x: tensor<3x4xf32>, %i: tensor<2x?xi64>) {
  // expected-error @+1 {{the last dimension of indices must be static}}
  %0 = graph.gather_nd %x, %i : (tensor<3x4xf32>, tensor<2x?xi64>) -> tensor<2xf32>
  return
}

// -----

// Tests that index vectors fit the input.
func.func @gather_nd_too_long(%x: tensor<3x4xf32>, %i: tensor<2x3xi64>) {
  // expected-error @+1 {{index vectors of length 3 after 0 batch dimensions do not fit an input of rank 2}}
  %0 = graph.gather_nd %x, %i : (tensor<3x4xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  return
}

// -----

// Tests that gather_nd batch dimensions agree.
func.func @gather_nd_batch(%x: tensor<3x4xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+1 {{batch dimension 0 differs: 3 and 2}}
  %0 = graph.gather_nd %x, %i {batch_dims = 1 : i64} : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return
}

// -----

// Tests that scatter_elements takes an axis inside the rank.
func.func @scatter_elements_axis(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x2xf32>) {
  // expected-error @+1 {{'graph.scatter_elements' op axis -1 is outside [0, 2)}}
  %0 = graph.scatter_elements %x, %i, %u {axis = -1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Tests that scatter_elements indices and updates share a shape.
func.func @scatter_elements_shapes(%x: tensor<3x4xf32>, %i: tensor<3x2xi64>, %u: tensor<3x3xf32>) {
  // expected-error @+1 {{indices [3x2] and updates [3x3] must have one shape of the input's rank}}
  %0 = graph.scatter_elements %x, %i, %u {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>, tensor<3x3xf32>) -> tensor<3x4xf32>
  return
}

// -----

// Tests that scatter_nd updates match the indexed slices.
func.func @scatter_nd_updates(%x: tensor<4x4xf32>, %i: tensor<2x1xi64>, %u: tensor<2x3xf32>) {
  // expected-error @+1 {{updates have shape [2x3], expected [2x4]}}
  %0 = graph.scatter_nd %x, %i, %u : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<4x4xf32>
  return
}

// -----

// Tests that resize sizes cover every dimension.
func.func @resize_sizes(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{sizes has 2 entries, expected 4}}
  %0 = graph.resize %x {scales = array<f32: 2.0, 2.0>, sizes = array<i64: 16, 16>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

// Tests that resize has one scale per dimension.
func.func @resize_scales(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{scales has 2 entries, expected 4}}
  %0 = graph.resize %x {scales = array<f32: 2.0, 2.0>, sizes = array<i64: 1, 3, 16, 16>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

// Tests that resize scales are positive.
func.func @resize_negative_scale(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{sizes must be non-negative and scales positive}}
  %0 = graph.resize %x {scales = array<f32: 1.0, 1.0, -2.0, 2.0>, sizes = array<i64: 1, 3, 16, 16>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

// Tests that the enum attributes take only their known values.
func.func @resize_bad_mode(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{expected one of [nearest, linear, cubic] for interpolation of a resize, got: bilinear}}
  // expected-error @+1 {{failed to parse Graph_ResizeModeAttr parameter 'value'}}
  %0 = graph.resize %x {mode = #graph<resize_mode bilinear>, scales = array<f32: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 16, 16>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x16x16xf32>
  return
}

// -----

// Tests transposed convolution's checks.
func.func @conv_transpose_rank(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) {
  // expected-error @+1 {{expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got 2}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64>, dilations = array<i64>, pad_low = array<i64>, pad_high = array<i64>, output_padding = array<i64>} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @conv_transpose_groups(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) {
  // expected-error @+1 {{groups must be positive, got 0}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>, groups = 0 : i64} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_filter_rank(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3xf32>) {
  // expected-error @+1 {{filter rank 3 differs from input rank 4}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_channels(%x: tensor<1x16x8x8xf32>, %w: tensor<8x8x3x3xf32>) {
  // expected-error @+1 {{filter has 8 input channels, expected 16}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_group_channels(%x: tensor<1x6x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+1 {{input channels 6 are not divisible by 4 groups}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>, groups = 4 : i64} : (tensor<1x6x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_bias(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>, %b: tensor<16xf32>) {
  // expected-error @+1 {{bias must be a vector of 8 elements}}
  %0 = graph.conv_transpose %x, %w, %b {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>, tensor<16xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_output_padding_length(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) {
  // expected-error @+1 {{output_padding has 1 entries, expected 2}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_zero_stride(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) {
  // expected-error @+1 {{strides and dilations must be positive}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 0, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_negative_padding(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) {
  // expected-error @+1 {{padding must be non-negative}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, -1>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x10x10xf32>
  return
}

// -----

func.func @conv_transpose_output_padding(%x: tensor<1x16x8x8xf32>, %w: tensor<16x8x3x3xf32>) {
  // expected-error @+1 {{output_padding must be smaller than the stride or the dilation}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 0, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 2, 0>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x19x17xf32>
  return
}

// -----

func.func @conv_transpose_empty(%x: tensor<1x16x1x1xf32>, %w: tensor<16x8x1x1xf32>) {
  // expected-error @+1 {{padding leaves spatial dimension 0 empty}}
  %0 = graph.conv_transpose %x, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 0, 0>, output_padding = array<i64: 0, 0>} : (tensor<1x16x1x1xf32>, tensor<16x8x1x1xf32>) -> tensor<1x8x0x1xf32>
  return
}

// -----

// Tests that a bitcast keeps the element width: f32 cannot be read as i16.
func.func @bitcast_width(%x: tensor<4xf32>) {
  // expected-error @+1 {{reinterprets elements of the same width only (i1 as a byte, into an 8-bit integer); cannot read 'f32' as 'i16'}}
  %0 = graph.bitcast %x : tensor<4xf32> to i16
  return
}

// -----

// Tests that a grid sample's positions have one component per spatial dimension.
func.func @grid_sample_components(%x: tensor<1x3x8x8xf32>, %g: tensor<1x4x4x3xf32>) {
  // expected-error @+1 {{'graph.grid_sample' op grid positions have 3 components, expected 2}}
  %0 = graph.grid_sample %x, %g : (tensor<1x3x8x8xf32>, tensor<1x4x4x3xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

// Tests that cubic grid sampling takes two spatial dimensions.
func.func @grid_sample_cubic_volume(%x: tensor<1x3x4x8x8xf32>, %g: tensor<1x2x4x4x3xf32>) {
  // expected-error @+1 {{'graph.grid_sample' op cubic sampling takes 2 spatial dimensions}}
  %0 = graph.grid_sample %x, %g {mode = #graph<resize_mode cubic>} : (tensor<1x3x4x8x8xf32>, tensor<1x2x4x4x3xf32>) -> tensor<1x3x2x4x4xf32>
  return
}
