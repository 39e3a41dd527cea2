/* harness-exec's side of the git plugin (gitapi.h): the worktree.h and
 * wtcli.h functions, forwarded to libharness-git.so, which is loaded
 * from harness-exec's own directory on first use. A NULL worktree needs
 * no plugin: sessions without --worktree never load libgit2. Linked into
 * harness-exec only (the plugin, the tests and harness-audit have the
 * real functions). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/git/gitapi.h"
#include "supervisor/git/wtcli.h"

#define PLUGIN_NAME "libharness-git.so"

static const struct hx_git_api *api;
static char why[PATH_MAX + 64];

/* The plugin next to /proc/self/exe, or NULL with the reason in why. */
static const struct hx_git_api *load(void)
{
	char path[PATH_MAX];
	ssize_t n;
	char *slash;
	void *h;
	const struct hx_git_api *a;

	if (api)
		return api;
	n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	if (n <= 0) {
		snprintf(why, sizeof(why), "/proc/self/exe: %s",
			 strerror(errno));
		return NULL;
	}
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash ||
	    (size_t)(slash - path) + sizeof(PLUGIN_NAME) + 1 > sizeof(path)) {
		snprintf(why, sizeof(why), "%.200s: no directory", path);
		return NULL;
	}
	strcpy(slash + 1, PLUGIN_NAME);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	a = h ? dlsym(h, "hx_git_api") : NULL;
	if (!a || a->version != HX_GIT_API_VERSION) {
		snprintf(why, sizeof(why), "%s",
			 h && a ? "version mismatch" : dlerror());
		if (h)
			dlclose(h);
		return NULL;
	}
	api = a; /* never unloaded: its functions are hooked in */
	return api;
}

bool hx_wtcli_is_command(const char *a)
{
	return a && (!strcmp(a, "checkpoint") || !strcmp(a, "restore") ||
		     !strcmp(a, "gc"));
}

int hx_wtcli(int argc, char *const *argv, FILE *out, FILE *err)
{
	const struct hx_git_api *a = load();

	if (!a) {
		fprintf(err, "harness-exec: %s needs the git plugin: %s\n",
			argv[1], why);
		return 1;
	}
	return a->wtcli(argc, argv, out, err);
}

int hx_worktree_open(const struct hx_worktree_opts *o, struct hx_worktree **out,
		     char *err, size_t errlen)
{
	const struct hx_git_api *a = load();

	*out = NULL;
	if (!a) {
		snprintf(err, errlen, "--worktree needs the git plugin: %s",
			 why);
		return -ENOENT;
	}
	return a->worktree_open(o, out, err, errlen);
}

int hx_git_hidden_changes(const char *dir, const struct timespec *since,
			  const char *const *ignores, size_t nignores,
			  struct json_t **out, size_t *unchecked, char *err,
			  size_t errlen)
{
	const struct hx_git_api *a = load();

	*out = NULL;
	*unchecked = 0;
	if (!a) {
		snprintf(err, errlen, "the git plugin: %s", why);
		return -ENOENT;
	}
	return a->hidden_changes(dir, since, ignores, nignores, out, unchecked,
				 err, errlen);
}

/* With a worktree, the plugin is loaded: api is set. */

const char *hx_worktree_path(const struct hx_worktree *w)
{
	return api->worktree_path(w);
}

const char *hx_worktree_cwd(const struct hx_worktree *w)
{
	return api->worktree_cwd(w);
}

void hx_worktree_policy_vars(const struct hx_worktree *w,
			     struct hx_policy_vars *v)
{
	if (w)
		api->worktree_policy_vars(w, v);
}

int hx_worktree_start(struct hx_worktree *w, struct hx_pipeline *pl,
		      struct hx_server *srv)
{
	return w ? api->worktree_start(w, pl, srv) : 0;
}

void hx_worktree_finish(struct hx_worktree *w)
{
	if (w)
		api->worktree_finish(w);
}

void hx_worktree_end_fields(const struct hx_worktree *w, struct json_t *rec)
{
	if (w)
		api->worktree_end_fields(w, rec);
}

int hx_worktree_result(struct hx_worktree *w, struct hx_audit *audit,
		       char *const *cmd, int ncmd, int code)
{
	return w ? api->worktree_result(w, audit, cmd, ncmd, code) : 0;
}

void hx_worktree_free(struct hx_worktree *w)
{
	if (w)
		api->worktree_free(w);
}

void hx_worktree_control(struct hx_worktree *w, const char *request,
			 char *reply, size_t size)
{
	if (w)
		api->worktree_control(w, request, reply, size);
	else
		snprintf(reply, size, "error no worktree");
}

int hx_git_plugin_load(char *err, size_t errlen)
{
	if (load())
		return 0;
	snprintf(err, errlen, "the git plugin: %s", why);
	return -ENOENT;
}

int hx_git_contains(const char *dir, const char *was, const char *now)
{
	const struct hx_git_api *a = load();

	return a ? a->contains(dir, was, now) : -ENOENT;
}

size_t hx_objfix_sweep(const char *objects, const struct timespec *since)
{
	const struct hx_git_api *a = load();

	return a ? a->objfix_sweep(objects, since) : 0;
}
