/* The shim's per-thread re-entry state (initial-exec TLS): whether this
 * thread is inside a hooked call, or inside the shim's own use of
 * libunwind/dladdr, whose calls must pass through undecided. Below the
 * client and the call-stack capture, which both set it. */
#ifndef HX_SHIM_TLS_H
#define HX_SHIM_TLS_H

enum hx_tls {
	HX_TLS_OUT = 0,	    /* not inside the shim */
	HX_TLS_IN = 1,	    /* deciding a call: a re-entry is a signal */
	HX_TLS_FOREIGN = 2, /* inside libunwind/dladdr: pass through */
};
extern __thread int hx_tls_state;

/* Marks this thread as in foreign code; returns the state to restore. */
static inline int hx_tls_foreign_enter(void)
{
	int prev = hx_tls_state;

	hx_tls_state = HX_TLS_FOREIGN;
	return prev;
}

static inline void hx_tls_foreign_leave(int prev)
{
	hx_tls_state = prev;
}

#endif
