/* fuzz_json.c - libFuzzer target: the graph JSON loader, with round trip.
 *
 * Any input either fails to load with a message, or loads; what loads must dump to JSON, and
 * that dump must load again and dump to the same bytes (load/dump symmetry: the loader
 * accepts nothing the writer would refuse). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"

/* The dispatcher's one-time setup (registering the built-in operators: seconds under ASan and
 * coverage) is done before the first input, so -timeout=1 times inputs, not the setup. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cfx_dispatcher_init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cfx_graph_module *gm = cfx_graph_module_from_json((const char *)data, size);
    if (!gm) {
        if (!cfx_error_message())
            abort(); /* every error records a message */
        cfx_error_clear();
        return 0;
    }
    char *a = NULL, *b = NULL;
    if (cfx_graph_module_to_json(gm, 0, &a) != CFX_OK) {
        fprintf(stderr, "loaded but cannot dump: %s\n", cfx_error_message());
        abort();
    }
    cfx_graph_module *again = cfx_graph_module_from_json(a, strlen(a));
    if (!again) {
        fprintf(stderr, "dump does not reload: %s\n%s\n", cfx_error_message(), a);
        abort();
    }
    if (cfx_graph_module_to_json(again, 0, &b) != CFX_OK || strcmp(a, b) != 0) {
        fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", a, b ? b : "(none)");
        abort();
    }
    free(a);
    free(b);
    cfx_graph_module_free(again);
    cfx_graph_module_free(gm);
    return 0;
}
