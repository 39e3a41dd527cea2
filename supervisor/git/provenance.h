/* Provenance: which process last wrote each path of the worktree, and
 * which processes wrote since the last checkpoint, learnt from the audit
 * records the pipeline appends (process_start gives a pid's exe and
 * argv; file_write records that happened give the paths).
 *
 * Lifecycle: hx_prov_new -> hx_prov_observe (per record) ... ->
 * hx_prov_free. Not thread-safe: the supervisor's loop feeds it. */
#ifndef HX_PROVENANCE_H
#define HX_PROVENANCE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct hx_prov;
struct json_t;

/* root: the worktree's real path; writes elsewhere are not tracked.
 * Returns NULL on ENOMEM. */
struct hx_prov *hx_prov_new(const char *root);
void hx_prov_free(struct hx_prov *p);

/* Feeds one appended record (borrowed) and its seq. */
void hx_prov_observe(struct hx_prov *p, struct json_t *rec, uint64_t seq);

/* The writer of rel (a path relative to root), as a new JSON object
 * {pid, exe, argv, seq, process_seq}, or NULL when no write to it was
 * seen. The caller owns it. */
struct json_t *hx_prov_writer(const struct hx_prov *p, const char *rel);

/* The process pid as {pid, exe, argv, seq} (seq: its last write in the
 * worktree, or its process_start), a new object; NULL if never seen. */
struct json_t *hx_prov_process(const struct hx_prov *p, pid_t pid);

/* When the process image of pid ended (its connection closed): true
 * when a checkpoint is due, that is pid, or a process already gone,
 * wrote in the worktree since the last hx_prov_clear. *cause is the
 * writer to name (pid itself when it wrote). */
bool hx_prov_due(struct hx_prov *p, pid_t pid, pid_t *cause);
/* Whether anything wrote since the last hx_prov_clear. */
bool hx_prov_dirty(const struct hx_prov *p);
/* Forgets who wrote since the last checkpoint (after one was taken). */
void hx_prov_clear(struct hx_prov *p);
/* The most recent writer since the last clear (0: none). */
pid_t hx_prov_last_writer(const struct hx_prov *p);

#endif
