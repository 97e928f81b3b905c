// Launch constants shared by the host and the kernels.
//
// spla.backends.cuda compiles each kernel with these as -D defines taken from its
// planning modules (spla/planning/adaptive.py, segmented.py, dia.py, banks.py,
// spla/backends/cuda/solvers.py, spmv.py, spmm_launch.py), so the host's values always win. The defaults
// below only serve a plain `nvcc -arch=sm_90 file.cu` build;
// tests/backends/test_kernels_compile.py checks that they equal the host's values.
#pragma once

#ifndef SPLA_ADAPTIVE_THREADS
#define SPLA_ADAPTIVE_THREADS 256
#endif
#ifndef SPLA_ADAPTIVE_STAGE
#define SPLA_ADAPTIVE_STAGE 2048
#endif
#ifndef SPLA_KIND_ROWS
#define SPLA_KIND_ROWS 64
#endif
#ifndef SPLA_SEGMENTED_THREADS
#define SPLA_SEGMENTED_THREADS 256
#endif
#ifndef SPLA_STAGED_THREADS
#define SPLA_STAGED_THREADS 256
#endif
#ifndef SPLA_STAGED_THREAD_ROW
#define SPLA_STAGED_THREAD_ROW 128
#endif
#ifndef SPLA_VALUE_UNROLL
#define SPLA_VALUE_UNROLL 4
#endif
#ifndef SPLA_SOLVER_BLOCK
#define SPLA_SOLVER_BLOCK 256
#endif
#ifndef SPLA_ROW_BLOCK
#define SPLA_ROW_BLOCK 256
#endif
#ifndef SPLA_MAX_DIAGONALS
#define SPLA_MAX_DIAGONALS 64
#endif
#ifndef SPLA_PALETTE_VALUES
#define SPLA_PALETTE_VALUES 255
#endif
#ifndef SPLA_SPMM_DIA_BATCH
#define SPLA_SPMM_DIA_BATCH 5
#endif

// A palette's table (spla/planning/palette.py): code 0's zero, then up to SPLA_PALETTE_VALUES values.
// The shared-memory table of spmv_dia.cu's and spmv_staged.cu's palette entries and of
// detect_structure.cu's palette pass.
constexpr int SPLA_PALETTE_TABLE = SPLA_PALETTE_VALUES + 1;
