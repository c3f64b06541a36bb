// RUN: gacc-opt %s -convert-gacc-to-runtime -verify-diagnostics

// The runtime's collective has a fixed name and signature: another
// definition under that name is an error, not a mismatched call.
// expected-error @below {{@gacc_all_reduce_sum_f32 is taken by another definition; the runtime's collective must be func.func ('memref<?xf32, strided<[?], offset: ?>>') -> ()}}
func.func private @gacc_all_reduce_sum_f32(i32)

func.func @f(%m: memref<4xf32>) {
  gacc.all_reduce %m : memref<4xf32>
  return
}
