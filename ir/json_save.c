/* json_save.c - a graph module saved as a JSON document plus a safetensors file of its data.
 *
 * Inline base64 costs a third more bytes than the data and a pass to encode and decode it; a
 * model's weights belong in a file that tools already read. cfx_graph_module_save writes the
 * CPU attributes' data to "<stem>.safetensors" (names are the attributes' qualified names, so
 * Python's safetensors.torch.load_file gives the module's state dict) and the document with
 * metadata-only attribute records and a "weights" member naming that file relative to the
 * document. The loader (json_read.c, json_read_values.c) resolves the name against the
 * document's directory and takes each attribute's tensor from it. The weights file is written
 * first: a document is never left naming a file that was not written. */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "ir/json_internal.h"
#include "ir/safetensors.h"

static bool has_data(const cfx_tensor *t)
{
    return t && t->device.type == CFX_DEVICE_CPU && (cfx_tensor_numel(t) == 0 || cfx_tensor_data(t));
}

int cfx_graph_module_save(const cfx_graph_module *gm, const char *path, unsigned flags)
{
    if (!gm || !path || !path[0])
        return cfx_error_set(CFX_ERR, NULL, "cannot save graph module: %s", !gm ? "no module" : "no path");
    int n = cfx_graph_module_n_attrs(gm), k = 0;
    const char **names = cfx_malloc(sizeof *names * (size_t)(n + 1));
    cfx_tensor **tensors = cfx_malloc(sizeof *tensors * (size_t)(n + 1));
    size_t pl = strlen(path), stem = pl > 5 && strcmp(path + pl - 5, ".json") == 0 ? pl - 5 : pl;
    char *wpath = cfx_malloc(stem + sizeof ".safetensors");
    if (!names || !tensors || !wpath) {
        cfx_free(names);
        cfx_free(tensors);
        cfx_free(wpath);
        return cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
    }
    memcpy(wpath, path, stem);
    strcpy(wpath + stem, ".safetensors");
    const char *slash = strrchr(wpath, '/');
    const char *wname = slash ? slash + 1 : wpath;
    if (!(flags & CFX_JSON_NO_DATA))
        for (int i = 0; i < n; i++)
            if (has_data(cfx_graph_module_attr(gm, i))) {
                names[k] = cfx_graph_module_attr_name(gm, i);
                tensors[k++] = cfx_graph_module_attr(gm, i);
            }
    int rc = CFX_OK;
    if (k) {
        rc = cfx_safetensors_write_file(wpath, names, tensors, k, NULL, 0);
        if (rc == CFX_OK) {
            rc = jw_to_file(cfx_graph_module_graph(gm), gm, path, flags, wname);
            if (rc != CFX_OK)
                remove(wpath);
        }
    } else {
        rc = jw_to_file(cfx_graph_module_graph(gm), gm, path, flags, NULL);
    }
    cfx_free(names);
    cfx_free(tensors);
    cfx_free(wpath);
    return rc;
}
