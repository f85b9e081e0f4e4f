/* effects_programs.h - the programs of tools/interop/gen_effects.py (tests/data/effects.txt),
 * shared by the effect-token tests (dispatch/) and the with_effects tests (hop/). */
#ifndef CFX_TESTS_EFFECTS_PROGRAMS_H
#define CFX_TESTS_EFFECTS_PROGRAMS_H

#include <stdbool.h>

#include "cfx.h"
#include "tests/dispatch/golden_blocks.h"

static inline char *effects_block(const char *name, const char *kind)
{
    return golden_block("tests/data/effects.txt", name, kind);
}

static inline int effects_print(const char *s)
{
    cfx_value st[1] = {cfx_string(s)};
    return cfx_op_call(cfx_op_find("aten::_print"), st, 1, 1);
}

/* def prints(x, y): print("moo"); a = x + y; print("moo2"); return a.relu() */
static inline cfx_tensor *effects_prints(cfx_tensor *x, cfx_tensor *y)
{
    if (effects_print("moo") != CFX_OK)
        return NULL;
    cfx_tensor *a = cfx_add(x, y);
    if (effects_print("moo2") != CFX_OK)
        return NULL;
    return cfx_relu(a);
}

/* The programs' [2, 3] float inputs (seed 0 and 1), as the generator makes them. */
static inline cfx_tensor *effects_t23(int seed)
{
    float d[6];
    for (int i = 0; i < 6; i++)
        d[i] = (float)((i * 7 + seed * 13) % 32 - 16) / 16.0f;
    return cfx_tensor_from_floats(d, (const int64_t[]){2, 3}, 2);
}

/* make_fx of fn(x, y) in mode, functionalized with effect tokens when tokens is set. */
static inline cfx_graph_module *effects_trace(cfx_fnptr fn, int mode, bool tokens)
{
    cfx_tensor *x = effects_t23(0), *y = effects_t23(1);
    cfx_value args[2] = {cfx_tensor_value(x), cfx_tensor_value(y)};
    cfx_make_fx_options o = {(cfx_tracing_mode)mode, NULL, NULL, false, .functionalize = tokens,
                             .effect_tokens = tokens};
    cfx_graph_module *gm = cfx_make_fx(fn, "(Tensor x, Tensor y) -> Tensor", args, 2, &o);
    cfx_tensor_release(x);
    cfx_tensor_release(y);
    return gm;
}

#endif
