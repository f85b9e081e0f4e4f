/* crossref_fake_mode.c - CrossRefFakeMode (torch._subclasses.fake_utils, 2.13) as a dispatch
 * mode (opcheck.h): every operator call reaching it runs first on fake copies of its arguments
 * under a fresh fake mode (fake_check.c), then for real below the mode, and the two must agree
 * as opcheck's CFX_OPCHECK_FAKE requires: both raise (the real error goes on) or both succeed
 * with the same sizes, dtype and significant strides. The ops CrossRefFakeMode skips are
 * skipped (dynamic_output_shape, inplace_view, data_dependent_output, lift_fresh(_copy)). */
#include <stdlib.h>
#include <string.h>

#include "dispatch/error.h"
#include "dispatch/fake_check_internal.h"
#include "dispatch/opcheck.h"
#include "dispatch/schema.h"

typedef struct crossref_mode {
    cfx_mode base;
    long checked;
} crossref_mode;

static int disagree(const cfx_op *op, const cfx_value *args, const char *which, const char *msg)
{
    cfx_buf b;
    cfx_buf_init(&b);
    cfx_fake_check_describe(&b, op, args, CFX_CALL_NAME_QUALIFIED);
    cfx_buf_printf(&b, ": the %s run raised and the %s one did not: %s", which,
                   strcmp(which, "fake") ? "fake" : "real", msg ? msg : "");
    char *text = cfx_buf_take(&b);
    cfx_error_clear();
    int rc = cfx_error_set_text(CFX_ERR, cfx_op_name(op), text ? text : "out of memory");
    cfx_free(text);
    return rc;
}

static int crossref_dispatch(cfx_mode *m, const cfx_op *op, cfx_keyset ks, cfx_value *stack)
{
    (void)ks;
    if (cfx_fake_check_skips(op))
        return cfx_mode_redispatch(op, stack);
    ((crossref_mode *)m)->checked++;
    cfx_value fake_args[CFX_FAKE_CHECK_MAX_STACK], f_r[CFX_FAKE_CHECK_MAX_STACK];
    cfx_fake_mode *fm = NULL;
    char *fake_msg = NULL;
    int fake_rc = cfx_fake_check_run_fake(op, stack, fake_args, f_r, &fm);
    if (fake_rc != CFX_OK) {
        fake_msg = cfx_strdup(cfx_error_message() ? cfx_error_message() : "");
        cfx_error_clear();
    }
    cfx_value args[CFX_FAKE_CHECK_MAX_STACK]; /* the real run writes its returns over stack */
    memcpy(args, stack, (size_t)cfx_op_schema(op)->n_args * sizeof *args);
    int rc = cfx_mode_redispatch(op, stack);
    if (rc != CFX_OK && fake_rc == CFX_OK) {
        char *msg = cfx_strdup(cfx_error_message() ? cfx_error_message() : "");
        rc = disagree(op, fake_args, "real", msg);
        cfx_free(msg);
    } else if (rc == CFX_OK && fake_rc != CFX_OK) {
        rc = disagree(op, args, "fake", fake_msg);
    } else if (rc == CFX_OK) {
        rc = cfx_fake_check_compare(op, fake_args, f_r, stack, CFX_CALL_NAME_QUALIFIED);
    }
    cfx_free(fake_msg);
    cfx_fake_mode_free(fm);
    return rc;
}

static void crossref_destroy(cfx_mode *m) { cfx_free(m); }

static const cfx_mode_vtable crossref_vt = {"CrossRefFakeMode", crossref_dispatch, crossref_destroy};

cfx_mode *cfx_crossref_fake_mode_new(void)
{
    crossref_mode *m = cfx_calloc(1, sizeof *m);
    if (!m) {
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    cfx_mode_init(&m->base, &crossref_vt, CFX_MODE_USER);
    return &m->base;
}

long cfx_crossref_fake_mode_checked(const cfx_mode *m)
{
    return m && m->vt == &crossref_vt ? ((const crossref_mode *)m)->checked : 0;
}
