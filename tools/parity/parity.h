/* parity.h - the programs of `make check-torch`: small C programs against cfx, each with a
 * PyTorch 2.13 twin in tools/interop/check_torch.py.
 *
 * A program is one row of programs.def: PROG(name, inputs, (C parameters), expression). Its
 * parameters are tensors named a, b, c, d (the twin's are too, so make_fx names the
 * placeholders a_1, b_1, ... on both sides); `inputs` describes them, one token each:
 *   f:3,4      float32 [3, 4], filled as cfx_model_example_tensor with seed = argument index
 *   d:3,4      the same in float64
 *   f:3,4^t    a transposed view: the float32 [4, 3] example, dims -2/-1 swapped
 *   i10:4      int64 [4] with values (i * 7 + seed * 13) % 10
 * A model of the zoo (`cfx models`) takes part under its own name, its twin being
 * tools/interop/gen_models.py's. */
#ifndef CFX_PARITY_H
#define CFX_PARITY_H

#include "dispatch/kernel.h"

typedef struct parity_program {
    const char *name;
    const char *inputs;
    cfx_fnptr fn;
} parity_program;

extern const parity_program parity_programs[];
extern const int parity_program_count;

#endif
