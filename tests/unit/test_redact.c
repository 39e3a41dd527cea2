/* Redaction (supervisor/redact.h): a table of each credential format
 * and its near misses, as a text and as an argv word; the tag's HMAC
 * against another implementation's; the record layer's "redacted"
 * list; the key file; audit.redact in a policy and its errors. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/policy.h"
#include "supervisor/record.h"
#include "supervisor/redact.h"
#include "tests/unit/check_main.h"

static const uint8_t key[HX_REDACT_KEY_LEN] = {
    0,	1,  2,	3,  4,	5,  6,	7,  8,	9,  10, 11, 12, 13, 14, 15,
    16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};

/* s with each «redacted:TYPE:HASH» written «TYPE», for the table. */
static char *untag(const char *s)
{
	char *o = strdup(s), *w = o;

	while (*s) {
		const char *t =
		    strncmp(s, HX_REDACT_OPEN, strlen(HX_REDACT_OPEN))
			? NULL
			: s + strlen(HX_REDACT_OPEN);
		const char *c = t ? strchr(t, ':') : NULL;
		const char *e = c ? strstr(c, HX_REDACT_CLOSE) : NULL;

		if (!e || e - c != 1 + HX_REDACT_HASH_LEN) {
			*w++ = *s++;
			continue;
		}
		w = stpcpy(w, "\xc2\xab");
		memcpy(w, t, (size_t)(c - t));
		w = stpcpy(w + (c - t), "\xc2\xbb");
		s = e + strlen(HX_REDACT_CLOSE);
	}
	*w = '\0';
	return o;
}

static struct hx_redact *redactor(void)
{
	static const char *const names[] = {"*_PAT"};
	static const struct hx_redact_pattern pats[] = {
	    {"corp-token", "corp_[A-Za-z0-9]{12}"}};
	const struct hx_redact_conf c = {true, names, 1, pats, 1};
	struct hx_redact *r;

	ck_assert_int_eq(hx_redact_new(&c, key, &r), 0);
	return r;
}

#define GHP "ghp_0123456789abcdefghijABCDEFGHIJklmnop"
#define JWT                                                                    \
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."    \
	"dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
#define ANT                                                                    \
	"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_abcdefghij-"        \
	"KLMNOPQRSTUVWXYZ0123456789abcdefghijklmnopqrstuvwxyzAB-CDEFGHAA"
#define PEM                                                                    \
	"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbm"  \
	"UAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----"

/* (text, the text redacted with tags as «TYPE», or NULL: untouched) */
static const char *const texts[][2] = {
    /* the providers' keys, alone and inside paths and words */
    {GHP, "«github-token»"},
    {"/tmp/x/" GHP "/y", "/tmp/x/«github-token»/y"},
    {"gho_0123456789abcdefghijABCDEFGHIJklmnop", "«github-token»"},
    {"ghu_0123456789abcdefghijABCDEFGHIJklmnop", "«github-token»"},
    {"ghs_0123456789abcdefghijABCDEFGHIJklmnop", "«github-token»"},
    {"ghr_0123456789abcdefghijABCDEFGHIJklmnop", "«github-token»"},
    {"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEF",
     "«github-token»"},
    {"glpat-AbCdEfGhIjKlMnOpQrSt", "«gitlab-token»"},
    {"touch /tmp/x/" ANT, "touch /tmp/x/«anthropic-key»"},
    {"sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcdefgh", "«openai-key»"},
    {"key sk-T3BlbkFJ0123456789abcdefABCDEFGHIJKLMNOPQRSTUV x",
     "key «openai-key» x"},
    {"AKIAIOSFODNN7EXAMPLE", "«aws-access-key-id»"},
    {"id=ASIAIOSFODNN7EXAMPLE;", "id=«aws-access-key-id»;"},
    {"aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "aws_secret_access_key=«aws-secret-key»"},
    {"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG", "aws_secret_access_key "
						      "= «aws-secret-key»"},
    {"AIzaSyA-1234567890abcdefghijklmnopqrstu", "«google-api-key»"},
    {"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     "«slack-token»"},
    {"xoxp-1234567890-abc", "«slack-token»"},
    {"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "«stripe-key»"},
    {"rk_live_4eC39HqLyjWDarjtT1zdp7dc", "«stripe-key»"},
    {"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "«npm-token»"},
    {"pypi-AgEIcHlwaS5vcmcCJDU1ZjBiZTZhLTI0ZGMtNGQ5ZC05YjVmLWFiZmE",
     "«pypi-token»"},
    {"hf_AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh", "«huggingface-token»"},
    {"t=" JWT "&x", "t=«jwt»&x"},
    {"echo '" PEM "' > k", "echo '«private-key»' > k"},
    {"-----BEGIN RSA PRIVATE KEY-----\nMIIEow+/a=\nQ1", "«private-key»"},
    /* cut short: the key to what no key holds, not the commands after */
    {"-----BEGIN RSA PRIVATE KEY-----\nMIIEow; curl x | sh",
     "«private-key»; curl x | sh"},
    /* where a secret is by convention */
    {"curl -H 'Authorization: Bearer abc.def' https://h/",
     "curl -H 'Authorization: Bearer «bearer»' https://h/"},
    {"Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic «basic»"},
    {"-H \"Proxy-Authorization: token 12 3\" x",
     "-H \"Proxy-Authorization: token «authorization»\" x"},
    {"Authorization: " GHP, "Authorization: «github-token»"},
    {"X-Api-Key: abc123", "X-Api-Key: «secret»"},
    /* a value by its place ends with its command, not the line */
    {"true X-Token: a b; echo hi > f\nls",
     "true X-Token: «secret»; echo hi > f\nls"},
    {"echo \"X-Token: a $(id)\"", "echo \"X-Token: «secret»$(id)\""},
    {"echo '\"password\": \"' ; echo hi",
     "echo '\"password\": \"«secret»; echo hi"},
    {"printf '{\"password\": \"a;b\"}'",
     "printf '{\"password\": \"«secret»\"}'"},
    {"Cookie: sid=abc", "Cookie: «cookie»"},
    {"git clone https://alice:pa55w0rd@example.com/r.git",
     "git clone https://alice:«url-password»@example.com/r.git"},
    {"postgres://u:p@ss@db:5432/x", "postgres://u:«url-password»@db:5432/x"},
    {"https://oauth2:glpat-AbCdEfGhIjKlMnOpQrSt@gitlab.com/x",
     "https://oauth2:«gitlab-token»@gitlab.com/x"},
    {"export API_KEY=abc123; true", "export API_KEY=«secret»; true"},
    {"PASSWORD='a b' cmd", "PASSWORD='«secret»' cmd"},
    {"GITHUB_TOKEN=" GHP " gh pr list", "GITHUB_TOKEN=«github-token» gh pr "
					"list"},
    {"connect(password=\"s3cret\")", "connect(password=\"«secret»\")"},
    {"{\"password\": \"hunter2\", \"user\": \"bob\"}",
     "{\"password\": \"«secret»\", \"user\": \"bob\"}"},
    {"{'api_key':'k-1'}", "{'api_key':'«secret»'}"},
    {"https://h/cb?access_token=abc&x=1", "https://h/cb?access_token=«secret»&"
					  "x=1"},
    {"--client-secret=xyz", "--client-secret=«secret»"},
    {"[default]\npassword = \"x y\"\n", "[default]\npassword = \"«secret»\"\n"},
    {"A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_"
     "A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_TOKEN=x",
     "A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_"
     "A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_NAME_A_VERY_LONG_TOKEN="
     "«secret»"},
    {"sshpass -p 'pw 1' ssh h", "sshpass -p '«password»' ssh h"},
    {"cd /x && mysql -uroot -phunter2 db", "cd /x && mysql -uroot "
					   "-p«password» db"},
    {"curl -u alice:pw https://h", "curl -u alice:«password» https://h"},
    {"openssl enc -passin pass:xyz -in f", "openssl enc -passin "
					   "pass:«password» -in f"},
    {"tool --api-token tok1 go", "tool --api-token «password» go"},
    /* the policy's names and patterns */
    {"GL_PAT=xyz", "GL_PAT=«secret»"},
    {"id corp_AbCdEf012345!", "id «corp-token»!"},
    /* near misses: none of these is touched */
    {"/usr/lib/sk-foo", NULL},
    {"/usr/lib/x86_64-linux-gnu/libc.so.6", NULL},
    {"3f9a1c2e4b5d6e7f8091a2b3c4d5e6f708192a3b", NULL},
    {"ghp_short", NULL},
    {"myghp_0123456789abcdefghijABCDEFGHIJklmnop", NULL},
    {"/src/sk-this-is-a-long-file-name-without-capitals", NULL},
    {"/src/sk-abcdefghijklmnopqrstuvwxyzabcdefgh", NULL}, /* no case mix */
    {"AKIAIOSFODNN7EXAMPLEX", NULL},
    {"AIzaShort", NULL},
    {"hf_alllowercaselettersonlyandlongenough", NULL},
    {"npm_config_cache=/tmp/npm", NULL},
    {"eyJhbGciOiJIUzI1NiJ9", NULL},
    {"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----", NULL},
    {"mkdir -p /tmp/x && ssh -p 22 h", NULL},
    {"docker run -p 8080:80 img", NULL},
    {"MAX_TOKENS=4096 TOKENIZERS_PARALLELISM=false", NULL},
    {"GIT_AUTHOR_NAME=me XAUTHORITY=/x SSH_AUTH_SOCK=/tmp/a", NULL},
    {"https://github.com/user/repo ssh://git@host:22/x", NULL},
    {"[ \"$a\" = b ] && x == y", NULL},
    {"PASSWORD= true", NULL},
    {"author: me; Authorization", NULL},
    {"gh auth login --with-token < f; psql --no-password -h db", NULL},
    {"curl -u alice https://h", NULL},
    {"openssl enc -passin env:PW", NULL},
    /* not covered, as the README says */
    {"machine h login u password hunter2", NULL},
    {"password:hunter2", NULL},
    {"mycli login hunter2", NULL},
};

/* What hx_redact_* returned (ret, out) for in: untouched when want is
 * NULL, else want once the tags' hashes are taken off. Frees out. */
static void check_redacted(const char *in, const char *want, int ret, char *out)
{
	char *got;

	if (!want) {
		ck_assert_msg(ret == 0, "%s: redacted as %s", in,
			      ret > 0 ? out : "?");
	} else {
		ck_assert_msg(ret == 1, "%s: not redacted (%d)", in, ret);
		got = untag(out);
		ck_assert_msg(!strcmp(got, want), "%s:\n got %s\nwant %s", in,
			      got, want);
		free(got);
	}
	free(out);
}

START_TEST(test_texts)
{
	struct hx_redact *r = redactor();
	const char *in = texts[_i][0];
	char *out = NULL;
	int ret = hx_redact_text(r, in, &out); /* before out is read */

	check_redacted(in, texts[_i][1], ret, out);
	hx_redact_free(r);
}
END_TEST

/* Any number of secrets is each its own tag: past 32 the whole string
 * was one «many» tag, the commands around them with it. */
START_TEST(test_many_secrets_each_a_tag)
{
	struct hx_redact *r = redactor();
	char in[4096], *out = NULL, *got;
	size_t k = 0, n = 0;

	k += (size_t)snprintf(in + k, sizeof(in) - k, "echo hi > f;");
	for (int i = 0; i < 200; i++)
		k +=
		    (size_t)snprintf(in + k, sizeof(in) - k, " PASSWORD=%d", i);
	ck_assert_int_eq(hx_redact_text(r, in, &out), 1);
	got = untag(out);
	for (const char *p = got; (p = strstr(p, "=«secret»")); p++)
		n++;
	ck_assert_msg(n == 200 && !strncmp(got, "echo hi > f; PASSWORD=", 22),
		      "%zu: %.80s", n, got);
	free(got);
	free(out);
	hx_redact_free(r);
}
END_TEST

/* A path's secret ends with its name: the names beneath a directory
 * named like one are the path's. */
START_TEST(test_a_paths_secret_ends_with_its_name)
{
	struct hx_redact *r = redactor();
	char *out = NULL, *got;

	ck_assert_int_eq(hx_redact_path(r, "/p/PASSWORD=x/sub/.git", &out), 1);
	got = untag(out);
	ck_assert_str_eq(got, "/p/PASSWORD=«secret»/sub/.git");
	free(got);
	free(out);
	ck_assert_int_eq(hx_redact_path(r, "/p/" GHP "/Makefile", &out), 1);
	got = untag(out);
	ck_assert_str_eq(got, "/p/«github-token»/Makefile");
	free(got);
	free(out);
	hx_redact_free(r);
}
END_TEST

/* (argv, which word, the word redacted or NULL: untouched) */
static const struct {
	const char *argv[6];
	size_t i;
	const char *want;
} words[] = {
    {{"/bin/echo", GHP}, 1, "«github-token»"},
    {{"env", "GITHUB_TOKEN=abc def", "true"}, 1, "GITHUB_TOKEN=«secret»"},
    {{"env", "--password=a b"}, 1, "--password=«secret»"},
    {{"sshpass", "-p", "pw 1", "ssh"}, 2, "«password»"},
    {{"/usr/bin/sshpass", "-phunter2"}, 1, "-p«password»"},
    {{"mysql", "-phunter2"}, 1, "-p«password»"},
    {{"curl", "-u", "alice:pw", "https://h"}, 2, "alice:«password»"},
    {{"curl", "--user=alice:pw"}, 1, "--user=alice:«password»"},
    {{"docker", "login", "-p", "pw", "reg"}, 3, "«password»"},
    {{"smbclient", "-U", "bob%pw", "//h/s"}, 2, "bob%«password»"},
    {{"ldapsearch", "-w", "pw"}, 2, "«password»"},
    {{"mongosh", "-u", "u", "-p", "pw"}, 4, "«password»"},
    {{"zip", "-P", "pw", "a.zip"}, 2, "«password»"},
    {{"redis-cli", "-a", "pw"}, 2, "«password»"},
    {{"wget", "--http-password", "pw"}, 2, "«password»"},
    {{"sh", "-c", "export API_KEY=abc; true"},
     2,
     "export API_KEY=«secret»; true"},
    {{"bash", "-lc", "TOKEN=x cmd"}, 2, "TOKEN=«secret» cmd"},
    {{"curl", "-H", "Authorization: Bearer abc"},
     2,
     "Authorization: Bearer «bearer»"},
    /* near misses */
    {{"mkdir", "-p", "x"}, 2, NULL},
    {{"ssh", "-p", "22", "h"}, 2, NULL},
    {{"docker", "run", "-p", "8080:80"}, 3, NULL},
    {{"sshpass", "-p", "-x"}, 2, NULL},
    {{"docker", "login", "--password-stdin", "reg"}, 3, NULL},
    {{"mysql", "-p", "db"}, 2, NULL},
    {{"git", "commit", "-m", "fix"}, 3, NULL},
};

START_TEST(test_words)
{
	struct hx_redact *r = redactor();
	const char *in = words[_i].argv[words[_i].i];
	char *out = NULL;
	int ret = hx_redact_argv(r, words[_i].argv, words[_i].i, &out);

	check_redacted(in, words[_i].want, ret, out);
	hx_redact_free(r);
}
END_TEST

/* HMAC-SHA256 under the key, cut to 8 hex digits, as Python's hmac
 * module computes it: hmac.new(bytes(range(32)), m, 'sha256'). */
START_TEST(test_hash_is_hmac)
{
	struct hx_redact *r = redactor(), *other;
	uint8_t k2[HX_REDACT_KEY_LEN] = {1};
	char hex[HX_REDACT_HASH_LEN + 1], *out = NULL, *out2 = NULL;

	hx_redact_hash(r, GHP, strlen(GHP), hex);
	ck_assert_str_eq(hex, "f30ee677");
	hx_redact_hash(r, "hunter2", 7, hex);
	ck_assert_str_eq(hex, "8629d712");
	/* one secret, one tag: as a word and in a text */
	ck_assert_int_eq(hx_redact_text(r, "x " GHP, &out), 1);
	ck_assert_str_eq(out, "x «redacted:github-token:f30ee677»");
	ck_assert_int_eq(
	    hx_redact_argv(r, (const char *const[]){"sshpass", "-p", "hunter2"},
			   2, &out2),
	    1);
	ck_assert_str_eq(out2, "«redacted:password:8629d712»");
	free(out);
	/* another key, another tag */
	ck_assert_int_eq(hx_redact_new(NULL, k2, &other), 0);
	ck_assert_int_eq(hx_redact_text(other, "x " GHP, &out), 1);
	ck_assert_str_ne(out, "x «redacted:github-token:f30ee677»");
	free(out);
	free(out2);
	hx_redact_free(other);
	hx_redact_free(r);
}
END_TEST

/* The record layer: every agent string through hx_record_text and
 * hx_record_strings, the field listed, the secret nowhere. */
START_TEST(test_record_lists_what_it_redacted)
{
	const char *argv[] = {"sshpass", "-p", "hunter2", "ssh", GHP};
	json_t *rec = json_object(), *a;
	char *dump;

	hx_record_redact(redactor());
	json_object_set_new(rec, "cwd", hx_record_text(rec, "cwd", "/home/u"));
	json_object_set_new(rec, "path",
			    hx_record_text(rec, "args.path", "/tmp/\xff/" GHP));
	a = hx_record_strings(rec, "args.argv", argv, 5);
	json_object_set_new(rec, "argv", a);
	dump = json_dumps(rec, JSON_COMPACT);
	ck_assert_msg(!strstr(dump, "hunter2") && !strstr(dump, GHP), "%s",
		      dump);
	ck_assert_str_eq(json_string_value(json_array_get(a, 2)),
			 "«redacted:password:8629d712»");
	ck_assert_str_eq(json_string_value(json_array_get(a, 3)), "ssh");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "path")),
			 "/tmp/\\xff/«redacted:github-token:f30ee677»");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "cwd")),
			 "/home/u");
	/* the fields once each, in order; the escaped one too */
	free(dump);
	dump = json_dumps(json_object_get(rec, "redacted"), JSON_COMPACT);
	ck_assert_str_eq(dump, "[\"args.path\",\"args.argv\"]");
	ck_assert_str_eq(json_string_value(json_array_get(
			     json_object_get(rec, "escaped"), 0)),
			 "args.path");
	free(dump);
	json_decref(rec);
	/* none: the text as it was */
	hx_record_redact(NULL);
	rec = hx_record_text(NULL, "", GHP);
	ck_assert_str_eq(json_string_value(rec), GHP);
	json_decref(rec);
}
END_TEST

START_TEST(test_key_file)
{
	char dir[] = "/tmp/hx-redact-XXXXXX", path[64];
	uint8_t k1[HX_REDACT_KEY_LEN], k2[HX_REDACT_KEY_LEN];
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/redact.key", dir);
	ck_assert_int_eq(hx_redact_key_load(dir, k1), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(st.st_size, 65);
	ck_assert_int_eq(hx_redact_key_load(dir, k2), 0);
	ck_assert(!memcmp(k1, k2, sizeof(k1))); /* the user's, kept */
	/* one others can read is refused: a key of the session instead */
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(hx_redact_key_load(dir, k2), -EPERM);
	ck_assert(memcmp(k1, k2, sizeof(k1)));
	ck_assert_int_eq(unlink(path), 0);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_eq(write(fd, "zz\n", 3), 3);
	close(fd);
	ck_assert_int_eq(hx_redact_key_load(dir, k2), -EINVAL);
	unlink(path);
	rmdir(dir);
}
END_TEST

static struct hx_policy *load(const char *yaml)
{
	struct hx_policy_vars v = {.home = "/home/u", .cwd = "/home/u/p"};
	struct hx_policy_error err;
	struct hx_policy *p = NULL;

	ck_assert_msg(
	    !hx_policy_load_buffer("t.yaml", yaml, strlen(yaml), &v, &p, &err),
	    "%s: %s", yaml, err.message);
	return p;
}

START_TEST(test_policy_settings)
{
	struct hx_policy_vars v = {
	    .home = "/home/u", .cwd = "/home/u/p", .tmpdir = "/tmp/hx-s"};
	struct hx_policy_error err;
	struct hx_policy *p = load("version: 1\n");
	const struct hx_redact_conf *c = hx_policy_redact(p);

	ck_assert(c->enabled && !c->nenv_names && !c->npatterns);
	hx_policy_free(p);
	p = load("audit:\n  redact: false\n");
	ck_assert(!hx_policy_redact(p)->enabled);
	hx_policy_free(p);
	p = load("audit:\n  redact:\n    env_names: [\"*_PAT\", VAULT_*]\n"
		 "    patterns:\n      corp-token: 'corp_[a-z]{8}'\n");
	c = hx_policy_redact(p);
	ck_assert(c->enabled && c->nenv_names == 2 && c->npatterns == 1);
	ck_assert_str_eq(c->env_names[1], "VAULT_*");
	ck_assert_str_eq(c->patterns[0].name, "corp-token");
	ck_assert_str_eq(c->patterns[0].regex, "corp_[a-z]{8}");
	hx_policy_free(p);
	p = load("audit:\n  redact: {enabled: false}\n");
	ck_assert(!hx_policy_redact(p)->enabled);
	hx_policy_free(p);
	ck_assert_int_eq(hx_policy_load_default(&v, &p, &err), 0);
	ck_assert(hx_policy_redact(p)->enabled);
	hx_policy_free(p);
}
END_TEST

static const struct {
	const char *yaml;
	unsigned line, column;
	const char *message, *hint;
} bad[] = {
    {"audit:\n  redact: maybe\n", 2, 11, "invalid redact", "true"},
    {"audit:\n  redact: [1]\n", 2, 11, "redact must be true, false or a map",
     "env_names"},
    {"audit:\n  redact:\n    enable: true\n", 3, 5,
     "unknown key 'enable' in redact", "enabled, env_names, patterns"},
    {"audit:\n  redact:\n    env_names: ['A B']\n", 3, 18,
     "invalid variable name pattern 'A B'", "VAULT_*"},
    {"audit:\n  redact:\n    patterns: [a]\n", 3, 15,
     "patterns must be a mapping", "NAME: REGEX"},
    {"audit:\n  redact:\n    patterns:\n      Bad_Name: 'x+'\n", 4, 7,
     "invalid pattern name 'Bad_Name'", "lower-case"},
    {"audit:\n  redact:\n    patterns:\n      corp: '[a-'\n", 4, 14,
     "invalid pattern '[a-'", "POSIX extended"},
    {"audit:\n  redact:\n    patterns:\n      corp: 'a*'\n", 4, 14,
     "matches the empty text", "at least one character"},
    {"audit:\n  redact:\n    patterns:\n      a: 'x+'\n      a: 'y+'\n", 5, 7,
     "duplicate", NULL},
};

START_TEST(test_policy_errors)
{
	struct hx_policy_vars v = {.home = "/home/u", .cwd = "/home/u/p"};
	struct hx_policy_error err;
	struct hx_policy *p = NULL;
	const char *y = bad[_i].yaml;

	ck_assert_int_eq(
	    hx_policy_load_buffer("t.yaml", y, strlen(y), &v, &p, &err),
	    -EINVAL);
	ck_assert_msg(err.line == bad[_i].line && err.column == bad[_i].column,
		      "%s: %u:%u %s", y, err.line, err.column, err.message);
	ck_assert_msg(strstr(err.message, bad[_i].message), "%s: %s", y,
		      err.message);
	ck_assert_msg(!bad[_i].hint || strstr(err.hint, bad[_i].hint),
		      "%s: hint %s", y, err.hint);
}
END_TEST

static Suite *redact_suite(void)
{
	Suite *s = suite_create("redact");
	TCase *t = tcase_create("redact");

	tcase_add_loop_test(t, test_texts, 0, sizeof(texts) / sizeof(texts[0]));
	tcase_add_loop_test(t, test_words, 0, sizeof(words) / sizeof(words[0]));
	tcase_add_test(t, test_many_secrets_each_a_tag);
	tcase_add_test(t, test_a_paths_secret_ends_with_its_name);
	tcase_add_test(t, test_hash_is_hmac);
	tcase_add_test(t, test_record_lists_what_it_redacted);
	tcase_add_test(t, test_key_file);
	tcase_add_test(t, test_policy_settings);
	tcase_add_loop_test(t, test_policy_errors, 0,
			    sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, t);
	return s;
}

HX_TEST_MAIN(redact_suite)
