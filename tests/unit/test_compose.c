/* Policy composition: include of files and built-in profiles, disable,
 * the rules' origins, profile detection. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "policy/policy.h"
#include "policy/policy_int.h"
#include "tests/unit/check_main.h"
#include "tests/unit/policy_vars.h"

/* Example failures, one line each, into arg. */
static void collect(const char *msg, void *arg)
{
	strcat(arg, msg);
	strcat(arg, "\n");
}

static char tmpdir_path[64];

static void write_file(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir_path, rel);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

struct origins {
	char text[4096];
};

static void note_rule(const struct hx_rule_info *r, void *arg)
{
	struct origins *o = arg;

	snprintf(o->text + strlen(o->text), sizeof(o->text) - strlen(o->text),
		 "%s@%s;", r->name, r->origin);
}

static void decide_write(const struct hx_policy *p, const char *path,
			 enum hx_verdict want, const char *rule)
{
	struct hx_event ev = {.op = HX_OP_WRITE, .path = path};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	ck_assert_msg(d.verdict == want && !strcmp(d.rule, rule),
		      "write %s: got %s by %s, want %s by %s", path,
		      hx_verdict_name(d.verdict), d.rule, hx_verdict_name(want),
		      rule);
}

static int load_file_err(const char *rel, const struct hx_policy_vars *v,
			 struct hx_policy_error *err)
{
	char path[256];
	struct hx_policy *p = NULL;
	int ret;

	snprintf(path, sizeof(path), "%s/%s", tmpdir_path, rel);
	ret = hx_policy_load_file(path, v, &p, err);
	hx_policy_free(p);
	return ret;
}

START_TEST(test_include)
{
	struct hx_policy_error err;
	struct hx_policy *p;
	struct origins o = {""};
	char path[256], buf[1024], sub[128];

	snprintf(tmpdir_path, sizeof(tmpdir_path), "/tmp/hx-inc-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tmpdir_path));
	snprintf(sub, sizeof(sub), "%s/inc", tmpdir_path);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	write_file("main.yaml", "version: 1\n"
				"include: [./inc/a.yaml, toolchains]\n"
				"files:\n"
				"  - {id: m, access: write, allow: /w/**}\n");
	/* relative to its own directory; b includes a again: skipped */
	write_file("inc/a.yaml", "version: 1\ninclude: [../b.yaml]\n"
				 "files:\n"
				 "  - {id: a, access: write, deny: /w/a/**}\n");
	write_file("b.yaml", "version: 1\ninclude: [inc/a.yaml]\n"
			     "files:\n"
			     "  - {id: b, access: write, ask: /w/b/**}\n");
	snprintf(path, sizeof(path), "%s/main.yaml", tmpdir_path);
	ck_assert_msg(hx_policy_load_file(path, &vars, &p, &err) == 0, "%s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	decide_write(p, "/w/x", HX_VERDICT_ALLOW, "m");
	decide_write(p, "/w/a/x", HX_VERDICT_DENY, "a");
	decide_write(p, "/w/b/x", HX_VERDICT_ASK, "b");
	decide_write(p, "/home/u/.npm/_cacache/x", HX_VERDICT_ALLOW,
		     "npm-cache");
	/* the included files are the policy too: protected */
	snprintf(buf, sizeof(buf), "%s/inc/a.yaml", tmpdir_path);
	decide_write(p, buf, HX_VERDICT_DENY, "harness:protect");
	snprintf(buf, sizeof(buf), "%s/b.yaml", tmpdir_path);
	decide_write(p, buf, HX_VERDICT_DENY, "harness:protect");
	hx_policy_foreach_rule(p, note_rule, &o);
	snprintf(buf, sizeof(buf), "b@%s/b.yaml:4;", tmpdir_path);
	ck_assert_msg(strstr(o.text, buf), "%s", o.text);
	ck_assert_msg(strstr(o.text, "npm-cache@profile:toolchains:"), "%s",
		      o.text);
	hx_policy_free(p);

	/* an error in an included file names it, and where it came from */
	write_file("bad.yaml", "version: 1\nfiles:\n  - deny: rel/x\n");
	write_file("inc-bad.yaml", "version: 1\ninclude:\n  - bad.yaml\n");
	ck_assert_int_eq(load_file_err("inc-bad.yaml", &vars, &err), -EINVAL);
	hx_policy_error_format(&err, buf, sizeof(buf));
	ck_assert_msg(strstr(err.file, "/bad.yaml") && err.line == 3 &&
			  err.column == 11 &&
			  strstr(err.hint, "inc-bad.yaml:3"),
		      "%s", buf);
	/* only the main policy sets the mode */
	write_file("audit.yaml", "version: 1\nmode: audit\n");
	write_file("inc-audit.yaml", "include: [audit.yaml]\n");
	ck_assert_int_eq(load_file_err("inc-audit.yaml", &vars, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "not allowed in an included") &&
			  err.line == 2 && err.column == 1,
		      "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
	/* a rule id used twice across files names the first */
	write_file("dup.yaml", "files:\n  - {id: a, deny: /q}\n");
	write_file("inc-dup.yaml", "include: [inc/a.yaml, dup.yaml]\n");
	ck_assert_int_eq(load_file_err("inc-dup.yaml", &vars, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "duplicate rule id (first at") &&
			  strstr(err.message, "inc/a.yaml:4"),
		      "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
	write_file("inc-none.yaml", "include: [nosuch, x]\n");
	ck_assert_int_eq(load_file_err("inc-none.yaml", &vars, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "no built-in profile 'nosuch'") &&
			  strstr(err.hint, "toolchains") && err.line == 1 &&
			  err.column == 11,
		      "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
	write_file("inc-missing.yaml", "include: [./missing.yaml]\n");
	ck_assert_int_eq(load_file_err("inc-missing.yaml", &vars, &err),
			 -EINVAL);
	ck_assert_msg(strstr(err.message, "cannot include"), "%s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	/* disable: drops a rule of another document; a missing id, or the
	 * session's protection, is an error */
	write_file("dis.yaml", "version: 1\ninclude: [inc/a.yaml]\n"
			       "disable: [a]\n");
	snprintf(path, sizeof(path), "%s/dis.yaml", tmpdir_path);
	ck_assert_msg(hx_policy_load_file(path, &vars, &p, &err) == 0, "%s",
		      hx_policy_error_format(&err, buf, sizeof(buf)));
	decide_write(p, "/w/a/x", HX_VERDICT_DENY, "default:file_write");
	decide_write(p, "/w/b/x", HX_VERDICT_ASK, "b");
	hx_policy_free(p);
	write_file("dis2.yaml", "files:\n  - {id: q, deny: /q}\n"
				"disable:\n  - nope\n");
	ck_assert_int_eq(load_file_err("dis2.yaml", &vars, &err), -EINVAL);
	ck_assert_msg(strstr(err.message, "disable: no rule 'nope'") &&
			  err.line == 4 && err.column == 5,
		      "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
	write_file("dis3.yaml", "disable: [harness:protect]\n");
	ck_assert_int_eq(load_file_err("dis3.yaml", &vars, &err), -EINVAL);
	write_file("dis4.yaml", "disable: [harness:ssh-agent]\n");
	ck_assert_int_eq(load_file_err("dis4.yaml", &vars, &err), 0);
	/* a buffer has no directory for relative includes */
	ck_assert_int_eq(hx_policy_load_buffer("t.yaml",
					       "include: [./x.yaml]\n", 19,
					       &vars, &p, &err),
			 -EINVAL);
	ck_assert_msg(strstr(err.message, "relative include"), "%s",
		      err.message);
	snprintf(buf, sizeof(buf), "rm -rf %s", tmpdir_path);
	ck_assert_int_eq(system(buf), 0);
}
END_TEST

/* Every built-in profile loads with the default policy, describes
 * itself, and passes its own examples. */
START_TEST(test_profiles)
{
	char buf[1024], out[8192] = "";
	size_t n = 0;

	for (size_t i = 0; hx_profile_name(i); i++, n++) {
		const char *name = hx_profile_name(i);
		struct hx_policy_vars v = vars;
		struct hx_policy_error err;
		struct hx_policy *p;

		v.include = &name;
		v.ninclude = 1;
		ck_assert_msg(hx_policy_load_default(&v, &p, &err) == 0,
			      "%s: %s", name,
			      hx_policy_error_format(&err, buf, sizeof(buf)));
		ck_assert_msg(hx_policy_check_examples(p, collect, out) == 0,
			      "%s: %s", name, out);
		hx_policy_free(p);
		ck_assert_int_eq(hx_profile_load_meta(name, &vars, &p, &err),
				 0);
		ck_assert_msg(hx_policy_description(p), "%s: no description",
			      name);
		{
			/* The meta, read from a prefix of the text, is the
			 * whole text's. */
			struct hx_policy *whole;
			size_t len;
			const char *text = hx_profile_text(name, &len);

			ck_assert_int_eq(
			    hx_policy_load_meta_buffer(name, text, len, &vars,
						       &whole, &err),
			    0);
			ck_assert_uint_eq(p->ndetect, whole->ndetect);
			for (size_t d = 0; d < p->ndetect; d++)
				ck_assert_str_eq(p->detect[d],
						 whole->detect[d]);
			ck_assert_str_eq(p->description, whole->description);
			hx_policy_free(whole);
		}
		hx_policy_free(p);
	}
	ck_assert_uint_ge(n, 1);
	ck_assert_ptr_null(hx_profile_text("nosuch", NULL));
	{
		const char *paths[] = {"/usr/bin/true"};
		const char *claude[] = {
		    "/home/u/.local/share/claude/versions/2.1.0"};

		ck_assert_ptr_null(hx_profile_detect("/home/u", paths, 1));
		ck_assert_str_eq(hx_profile_detect("/home/u", claude, 1),
				 "claude");
		ck_assert_ptr_null(hx_profile_detect("/home/v", claude, 1));
	}
}
END_TEST

struct names {
	char text[16384];
	bool allow; /* an allow rule seen, not of toolchains */
};

/* The ids of the default's own deny and ask rules, ";id;" each. */
static void note_protective(const struct hx_rule_info *r, void *arg)
{
	struct names *n = arg;
	size_t k = strlen(n->text);

	if (r->verdict != HX_VERDICT_ALLOW &&
	    !strncmp(r->origin, "<default>:", 10))
		snprintf(n->text + k, sizeof(n->text) - k, ";%s;", r->name);
}

/* Those of default-protections, which must be the same; and whether an
 * allow rule came in but the toolchains profile's, included whole. */
static void note_included(const struct hx_rule_info *r, void *arg)
{
	struct names *n = arg;
	size_t k = strlen(n->text);

	if (!strncmp(r->origin, HX_DEFAULT_PROTECTIONS, 19) &&
	    r->verdict == HX_VERDICT_ALLOW)
		n->allow = true;
	if (!strncmp(r->origin, HX_DEFAULT_PROTECTIONS ":", 20))
		snprintf(n->text + k, sizeof(n->text) - k, ";%s;", r->name);
}

static void decide_read(const struct hx_policy *p, const char *path,
			enum hx_verdict want, const char *rule)
{
	struct hx_event ev = {.op = HX_OP_READ, .path = path};
	struct hx_decision d;

	hx_policy_decide(p, &ev, &d);
	ck_assert_msg(d.verdict == want && !strcmp(d.rule, rule),
		      "read %s: got %s by %s, want %s by %s", path,
		      hx_verdict_name(d.verdict), d.rule, hx_verdict_name(want),
		      rule);
}

/* include: default-protections (what a learned policy includes): every
 * deny and ask rule of the embedded default as it is, none of its allow
 * rules or settings; a profile it includes stays includable whole. */
START_TEST(test_default_protections)
{
	static const char text[] =
	    "version: 1\nmode: audit\n"
	    "include: [default-protections, toolchains]\n"
	    "defaults:\n  file_write: allow\n";
	struct names def = {"", false}, inc = {"", false};
	struct hx_policy_error err;
	struct hx_policy *p, *d;
	char buf[1024], out[4096] = "";

	ck_assert_msg(hx_policy_load_buffer("learned.yaml", text,
					    sizeof(text) - 1, &vars, &p,
					    &err) == 0,
		      "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
	ck_assert_int_eq(hx_policy_load_default(&vars, &d, &err), 0);
	hx_policy_foreach_rule(d, note_protective, &def);
	hx_policy_foreach_rule(p, note_included, &inc);
	ck_assert_msg(strlen(def.text) > 200, "%s", def.text);
	ck_assert_msg(!strcmp(def.text, inc.text), "default %s\nincluded %s",
		      def.text, inc.text);
	ck_assert_msg(!inc.allow, "an allow rule of the default came in");
	/* its settings are not the including policy's */
	ck_assert_int_eq(hx_policy_mode(p), HX_MODE_AUDIT);
	decide_read(p, "/home/u/.ssh/id_rsa", HX_VERDICT_DENY, "ssh");
	decide_read(p, "/work/proj/src/a.c", HX_VERDICT_ALLOW,
		    "default:file_read");
	decide_write(p, "/work/proj/.git/hooks/pre-commit", HX_VERDICT_DENY,
		     "git-hooks");
	decide_write(p, "/work/proj/.envrc", HX_VERDICT_ASK, "project-autorun");
	decide_write(p, "/work/proj/x.c", HX_VERDICT_ALLOW,
		     "default:file_write");
	decide_write(p, "/home/u/.npm/_cacache/x", HX_VERDICT_ALLOW,
		     "npm-cache");
	ck_assert_msg(hx_policy_check_examples(p, collect, out) == 0, "%s",
		      out);
	hx_policy_free(p);
	hx_policy_free(d);
	{
		/* a learned policy's disable of a rule the agent's profile
		 * disables too: the profile's login-claude had no rule in a
		 * learned policy at all, which then did not load */
		static const char dis[] =
		    "version: 1\ninclude: [default-protections]\n"
		    "disable: [login-claude, ssh]\n";
		const char *claude = "claude";
		struct hx_policy_vars v = vars;

		v.include = &claude;
		v.ninclude = 1;
		ck_assert_msg(
		    hx_policy_load_buffer("learned.yaml", dis, sizeof(dis) - 1,
					  &v, &p, &err) == 0,
		    "%s", hx_policy_error_format(&err, buf, sizeof(buf)));
		decide_read(p, "/home/u/.ssh/id_rsa", HX_VERDICT_ALLOW,
			    "default:file_read");
		decide_read(p, "/home/u/.aws/credentials", HX_VERDICT_DENY,
			    "aws");
		hx_policy_free(p);
	}
}
END_TEST

/* A second mount (hx_policy_vars.alias_*) holds a network rule's unix
 * socket paths too: the system bus denied at /run/dbus was reached
 * under a second mount of /run/dbus. Abstract names stay as they are. */
START_TEST(test_mount_aliases_sockets)
{
	static const char y[] =
	    "version: 1\n"
	    "network:\n"
	    "  - {id: bus, deny: [\"unix:/run/dbus/*\", "
	    "\"unix:@/run/dbus/*\"]}\n"
	    "  - {id: run, allow: [\"unix:/run/**\", \"unix:/mnt/**\"]}\n";
	static const char *const from[] = {"/run/dbus", "/run"};
	static const char *const to[] = {"/mnt/d", "/mnt/r"};
	static const struct {
		const char *path, *rule;
	} t[] = {
	    {"/mnt/d/system_bus_socket", "bus"},
	    {"/mnt/r/dbus/system_bus_socket", "bus"},
	    {"/run/dbus/system_bus_socket", "bus"},
	    {"/mnt/r/other.sock", "run"},
	};
	struct hx_policy_vars v = vars;
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	struct hx_decision d;

	v.alias_from = from;
	v.alias_to = to;
	v.nalias = 2;
	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &v, &p, &err), 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct sockaddr_un un = {.sun_family = AF_UNIX};
		struct hx_event ev = {.op = HX_OP_CONNECT,
				      .addr = (struct sockaddr *)&un};

		snprintf(un.sun_path, sizeof(un.sun_path), "%s", t[i].path);
		ev.addrlen = (socklen_t)sizeof(un);
		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.rule && !strcmp(d.rule, t[i].rule), "%s: %s",
			      t[i].path, d.rule ? d.rule : "(none)");
	}
	hx_policy_free(p);
}
END_TEST

#define NA(a) (sizeof(a) / sizeof((a)[0]))

/* harness:protect's patterns beneath a second mount, added after its
 * own: each is matched whole (its need was read past the array's end,
 * and harness-exec died of SIGSEGV in any mount namespace where /tmp
 * had a second mount; twenty-ninth attack review, part a). */
START_TEST(test_mount_aliases_protect)
{
	static const char y[] = "version: 1\n"
				"defaults: {file_read: allow, file_write: "
				"allow}\n";
	static const char *const prot[] = {
	    "/tmp/harness-0/[!a]*/**", "/tmp/harness-0/a[!b]*/**",
	    "/tmp/harness-0/a/**", "/tmp/st/harness/**"};
	static const char *const wprot[] = {"/tmp/st/w"};
	static const char *const from[] = {"/tmp", "/tmp/st"};
	static const char *const to[] = {"/mnt/t", "/var/s"};
	static const char *const denied[] = {
	    "/mnt/t/harness-0/zz/tmp/note", "/mnt/t/harness-0/ac/tmp/n",
	    "/mnt/t/st/harness/key", "/var/s/harness/sessions/x",
	    "/tmp/harness-0/zz/tmp/note"};
	struct hx_policy_vars v = vars;
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	struct hx_decision d;

	v.protect = prot;
	v.nprotect = NA(prot);
	v.protect_write = wprot;
	v.nprotect_write = NA(wprot);
	v.alias_from = from;
	v.alias_to = to;
	v.nalias = NA(from);
	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &v, &p, &err), 0);
	for (size_t i = 0; i < NA(denied); i++) {
		struct hx_event ev = {.op = HX_OP_READ, .path = denied[i]};

		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.verdict == HX_VERDICT_DENY &&
				  !strcmp(d.rule, "harness:protect"),
			      "%s: verdict %d", denied[i], d.verdict);
	}
	for (size_t i = 0; i < 2; i++) {
		struct hx_event ev = {.op = HX_OP_WRITE,
				      .path = i ? "/var/s/w" : "/mnt/t/st/w"};

		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.verdict == HX_VERDICT_DENY, "%s", ev.path);
	}
	for (size_t i = 0; i < 2; i++) {
		struct hx_event ev = {.op = HX_OP_READ,
				      .path = i ? "/mnt/t/harness-0/ab/x"
						: "/mnt/t/other"};

		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.verdict == HX_VERDICT_ALLOW, "%s", ev.path);
	}
	hx_policy_free(p);
}
END_TEST

/* A deny rule that names a place through a symbolic link (a $HOME of
 * /home/u -> /var/home/u, a ~/.ssh linked into a dotfiles checkout)
 * holds on the real path every resolved path is judged by, when the
 * session asks for it (hx_policy_vars.real_prefixes); an allow stays. */
START_TEST(test_real_prefixes)
{
	char dir[] = "/tmp/hx-realpfx-XXXXXX", y[1024], path[512];
	char lhome[256], rhome[256], dots[256];
	struct hx_policy_vars v = vars;
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	struct hx_decision d;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(rhome, sizeof(rhome), "%s/real", dir);
	snprintf(lhome, sizeof(lhome), "%s/home", dir);
	snprintf(dots, sizeof(dots), "%s/real/dots", dir);
	ck_assert_int_eq(mkdir(rhome, 0700), 0);
	ck_assert_int_eq(mkdir(dots, 0700), 0);
	ck_assert_int_eq(symlink("real", lhome), 0);
	snprintf(path, sizeof(path), "%s/.ssh", rhome);
	ck_assert_int_eq(symlink("dots", path), 0);
	/* A link where the rule has a wildcard: ~/.config/gh. */
	snprintf(path, sizeof(path), "%s/.config", rhome);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/ghd", rhome);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/.config/gh", rhome);
	ck_assert_int_eq(symlink("../ghd", path), 0);
	snprintf(y, sizeof(y),
		 "version: 1\n"
		 "files:\n"
		 "  - {id: ssh, deny: [\"%s/.ssh/**\"]}\n"
		 "  - {id: rc, deny: [\"%s/.bash*\"]}\n"
		 "  - {id: gh, deny: [\"%s/.config/*/hosts.yml\"]}\n"
		 "  - {id: all, allow: [\"%s/**\"]}\n",
		 lhome, lhome, lhome, dir);
	v.real_prefixes = true;
	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &v, &p, &err), 0);
	static const struct {
		const char *rest, *rule;
	} t[] = {
	    /* through both links (a path is judged resolved too) */
	    {"real/dots/authorized_keys", "ssh"},
	    {"home/.ssh/config", "ssh"},
	    {"real/.bashrc", "rc"},
	    {"real/ghd/hosts.yml", "gh"},
	    {"real/notes", "all"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		struct hx_event ev = {.op = HX_OP_WRITE, .path = path};

		snprintf(path, sizeof(path), "%s/%s", dir, t[i].rest);
		hx_policy_decide(p, &ev, &d);
		ck_assert_msg(d.rule && !strcmp(d.rule, t[i].rule), "%s: %s",
			      t[i].rest, d.rule ? d.rule : "(none)");
	}
	hx_policy_free(p);
	/* Without it (the policy tools): as written. */
	v.real_prefixes = false;
	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &v, &p, &err), 0);
	snprintf(path, sizeof(path), "%s/real/.bashrc", dir);
	hx_policy_decide(p, &(struct hx_event){.op = HX_OP_WRITE, .path = path},
			 &d);
	ck_assert_str_eq(d.rule, "all");
	hx_policy_free(p);
	snprintf(path, sizeof(path), "%s/real/.ssh", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/real/.config/gh", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/real/.config", dir);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/real/ghd", dir);
	rmdir(path);
	unlink(lhome);
	rmdir(dots);
	rmdir(rhome);
	rmdir(dir);
}
END_TEST

static Suite *compose_suite(void)
{
	Suite *s = suite_create("compose");
	TCase *tc = tcase_create("compose");

	tcase_add_test(tc, test_include);
	tcase_add_test(tc, test_mount_aliases_sockets);
	tcase_add_test(tc, test_mount_aliases_protect);
	tcase_add_test(tc, test_real_prefixes);
	tcase_add_test(tc, test_profiles);
	tcase_add_test(tc, test_default_protections);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(compose_suite)
