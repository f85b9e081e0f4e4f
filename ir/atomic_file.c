/* atomic_file.c - temp file + rename, the only way cfx writes a file (see atomic_file.h).
 *
 * The temporary is created with O_EXCL under a name of our own next to the target (rename
 * is atomic only within one file system), with mode 0666 so the umask applies as it would
 * to the target created directly; an existing target's permission bits are carried over. */
#define _XOPEN_SOURCE 700 /* realpath, fchmod */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dispatch/alloc.h"
#include "dispatch/error.h"
#include "ir/atomic_file.h"

struct cfx_atomic_file {
    FILE *f;
    char *path;   /* what the user named (messages) */
    char *target; /* what is replaced: path, or the file a symbolic link names */
    char *tmp;    /* NULL when writing in place */
    char *what;
};

static void af_free(cfx_atomic_file *af)
{
    cfx_free(af->path);
    cfx_free(af->target);
    cfx_free(af->tmp);
    cfx_free(af->what);
    cfx_free(af);
}

/* realpath's result is libc's block: copied into one of the allocator hook's. */
static char *real_path(const char *path)
{
    char *r = realpath(path, NULL);
    char *copy = cfx_strdup(r);
    free(r); /* raw-alloc-ok */
    return copy;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = cfx_malloc(n);
    return d ? memcpy(d, s, n) : NULL;
}

static int fail(cfx_atomic_file *af, const char *step, int err)
{
    return cfx_error_set(CFX_ERR, NULL, "cannot write %s '%s': %s: %s", af->what, af->path, step, strerror(err));
}

/* A fresh name in target's directory: "<dir>/.<base>.<pid>.<n>.tmp". */
static char *temp_name(const char *target, unsigned n)
{
    static atomic_uint counter;
    const char *slash = strrchr(target, '/');
    size_t dir = slash ? (size_t)(slash - target) + 1 : 0;
    size_t len = strlen(target) + 64;
    char *t = cfx_malloc(len);
    if (t)
        snprintf(t, len, "%.*s.%s.%ld.%u.tmp", (int)dir, target, target + dir, (long)getpid(),
                 atomic_fetch_add(&counter, 1) * 7919u + n);
    return t;
}

cfx_atomic_file *cfx_atomic_file_open(const char *path, const char *what)
{
    if (!what)
        what = "file";
    if (!path || !*path) {
        cfx_error_set(CFX_ERR, NULL, "cannot write %s: no path", what);
        return NULL;
    }
    cfx_atomic_file *af = cfx_calloc(1, sizeof *af);
    if (!af || !(af->path = dup_str(path)) || !(af->what = dup_str(what))) {
        if (af)
            af_free(af);
        cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
        return NULL;
    }
    struct stat st, lst;
    bool exists = stat(path, &st) == 0;
    int fd = -1;
    mode_t mode = 0666;
    if (exists && !S_ISREG(st.st_mode)) {
        fd = open(path, O_WRONLY | O_TRUNC); /* a device or FIFO: in place, never replaced */
        if (fd < 0) {
            fail(af, "cannot open it", errno);
            af_free(af);
            return NULL;
        }
    } else {
        if (exists)
            mode = st.st_mode & 07777;
        if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && exists)
            af->target = real_path(path);
        else
            af->target = dup_str(path);
        if (!af->target) {
            cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
            af_free(af);
            return NULL;
        }
        for (unsigned n = 0; fd < 0 && n < 100; n++) {
            cfx_free(af->tmp);
            if (!(af->tmp = temp_name(af->target, n))) {
                cfx_error_set(CFX_ERR_NOMEM, NULL, "out of memory");
                af_free(af);
                return NULL;
            }
            fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
            if (fd < 0 && errno != EEXIST)
                break;
        }
        if (fd < 0) {
            fail(af, "cannot open it", errno);
            af_free(af);
            return NULL;
        }
        if (exists)
            fchmod(fd, mode); /* best effort: the new file keeps the old one's permissions */
    }
    if (!(af->f = fdopen(fd, "wb"))) {
        int err = errno;
        close(fd);
        if (af->tmp)
            unlink(af->tmp);
        fail(af, "cannot open it", err);
        af_free(af);
        return NULL;
    }
    return af;
}

FILE *cfx_atomic_file_stream(cfx_atomic_file *af) { return af ? af->f : NULL; }

int cfx_atomic_file_commit(cfx_atomic_file *af)
{
    if (!af)
        return cfx_error_set(CFX_ERR, NULL, "cannot write file: not open");
    int rc = CFX_OK;
    if (ferror(af->f))
        rc = fail(af, "a write failed", errno ? errno : EIO);
    if (fflush(af->f) != 0 && rc == CFX_OK)
        rc = fail(af, "writing it failed", errno);
    if (fclose(af->f) != 0 && rc == CFX_OK)
        rc = fail(af, "closing it failed", errno);
    af->f = NULL;
    if (rc == CFX_OK && af->tmp && rename(af->tmp, af->target) != 0)
        rc = fail(af, "cannot move it into place", errno);
    if (rc != CFX_OK && af->tmp)
        unlink(af->tmp);
    af_free(af);
    return rc;
}

void cfx_atomic_file_abort(cfx_atomic_file *af)
{
    if (!af)
        return;
    if (af->f)
        fclose(af->f);
    if (af->tmp)
        unlink(af->tmp);
    af_free(af);
}
