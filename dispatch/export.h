/* export.h - what the shared library exports.
 *
 * libcfx is built with -fvisibility=hidden: a symbol is part of the ABI only if its
 * declaration in a public header carries CFX_API. Internal functions shared between the
 * library's files stay invisible to programs linking libcfx.so (tests and tools link the
 * static archive and see everything). No thread-local variable is exported: the thread state
 * is reached through functions. */
#ifndef CFX_EXPORT_H
#define CFX_EXPORT_H

#if defined(__GNUC__)
#define CFX_API __attribute__((visibility("default")))
#else
#define CFX_API
#endif

#endif
