// RUN: gacc-opt %s -split-input-file -verify-diagnostics -gacc-check-kernel-parameters=max-parameter-bytes=100

// Two rank-1 descriptors (5 fields each) and an index: 88 bytes, within
// 100; a function that is not a kernel is not checked.
module attributes {gpu.container_module} {
  gpu.module @fits {
    gpu.func @k(%a: memref<8xf32>, %b: memref<8xf32>, %i: index) kernel {
      gpu.return
    }
    gpu.func @helper(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>) {
      gpu.return
    }
  }
}

// -----

// Two rank-2 descriptors (7 fields each) and an i32: 116 bytes, more than
// 100: one error at the kernel.
module attributes {gpu.container_module} {
  gpu.module @over {
    // expected-error @below {{kernel @k takes 116 bytes of parameters (3 arguments), more than the 100 that PTX allows before ISA 8.1 (ISA 8.1 or later allows 32764: features=+ptx81, or a chip from sm_100 on, whose default PTX is newer)}}
    gpu.func @k(%a: memref<8x8xf32>, %b: memref<8x8xf32>, %n: i32) kernel {
      gpu.return
    }
  }
}

// -----

// A vector takes its data layout's size and alignment: an i32 (4 bytes),
// vector<4xf32> (16 bytes at offset 16) and vector<16xf32> (64 bytes at
// 64): 128 bytes, where 8 bytes a vector would count 24.
module attributes {gpu.container_module} {
  gpu.module @vectors {
    // expected-error @below {{kernel @k takes 128 bytes of parameters (3 arguments), more than the 100}}
    gpu.func @k(%n: i32, %v: vector<4xf32>, %w: vector<16xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// Scalars as PTX lays them out, not as MLIR's default layout aligns them
// (i64 and index to 4; llc -mcpu=sm_90 gives .u32, .u64, .u32, .u64 and
// `.align 16 .b8 [16]` for a vector<3xf32>): a rank-2 descriptor (56
// bytes), an i32 (60), an i64 at 64 (72), an i32 (76), an index at 80
// (88), a vector<3xf32> of 16 bytes at 96 (112), an i1 (113): over 100,
// where the default layout's alignments would count 93.
module attributes {gpu.container_module} {
  gpu.module @scalars {
    // expected-error @below {{kernel @k takes 113 bytes of parameters (7 arguments), more than the 100}}
    gpu.func @k(%m: memref<8x8xf32>, %a: i32, %b: i64, %c: i32, %d: index, %v: vector<3xf32>, %f: i1) kernel {
      gpu.return
    }
  }
}

// -----

// A scalable vector (which PTX has not) counts as a pointer instead of
// stopping the pass: 8 bytes, within the limit.
module attributes {gpu.container_module} {
  gpu.module @scalable {
    gpu.func @k(%v: vector<[4]xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// A vector of rank 2 is an array of its innermost vectors, each padded and
// aligned as one (vector<3x3xf32>: [3 x <3 x float>], llc's `.align 16
// .b8 [48]`): a rank-2 descriptor (56) and the vector at 64 (112), over
// 100. The vector alone (48) would fit: it is not counted as one 64-byte
// vector.
module attributes {gpu.container_module} {
  gpu.module @matrix {
    // expected-error @below {{kernel @k takes 112 bytes of parameters (2 arguments), more than the 100}}
    gpu.func @k(%m: memref<8x8xf32>, %v: vector<3x3xf32>) kernel {
      gpu.return
    }
  }
}

// -----

module attributes {gpu.container_module} {
  gpu.module @matrix_fits {
    gpu.func @k(%a: memref<8xf32>, %v: vector<3x3xf32>) kernel {
      gpu.return
    }
  }
}
