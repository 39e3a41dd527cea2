/* The search tool: files under a directory by glob (on the path
 * relative to it, common/glob.h's syntax) and lines by POSIX extended
 * regular expression. fileops.h's convention. */
#ifndef HX_MW_SEARCH_H
#define HX_MW_SEARCH_H

struct json_t;

int hx_mw_search_run(struct json_t *args, struct json_t **res);

#endif
