/* The "#!" line of a script, as the kernel reads it (fs/binfmt_script.c):
 * shared by the shim (does the interpreter load the shim?) and the
 * supervisor (the argv the exec gate expects). Pure, no allocation. */
#ifndef HX_COMMON_SHEBANG_H
#define HX_COMMON_SHEBANG_H

#include <stddef.h>

/* The kernel reads no more of a file's head (BINPRM_BUF_SIZE). */
#define HX_BINPRM_BUF 256

/* Parses the first n bytes of a file in buf, which must hold n + 1
 * bytes: writes NULs into it and points *name at the interpreter and
 * *arg at its one optional argument (NULL if none). Returns 0, or
 * -ENOEXEC when buf does not start with a "#!" line naming one. */
int hx_shebang_parse(char *buf, size_t n, char **name, char **arg);

#endif
