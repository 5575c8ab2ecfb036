/*===- tgc_runtime.h - The runtime ABI of compiled tgc models ---------------===*
 * What generated code and the runtime agree on: the description of a program (buffers and kernel calls), the kernel
 * calling convention, and the C functions that run a program. Plain C, so any language can call compiled models.
 *===----------------------------------------------------------------------===*/

#ifndef TGC_RUNTIME_H
#define TGC_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types, in the order of the IR's scalars. */
typedef enum tgc_dtype {
  TGC_BOOL,
  TGC_I8,
  TGC_U8,
  TGC_I16,
  TGC_U16,
  TGC_I32,
  TGC_U32,
  TGC_I64,
  TGC_U64,
  TGC_F16,
  TGC_BF16,
  TGC_F32,
  TGC_F64
} tgc_dtype;

/* TGC_VARIABLE: the int64_t value of a dimension variable (a symbolic batch size), passed to kernels like a
 * buffer; the runtime sets it (tgc_model_set_variable). */
typedef enum tgc_buffer_kind { TGC_INPUT, TGC_WEIGHT, TGC_OUTPUT, TGC_TEMP, TGC_VARIABLE } tgc_buffer_kind;

/* A kernel: buffers[i] is its parameter i. Its outermost loop runs over [begin, end) when the call is parallel
 * (parallel > 0); other kernels are called with [0, 1). */
typedef void (*tgc_kernel_fn)(void *const *buffers, int64_t begin, int64_t end);

typedef struct tgc_buffer_info {
  tgc_buffer_kind kind;
  const char *name; /* inputs, weights, outputs: the tensor's name; variables: theirs; temporaries: "" */
  tgc_dtype dtype;
  int rank;
  const int64_t *shape; /* rank entries; a variable axis has the variable's upper bound */
  int64_t bytes;        /* at the upper bounds of variable axes */
  int64_t arena_offset; /* temporaries placed by the memory plan: byte offset in the arena; otherwise -1 */
  const void *data;     /* an embedded weight's bytes, or NULL */
  const int *dim_vars;  /* inputs and outputs with a variable axis: per axis, the buffer index of its variable or
                           -1; otherwise NULL. Variable axes are outermost, so the tensor of the actual size is a
                           prefix of the buffer */
  int64_t var_min;      /* TGC_VARIABLE: the inclusive bounds of its value */
  int64_t var_max;
} tgc_buffer_info;

typedef struct tgc_call_info {
  const char *name;
  tgc_kernel_fn fn;
  int num_args;
  const int *args;  /* buffer indices, one per kernel parameter */
  int64_t parallel; /* extent of the outermost loop that may be split across threads, or 0 */
  double flops;     /* estimated work, for --debug timing lines */
  double bytes;
  const char *kernel; /* GPU: the kernel's name in the program's code; NULL on the CPU */
  int64_t grid[3];    /* GPU: work-groups per dimension (x, y, z) */
  int64_t block[3];   /* GPU: work-items per work-group per dimension */
  int once;           /* 1: reads weights only (and writes temporaries): run on the first run, and again after a
                         weight is rebound; 0: every run */
  int parallel_var;   /* the buffer index of the variable whose value is the outermost loop's extent (parallel is
                         then its upper bound), or -1 */
  int grid_var[3];    /* GPU: per dimension, the buffer index of the variable whose value is the number of
                         work-groups (grid then has its upper bound), or -1 */
} tgc_call_info;

typedef struct tgc_program_info {
  const char *name;
  int num_buffers;
  const tgc_buffer_info *buffers;
  int num_calls;
  const tgc_call_info *calls;
  int64_t arena_bytes;
  const char *weights_file; /* the model's weights file (the path given at compile time), or NULL when embedded */
  const char *device;       /* NULL: kernels run on the CPU (calls' fn); "opencl": code is OpenCL C source;
                               "hip": code is an AMD HSA code object (HSACO); "cuda": code is a cubin */
  const void *code;
  int64_t code_size;
  const void *fallback_code; /* cuda: the PTX (NUL-terminated), JIT-compiled by the driver when the cubin does not
                                load (a newer GPU); otherwise NULL */
  int64_t fallback_code_size;
} tgc_program_info;

typedef struct tgc_model tgc_model;

/* Prepare a program to run: load weights (from weights_path, else the program's embedded weights or its weights
 * file; weights with none of these must be bound with tgc_model_bind_weight before running), allocate
 * and pre-fault the arena, start the thread pool (num_threads <= 0: one per core). Returns NULL on failure and puts a
 * one-line reason in error. */
tgc_model *tgc_model_create(const tgc_program_info *program, const char *weights_path, int num_threads, char *error,
                            size_t error_size);

/* Bind the memory of a weight by name (for weights that are neither embedded nor in a file). Returns 0, or -1 when
 * the program has no such weight. */
int tgc_model_bind_weight(tgc_model *model, const char *name, const void *data);

/* Whether every weight has memory (embedded, from the file, or bound). */
int tgc_model_ready(const tgc_model *model);

/* Run once. inputs[i] is the i-th input buffer of the program (in buffer order), outputs[i] the i-th output; each
 * must hold the tensor's bytes. Returns 0, or -1 when a weight has no memory or the device failed (see
 * tgc_model_error). */
int tgc_model_run(tgc_model *model, const void *const *inputs, void *const *outputs);

/* Whether this model's thread choices are made: on more than one thread, runs 3 to 8 time each call large enough to
 * split on all threads and on one (half of them each way) to choose; a benchmark times the runs after that. */
int tgc_model_settled(const tgc_model *model);

/* Set a dimension variable (a TGC_VARIABLE buffer, e.g. the batch size) for the following runs: input and output
 * buffers then hold that many rows. Returns 0, or -1 when there is no such variable or the value is outside its
 * bounds (see tgc_model_error). A variable not set is at its upper bound. */
int tgc_model_set_variable(tgc_model *model, const char *name, int64_t value);

/* Why the last tgc_model_run or tgc_model_set_variable failed (one line), or "". */
const char *tgc_model_error(const tgc_model *model);

/* Per-call timings of the last run, in seconds (num_calls entries), when timing was enabled (TGC_DEBUG >= 2 or
 * tgc_model_set_timing); CPU calls are always timed. */
const double *tgc_model_call_seconds(const tgc_model *model);

/* Time each call of the following runs on GPU devices too (which waits for each kernel), without TGC_DEBUG's lines. */
void tgc_model_set_timing(tgc_model *model, int enabled);

/* Called after each kernel call of the following runs of a CPU program (not on GPU devices) with the call's index
 * and its arguments (buffers[i] is the call's parameter i), e.g. to save intermediate buffers; NULL removes it. */
typedef void (*tgc_call_hook)(void *user, int call, void *const *buffers);
void tgc_model_set_call_hook(tgc_model *model, tgc_call_hook hook, void *user);

void tgc_model_destroy(tgc_model *model);

/* The command line of a compiled model's executable (see docs/runtime.md). */
int tgc_main(const tgc_program_info *program, int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif
