/* class_internal.h - what torchbind.c and fake_class.c ask of the class registry. */
#ifndef CFX_HOP_CLASS_INTERNAL_H
#define CFX_HOP_CLASS_INTERNAL_H

#include "hop/class.h"

/* The parsed schema (without self) of a method, or NULL. */
const cfx_schema *hop_class_method_schema(const cfx_class *c, const char *name);
/* Records "<script name> (of Python compilation unit at: 0) does not have a field with name 'm'". */
int hop_no_such_method(const cfx_object *obj, const char *name);

#endif
