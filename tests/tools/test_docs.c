/* test_docs.c - docs/ops.md is the op table's page as tools/opgen writes it (make docs), so
 * the documentation of the operators cannot fall behind the table. */
#include <criterion/criterion.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/test_util.h"

Test(docs, ops_md_is_current)
{
    /* the generated page sits in the build directory the tests were built in (CFX_BIN's) */
    const char *bin = getenv("CFX_BIN");
    cr_assert(bin, "CFX_BIN is not set (make test sets it)");
    char dir[512], path[600];
    snprintf(dir, sizeof dir, "%s", bin);
    snprintf(path, sizeof path, "%s/gen/ops.md", dirname(dir));
    char *generated = read_file(path), *committed = read_file("docs/ops.md");
    cr_assert(generated, "missing %s", path);
    cr_assert(committed, "missing docs/ops.md");
    cr_expect_str_eq(committed, generated, "docs/ops.md is out of date: run `make docs`");
    free(generated);
    free(committed);
}
