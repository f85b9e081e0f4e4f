/* json_internal.h - what the JSON writer's two files (json_write.c: document, nodes, schemas,
 * attributes; json_write_values.c: values and meta) and the reader's two (json_read.c:
 * document, nodes, names, targets; json_read_values.c: values, meta, attributes) share.
 * ir/json*.c only. */
#ifndef CFX_IR_JSON_INTERNAL_H
#define CFX_IR_JSON_INTERNAL_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "ir/arena.h"
#include "ir/json.h"
#include "ir/safetensors.h"

/* A higher-order operator value is written {"hop": JW_HOP_PREFIX "NAME"}, the HOP's qualified
 * name (a HOP's call_function target, {"fn": ...}, spells it the same way). */
#define JW_HOP_PREFIX "torch.ops.higher_order."

/* ---- writer ----------------------------------------------------------------------------------- */

/* How a node reference inside a written value is checked. */
enum {
    JW_REF_ARGS, /* must be a node written earlier */
    JW_REF_META, /* any live node of the graph */
};

typedef struct jw_frame {
    const void *items; /* cfx_value[] or cfx_meta_val[] */
    uint32_t n, i;
    bool tuple;
} jw_frame;

typedef struct jwriter {
    const cfx_graph *g;
    cfx_buf *b;
    unsigned flags;
    FILE *sink;          /* flushed to when non-NULL */
    const char *path;
    const char *weights; /* the "weights" member: attribute data is in that file, not inline */
    uint64_t *defined;   /* bit per node seq: the node's record is written */
    const cfx_node *cur; /* record being written, for messages */
    const char *what;    /* part of it ("args", "kwargs", "meta") */
    const char *key;     /* kwarg / meta key, or NULL */
    jw_frame *stack;
    uint32_t stack_cap;
} jwriter;

/* Records "cannot write graph JSON: node 'x', what 'key': <message>"; returns CFX_ERR. */
int jw_err(jwriter *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A JSON string; false (nothing written) if s is not UTF-8 or holds NUL. */
bool jw_str(cfx_buf *b, const char *s, size_t n);
/* Length of the well-formed UTF-8 sequence at s (n bytes available, s[0] >= 0x80), 0 if
 * ill-formed; the loader refuses what the writer would (json_write_values.c). */
size_t jw_utf8_seq(const unsigned char *s, size_t n);
/* Same for a C string, with the error recorded. */
int jw_cstr(jwriter *w, const char *s);
int jw_name(jwriter *w, cfx_name nm);
/* An int: bare below 2^53 in magnitude, else {"int": "<decimal>"}. */
void jw_int(cfx_buf *b, int64_t v);
/* "dtype": ..., "device": ..., "shape": [...], "stride": [...], "storage_offset": n */
int jw_tensor_fields(jwriter *w, int dtype, cfx_device device, const int64_t *sizes,
                     const int64_t *strides, int ndim, int64_t offset);
/* A value with `depth` JSON containers already open around it. */
int jw_value(jwriter *w, const cfx_value *v, int depth, int ref_mode);
bool jw_has_meta(const cfx_node *n);
/* ', "meta": {...}' of a node. */
int jw_meta(jwriter *w, const cfx_node *n);

/* The document to a file (streamed), naming weights (or NULL); a failed write removes it. */
int jw_to_file(const cfx_graph *g, const cfx_graph_module *gm, const char *path, unsigned flags, const char *weights);

/* ---- reader ----------------------------------------------------------------------------------- */

#define JR_MAX_EXACT_INT 9007199254740991.0 /* 2^53 - 1: a larger literal may have been rounded */

/* How a node reference inside a value is resolved. */
enum {
    JR_REF_ARGS,       /* must name an earlier node (or the error is lint's "used before defined") */
    JR_REF_META_FIRST, /* a later node: the entry is deferred (JR_DEFER) until all nodes exist */
    JR_REF_META_FINAL, /* must name some node of the graph */
};
#define JR_DEFER 1 /* positive: not an error */

typedef struct jr_node_slot {
    uint32_t hash;
    cfx_node *node;
} jr_node_slot;

typedef struct jr_target_slot {
    uint32_t hash;
    uint32_t kind; /* CFX_TARGET_OP / CFX_TARGET_FN */
    char *key;
    const void *ptr;
} jr_target_slot;

typedef struct jr_pending {
    cfx_node *node;
    char *key;
    cJSON *value;
    size_t offset;
    uint32_t index; /* of the node record */
    int32_t entry;  /* of the pair in meta.entries */
} jr_pending;

typedef struct jr_frame {
    const cJSON *next;
    void *out; /* next cfx_value / cfx_meta_val to fill */
} jr_frame;

typedef struct jreader {
    const char *text;
    size_t len;
    bool strict;            /* unknown members are errors: the file's minor is not newer */
    cfx_graph *g;
    const cJSON *schemas;   /* the "schemas" member, or NULL */
    jr_node_slot *nodes;    /* name -> node, open addressing */
    uint32_t nodes_cap, nodes_count;
    jr_target_slot *targets; /* qualified name -> op / builtin fn */
    uint32_t targets_cap, targets_count;
    jr_pending *pending;    /* meta entries naming later nodes */
    uint32_t n_pending, pending_cap;
    jr_frame *stack;        /* value conversion */
    uint32_t stack_cap;
    cfx_arena scratch;      /* argument arrays of the record being read */
    const char *dir;        /* the document's directory (file loaders), or NULL (text) */
    cfx_library *declare;   /* cfx_graph_load_options.declare */
    cfx_safetensors *weights; /* the "weights" file, when the document names one */
    const char *weights_name;
    unsigned char *weights_used; /* per weights tensor: some attribute took it */
    /* context for messages */
    size_t rec_offset;      /* byte offset of the record being read, or SIZE_MAX */
    const char *rec_array;  /* "nodes" / "attributes" while their records are read, else NULL */
    uint32_t rec_index;     /* the record's index in it */
    const cJSON *rec_root;  /* the record's tree, or NULL */
    const cJSON *at;        /* the item being converted (within rec_root): the JSON path's end */
    int32_t pending_entry;  /* >= 0: rec_root is the value of that meta entry, read late */
    const char *rec_kind;   /* "node" / "attribute" */
    const char *rec_name;
    const char *what;       /* "args", "kwargs", "meta", ... */
    const char *key;
} jreader;

/* The top level of a document (json_scan.c): every member but "nodes" and "attributes"
 * parsed, those two located as spans, then read record by record. */
typedef struct jr_span {
    size_t start, end; /* the array's '[' and one past its ']'; start 0 = absent */
} jr_span;
typedef struct jr_doc {
    cJSON *format, *version, *name, *schemas, *weights;
    size_t schemas_at, weights_at;
    jr_span nodes, attributes;
    char *unknown; /* first member this reader does not know */
    size_t unknown_at;
} jr_doc;
int jr_scan_doc(jreader *r, jr_doc *d);
void jr_doc_free(jr_doc *d);
typedef int (*jr_record_fn)(jreader *r, cJSON *j, void *ctx);
/* The records of an array span, one cJSON parse each, handed to fn. */
int jr_read_records(jreader *r, jr_span sp, const char *what, jr_record_fn fn, void *ctx);

/* Records "cannot load graph JSON: line L: node 'x', what 'key': <message>" and returns status. */
int jr_err(jreader *r, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Same, for a syntax error at a byte offset. */
int jr_err_at(jreader *r, size_t offset, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The members of obj named in allowed (NULL-terminated), into out[i] (NULL when absent), in one
 * pass. Members must be distinct and, when r->strict, among allowed. */
int jr_members(jreader *r, const cJSON *obj, const char *const *allowed, cJSON **out, const char *what);
/* The one member of a tagged object {"tag": x}, or NULL. */
const cJSON *jr_tagged(const cJSON *j);

int jr_int(jreader *r, const cJSON *j, int64_t *out, const char *what);
/* A value: CFX_OK, JR_DEFER, or a negative status. Arrays go into r->scratch; strings point
 * into the cJSON tree. */
int jr_value(jreader *r, const cJSON *j, cfx_value *out, int ref_mode);
/* node.meta from its "meta" object; entries naming later nodes are deferred (r->pending). */
int jr_meta(jreader *r, cfx_node *n, cJSON *meta);
/* One "attributes" record into gm. */
int jr_attribute(jreader *r, cfx_graph_module *gm, const cJSON *a);

/* The operator (CFX_TARGET_OP, "ns::name.overload", checked against the file's schema) or
 * builtin function (CFX_TARGET_FN, qualified name) a target or value names, looked up once per
 * document; NULL with the error recorded when nothing registered defines it. */
const void *jr_resolve(jreader *r, uint32_t kind, const char *name);

/* The node named s[0..), or NULL. */
cfx_node *jr_find_node(const jreader *r, const char *s);

#endif
