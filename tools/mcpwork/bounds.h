/* Every bound of harness-mcp-worker in one place (docs/mcp.md lists
 * them): the worker runs requests of an agent-facing server, and each
 * size, count and depth it accepts is capped so that one request can
 * neither exhaust its memory nor make a reply the front cannot take. */
#ifndef HX_MW_BOUNDS_H
#define HX_MW_BOUNDS_H

/* A message line either way, without its '\n'. */
#define HX_MW_LINE_MAX (16u << 20)
/* file_read: max_bytes default and ceiling (base64 makes 4/3 of it). */
#define HX_MW_READ_DEFAULT (256u << 10)
#define HX_MW_READ_MAX	   (8u << 20)
/* file_patch: the file patched, and what the edits may make of it. */
#define HX_MW_PATCH_FILE_MAX  (16u << 20)
#define HX_MW_PATCH_HUNKS_MAX 10000u
/* list_dir and search: depth, entries, names read from one directory. */
#define HX_MW_DEPTH_MAX	      32u
#define HX_MW_ENTRIES_DEFAULT 1000u
#define HX_MW_ENTRIES_MAX     100000u
#define HX_MW_DIR_NAMES_MAX   100000u
/* search: results, files read whole, the binary sniff, a match's text,
 * files looked at in one call. */
#define HX_MW_RESULTS_DEFAULT  200u
#define HX_MW_RESULTS_MAX      10000u
#define HX_MW_SEARCH_FILE_MAX  (8u << 20)
#define HX_MW_SNIFF	       8192u
#define HX_MW_MATCH_TEXT       500u
#define HX_MW_SEARCH_FILES_MAX 200000u
/* a search's time: the worker serves every call in one loop, so one
 * search may not hold it longer (checked between lines) */
#define HX_MW_SEARCH_TIME_MS 10000u
/* a line matched: one regexec(3) is not interruptible, and its time
 * grows with the line's length times the pattern's (minutes for a
 * 4 KiB alternation on a 4 MiB line); longer lines are skipped */
#define HX_MW_SEARCH_LINE_MAX (16u << 10)
/* code_run: output kept per stream, time, environment, concurrency. */
#define HX_MW_OUTPUT_DEFAULT  (64u << 10)
#define HX_MW_OUTPUT_MAX      (4u << 20)
#define HX_MW_TIMEOUT_DEFAULT 60000u
#define HX_MW_TIMEOUT_MAX     3600000u
#define HX_MW_TERM_GRACE_MS   2000
#define HX_MW_DRAIN_GRACE_MS  500
#define HX_MW_PROGRESS_MS     1000
#define HX_MW_ENV_MAX	      1024u
#define HX_MW_ARGV_MAX	      4096u
#define HX_MW_RUNS_MAX	      64u

#endif
