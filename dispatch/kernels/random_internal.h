/* random_internal.h - what the random sampling kernels share (dispatch/kernels/random.c,
 * random_tensor.c, multinomial.c, and randint in creation.c). Library-internal. */
#ifndef CFX_KERNELS_RANDOM_INTERNAL_H
#define CFX_KERNELS_RANDOM_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/tensor.h"
#include "dispatch/value.h"

/* static_cast<scalar_t>(v) of a double / an int64 into an element of dtype dt at o, with
 * x86-64's results where C leaves the conversion undefined. */
void cfx_random_store_double(char *o, cfx_dtype dt, double v);
void cfx_random_store_int(char *o, cfx_dtype dt, int64_t k);

/* The functional forms' end: r (the in-place op's result on a fresh tensor) when filled (that
 * op's result) is not NULL, else r dropped and NULL, the error left set. */
cfx_tensor *cfx_random_drop_on_error(cfx_tensor *r, cfx_tensor *filled);
/* random_from_to's draws into self (a fresh CPU tensor): base + draw % range, a 64-bit draw
 * for a range of 2^28 up, as 2.13 (randint's fill and random_'s); self, or NULL + error. */
cfx_tensor *cfx_random_from_to_fill(cfx_tensor *self, uint64_t range, int64_t base, cfx_value generator);
/* CHECK_NORMAL_STD: "normal expects std >= 0.0, but found std -1" (C++'s %g), or with
 * python the reference's text ("... std -1.0"). */
bool cfx_random_check_std(const char *op, double std, bool python);
/* prims.normal's "expected a floating-point or complex dtype, but got dtype=torch.int64" */
bool cfx_random_check_floating_ref(const char *op, cfx_dtype dt);
/* normal_impl_ on CPU: self filled with N(mean, std) from the generator (None: the default
 * one), normal_fill for 16 or more contiguous elements; self, or NULL with the error. */
cfx_tensor *cfx_random_normal_fill(const char *op, cfx_tensor *self, double mean, double std, cfx_value generator);

#endif
