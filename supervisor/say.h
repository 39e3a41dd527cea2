/* harness-exec's own messages on stderr. */
#ifndef HX_SAY_H
#define HX_SAY_H

/* Prints "harness-exec: " + the formatted message + a newline. */
void hx_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
