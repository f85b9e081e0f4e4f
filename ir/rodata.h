/* rodata.h - whether a string lives in read-only memory (see rodata.c). Private to ir/. */
#ifndef CFX_IR_RODATA_H
#define CFX_IR_RODATA_H

#include <stdbool.h>

/* True if s and its NUL lie in a read-only segment of a loaded object (a string literal):
 * its bytes cannot change while that object is loaded. False when unknown. */
bool ir_str_is_readonly(const char *s);

#endif
