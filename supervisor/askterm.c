/* The questions on harness-exec's terminal; see askterm.h. */
#define _GNU_SOURCE
#include "supervisor/askterm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <unistd.h>

#include "common/notice.h"
#include "common/sbuf.h"
#include "supervisor/ask.h"
#include "supervisor/askuser.h"
#include "supervisor/kernel/execgate.h"
#include "supervisor/pipeline.h"
#include "supervisor/proc.h"
#include "supervisor/server.h"

#define PROMPT_MAX  32768 /* the agent's question: 4,000 characters */
#define CALL_LINE   24576 /* a call's line: askshow.c shows more whole */
#define PROMPT_TAIL 512	  /* kept for how to answer, after the text */
#define GATHER_MS   150
#define STOPPED_MAX 256
#define ELDERS_MAX  8 /* elders_note */
#define HELD_MAX    1024
#define HOLD_PASSES 20 /* looks at the tree until it is at rest */
#define TREE_MAX    4096

/* The keys and what they answer. */
static const struct {
	char key;
	enum hx_verdict v;
	enum hx_ask_scope scope;
	const char *word;
} keys[] = {
    {'o', HX_VERDICT_ALLOW, HX_ASK_ONCE, "allowed once"},
    {'s', HX_VERDICT_ALLOW, HX_ASK_SESSION, "allowed for the session"},
    {'a', HX_VERDICT_ALLOW, HX_ASK_ALWAYS, "allowed always"},
    {'d', HX_VERDICT_DENY, HX_ASK_ONCE, "denied"},
    {'n', HX_VERDICT_DENY, HX_ASK_ONCE, "denied"},
    {'q', HX_VERDICT_DENY, HX_ASK_ONCE, "denied"},
    {'\003', HX_VERDICT_DENY, HX_ASK_ONCE, "denied"}, /* ^C */
    {'\033', HX_VERDICT_DENY, HX_ASK_ONCE, "denied"}, /* Esc */
    {'D', HX_VERDICT_DENY, HX_ASK_ALWAYS, "denied always"},
};
#define NKEYS	  (sizeof(keys) / sizeof(keys[0]))
#define ELSEWHERE 'x'	 /* answered elsewhere: the helper ends */
#define READY	  'r'	 /* the helper holds the terminal */
#define GO	  'g'	 /* the question may be put */
#define ANSWER	  'A'	 /* then the answer to the agent's question */
#define DECLINE	  '\033' /* Esc: the agent's question declined */

struct hx_askterm {
	struct hx_source src; /* the helper's socket, while one runs */
	struct hx_ask *a;
	struct hx_server *srv;
	int tty; /* -1: none */
	bool quiet, broken;
	unsigned shown;		 /* the batch on the screen, or 0 */
	unsigned upto;		 /* its last question when it was put */
	struct hx_source gather; /* a timerfd: questions that come together */
	bool gathering;
	unsigned hinted; /* the last batch a line was printed for */
	pid_t helper;
	int helper_fd; /* its pidfd: the gate's tracer may reap it first */
	bool ready;    /* the helper holds the terminal */
	dev_t rdev;    /* the terminal's device (/dev/tty is another), or 0 */
	struct hx_proc stopped[STOPPED_MAX]; /* before the question */
	size_t nstopped;
	struct hx_proc held[HELD_MAX]; /* stopped while it is up */
	size_t nheld;
	/* Above harness-exec in its process group (elders_note) */
	struct hx_proc elders[ELDERS_MAX];
	bool elder_stopped[ELDERS_MAX]; /* before the question */
	size_t nelders;
	struct hx_pipeline *pl;
	struct hx_execgate *const *gate; /* the session's, once started */
	bool gate_held;			 /* hold_users took its hold */
};

static bool stopped_state(char s)
{
	return s == 'T' || s == 't';
}

/* The processes above harness-exec in its own process group: the
 * client that started harness-mcp without a group of its own (Claude
 * Code, whose TUI reads the terminal), a wrapper script. Not the
 * agent's, but the helper takes the terminal from their group too, and
 * one that reads it meanwhile stops (SIGTTIN); nothing would continue
 * it once the terminal is theirs again (elders_continue). */
static void elders_note(struct hx_askterm *t)
{
	pid_t pg = getpgrp(), p = getppid();
	struct hx_procstat st;

	for (t->nelders = 0; p > 1 && t->nelders < ELDERS_MAX &&
			     !hx_proc_stat(p, &st) && st.pgrp == pg;
	     p = st.ppid) {
		t->elders[t->nelders] = (struct hx_proc){p, st.starttime};
		t->elder_stopped[t->nelders++] = stopped_state(st.state);
	}
}

static void elders_continue(struct hx_askterm *t)
{
	struct hx_procstat st;

	for (size_t i = 0; i < t->nelders; i++)
		if (!t->elder_stopped[i] &&
		    !hx_proc_stat(t->elders[i].pid, &st) && st.state == 'T')
			hx_proc_signal(&t->elders[i], SIGCONT);
	t->nelders = 0;
}

static int key_index(char c)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (keys[i].key == c)
			return (int)i;
	return -1;
}

/* ---- the helper (a forked child: async-signal-safe calls only) ---- */

static void put(int fd, const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* The next byte typed, into *c: 1; 0 when harness-exec says the
 * question is answered elsewhere (or is gone); -1 when the terminal
 * is. */
static int next_byte(int tty, int sock, char *c)
{
	struct pollfd p[2] = {{.fd = tty, .events = POLLIN},
			      {.fd = sock, .events = POLLIN}};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (p[1].revents)
			return 0;
		if (p[0].revents & (POLLHUP | POLLERR | POLLNVAL))
			return -1;
		if (read(tty, c, 1) == 1)
			return 1;
	}
}

/* Choice k of uq, picked: shown, and into msg as ANSWER and its text. */
static size_t pick(int tty, const struct hx_ask_question *uq, int k, char *msg,
		   size_t size)
{
	char shown[PROMPT_TAIL];
	struct hx_sbuf b = {shown, sizeof(shown), 0};
	size_t n = strlen(uq->choices[k]);

	hx_askuser_put_text(&b, uq->choices[k], NULL);
	put(tty, shown);
	put(tty, "\n");
	if (n + 2 > size)
		n = size - 2;
	msg[0] = ANSWER;
	memcpy(msg + 1, uq->choices[k], n);
	return n + 1;
}

/* Rubs out the last character of the *n bytes typed at msg + 1. */
static void rub_out(int tty, const char *msg, size_t *n)
{
	if (!*n)
		return;
	while (*n && ((unsigned char)msg[(*n)--] & 0xc0) == 0x80)
		;
	put(tty, "\b \b");
}

/* The answer to the agent's question uq, typed (the terminal echoes
 * nothing: each byte is echoed here), into msg: ANSWER and its text
 * (a choice's when uq has choices), or one byte: DECLINE, ELSEWHERE, or
 * NUL when the terminal is gone. A digit picks a choice at once when
 * it cannot begin one's text; Enter ends a line, which must then be a
 * choice's number or text; Backspace rubs out a character, ^U the line;
 * Esc or ^C declines. Returns the message's length. */
static size_t read_answer(int tty, int sock, const struct hx_ask_question *uq,
			  char *msg, size_t size)
{
	char c, why[PROMPT_TAIL];
	size_t n = 0; /* typed, at msg + 1 */
	int k, r;

	for (;;) {
		if ((r = next_byte(tty, sock, &c)) <= 0) {
			if (!r)
				put(tty, "answered elsewhere\n");
			msg[0] = r ? '\0' : ELSEWHERE;
			return 1;
		}
		if (c == '\033' || c == '\003') {
			put(tty, "\ndeclined\n");
			msg[0] = DECLINE;
			return 1;
		}
		if ((c == '\r' || c == '\n') && n) {
			msg[n + 1] = '\0';
			if ((k = hx_askuser_choice(uq, msg + 1)) >= 0) {
				put(tty, "\n  ");
				return pick(tty, uq, k, msg, size);
			}
			if (!hx_askuser_check(uq, msg + 1, why, sizeof(why))) {
				put(tty, "\n");
				msg[0] = ANSWER;
				return n + 1;
			}
			put(tty, "\n  ");
			put(tty, why);
			put(tty, "; again: ");
			n = 0;
		} else if (c == 0x7f || c == '\b') {
			rub_out(tty, msg, &n);
		} else if (c == 0x15) { /* ^U */
			while (n)
				rub_out(tty, msg, &n);
		} else if (!n && hx_askuser_digit_picks(uq) && c >= '1' &&
			   c < '1' + (int)uq->nchoices) {
			return pick(tty, uq, c - '1', msg, size);
		} else if ((unsigned char)c < 0x20) {
			/* another control key: no part of an answer */
		} else if (n + 2 >= size || n >= HX_ASK_ANSWER_MAX) {
			put(tty, "\a");
		} else {
			msg[++n] = c;
			if (write(tty, &c, 1) < 0) {
				/* the next read says what became of it */
			}
		}
	}
}

/* A call's question: one key, into *c; the key's index, or -1.
 * deny_only: a key that allows is none. */
static int read_key(int tty, int sock, char *c, bool deny_only)
{
	int k = -1, r;

	while (k < 0) {
		if ((r = next_byte(tty, sock, c)) == 0) {
			*c = ELSEWHERE;
			put(tty, "answered elsewhere\n");
		}
		if (r <= 0)
			break;
		k = key_index(*c);
		if (k >= 0 && deny_only && keys[k].v == HX_VERDICT_ALLOW)
			k = -1;
	}
	if (k >= 0) {
		put(tty, keys[k].word);
		put(tty, "\n");
	}
	return k;
}

/* uq: the agent's question (then a line is read), or NULL (a key;
 * deny_only: a key that denies). */
static void __attribute__((noreturn))
helper(int tty, int sock, const char *prompt, const struct hx_ask_question *uq,
       bool deny_only)
{
	struct termios saved, t;
	sigset_t block;
	pid_t fg = tcgetpgrp(tty);
	char c = 0, msg[HX_ASK_ANSWER_MAX + 2];
	size_t n = 1;

	/* A process group of its own in the foreground: the agent's are in
	 * the background while the question is up. */
	sigemptyset(&block);
	sigaddset(&block, SIGTTOU);
	sigaddset(&block, SIGTTIN);
	sigaddset(&block, SIGTSTP);
	sigprocmask(SIG_BLOCK, &block, NULL);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	if (fg <= 0 || setpgid(0, 0) || tcgetattr(tty, &saved) ||
	    tcsetpgrp(tty, getpid()))
		_exit(1);
	t = saved;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO | ISIG | IEXTEN);
	t.c_lflag |= TOSTOP;
	t.c_iflag &= ~(tcflag_t)IXON;
	t.c_oflag |= OPOST | ONLCR;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	/* TCSAFLUSH: what was typed before is no answer to this. */
	tcsetattr(tty, TCSAFLUSH, &t);
	/* Ready: harness-exec stops the agent's reads that began before
	 * (kick_readers), then says go. */
	if (write(sock, (char[]){READY}, 1) != 1 || read(sock, &c, 1) != 1) {
		tcsetattr(tty, TCSANOW, &saved);
		tcsetpgrp(tty, fg);
		_exit(1);
	}
	tcflush(tty, TCIFLUSH);
	put(tty, prompt);
	if (uq) {
		n = read_answer(tty, sock, uq, msg, sizeof(msg));
	} else {
		read_key(tty, sock, &c, deny_only);
		msg[0] = c;
	}
	tcsetattr(tty, TCSANOW, &saved);
	tcsetpgrp(tty, fg);
	if (write(sock, msg, n) < 0) {
		/* harness-exec is gone: nothing to answer */
	}
	_exit(0);
}

/* ---- harness-exec's side ---- */

/* Whether process group pg is harness-exec's or one of the agent's: a
 * shell that took the terminal back from a session started in the
 * background is not asked over. */
static bool ours(pid_t pg)
{
	return pg == getpgrp() || hx_proc_descends(pg, getpid());
}

/* The processes of the tree stopped now (T, or t for the gate's). */
static size_t stopped_now(struct hx_proc *out, size_t max)
{
	static struct hx_proc all[TREE_MAX];
	size_t n = hx_proc_descendants(getpid(), all, TREE_MAX), k = 0;
	struct hx_procstat st;

	for (size_t i = 0; i < n && k < max; i++)
		if (!hx_proc_stat(all[i].pid, &st) && stopped_state(st.state))
			out[k++] = all[i];
	return k;
}

/* Continues what stopped while the question held the terminal (a read
 * or a write of it); what was stopped before stays so. */
static void continue_stopped(struct hx_askterm *t)
{
	struct hx_proc now[STOPPED_MAX];
	size_t n = stopped_now(now, STOPPED_MAX);

	for (size_t i = 0; i < n; i++) {
		bool before = false;

		for (size_t j = 0; j < t->nstopped && !before; j++)
			before = t->stopped[j].pid == now[i].pid &&
				 t->stopped[j].starttime == now[i].starttime;
		if (!before)
			hx_proc_signal(&now[i], SIGCONT);
	}
}

/* Whether process pid of the agent's is held: stopped, or its SIGSTOP
 * still pending (a thread in a syscall stops on its way out). */
static bool held_now(pid_t pid)
{
	struct hx_procstat st;
	struct hx_procsignals sg;

	if (hx_proc_stat(pid, &st))
		return true; /* gone */
	return stopped_state(st.state) ||
	       (!hx_proc_signals(pid, &sg) &&
		((sg.shared | sg.pending) & (1ULL << (SIGSTOP - 1))));
}

/* A one-thread process whose thread waits in the kernel for a question:
 * it can do nothing else, and a stop would interrupt that wait (the
 * call would be made, and asked, again). */
static bool blocked_asker(const struct hx_askterm *t, pid_t pid)
{
	struct hx_procstat st;

	return hx_ask_waits_in_kernel(t->a, pid) && !hx_proc_stat(pid, &st) &&
	       st.threads == 1;
}

/* Whether pid is a tracee of the exec gate, which holds it now. */
static bool gate_holds(const struct hx_askterm *t, pid_t pid)
{
	struct hx_procstatus st;

	return t->gate_held && !hx_proc_status(pid, &st) && st.tracer &&
	       st.tracer == hx_execgate_tracer(*t->gate);
}

/* One look at the tree: each process of the agent's (under more
 * seccomp filters than ours) but the helper, a blocked asker that is
 * not held and one the exec gate holds is stopped; *stopped: some were.
 * false: the tree is more than this counts. */
static bool hold_pass(struct hx_askterm *t, int filters, bool *stopped)
{
	static struct hx_proc all[TREE_MAX];
	size_t n = hx_proc_descendants(getpid(), all, TREE_MAX), k;

	if (n >= TREE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (all[i].pid == t->helper || gate_holds(t, all[i].pid) ||
		    !hx_proc_confined(all[i].pid, filters) ||
		    blocked_asker(t, all[i].pid) || held_now(all[i].pid))
			continue;
		for (k = 0;
		     k < t->nheld && (t->held[k].pid != all[i].pid ||
				      t->held[k].starttime != all[i].starttime);
		     k++)
			;
		if (k == HELD_MAX)
			return false;
		if (k == t->nheld)
			t->held[t->nheld++] = all[i];
		hx_proc_signal(&all[i], SIGSTOP);
		*stopped = true;
	}
	return true;
}

/* While the question is up, every process of the agent's tree is
 * stopped (SIGSTOP), but those that wait on a question in the kernel:
 * job control alone does not hold the terminal, since a read begun
 * before the helper took it is not looked at again, and a process that
 * ignores SIGTTOU writes (and sets modes, takes the foreground) from
 * the background. Every process, not only those whose fds show the
 * terminal: one held it in flight on a socket of its own (SCM_RIGHTS),
 * where no fd table shows it, another's fds were not ours to read
 * (non-dumpable), and one that holds none continued (SIGCONT) one that
 * was stopped: each drew a question of its own over the real one
 * (twenty-first attack review). Looked at again until a look stops
 * none. Nothing opens the terminal anew meanwhile (pl->held_tty, rule
 * harness:question-up). Each is continued after (release_users).
 * A stop by SIGSTOP is undone by any SIGCONT, and the kernel makes one
 * for a process of the agent's with none of them running: its own
 * POSIX timer's (timer_create, SIGEV_SIGNAL), which continued it while
 * the question was up (twenty-second attack review). So the tree is
 * held by the exec gate first where there is one: a ptrace stop ends
 * only by its tracer, a new tracee's first stop is kept too, and a
 * blocked asker stops once its call returns; SIGSTOP is for what the
 * gate does not trace.
 * false: the tree is more than this counts, or does not come to rest,
 * and the question is not put on the terminal. */
static bool hold_users(struct hx_askterm *t)
{
	struct hx_procstatus self;
	int filters = hx_proc_status(getpid(), &self) ? -1 : self.filters;

	t->nheld = 0;
	if (!t->rdev)
		return true;
	t->pl->held_tty = t->rdev;
	t->gate_held = t->gate && *t->gate && !hx_execgate_hold(*t->gate, true);
	for (int pass = 0; pass < HOLD_PASSES; pass++) {
		bool stopped = false;

		if (!hold_pass(t, filters, &stopped))
			return false;
		if (!stopped)
			return true;
		usleep(1000);
	}
	return false;
}

/* SIGCONT to each process the gate holds: a stop signal queued to it
 * while it was held (the SIGTTIN a read of the terminal by another of
 * its process group sends the whole group) is taken back, as SIGCONT
 * takes back every one; delivered after the gate lets go, it would stop
 * that process for good, after continue_stopped has looked. */
static void continue_gate_held(struct hx_askterm *t)
{
	static struct hx_proc all[TREE_MAX];
	size_t n = hx_proc_descendants(getpid(), all, TREE_MAX);

	for (size_t i = 0; i < n && i < TREE_MAX; i++)
		if (all[i].pid != t->helper && gate_holds(t, all[i].pid))
			hx_proc_signal(&all[i], SIGCONT);
}

/* SIGCONT before the gate lets go: it takes back a SIGSTOP still queued
 * to a process the gate held (a zombie leader's threads), which
 * delivered after it would stop that process for good. */
static void release_users(struct hx_askterm *t)
{
	t->pl->held_tty = 0;
	for (size_t i = 0; i < t->nheld; i++)
		hx_proc_signal(&t->held[i], SIGCONT);
	t->nheld = 0;
	if (t->gate_held) {
		continue_gate_held(t);
		hx_execgate_hold(*t->gate, false);
	}
	t->gate_held = false;
}

/* The agent's question uq (d: its description, redacted) on the
 * terminal: its text, its lines indented, its choices numbered, how to
 * answer; that last part always fits. */
static void agent_prompt(const struct hx_ask_question *uq, json_t *d,
			 unsigned id, char *buf, size_t size)
{
	struct hx_sbuf b = {buf, size - PROMPT_TAIL, 0};
	json_t *c, *choices = json_object_get(d, "choices");
	const char *text = json_string_value(json_object_get(d, "question"));
	json_int_t left = json_integer_value(json_object_get(d, "timeout_s"));
	size_t i;

	hx_sbuf_put(&b, "\n\033[1mharness: ask ");
	hx_sbuf_put_uint(&b, id);
	hx_sbuf_put(&b, ", a question from the agent:\033[0m\n  ");
	hx_askuser_put_text(&b, text ? text : "", "\n  ");
	hx_sbuf_put(&b, "\n");
	json_array_foreach(choices, i, c)
	{
		hx_sbuf_put(&b, "  ");
		hx_sbuf_put_uint(&b, i + 1);
		hx_sbuf_put(&b, ") ");
		hx_askuser_put_text(
		    &b, json_string_value(c) ? json_string_value(c) : "", " ");
		hx_sbuf_put(&b, "\n");
	}
	b.cap = size;
	if (hx_askuser_digit_picks(uq))
		hx_sbuf_put(&b, "  a digit picks a choice");
	else if (uq->nchoices)
		hx_sbuf_put(&b, "  type a choice's number or text and Enter");
	else
		hx_sbuf_put(&b, "  type your answer and Enter");
	hx_sbuf_put(&b, "; Esc declines (cancelled in ");
	hx_sbuf_put_uint(&b, left > 0 ? (uint64_t)left : 0);
	hx_sbuf_put(&b, " s): ");
}

/* A call's question on the terminal; false when its line does not show
 * the call whole (an argv word or the environment cut, variables left
 * out: a padding of harmless ones sorted first hid GIT_SSH_COMMAND,
 * twenty-second attack review): then only a key that denies is taken,
 * and the prompt says where to read it all and answer. */
static bool prompt_of(struct hx_askterm *t, unsigned id, char *buf, size_t size)
{
	json_t *d = hx_ask_describe(t->a, id), *p;
	const struct hx_ask_question *uq = hx_ask_question_of(t->a, id);
	static char line[CALL_LINE]; /* the loop's thread only */
	char safe[4 * PATH_MAX];
	size_t n, i;
	bool whole;
	int k;

	if (uq) {
		agent_prompt(uq, d, id, buf, size);
		json_decref(d);
		return true;
	}
	whole = hx_ask_line(t->a, id, line, sizeof(line));
	k = snprintf(buf, size, "\n\033[1mharness: ask %u:\033[0m %s\n", id,
		     line);
	n = k > 0 ? (size_t)k : 0;
	json_array_foreach(json_object_get(d, "processes"), i, p)
	{
		const char *exe = json_string_value(json_object_get(p, "exe"));

		if (n >= size)
			break;
		/* The asker's image is named as the agent chose: a name
		 * holding ESC [1A ESC [2K drew over the question the line
		 * above (the eleventh attack review). */
		k = snprintf(
		    buf + n, size - n, "%s%lld %s", i ? " <- " : "  asked by ",
		    (long long)json_integer_value(json_object_get(p, "pid")),
		    hx_text_safe(safe, sizeof(safe), exe ? exe : "?"));
		n += k > 0 ? (size_t)k : 0;
	}
	if (n < size)
		snprintf(
		    buf + n, size - n, "; rule %s\n  %s(refused in %lld s): ",
		    hx_text_safe(safe, sizeof(safe),
				 json_string_value(json_object_get(d, "rule"))
				     ?: "?"),
		    whole ? "[o]nce [s]ession [a]lways [d]eny [D]eny always "
			  : "not all of it shows here: read it with "
			    "harness-exec pending --json, allow it with "
			    "harness-exec approve; [d]eny [D]eny always ",
		    (long long)json_integer_value(
			json_object_get(d, "timeout_s")));
	json_decref(d);
	return whole;
}

/* No question can be put: one line says how to answer. */
static void hint(struct hx_askterm *t, unsigned id)
{
	char line[2048];

	if (t->quiet || t->hinted >= id)
		return;
	t->hinted = id;
	hx_ask_line(t->a, id, line, sizeof(line));
	if (hx_ask_question_of(t->a, id)) {
		fprintf(stderr,
			"harness: ask %u waits: %s; answer with 'harness-exec "
			"answer %u TEXT' or decline with 'harness-exec deny "
			"%u'\n",
			id, line, id, id);
		return;
	}
	fprintf(stderr,
		"harness: ask %u waits: %s; answer with 'harness-exec "
		"approve %u' or 'harness-exec deny %u'\n",
		id, line, id, id);
}

static void on_helper(struct hx_server *s, struct hx_source *src,
		      uint32_t events);

static void show_next(struct hx_askterm *t)
{
	unsigned id;
	char prompt[PROMPT_MAX];
	pid_t fg, pid;
	int sv[2];
	bool whole;

	if (t->shown || !hx_ask_pending(t->a, &id, 1))
		return;
	fg = t->tty >= 0 ? tcgetpgrp(t->tty) : -1;
	if (t->broken || fg <= 0 || !ours(fg) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		hint(t, id);
		return;
	}
	whole = prompt_of(t, id, prompt, sizeof(prompt));
	t->upto = hx_ask_batch_last(t->a, id);
	t->nstopped = stopped_now(t->stopped, STOPPED_MAX);
	elders_note(t);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		helper(t->tty, sv[1], prompt, hx_ask_question_of(t->a, id),
		       !whole);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		hint(t, id);
		return;
	}
	t->helper = pid;
	t->helper_fd = (int)syscall(SYS_pidfd_open, pid, 0);
	t->shown = id;
	t->src.fd = sv[0];
	t->src.handle = on_helper;
	t->src.arg = t;
	if (hx_server_add(t->srv, &t->src, EPOLLIN))
		hx_proc_kill(t->helper_fd, pid, SIGKILL); /* closes, unread */
}

static void end_helper(struct hx_askterm *t)
{
	hx_server_del(t->srv, &t->src);
	close(t->src.fd);
	t->src.fd = -1;
	if (t->helper_fd >= 0)
		close(t->helper_fd);
	t->helper_fd = -1;
	t->helper = 0;
	t->shown = 0;
	t->ready = false;
	release_users(t);
	continue_stopped(t);
	elders_continue(t);
}

static void on_helper(struct hx_server *s, struct hx_source *src,
		      uint32_t events)
{
	struct hx_askterm *t = src->arg;
	unsigned id = t->shown;
	char c, msg[1024], buf[HX_ASK_ANSWER_MAX + 2];
	ssize_t n;
	int k;

	(void)s;
	(void)events;
	/* One message each (SOCK_SEQPACKET): a key, or an answer's text. */
	do
		n = read(src->fd, buf, sizeof(buf) - 1);
	while (n < 0 && errno == EINTR);
	c = n > 0 ? buf[0] : 0;
	if (n == 1 && c == READY && !t->ready) {
		t->ready = true;
		if (hold_users(t) && write(src->fd, (char[]){GO}, 1) == 1)
			return;
		n = 0; /* the helper is gone, or not let go on */
	}
	end_helper(t);
	if (n < 1) {
		/* It could not hold the terminal (or died): lines only. */
		t->broken = true;
		show_next(t);
		return;
	}
	if (c == ANSWER && n > 1) {
		buf[n] = '\0';
		hx_ask_reply(t->a, id, buf + 1, "terminal", msg, sizeof(msg));
	} else if (n == 1 && (k = key_index(c)) >= 0) {
		hx_ask_answer(t->a, id, t->upto, keys[k].v, keys[k].scope,
			      "terminal", 0, msg, sizeof(msg));
	}
	/* A question waits no more: the next one, if any, is put. */
	show_next(t);
}

static void on_gathered(struct hx_server *s, struct hx_source *src,
			uint32_t events)
{
	struct hx_askterm *t = src->arg;
	uint64_t n;

	(void)s;
	(void)events;
	if (read(src->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	t->gathering = false;
	show_next(t);
}

/* A question is put GATHER_MS after the first of those that come
 * together (a build's ten writes in one directory: one question). */
static void gather(struct hx_askterm *t)
{
	struct itimerspec its = {{0, 0}, {0, GATHER_MS * 1000000L}};

	if (t->gathering)
		return;
	if (t->gather.fd < 0 || timerfd_settime(t->gather.fd, 0, &its, NULL)) {
		show_next(t);
		return;
	}
	t->gathering = true;
}

static void on_change(void *arg)
{
	struct hx_askterm *t = arg;
	unsigned ids[64];
	size_t n;
	bool still = false;

	if (t->shown) {
		n = hx_ask_pending(t->a, ids, 64);
		for (size_t i = 0; i < n && i < 64 && !still; i++)
			still = ids[i] == t->shown;
		/* Answered elsewhere, timed out or withdrawn: the helper
		 * puts the terminal back and says so. */
		if (!still && write(t->src.fd, (char[]){ELSEWHERE}, 1) < 0)
			hx_proc_kill(t->helper_fd, t->helper, SIGKILL);
		return;
	}
	gather(t);
}

/* The controlling terminal's device: tty_nr, the 7th field of
 * /proc/self/stat (after the name in parentheses). 0: none. */
static dev_t controlling_tty(void)
{
	char buf[1024], *p;
	unsigned long long nr = 0;
	ssize_t n;
	int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %llu", &nr) != 1)
		return 0;
	return (dev_t)nr;
}

struct hx_askterm *hx_askterm_new(struct hx_ask *a, struct hx_pipeline *pl,
				  struct hx_server *srv,
				  struct hx_execgate *const *gate, bool quiet)
{
	struct hx_askterm *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->a = a;
	t->pl = pl;
	t->gate = gate;
	t->srv = srv;
	t->quiet = quiet;
	t->src.fd = t->helper_fd = -1;
	t->tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	t->rdev = t->tty >= 0 ? controlling_tty() : 0;
	t->gather.fd =
	    timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	t->gather.handle = on_gathered;
	t->gather.arg = t;
	if (t->gather.fd >= 0 && hx_server_add(srv, &t->gather, EPOLLIN)) {
		close(t->gather.fd);
		t->gather.fd = -1;
	}
	hx_ask_on_change(a, on_change, t);
	return t;
}

void hx_askterm_free(struct hx_askterm *t)
{
	struct pollfd p;
	char c;

	if (!t)
		return;
	hx_ask_on_change(t->a, NULL, NULL);
	if (t->src.fd >= 0) {
		/* The helper puts the terminal back before it answers. */
		if (write(t->src.fd, (char[]){ELSEWHERE}, 1) == 1) {
			p = (struct pollfd){.fd = t->src.fd, .events = POLLIN};
			if (poll(&p, 1, 1000) == 1 &&
			    read(t->src.fd, &c, 1) < 0) {
				/* gone: nothing more to do */
			}
		}
		end_helper(t);
	}
	if (t->tty >= 0)
		close(t->tty);
	if (t->gather.fd >= 0) {
		hx_server_del(t->srv, &t->gather);
		close(t->gather.fd);
	}
	free(t);
}
