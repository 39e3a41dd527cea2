/* Second mounts of one directory; see mountalias.h. */
#define _GNU_SOURCE
#include "supervisor/mountalias.h"

#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/path.h"
#include "policy/policy.h"
#include "common/glob.h"
#include "supervisor/session.h"

#define MAX_MOUNTS 512

struct mnt {
	char dev[32];
	char root[PATH_MAX], point[PATH_MAX];
};

void hx_mountinfo_unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static bool parse(char *line, struct mnt *m)
{
	char *save, *f[5];
	size_t i;

	for (i = 0; i < 5; i++)
		if (!(f[i] = strtok_r(i ? NULL : line, " \n", &save)))
			return false;
	hx_mountinfo_unescape(f[3]);
	hx_mountinfo_unescape(f[4]);
	return snprintf(m->dev, sizeof(m->dev), "%s", f[2]) <
		   (int)sizeof(m->dev) &&
	       snprintf(m->root, sizeof(m->root), "%s", f[3]) <
		   (int)sizeof(m->root) &&
	       snprintf(m->point, sizeof(m->point), "%s", f[4]) <
		   (int)sizeof(m->point) &&
	       m->root[0] == '/' && m->point[0] == '/';
}

/* The rest of path beneath dir ("" for dir itself), or NULL. */
static const char *beneath(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1)
		return path + 1;
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path[n] ? path + n + 1 : path + n;
}

static void add(struct hx_mountalias *m, const struct mnt *a,
		const struct mnt *b)
{
	char from[PATH_MAX * 2], norm[PATH_MAX];
	const char *rest = beneath(b->root, a->root);

	if (!rest || m->n == HX_MOUNTALIAS_MAX)
		return;
	snprintf(from, sizeof(from), "%s/%s", a->point, rest);
	if (hx_path_normalize(NULL, from, norm, sizeof(norm)) < 0 ||
	    !strcmp(norm, b->point))
		return; /* the same place */
	if (hx_glob_escape(b->point, m->to[m->n], PATH_MAX))
		return;
	snprintf(m->from[m->n], PATH_MAX, "%s", norm);
	for (size_t i = 0; i < m->n; i++)
		if (!strcmp(m->from[i], m->from[m->n]) &&
		    !strcmp(m->to[i], m->to[m->n]))
			return;
	m->fromp[m->n] = m->from[m->n];
	m->top[m->n] = m->to[m->n];
	m->n++;
}

void hx_mountalias_find(const char *mountinfo, struct hx_mountalias *m)
{
	struct mnt *ms = calloc(MAX_MOUNTS, sizeof(*ms));
	char *text = NULL, *line, *save;
	size_t n = 0, cap = 0;
	FILE *f;

	m->n = m->nmounts = 0;
	if (!ms)
		return;
	if (mountinfo) {
		text = strdup(mountinfo);
	} else if ((f = fopen("/proc/self/mountinfo", "re"))) {
		ssize_t k = getdelim(&text, &cap, '\0', f);

		if (k < 0) {
			free(text);
			text = NULL;
		}
		fclose(f);
	}
	for (line = text ? strtok_r(text, "\n", &save) : NULL;
	     line && n < MAX_MOUNTS; line = strtok_r(NULL, "\n", &save))
		if (parse(line, &ms[n]))
			n++;
	/* Each ordered pair of mounts of one device whose roots nest: a's
	 * path for b's root is also b's mount point. */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < n; j++)
			if (i != j && !strcmp(ms[i].dev, ms[j].dev))
				add(m, &ms[i], &ms[j]);
	free(text);
	free(ms);
	m->nmounts = m->n;
}

void hx_mountalias_vars(const struct hx_mountalias *m, struct hx_policy_vars *v)
{
	v->alias_from = m->fromp;
	v->alias_to = m->top;
	v->nalias = m->n;
}

void hx_mountalias_home(struct hx_mountalias *m, const char *home)
{
	char norm[PATH_MAX], buf[4096], *real = NULL, *hreal = NULL;
	struct passwd pw, *r = NULL;

	if (!home || home[0] != '/' || m->n == HX_MOUNTALIAS_MAX ||
	    hx_path_normalize(NULL, home, norm, sizeof(norm)) < 0 ||
	    getpwuid_r(getuid(), &pw, buf, sizeof(buf), &r) || !r ||
	    !r->pw_dir || r->pw_dir[0] != '/' ||
	    !(real = realpath(r->pw_dir, NULL)) || !strcmp(real, "/"))
		goto out;
	/* The same directory by another name is rebase_real's (the policy
	 * load); another directory is the account's own, whose secrets a
	 * HOME set elsewhere (sudo keeping the caller's, a fake home of
	 * the user's) left unnamed: /root/.ssh read by a root agent. */
	hreal = realpath(norm, NULL);
	if ((hreal && !strcmp(hreal, real)) ||
	    hx_glob_escape(real, m->to[m->n], PATH_MAX))
		goto out;
	snprintf(m->from[m->n], PATH_MAX, "%s", norm);
	m->fromp[m->n] = m->from[m->n];
	m->top[m->n] = m->to[m->n];
	m->n++;
out:
	free(real);
	free(hreal);
}
