/* load.c - the graph module a subcommand reads: FILE.json with its weights beside it, or the
 * document on stdin when FILE is `-` (then the document must carry its tensors inline: a
 * weights file is found by the document's directory, which stdin does not have). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfx.h"
#include "tools/cli/cli.h"

char *cli_read_stdin(size_t *len, const char *what)
{
    cfx_buf b;
    cfx_buf_init(&b);
    char chunk[1 << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, stdin)) > 0)
        cfx_buf_putn(&b, chunk, n);
    *len = b.len;
    if (ferror(stdin)) {
        cfx_buf_free(&b);
        cfx_error_set(CFX_ERR, NULL, "cannot read %s from stdin", what);
        return NULL;
    }
    char *data = cfx_buf_take(&b); /* "" for an empty stdin */
    if (!data)
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory reading %s from stdin", what);
    return data;
}

cfx_graph_module *cli_load_module(const char *path)
{
    if (strcmp(path, "-"))
        return cfx_graph_module_load(path);
    size_t len;
    char *text = cli_read_stdin(&len, "the graph");
    cfx_graph_module *gm = text ? cfx_graph_module_from_json(text, len) : NULL;
    cfx_free(text);
    return gm;
}
