/* What the running kernel offers the sandbox, probed with the real
 * syscalls (not guessed from the version where a probe exists). Used by
 * harness-exec at start (warnings, the session_start record) and by
 * --doctor. */
#ifndef HX_FEATURES_H
#define HX_FEATURES_H

#include <stdbool.h>
#include <stdio.h>

/* Tri-state for what only the deep probe finds out. */
enum hx_avail { HX_UNKNOWN = -1, HX_MISSING = 0, HX_AVAILABLE = 1 };

struct hx_features {
	char release[65];
	bool seccomp;		  /* filter mode, with ERRNO and KILL_PROCESS */
	bool user_notif;	  /* SECCOMP_GET_NOTIF_SIZES answers (5.0) */
	enum hx_avail listener;	  /* a listener could be made here */
	enum hx_avail addfd;	  /* SECCOMP_IOCTL_NOTIF_ADDFD (5.9) */
	enum hx_avail addfd_send; /* SECCOMP_ADDFD_FLAG_SEND (5.14) */
	enum hx_avail sync_wake;  /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6) */
	bool notify_killable;	  /* ..._FLAG_WAIT_KILLABLE_RECV (5.19) */
	char listener_err[64];	  /* why listener is missing */
	bool pidfd_open, pidfd_getfd;
	int landlock_abi; /* 0: no Landlock */
	bool nnp;	  /* PR_SET_NO_NEW_PRIVS exists */
	bool nnp_set;	  /* already set on harness-exec itself */
	bool cap_setpcap; /* may drop the bounding set and lock securebits */
	bool root;	  /* euid 0 */
	bool cgroup2, cgroup2_writable;
	char cgroup2_dir[256]; /* our own cgroup v2 directory */
};

/* Fills k. deep also forks a child that makes a throwaway listener and
 * asks it about ADDFD, ADDFD_FLAG_SEND and SYNC_WAKE_UP (about a
 * millisecond; --doctor only). Never fails: what cannot be probed is
 * reported missing (or HX_UNKNOWN when not deep). */
void hx_features_probe(struct hx_features *k, bool deep);

/* Splits "6.6.3-foo" into major and minor; 0 on success. */
int hx_features_version(const char *release, int *major, int *minor);

/* Whether this thread has capability cap in its effective set. */
bool hx_features_has_cap(int cap);

#endif
