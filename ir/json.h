/* json.h - graphs and graph modules as JSON text, and back.
 *
 * The format ("cfx.graph", documented with an example in docs/graph-json.md) is a topological
 * list of node records (name, op, target, args, ordered kwargs, meta), the schema text of
 * every operator the nodes call, and the module's tensor attributes with their metadata and,
 * for CPU tensors, their bytes (base64). Values use a tagged encoding that keeps lists and
 * tuples, ints and floats apart, carries int64 values beyond 2^53 exactly and NaN/Inf as
 * strings, so dump -> load -> dump is byte-identical and the loaded graph prints as the
 * original did.
 *
 * Files carry {"major", "minor"}: a reader refuses a newer major version, and reads a newer
 * minor one by ignoring the members it does not know (for its own minor or older, an unknown
 * member is an error). Loading rebuilds the graph with the same node names, resolves operator
 * targets in the dispatcher's registry (cfx_op_find; the embedded schema must equal the
 * registered one) and builtin functions by qualified name (cfx_builtin_fn_find), and checks
 * that every argument names an earlier node. Malformed input of any kind is an error (status
 * CFX_ERR_PARSE for broken JSON or structure, CFX_ERR for a well-formed file that cannot be
 * loaded: version, unknown operator, name clash), recorded through cfx_error_set with the
 * offending node, line and JSON path ($.nodes[3].args[1]); loaders then return NULL and leave
 * nothing allocated.
 *
 * A graph module saved with cfx_graph_module_save keeps its tensors' data beside the document
 * in a safetensors file (readable by Python's safetensors as the module's state dict), which
 * cfx_graph_module_load reads back.
 *
 * Writers refuse what the format cannot carry, up front: tensor and script-object values in
 * args or meta (a tensor belongs in a module attribute fetched by get_attr), strings that are
 * not valid UTF-8 or contain NUL, node references to nodes outside the graph or (in args) not
 * defined earlier, and values nested deeper than CFX_GRAPH_JSON_MAX_DEPTH containers. */
#ifndef CFX_IR_JSON_H
#define CFX_IR_JSON_H

#include <stddef.h>

#include "dispatch/export.h"
#include "dispatch/library.h"
#include "dispatch/value.h"
#include "ir/graph.h"
#include "ir/graph_module.h"

#define CFX_GRAPH_JSON_FORMAT "cfx.graph"
#define CFX_GRAPH_JSON_MAJOR 1
#define CFX_GRAPH_JSON_MINOR 1 /* 1.1: "weights" */
/* Containers (arrays + objects) open at once within one node or attribute record, the record
 * itself included: cJSON's CJSON_NESTING_LIMIT, which the reader parses each record with. */
#define CFX_GRAPH_JSON_MAX_DEPTH 1000

/* Writer flags. */
enum {
    CFX_JSON_NO_DATA = 1u << 0, /* attributes: metadata only, no tensor bytes */
    CFX_JSON_NO_META = 1u << 1, /* nodes: no "meta" members */
};

/* ---- writing ------------------------------------------------------------------------------ */

/* Appends the document to b. A plain graph is written with "name": null and no attributes.
 * CFX_OK, or a negative status with the error recorded (b then holds a partial document). */
CFX_API int cfx_graph_write_json(const cfx_graph *g, unsigned flags, cfx_buf *b);
CFX_API int cfx_graph_module_write_json(const cfx_graph_module *gm, unsigned flags, cfx_buf *b);

/* The document as a malloc'd string in *out (NULL on failure). */
CFX_API int cfx_graph_to_json(const cfx_graph *g, unsigned flags, char **out);
CFX_API int cfx_graph_module_to_json(const cfx_graph_module *gm, unsigned flags, char **out);

/* Written to a file (streamed: memory stays bounded whatever the graph's size). */
CFX_API int cfx_graph_to_json_file(const cfx_graph *g, const char *path, unsigned flags);
CFX_API int cfx_graph_module_to_json_file(const cfx_graph_module *gm, const char *path, unsigned flags);

/* ---- reading ------------------------------------------------------------------------------ */

/* text[0..len) need not be NUL-terminated. The graph-only loaders skip "attributes" (only
 * its brackets are matched). A loaded module's attributes are fresh tensors
 * (not shared with each other even if they were views of one storage); a CPU attribute
 * written without data comes back zero-filled. NULL + error on failure. */
CFX_API cfx_graph *cfx_graph_from_json(const char *text, size_t len);
CFX_API cfx_graph_module *cfx_graph_module_from_json(const char *text, size_t len);
CFX_API cfx_graph *cfx_graph_from_json_file(const char *path);
CFX_API cfx_graph_module *cfx_graph_module_from_json_file(const char *path);

/* Loading options. */
typedef struct cfx_graph_load_options {
    /* NULL, or a DEF / FRAGMENT library: an operator nobody registered whose schema the
     * document embeds is defined in it from that schema (when the schema's namespace is the
     * library's), so the graph loads; calling it fails for want of a kernel until an IMPL
     * library provides one. The library must outlive the graphs loaded with it. */
    cfx_library *declare;
} cfx_graph_load_options;

/* The loaders above with options (opts may be NULL: the defaults). */
CFX_API cfx_graph_module *cfx_graph_module_from_json_opts(const char *text, size_t len,
                                                          const cfx_graph_load_options *opts);
CFX_API cfx_graph_module *cfx_graph_module_load_opts(const char *path, const cfx_graph_load_options *opts);

/* ---- a graph module with its weights ------------------------------------------------------- */

/* Saves gm as two files: path, the JSON document with the attributes' metadata only, and beside
 * it a safetensors file (ir/safetensors.h) with the data of its CPU attributes, named after
 * path ("net.json" -> "net.safetensors"; another name gets ".safetensors" appended) and
 * referenced from the document's "weights" member by file name. Without CPU attributes (or
 * with CFX_JSON_NO_DATA) only the document is written. CFX_OK, or a negative status with the
 * error recorded and neither file left behind. */
CFX_API int cfx_graph_module_save(const cfx_graph_module *gm, const char *path, unsigned flags);
/* Loads a document written by cfx_graph_module_save or cfx_graph_module_to_json_file: the
 * weights file it names is read from the document's directory, and each attribute without
 * inline data gets the tensor of its name (dtype and shape must agree; every tensor of the
 * weights file must be some attribute's). cfx_graph_module_from_json_file is the same
 * function; the text loader cfx_graph_module_from_json refuses a document naming a weights
 * file (it has no directory to find it in). NULL + error on failure. */
CFX_API cfx_graph_module *cfx_graph_module_load(const char *path);

#endif
