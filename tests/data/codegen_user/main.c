/* A program built against the installed cfx (pkg-config) around one generated function
 * (codegen/c.c's cfx_graph_to_c): tests/codegen/test_c.c compiles it with -DFORWARD=<name>.
 *
 *     user GRAPH.json INPUTS.safetensors OUTPUTS.safetensors
 *
 * loads the graph module (for its attributes only: nothing is interpreted), calls FORWARD on
 * the inputs "0", "1", ... and writes the outputs, flattened, as "0", "1", .... */
#include <stdio.h>

#include "cfx.h"

int FORWARD(const cfx_graph_module *self, const cfx_value *args, int n_args, cfx_value *out);

static int flatten(cfx_value v, cfx_tensor **out, int n, int cap)
{
    if (v.kind == CFX_V_TENSOR)
        return n < cap ? (out[n] = v.u.t, n + 1) : -1;
    if (v.kind != CFX_V_TUPLE && v.kind != CFX_V_LIST)
        return -1;
    for (uint32_t i = 0; i < v.len && n >= 0; i++)
        n = flatten(v.u.items[i], out, n, cap);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: user GRAPH.json INPUTS.safetensors OUTPUTS.safetensors\n");
        return 2;
    }
    int rc = 1;
    cfx_scope s = cfx_scope_begin();
    cfx_graph_module *gm = cfx_graph_module_load(argv[1]);
    cfx_safetensors *in = gm ? cfx_safetensors_read_file(argv[2]) : NULL;
    if (in) {
        enum { MAX = 16 };
        cfx_value args[MAX];
        int n = cfx_safetensors_count(in);
        for (int i = 0; i < n && i < MAX; i++) {
            char name[16];
            snprintf(name, sizeof name, "%d", i);
            int k = cfx_safetensors_find(in, name);
            args[i] = k >= 0 ? cfx_tensor_value(cfx_safetensors_tensor(in, k)) : cfx_none();
        }
        cfx_value out;
        if (n <= MAX && FORWARD(gm, args, n, &out) == CFX_OK) {
            cfx_tensor *t[MAX];
            char names[MAX][16];
            const char *np[MAX];
            int k = flatten(out, t, 0, MAX);
            for (int i = 0; i < k; i++) {
                snprintf(names[i], sizeof names[i], "%d", i);
                np[i] = names[i];
            }
            if (k >= 0 && cfx_safetensors_write_file(argv[3], np, t, k, NULL, 0) == CFX_OK)
                rc = 0;
            else if (k < 0)
                fprintf(stderr, "the output is not a tensor or a tuple of tensors\n");
        }
    }
    if (rc)
        fprintf(stderr, "error: %s\n", cfx_error_message() ? cfx_error_message() : "?");
    cfx_safetensors_free(in);
    cfx_graph_module_free(gm);
    cfx_scope_end(s);
    return rc;
}
