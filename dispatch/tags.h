/* tags.h - operator tags (PyTorch's torch.Tag, from native_functions.yaml's tags.yaml).
 *
 * A tag states a fact about an operator that passes and modes rely on without knowing the
 * operator: pointwise, data_dependent_output (the result's value needs the data: fake tensors
 * cannot answer), dynamic_output_shape, nondeterministic_seeded (two calls differ: CSE must
 * not merge them), inplace_view, ... Every built-in operator carries PyTorch 2.13's tags (the
 * op table, dispatch/ops.def); a library's def may give tags to its own operators. An
 * operator's tags are a bit set: bit CFX_TAG_x. The numbering is torch.Tag's. */
#ifndef CFX_TAGS_H
#define CFX_TAGS_H

#include <stdbool.h>
#include <stdint.h>

#include "dispatch/export.h"

/* X(name, value): every tag, in torch.Tag's order and numbering. */
#define CFX_TAGS(X)                   \
    X(core, 0)                        \
    X(cudagraph_unsafe, 1)            \
    X(data_dependent_output, 2)       \
    X(dynamic_output_shape, 3)        \
    X(flexible_layout, 4)             \
    X(generated, 5)                   \
    X(inplace, 6)                     \
    X(inplace_view, 7)                \
    X(maybe_aliasing_or_mutating, 8)  \
    X(needs_contiguous_strides, 9)    \
    X(needs_exact_strides, 10)        \
    X(needs_fixed_stride_order, 11)   \
    X(nondeterministic_bitwise, 12)   \
    X(nondeterministic_seeded, 13)    \
    X(out, 14)                        \
    X(out_variant, 15)                \
    X(pointwise, 16)                  \
    X(pt2_compliant_tag, 17)          \
    X(reduction, 18)                  \
    X(view_copy, 19)

typedef enum cfx_tag {
#define CFX_TAG_ENUM_(name, value) CFX_TAG_##name = value,
    CFX_TAGS(CFX_TAG_ENUM_)
#undef CFX_TAG_ENUM_
    CFX_TAG_COUNT
} cfx_tag;

typedef uint64_t cfx_tag_set; /* bit CFX_TAG_x */
_Static_assert(CFX_TAG_COUNT <= 64, "tags fit a 64-bit set");

static inline cfx_tag_set cfx_tag_bit(cfx_tag t) { return (cfx_tag_set)1 << t; }

/* "core", "pointwise", ...; NULL for a value that is no tag. */
CFX_API const char *cfx_tag_name(cfx_tag t);
/* The tag named s; false if there is none. */
CFX_API bool cfx_tag_parse(const char *s, cfx_tag *out);
/* Parses a list of tag names separated by spaces and/or commas ("core, pointwise") into a
 * set; false (and *bad = the first unknown name's offset) if a name is unknown. */
CFX_API bool cfx_tags_parse(const char *s, cfx_tag_set *out, size_t *bad);

#endif
