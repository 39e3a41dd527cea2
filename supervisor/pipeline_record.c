/* The audit record and the refusal notice of one decision; see
 * pipeline_int.h. */
#define _GNU_SOURCE
#include "supervisor/pipeline_int.h"
#include "supervisor/proc.h"

#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/notice.h"
#include "common/path.h"
#include "common/wire.h"
#include "supervisor/fmt.h"
#include "supervisor/netfamily.h"
#include "supervisor/record.h"

/* The rule that protects the harness's own files holds in audit mode
 * too: audit mode lets the policy go unenforced, not the log. */
bool hx_pl_protects_harness(const char *rule)
{
	/* the host's device nodes with the harness's own files: refused
	 * in audit mode too (pipeline_device.c); so another session's
	 * work (pipeline_sessions.c), as its TMPDIR is */
	return rule && (!strcmp(rule, "harness:protect") ||
			!strcmp(rule, "harness:other-session") ||
			!strcmp(rule, "harness:device-inode") ||
			!strcmp(rule, "harness:oom-score"));
}

void hx_pipeline_notice(const struct hx_outcome *o, int err)
{
	if (o->notice[0] && (err == EACCES || err == EPERM))
		fputs(o->notice, stderr);
}

/* An IP socket's protocol, what tcp: and udp: rules judge. */
static void inet_proto_arg(json_t *a, int proto)
{
	static const struct {
		int proto;
		const char *name;
	} names[] = {{IPPROTO_TCP, "tcp"},	   {IPPROTO_UDP, "udp"},
		     {IPPROTO_UDPLITE, "udplite"}, {262, "mptcp"},
		     {IPPROTO_ICMP, "icmp"},	   {IPPROTO_ICMPV6, "icmpv6"},
		     {IPPROTO_SCTP, "sctp"}};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].proto == proto) {
			hx_record_set_str(a, "proto", names[i].name);
			return;
		}
	json_object_set_new(a, "proto", json_integer(proto));
}

static uint64_t ns_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (uint64_t)(t1.tv_sec - t0->tv_sec) * 1000000000u +
	       (uint64_t)(t1.tv_nsec - t0->tv_nsec);
}

/* args[key] (and key_resolved): the path as judged, else as asked. */
static void set_path(json_t *rec, json_t *a, const char *key,
		     const struct vpath *p, const char *raw)
{
	char k[32], field[48];

	if (!raw)
		return;
	snprintf(field, sizeof(field), "args.%s", key);
	hx_record_set_text(rec, a, key, field, p->ok ? p->norm : raw);
	if (!p->has_resolved)
		return;
	snprintf(k, sizeof(k), "%s_resolved", key);
	snprintf(field, sizeof(field), "args.%s", k);
	hx_record_set_text(rec, a, k, field, p->resolved);
}
/* "family" and, for netlink, "protocol" of an address the policy does
 * not name. */
static void family_args(json_t *a, const struct hx_request *rq)
{
	sa_family_t f;
	const char *n;

	memcpy(&f, rq->addr, sizeof(f));
	n = hx_netfamily_name(f);
	if (n)
		hx_record_set_str(a, "family", n);
	else
		json_object_set_new(a, "family", json_integer(f));
	if (f == AF_NETLINK && rq->has_proto) {
		n = hx_netlink_proto_name(rq->proto);
		if (n)
			hx_record_set_str(a, "protocol", n);
		else
			json_object_set_new(a, "protocol",
					    json_integer(rq->proto));
	}
}

static json_t *make_args(json_t *rec, const struct hx_request *rq,
			 const struct vpath *p1, const struct vpath *p2,
			 const char *addr)
{
	json_t *a = json_object();
	char buf[256];

	/* the path the loader was run as, agent's text like any other */
	hx_record_set_text(rec, a, "loader", "args.loader", rq->loader);
	set_path(rec, a, "path", p1, rq->path);
	set_path(rec, a, "path2", p2, rq->path2);
	if (rq->has_flags) {
		if (rq->op == HX_OP_READ || rq->op == HX_OP_WRITE ||
		    rq->op == HX_OP_TRUNCATE)
			hx_record_set_str(
			    a, "flags",
			    hx_fmt_open_flags(rq->flags, buf, sizeof(buf)));
		else
			json_object_set_new(a, "flags",
					    json_integer(rq->flags));
	}
	if (rq->has_mode)
		hx_record_set_str(a, "mode",
				  hx_fmt_mode(rq->mode, buf, sizeof(buf)));
	/* what a metadata change does, as chmod's mode says it: a
	 * setfacl's grant was a write of the path, no more */
	hx_record_set_text(rec, a, "xattr", "args.xattr", rq->xattr);
	if (rq->has_owner) {
		json_object_set_new(a, "uid", json_integer(rq->uid));
		json_object_set_new(a, "gid", json_integer(rq->gid));
	}
	/* a script's: what runs it, with what words (#!/bin/sh -x...) */
	hx_record_set_text(rec, a, "interpreter", "args.interpreter",
			   rq->interp);
	if (rq->interp_argc)
		hx_record_argv(rec, a, "interpreter_argv",
			       "args.interpreter_argv", rq->interp_argv,
			       rq->interp_argc);
	if (rq->op == HX_OP_EXEC && !rq->argc) /* none: said, not left out */
		json_object_set_new(a, "argv", json_array());
	if (rq->argc) {
		hx_record_argv(rec, a, "argv", "args.argv", rq->argv, rq->argc);
		if (rq->truncated) /* cut by the shim: its total is unknown */
			json_object_set_new(a, "argv_truncated", json_true());
	}
	hx_record_set_text(rec, a, "addr", "args.addr", addr);
	if (hx_sockaddr_port(rq->addr, rq->addrlen) >= 0 && rq->has_proto)
		inet_proto_arg(a, rq->proto);
	hx_record_set_text(rec, a, "host", "args.host", rq->host);
	hx_record_dns(rec, a, rq);
	if (rq->has_result)
		json_object_set_new(a, "result", json_integer(rq->result));
	return a;
}

/* An address of a family the shim leaves to the kernel (netlink...):
 * its reaching the kernel layer alone is no bypass. */
bool hx_pl_foreign_family(const struct hx_request *rq)
{
	sa_family_t f;

	if (!rq->addr || rq->addrlen < sizeof(f))
		return false;
	memcpy(&f, rq->addr, sizeof(f));
	return f != AF_INET && f != AF_INET6 && f != AF_UNIX;
}

/* The names an address was judged by, and where each came from
 * (dnsmap.h): "dns" (this session's answer), "lookup", "policy". */
static void name_args(json_t *rec, json_t *a, const struct flow *f)
{
	json_t *n, *from;

	if (!f->nnames)
		return;
	n = json_array();
	from = json_array();
	for (size_t i = 0; i < f->nnames; i++) {
		json_array_append_new(
		    n, hx_record_text(rec, "args.names", f->names[i]));
		json_array_append_new(
		    from, json_string(hx_dns_source_name(f->name_src[i])));
	}
	json_object_set_new(a, "names", n);
	json_object_set_new(a, "names_from", from);
}

/* Record: the decision as an audit record. */
json_t *hx_pl_record(struct flow *f)
{
	const struct hx_request *rq = f->rq;
	const struct hx_decision *d = &f->d;
	json_t *rec =
	    hx_record_new(f->pl, f->peer, hx_call_name(rq->call), &f->wall);
	char cwd[PATH_MAX];

	if (!rec)
		return NULL;
	hx_record_set_str(rec, "op", hx_op_name(rq->op));
	json_object_set_new(
	    rec, "args",
	    make_args(rec, rq, &f->p1, &f->p2, f->has_addr ? f->addr : NULL));
	name_args(rec, json_object_get(rec, "args"), f);
	if (f->unix_resolved)
		hx_record_set_text(rec, json_object_get(rec, "args"),
				   "addr_resolved", "args.addr_resolved",
				   f->pu.resolved);
	if (hx_pl_foreign_family(rq))
		family_args(json_object_get(rec, "args"), rq);
	/* an exec's environment where it is not the session's: it steers
	 * what the command does as its argv does */
	if (rq->op == HX_OP_EXEC)
		hx_record_env(rec, json_object_get(rec, "args"), "args.env",
			      f->env.p, f->env.len, f->env_unread);
	/* an exec's was read for its decision (hx_event.cwd); any other
	 * call's is its thread's, whose relative names it resolved (one
	 * that did unshare(CLONE_FS) has its own: the record said the
	 * process's, another directory than its path's) */
	if (f->ev.cwd ||
	    (f->peer->pid > 0 && !f->peer->gone &&
	     hx_proc_cwd(f->peer->tid ? f->peer->tid : f->peer->pid, cwd,
			 sizeof(cwd)) > 0))
		hx_record_set_text(rec, rec, "cwd", "cwd",
				   f->ev.cwd ? f->ev.cwd : cwd);
	hx_record_set_str(rec, "category", hx_category_name(d->category));
	/* An exec's risk is its class's (cat: low, rm -rf ~: high). */
	hx_record_set_str(rec, "risk", hx_risk_name(d->risk));
	hx_record_set_str(rec, "class", hx_cmd_class_name(d->cls));
	if (d->judged_as[0]) /* the part of the script that decided */
		hx_record_set_text(rec, rec, "judged_as", "judged_as",
				   d->judged_as);
	hx_record_set_str(rec, "verdict", hx_verdict_name(d->verdict));
	json_object_set_new(rec, "enforced",
			    json_boolean(f->pl->mode == HX_MODE_ENFORCE ||
					 hx_pl_protects_harness(d->rule)));
	hx_record_set_str(rec, "rule", d->rule);
	hx_record_set_text(rec, rec, "pattern", "pattern", d->pattern);
	if (f->by_inode)
		hx_record_set_str(rec, "protected_by", "inode");
	if (f->grant[0]) /* an ask answered before (ask.h) */
		hx_record_set_str(rec, "grant", f->grant);
	if (f->ask_id) /* a question: its answer is an ask_answer record */
		json_object_set_new(rec, "ask", json_integer(f->ask_id));
	if (f->resolved_won || f->p1.via_fd || f->p2.via_fd)
		json_object_set_new(rec, "decided_on_resolved", json_true());
	hx_record_set_str(rec, "layer", f->both ? "shim+kernel" : f->layer);
	if (f->bypass)
		json_object_set_new(rec, "shim_bypass", json_true());
	if (f->match == HX_CORR_DISAGREES)
		json_object_set_new(rec, "shim_disagreed", json_true());
	json_object_set_new(rec, "latency_ns",
			    json_integer((json_int_t)ns_since(&f->t0)));
	if (rq->nframes)
		json_object_set_new(
		    rec, "stack",
		    hx_record_strings(rec, "stack", rq->frames, rq->nframes));
	return rec;
}

/* A refusal only the kernel layer saw (a static program, a raw
 * syscall) explains itself too: on harness-exec's stderr, the user's
 * terminal, since no shim in the agent prints it. Once per process and
 * refusal, and at most HX_NOTICE_MAX a session: the rest is in the log.
 * Formatted into out->notice; printed now unless out->tell (then the
 * errno decides, hx_pipeline_notice). */
#define HX_NOTICE_MAX 200
void hx_pl_kernel_notice(const struct flow *f, struct hx_outcome *out)
{
	static atomic_uint printed;
	const struct hx_request *rq = f->rq;
	const struct hx_peer *peer = f->peer;
	const char *argv[17];
	char named[HX_SOCKADDR_LEN + HX_DNSMAP_NAME_MAX + 4],
	    both[2 * PATH_MAX + 16];
	struct hx_notice n = {.op = rq->op,
			      .verdict = f->d.verdict,
			      /* a DNS question: its name, not the server */
			      .target = rq->host      ? rq->host
					: f->has_addr ? f->addr
					: f->p1.ok    ? f->p1.norm
						      : NULL,
			      .target2 = f->p2.ok ? f->p2.norm : rq->path2,
			      .spelled = !rq->host && f->has_addr,
			      .rule = out->rule,
			      .origin = out->origin};
	size_t k = 0;

	/* An address with the name it was answered for: what the agent
	 * asked for, which a rule can name (validated names only). */
	if (!rq->host && f->has_addr && f->nnames) {
		snprintf(named, sizeof(named), "%s (%s)", f->addr, f->names[0]);
		n.target = named;
	}
	/* A path decided where it resolves names that too: "denied write
	 * proj/x" of a write through proj/l/.. to a file outside named a
	 * file the policy allows (the eleventh attack review). */
	if (n.target == f->p1.norm && f->resolved_won && f->p1.has_resolved &&
	    strcmp(f->p1.norm, f->p1.resolved) &&
	    snprintf(both, sizeof(both), "%s (resolved %s)", f->p1.norm,
		     f->p1.resolved) < (int)sizeof(both))
		n.target = both;
	if (rq->op == HX_OP_EXEC && rq->argv) {
		for (; k < rq->argc && k < 16; k++)
			argv[k] = rq->argv[k];
		argv[k] = NULL;
		n.argv = argv;
	}
	if (hx_notice_repeat(&n, peer->pid))
		return;
	k = atomic_fetch_add(&printed, 1);
	if (k < HX_NOTICE_MAX)
		hx_notice_format(out->notice, sizeof(out->notice), &n);
	else if (k == HX_NOTICE_MAX)
		snprintf(out->notice, sizeof(out->notice),
			 "harness: more refusals: see the audit log\n");
	/* A question prints its refusal once answered (unotify_queue.c). */
	if (!out->tell && !f->ask_id)
		hx_pipeline_notice(out, EACCES);
}

/* args[key] = path, normalized as the pipeline's view of it is. */
static void set_text_norm(json_t *rec, json_t *args, const char *key,
			  const char *path)
{
	struct vpath v = {.ok = false};

	if (path)
		v.ok =
		    hx_path_normalize(NULL, path, v.norm, sizeof(v.norm)) >= 0;
	set_path(rec, args, key, &v, path);
}

/* A record after the decision seq (0: coalesced) on the call's own
 * object: op and its paths, as the decision's record names them. */
static json_t *after_record(struct hx_pipeline *pl, const struct hx_peer *peer,
			    const char *event, enum hx_op op, const char *path,
			    const char *path2, uint64_t seq)
{
	json_t *rec = hx_record_new(pl, peer, event, NULL);
	json_t *args = json_object();

	if (!rec || !args) {
		json_decref(rec);
		json_decref(args);
		return NULL;
	}
	hx_record_set_str(rec, "op", hx_op_name(op));
	/* As the decision's record names them (set_path): normalized. */
	set_text_norm(rec, args, "path", path);
	set_text_norm(rec, args, "path2", path2);
	json_object_set_new(rec, "args", args);
	if (seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)seq));
	hx_record_set_str(rec, "category",
			  hx_category_name(hx_op_category(op)));
	hx_record_set_str(rec, "layer", "kernel");
	return rec;
}

void hx_pipeline_revoke(struct hx_pipeline *pl, const struct hx_peer *peer,
			const struct hx_request *rq, uint64_t seq,
			const char *rule, const char *why)
{
	json_t *rec =
	    after_record(pl, peer, "revoked", rq->op, rq->path, rq->path2, seq);

	if (!rec)
		return;
	hx_record_set_str(rec, "verdict", "deny");
	hx_record_set_str(rec, "rule", rule);
	hx_record_set_str(rec, "why", why);
	hx_record_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

void hx_pipeline_failed(struct hx_pipeline *pl, const struct hx_peer *peer,
			enum hx_op op, const char *path, const char *path2,
			uint64_t seq, int err)
{
	json_t *rec = after_record(pl, peer, "failed", op, path, path2, seq);
	const char *name = err > 0 ? strerrorname_np(err) : NULL;
	char num[16];

	if (!rec)
		return;
	if (!name && err > 0) {
		snprintf(num, sizeof(num), "%d", err);
		name = num;
	}
	if (name)
		hx_record_set_str(rec, "errno", name);
	else /* an exec the kernel refused after its CONTINUE */
		hx_record_set_str(rec, "why", "no exec followed its allow");
	hx_record_append_event(pl, rec, NULL, NULL);
	json_decref(rec);
}

void hx_pl_record_interp(struct flow *f, uint64_t seq)
{
	const struct hx_request *rq = f->rq;
	json_t *rec = hx_record_new(f->pl, f->peer, "exec_interpreter", NULL);
	json_t *a = json_object();

	if (!rec || !a) {
		json_decref(rec);
		json_decref(a);
		return;
	}
	set_path(rec, a, "path", &f->p1, rq->path);
	hx_record_set_text(rec, a, "interpreter", "args.interpreter",
			   rq->interp);
	hx_record_argv(rec, a, "interpreter_argv", "args.interpreter_argv",
		       rq->interp_argv, rq->interp_argc);
	json_object_set_new(rec, "args", a);
	if (seq)
		json_object_set_new(rec, "ref_seq",
				    json_integer((json_int_t)seq));
	hx_record_set_str(rec, "category", "process");
	hx_record_set_str(rec, "layer", "kernel");
	hx_record_append_event(f->pl, rec, NULL, NULL);
	json_decref(rec);
}
