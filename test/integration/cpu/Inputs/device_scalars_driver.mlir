// Runs @eager and @graph of device_scalars.mlir (a shared library) on the
// same inputs and prints each one's results and updated buffer (@print).
func.func private @eager(memref<4xf32>, f32, i64, index) -> (f32, f32)
func.func private @graph(memref<4xf32>, memref<f32>, memref<i64>, memref<index>, memref<2xf32>)
func.func private @print(f32, f32, memref<4xf32>)
func.func private @fill(memref<4xf32>)

func.func @main() {
  %c0 = arith.constant 0 : index
  %c3 = arith.constant 3 : index
  %lr = arith.constant 0.75 : f32
  %n = arith.constant 3 : i64
  %xa = memref.alloc() : memref<4xf32>
  %xb = memref.alloc() : memref<4xf32>
  func.call @fill(%xa) : (memref<4xf32>) -> ()
  func.call @fill(%xb) : (memref<4xf32>) -> ()
  %q, %t = func.call @eager(%xa, %lr, %n, %c3) : (memref<4xf32>, f32, i64, index) -> (f32, f32)
  func.call @print(%q, %t, %xa) : (f32, f32, memref<4xf32>) -> ()
  // The graph form: scalars in rank-0 buffers, results in a trailing one.
  %lrb = memref.alloc() : memref<f32>
  %nb = memref.alloc() : memref<i64>
  %kb = memref.alloc() : memref<index>
  %out = memref.alloc() : memref<2xf32>
  memref.store %lr, %lrb[] : memref<f32>
  memref.store %n, %nb[] : memref<i64>
  memref.store %c3, %kb[] : memref<index>
  func.call @graph(%xb, %lrb, %nb, %kb, %out) : (memref<4xf32>, memref<f32>, memref<i64>, memref<index>, memref<2xf32>) -> ()
  %c1 = arith.constant 1 : index
  %gq = memref.load %out[%c0] : memref<2xf32>
  %gt = memref.load %out[%c1] : memref<2xf32>
  func.call @print(%gq, %gt, %xb) : (f32, f32, memref<4xf32>) -> ()
  return
}
