/* io.c - the driver's output: every write error reported, every file written atomically.
 *
 * A command that prints to a full disk, a closed pipe end or a closed stdout has failed, even
 * if its last printf returned normally: stdio buffers, and the error surfaces only at the
 * flush or close. cli_io_finish closes stdout at exit and turns such an error into a message
 * and exit status 1. A closed descriptor 0, 1 or 2 at start is re-occupied by /dev/null opened
 * the wrong way round, so writes to a closed stdout fail (EBADF) instead of landing in the
 * first file the command opens. Files named by -o go through cfx_atomic_file. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "cfx.h"
#include "ir/atomic_file.h"
#include "tools/cli/cli.h"

void cli_io_init(void)
{
    for (int fd = 0; fd <= 2; fd++)
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
            int got = open("/dev/null", fd == 0 ? O_WRONLY : O_RDONLY);
            if (got >= 0 && got != fd)
                close(got); /* a lower descriptor was closed too and took it: that one is done */
        }
}

/* Here, not in main.c: the subcommands link without main (fuzz/fuzz_cli.c runs them). */
void cli_report_error(const char *fallback)
{
    const char *msg = cfx_error_message();
    fprintf(stderr, "cfx: %s\n", msg ? msg : fallback);
}

int cli_io_finish(int rc)
{
    bool bad = ferror(stdout) != 0;
    int err = bad ? (errno ? errno : EIO) : 0;
    if (fclose(stdout) != 0 && !bad) {
        bad = true;
        err = errno;
    }
    if (bad) {
        fprintf(stderr, "cfx: error writing stdout: %s\n", strerror(err));
        return rc ? rc : 1;
    }
    return rc;
}

int cli_write_text(const char *text, const char *path)
{
    cfx_atomic_file *af = NULL;
    FILE *f = stdout;
    if (path) {
        if (!(af = cfx_atomic_file_open(path, "output"))) {
            cli_report_error("cannot write the output file");
            return 1;
        }
        f = cfx_atomic_file_stream(af);
    }
    size_t n = strlen(text);
    bool ok = fwrite(text, 1, n, f) == n && (n == 0 || text[n - 1] == '\n' || fputc('\n', f) != EOF);
    if (!path) {
        ok = fflush(f) == 0 && ok;
        if (!ok)
            fprintf(stderr, "cfx: error writing stdout: %s\n", strerror(errno));
        return ok ? 0 : 1;
    }
    if (cfx_atomic_file_commit(af) != CFX_OK) {
        cli_report_error("cannot write the output file");
        return 1;
    }
    return 0;
}
