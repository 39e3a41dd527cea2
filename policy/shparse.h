/* A static reading of a shell script (the text of sh -c, bash -lc,
 * eval): the simple commands it runs, as far as they can be known
 * without running it. What cannot be known is said, never guessed: a
 * word whose value comes from an expansion is marked, and a construct
 * this reader does not follow (case, arrays, a command inside ${...} or
 * $((...)), an unclosed quote) makes the script opaque, which the
 * policy classes "unparsable". It reads POSIX sh and the bash forms
 * agents write ($'...', [[ ]], <(...), &>, |&, brace expansion).
 * Pure: libc only, nothing is run; not in the shim. */
#ifndef HX_POLICY_SHPARSE_H
#define HX_POLICY_SHPARSE_H

#include <stdbool.h>
#include <stddef.h>

#define HX_SHW_DYNAMIC 1u /* holds an expansion: its value is not known */
#define HX_SHW_SPLIT   2u /* an unquoted expansion: zero or more words */
/* unquoted * ? [...] or {a,b}: the paths it names (with SPLIT) */
#define HX_SHW_GLOB 4u

/* Beyond these the script is opaque ("too many ..."). */
#define HX_SH_MAX_CMDS	1024
#define HX_SH_MAX_DEPTH 8

struct hx_sh_cmd {
	const char *const *argv; /* quotes removed; argv[argc] is NULL */
	const unsigned *flags;	 /* HX_SHW_* of each word */
	size_t argc;
	/* Where it runs after the script's own cd's: "" where the script
	 * started, a path relative to that, or an absolute one; NULL when
	 * unknown (cd to an expansion, cd -, popd). */
	const char *dir;
	bool writes; /* an output redirection to a file (not /dev/null) */
	/* The function whose body ({ ... }) holds it, NULL outside one:
	 * there "$@" is what the function's callers give it. */
	const char *func;
};

struct hx_sh_script {
	struct hx_sh_cmd *cmds;
	size_t ncmds;
	const char *opaque; /* why the script cannot be read, or NULL */
	size_t opaque_at;   /* byte offset in the text where it stopped */
	struct hx_sh_mem *mem;
};

/* Reads text (len bytes; NULs end it). home is what "~" stands for
 * (NULL: unknown). On 0 out is filled, opaque or not, and must be given
 * to hx_sh_free; -ENOMEM leaves nothing to free. The commands of $(...),
 * `...` and <(...) are listed with the others; a here-document's body
 * is data, not commands. */
int hx_sh_parse(const char *text, size_t len, const char *home,
		struct hx_sh_script *out);
void hx_sh_free(struct hx_sh_script *s);

/* Splits text into words as the shell would (quotes removed) when it is
 * one simple command and nothing else: for policy examples. Returns the
 * number of words stored in words (at most max, pointing into buf of
 * bufsize bytes), or -1 when text is not one static simple command. */
long hx_sh_words(const char *text, char *buf, size_t bufsize,
		 const char **words, size_t max);

#endif
