/* What an exec runs, understood: its argv, and the commands it runs in
 * turn as far as they can be known before they run (env X=1 git push,
 * sh -c 'cd sub && git push', xargs git push, find -exec, git -C dir,
 * eval '...'), each classed (read_only ... privilege). The exec rules
 * judge every part; the real argv stays what the kernel layer enforces,
 * so a part can only make a verdict stronger, never weaker. Internal to
 * policy/ and its tests. */
#ifndef HX_POLICY_CMDVIEW_H
#define HX_POLICY_CMDVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "policy/shparse.h"
#include "policy/policy.h"
#include "policy/policy_int.h"

#define HX_VIEW_MAX_PARTS   64
#define HX_VIEW_MAX_SCRIPTS 16

struct hx_cmd_part {
	const char *const *argv;
	const unsigned *flags; /* HX_SHW_* of each word; NULL: all literal */
	size_t argc;
	/* The executable the kernel runs: the real exec's path; NULL for
	 * a part read from its arguments (only its name is known). */
	const char *path;
	/* What it is, for the tables: the name of the file that runs when
	 * the tables know it (argv[0] "ls" of /usr/bin/git is git), else
	 * argv[0]'s (cc of x86_64-linux-gnu-gcc-12; busybox's applet) */
	const char *name;
	const char *dir; /* absolute, where it runs; NULL: unknown */
	bool writes;	 /* a redirection writes a file */
	bool wrapper;	 /* it runs the next part: the class is that one's */
	bool git_code;	 /* git -c KEY that makes git run a command */
	bool git_forces; /* git -c remote.X.push=+..., .mirror: forced */
	enum hx_cmd_class cls;
	const char *why; /* HX_CLASS_UNPARSABLE: why, static */
};

struct hx_cmd_view {
	struct hx_cmd_part parts[HX_VIEW_MAX_PARTS];
	size_t nparts;
	enum hx_cmd_class cls; /* the strongest part's */
	struct hx_sh_script scripts[HX_VIEW_MAX_SCRIPTS];
	size_t nscripts;
	struct hx_arena mem;
};

/* Builds the view of an exec (path may be NULL: argv[0] is the name;
 * cwd NULL: relative paths are unknown) and classes every part. The
 * view borrows argv and path; free it with hx_cmdview_free. Never
 * fails: what cannot be read, or memory that runs out, is a part of
 * class unparsable. */
void hx_cmdview_build(struct hx_cmd_view *v, const char *path,
		      const char *const *argv, size_t argc, const char *cwd,
		      const struct hx_workspace *ws);
void hx_cmdview_free(struct hx_cmd_view *v);

/* One row of the class table: a command, or a command's subcommand
 * (sub not NULL), and its class before its arguments refine it. */
struct hx_cmdclass_entry {
	const char *cmd, *sub;
	enum hx_cmd_class cls;
};
const struct hx_cmdclass_entry *hx_cmdclass_table(size_t *n);

/* The class of one part named name (cmdclass.c), its dir and flags
 * considered. */
enum hx_cmd_class hx_cmdclass(const struct hx_cmd_part *p, const char *name,
			      const struct hx_workspace *ws);
/* Whether the class tables know name. */
bool hx_cmdclass_known(const char *name);

/* Whether a part matches an exec pattern: literal words as
 * hx_execpat_match does; a word of unknown value matches any pattern
 * word, and one that may be several words any number of them. For deny
 * and ask: what the part might be counts. */
bool hx_execpat_match_part(const struct hx_execpat *ep,
			   const struct hx_cmd_part *p);

/* Whether an exec with argv, from cwd, is what part p showed it would
 * run: the same words, every one of them known (a shown $X or *.o is no
 * promise of what it becomes), in the same directory. For a person's
 * answer on a script that covers what the script then runs. */
bool hx_cmd_part_covers(const struct hx_cmd_part *p, const char *cwd,
			const char *const *argv, size_t argc);

/* A part as one line of text (words joined by spaces, shortened), for
 * the decision's judged_as. */
void hx_cmd_part_format(const struct hx_cmd_part *p, char *out, size_t size);

#endif
