// Calls the compiled steps @n2 and @n1 (from runner_model.mlir, linked as a
// shared library) for three optimizer steps from the same parameters on the
// same 4 samples. Per step it prints both windows' counts, then 1 if the
// two losses agree within 1e-6 (absolute, values are O(1)) and the learning
// rate returned is the one passed, else 0; at the end 1 if the parameters
// agree within 1e-6 and have moved, else 0. Each step function returns its
// four f32 results (objective, count, learning rate, gradient norm).
func.func private @n2(memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>,
                      memref<3x2xf32>, memref<3xf32>, memref<2x2x2xf32>, memref<2x2xi32>,
                      f32, i64, i64) -> (f32, f32, f32, f32)
func.func private @n1(memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>,
                      memref<3x2xf32>, memref<3xf32>, memref<1x4x2xf32>, memref<1x4xi32>,
                      f32, i64, i64) -> (f32, f32, f32, f32)
func.func private @printI64(i64)
func.func private @printNewline()

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
    %lr = arith.constant 0.5 : f32
  // Two sets of state: parameters, accumulators, momentum.
  %wa = memref.alloc() : memref<3x2xf32>
  %ba = memref.alloc() : memref<3xf32>
  %aw_a = memref.alloc() : memref<3x2xf32>
  %ab_a = memref.alloc() : memref<3xf32>
  %mw_a = memref.alloc() : memref<3x2xf32>
  %mb_a = memref.alloc() : memref<3xf32>
  %wb = memref.alloc() : memref<3x2xf32>
  %bb = memref.alloc() : memref<3xf32>
  %aw_b = memref.alloc() : memref<3x2xf32>
  %ab_b = memref.alloc() : memref<3xf32>
  %mw_b = memref.alloc() : memref<3x2xf32>
  %mb_b = memref.alloc() : memref<3xf32>
  linalg.fill ins(%zero : f32) outs(%wa : memref<3x2xf32>)
  linalg.fill ins(%zero : f32) outs(%ba : memref<3xf32>)
  linalg.fill ins(%zero : f32) outs(%wb : memref<3x2xf32>)
  linalg.fill ins(%zero : f32) outs(%bb : memref<3xf32>)
  // Samples: x_i = (i + 1, 1 − i), labels 0, 1, 2, 1.
  %x1 = memref.alloc() : memref<1x4x2xf32>
  %y1 = memref.alloc() : memref<1x4xi32>
  %x2c = memref.alloc() : memref<2x2x2xf32>
  %y2c = memref.alloc() : memref<2x2xi32>
  %labels = arith.constant dense<[0, 1, 2, 1]> : tensor<4xi32>
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %one = arith.constant 1.0 : f32
    %a = arith.addf %fi, %one : f32
    %b = arith.subf %one, %fi : f32
    memref.store %a, %x1[%c0, %i, %c0] : memref<1x4x2xf32>
    memref.store %b, %x1[%c0, %i, %c1] : memref<1x4x2xf32>
    %l = tensor.extract %labels[%i] : tensor<4xi32>
    memref.store %l, %y1[%c0, %i] : memref<1x4xi32>
    %mb = arith.divui %i, %c2 : index
    %r = arith.remui %i, %c2 : index
    memref.store %a, %x2c[%mb, %r, %c0] : memref<2x2x2xf32>
    memref.store %b, %x2c[%mb, %r, %c1] : memref<2x2x2xf32>
    memref.store %l, %y2c[%mb, %r] : memref<2x2xi32>
  }
  %ok0 = arith.constant true
  %okF = scf.for %k = %c0 to %c3 step %c1 iter_args(%ok = %ok0) -> (i1) {
    %step = arith.index_cast %k : index to i64
    // The window's first sample (what random ops key their draws with).
    %first = arith.constant 0 : i64
    %la, %na, %ra, %ga = func.call @n2(%wa, %ba, %aw_a, %ab_a, %mw_a, %mb_a, %x2c, %y2c, %lr, %step, %first)
        : (memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>, memref<2x2x2xf32>, memref<2x2xi32>, f32, i64, i64) -> (f32, f32, f32, f32)
    %lb, %nb, %rb, %gb = func.call @n1(%wb, %bb, %aw_b, %ab_b, %mw_b, %mb_b, %x1, %y1, %lr, %step, %first)
        : (memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>, memref<3x2xf32>, memref<3xf32>, memref<1x4x2xf32>, memref<1x4xi32>, f32, i64, i64) -> (f32, f32, f32, f32)
    // Both windows hold 4 samples: the counts are printed.
    %nai = arith.fptosi %na : f32 to i64
    %nbi = arith.fptosi %nb : f32 to i64
    func.call @printI64(%nai) : (i64) -> ()
    func.call @printNewline() : () -> ()
    func.call @printI64(%nbi) : (i64) -> ()
    func.call @printNewline() : () -> ()
    %d = arith.subf %la, %lb : f32
    %ad = math.absf %d : f32
    %tol = arith.constant 1.0e-6 : f32
    %close = arith.cmpf olt, %ad, %tol : f32
    %rates = arith.cmpf oeq, %ra, %lr : f32
    %rates2 = arith.cmpf oeq, %rb, %lr : f32
    %same = arith.andi %close, %rates : i1
    %same2 = arith.andi %same, %rates2 : i1
    %samei = arith.extui %same2 : i1 to i64
    func.call @printI64(%samei) : (i64) -> ()
    func.call @printNewline() : () -> ()
    %ok2 = arith.andi %ok, %same2 : i1
    scf.yield %ok2 : i1
  }
  // Compare the parameters.
  %okW = scf.for %i = %c0 to %c3 step %c1 iter_args(%ok = %okF) -> (i1) {
    %okj = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %ok) -> (i1) {
      %a = memref.load %wa[%i, %j] : memref<3x2xf32>
      %b = memref.load %wb[%i, %j] : memref<3x2xf32>
      %d = arith.subf %a, %b : f32
      %ad = math.absf %d : f32
      %tol = arith.constant 1.0e-6 : f32
      %close = arith.cmpf olt, %ad, %tol : f32
      // The parameters must also have moved away from 0.
      %moved = arith.cmpf one, %a, %zero : f32
      %c = arith.andi %close, %moved : i1
      %o2 = arith.andi %o, %c : i1
      scf.yield %o2 : i1
    }
    %a = memref.load %ba[%i] : memref<3xf32>
    %b = memref.load %bb[%i] : memref<3xf32>
    %d = arith.subf %a, %b : f32
    %ad = math.absf %d : f32
    %tol = arith.constant 1.0e-6 : f32
    %close = arith.cmpf olt, %ad, %tol : f32
    %o3 = arith.andi %okj, %close : i1
    scf.yield %o3 : i1
  }
  %r = arith.extui %okW : i1 to i64
  func.call @printI64(%r) : (i64) -> ()
  func.call @printNewline() : () -> ()
  return
}
