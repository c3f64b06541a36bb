"""Prints a training step whose tensors each fit this machine's memory but
that cannot run on it (tools/allocation-failures.test): a 784-H-10 MLP
with SGD and momentum.
  state: the first weight is 0.4 of the memory, so that it, its gradient
         accumulator and its momentum (1.2 of the memory) do not fit;
  plan:  the first weight is 0.2 of the memory (its state 0.6) and the
         micro-batch 1568 rows, so that each [1568, H] activation is 0.4
         of it and the step's planned peak exceeds it.
The memory is the one gacc-run uses (gacc_memory.py).
Usage: gacc-run huge.mlir 2>&1 | make_heavy_step.py state|plan"""
import sys

import gacc_memory

memory = gacc_memory.from_stdin()
share, m = {'state': (0.4, 32), 'plan': (0.2, 1568)}[sys.argv[1]]
h = int(share * memory / (784 * 4))
print(f'''gacc.param @w1 : tensor<{h}x784xf32> = #gacc.zeros
gacc.param @w2 : tensor<10x{h}xf32> = #gacc.zeros
gacc.train_step @heavy params [@w1, @w2] attributes {{
    accum_steps = 2 : i64, micro_batch = {m} : i64,
    normalization = #gacc.normalization<mean>,
    optimizer = #gacc.sgd<lr = 0.05, momentum = 0.9>}} {{
^bb0(%w1: tensor<{h}x784xf32>, %w2: tensor<10x{h}xf32>, %x: tensor<{m}x784xf32>, %y: tensor<{m}xi32>):
  %a = gacc.linear %x, %w1 : tensor<{m}x784xf32>, tensor<{h}x784xf32> -> tensor<{m}x{h}xf32>
  %r = gacc.relu %a : tensor<{m}x{h}xf32>
  %z = gacc.linear %r, %w2 : tensor<{m}x{h}xf32>, tensor<10x{h}xf32> -> tensor<{m}x10xf32>
  %loss = gacc.cross_entropy %z, %y : tensor<{m}x10xf32>, tensor<{m}xi32> -> tensor<f32>
  gacc.yield %loss : tensor<f32>
}}''')
