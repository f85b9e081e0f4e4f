/* tags.c - names of the operator tags (tags.h). */
#include <string.h>

#include "dispatch/tags.h"

static const char *const names[CFX_TAG_COUNT] = {
#define NAME_(name, value) [value] = #name,
    CFX_TAGS(NAME_)
#undef NAME_
};

const char *cfx_tag_name(cfx_tag t) { return (unsigned)t < CFX_TAG_COUNT ? names[t] : NULL; }

bool cfx_tag_parse(const char *s, cfx_tag *out)
{
    for (int i = 0; i < CFX_TAG_COUNT; i++)
        if (names[i] && strcmp(s, names[i]) == 0) {
            *out = (cfx_tag)i;
            return true;
        }
    return false;
}

bool cfx_tags_parse(const char *s, cfx_tag_set *out, size_t *bad)
{
    cfx_tag_set set = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, " ,");
        char name[64];
        cfx_tag t;
        if (n >= sizeof name || (memcpy(name, p, n), name[n] = '\0', !cfx_tag_parse(name, &t))) {
            if (bad)
                *bad = (size_t)(p - s);
            return false;
        }
        set |= cfx_tag_bit(t);
        p += n;
    }
    *out = set;
    return true;
}
