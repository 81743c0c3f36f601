// A padded max pool over a batch that varies from run to run (kiln_shape_range_cuda.test): on
// CUDA the padded input is a kernel's temporary of the run's size, which a program without an
// upper bound on the batch sizes per run.
func.func @main(%x: tensor<?x4x9x9xf32> {kiln.name = "x"}) -> (tensor<?x4x5x5xf32> {kiln.name = "y"}) {
  %0 = graph.max_pool %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<?x4x9x9xf32>) -> tensor<?x4x5x5xf32>
  return %0 : tensor<?x4x5x5xf32>
}
