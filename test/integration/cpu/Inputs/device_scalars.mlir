// Two copies of one host function: @eager as written, @graph rewritten by
// gacc-device-resident-scalars (functions=graph), linked as a shared
// library. device_scalars_driver.mlir runs both on the same inputs and
// prints, per function, its two results and the buffer it updated.
func.func private @printF32(f32)
func.func private @printComma()
func.func private @printNewline()

// x ← beta·x + x (a stand-in for a stream-ordered GEMM with beta).
func.func private @gemm(%x: memref<4xf32>, %beta: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %j = %c0 to %c4 step %c1 {
    %v = memref.load %x[%j] : memref<4xf32>
    %b = arith.mulf %v, %beta : f32
    %w = arith.addf %v, %b : f32
    memref.store %w, %x[%j] : memref<4xf32>
  }
  return
}

// The body both copies share.
func.func @eager(%x: memref<4xf32>, %lr: f32, %n: i64, %k: index) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero, %t = %one) -> (f32, f32) {
    // A kernel reading two arguments.
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %v = memref.load %x[%j] : memref<4xf32>
      %w = arith.mulf %v, %lr : f32
      %jk = arith.addi %j, %k : index
      %ji = arith.index_cast %jk : index to i64
      %jf = arith.sitofp %ji : i64 to f32
      %u = arith.addf %w, %jf : f32
      memref.store %u, %x[%j] : memref<4xf32>
      scf.reduce
    }
    %first = arith.cmpi eq, %i, %c0 : index
    %beta = arith.select %first, %zero, %half : f32
    func.call @gemm(%x, %beta) : (memref<4xf32>, f32) -> ()
    %a = memref.load %x[%i] : memref<4xf32>
    // A branch on the loop index whose result depends on device data.
    %even = arith.remui %i, %c2 : index
    %isEven = arith.cmpi eq, %even, %c0 : index
    %b = scf.if %isEven -> f32 {
      %sq = arith.mulf %a, %a : f32
      scf.yield %sq : f32
    } else {
      scf.yield %lr : f32
    }
    // A branch on device data (as a skipped fp16 window): its kernels run
    // guarded on the device, its result through a buffer.
    %limit = arith.constant 20.0 : f32
    %big = arith.cmpf ogt, %a, %limit : f32
    %d = scf.if %big -> f32 {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        %v = memref.load %x[%j] : memref<4xf32>
        %w = arith.mulf %v, %half : f32
        memref.store %w, %x[%j] : memref<4xf32>
        scf.reduce
      }
      scf.yield %half : f32
    } else {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        %v = memref.load %x[%j] : memref<4xf32>
        %w = arith.addf %v, %one : f32
        memref.store %w, %x[%j] : memref<4xf32>
        scf.reduce
      }
      scf.yield %a : f32
    }
    %bd = arith.addf %b, %d : f32
    %sum = arith.addf %s, %bd : f32
    // Swapped carried values.
    scf.yield %t, %sum : f32, f32
  }
  %nf = arith.sitofp %n : i64 to f32
  %q = arith.divf %r#0, %nf : f32
  return %q, %r#1 : f32, f32
}

func.func @graph(%x: memref<4xf32>, %lr: f32, %n: i64, %k: index) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %zero, %t = %one) -> (f32, f32) {
    // A kernel reading two arguments.
    scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
      %v = memref.load %x[%j] : memref<4xf32>
      %w = arith.mulf %v, %lr : f32
      %jk = arith.addi %j, %k : index
      %ji = arith.index_cast %jk : index to i64
      %jf = arith.sitofp %ji : i64 to f32
      %u = arith.addf %w, %jf : f32
      memref.store %u, %x[%j] : memref<4xf32>
      scf.reduce
    }
    %first = arith.cmpi eq, %i, %c0 : index
    %beta = arith.select %first, %zero, %half : f32
    func.call @gemm(%x, %beta) : (memref<4xf32>, f32) -> ()
    %a = memref.load %x[%i] : memref<4xf32>
    // A branch on the loop index whose result depends on device data.
    %even = arith.remui %i, %c2 : index
    %isEven = arith.cmpi eq, %even, %c0 : index
    %b = scf.if %isEven -> f32 {
      %sq = arith.mulf %a, %a : f32
      scf.yield %sq : f32
    } else {
      scf.yield %lr : f32
    }
    // A branch on device data (as a skipped fp16 window): its kernels run
    // guarded on the device, its result through a buffer.
    %limit = arith.constant 20.0 : f32
    %big = arith.cmpf ogt, %a, %limit : f32
    %d = scf.if %big -> f32 {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        %v = memref.load %x[%j] : memref<4xf32>
        %w = arith.mulf %v, %half : f32
        memref.store %w, %x[%j] : memref<4xf32>
        scf.reduce
      }
      scf.yield %half : f32
    } else {
      scf.parallel (%j) = (%c0) to (%c4) step (%c1) {
        %v = memref.load %x[%j] : memref<4xf32>
        %w = arith.addf %v, %one : f32
        memref.store %w, %x[%j] : memref<4xf32>
        scf.reduce
      }
      scf.yield %a : f32
    }
    %bd = arith.addf %b, %d : f32
    %sum = arith.addf %s, %bd : f32
    // Swapped carried values.
    scf.yield %t, %sum : f32, f32
  }
  %nf = arith.sitofp %n : i64 to f32
  %q = arith.divf %r#0, %nf : f32
  return %q, %r#1 : f32, f32
}

func.func @print(%q: f32, %t: f32, %x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  func.call @printF32(%q) : (f32) -> ()
  func.call @printComma() : () -> ()
  func.call @printF32(%t) : (f32) -> ()
  scf.for %j = %c0 to %c4 step %c1 {
    %v = memref.load %x[%j] : memref<4xf32>
    func.call @printComma() : () -> ()
    func.call @printF32(%v) : (f32) -> ()
  }
  func.call @printNewline() : () -> ()
  return
}

func.func @fill(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %tenth = arith.constant 0.1 : f32
  scf.for %j = %c0 to %c4 step %c1 {
    %ji = arith.index_cast %j : index to i64
    %jf = arith.sitofp %ji : i64 to f32
    %v = arith.mulf %jf, %tenth : f32
    %w = arith.addf %v, %tenth : f32
    memref.store %w, %x[%j] : memref<4xf32>
  }
  return
}
