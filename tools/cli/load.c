/* load.c - the graph module a subcommand reads: FILE.json with its weights beside it, or the
 * document on stdin when FILE is `-` (then the document must carry its tensors inline: a
 * weights file is found by the document's directory, which stdin does not have). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

cfx_graph_module *cli_load_module(const char *path)
{
    if (strcmp(path, "-"))
        return cfx_graph_module_load(path);
    cfx_buf b;
    cfx_buf_init(&b);
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        cfx_buf_putn(&b, chunk, n);
    cfx_graph_module *gm = NULL;
    if (ferror(stdin))
        cfx_error_set(CFX_ERR, NULL, "cannot read the graph from stdin");
    else if (b.oom)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory reading the graph from stdin");
    else
        gm = cfx_graph_module_from_json(b.data ? b.data : "", b.len);
    cfx_buf_free(&b);
    return gm;
}
