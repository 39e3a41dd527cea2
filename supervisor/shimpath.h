/* The shim harness-exec preloads into the agent. */
#ifndef HX_SHIMPATH_H
#define HX_SHIMPATH_H

#define HX_SHIM_NAME "libharness-shim.so"

/* $HARNESS_SHIM, or the shim next to this binary, into out (PATH_MAX):
 * an absolute path LD_PRELOAD can carry (no ':' or spaces). 0 or
 * -errno. */
int hx_shim_path(char *out);

#endif
