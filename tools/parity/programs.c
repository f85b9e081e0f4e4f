/* programs.c - the table of parity programs, made from programs.def (see parity.h). */
#include "cfx.h"
#include "tools/parity/parity.h"

typedef cfx_tensor *T;

#define PROG(NAME, INPUTS, PARAMS, EXPR) \
    static cfx_tensor *p_##NAME PARAMS { return EXPR; }
#define PROGB(NAME, INPUTS, PARAMS, ...) static cfx_tensor *p_##NAME PARAMS __VA_ARGS__
#include "tools/parity/programs.def"
#undef PROG
#undef PROGB

#define PROG(NAME, INPUTS, PARAMS, EXPR) {#NAME, INPUTS, (cfx_fnptr)p_##NAME},
#define PROGB(NAME, INPUTS, PARAMS, ...) {#NAME, INPUTS, (cfx_fnptr)p_##NAME},
const parity_program parity_programs[] = {
#include "tools/parity/programs.def"
};
#undef PROG
#undef PROGB

const int parity_program_count = (int)(sizeof parity_programs / sizeof parity_programs[0]);
