/* A shim message as a request for the pipeline: the one place where the
 * transport becomes a request (server.c's). */
#ifndef HX_WIREREQ_H
#define HX_WIREREQ_H

#include "common/wire.h"
#include "supervisor/pipeline.h"

/* Pointer arrays a decoded message's strings are lent through; an
 * exec's environment, read from the requester (malloc'd, per request). */
struct hx_request_storage {
	const char *argv[HX_WIRE_MAX_ARGS];
	const char *frames[HX_WIRE_MAX_FRAMES];
	char *env;
	const char **envp;
};

/* Fills rq from a decoded REQUEST or REPORT (pointers into m and st). */
void hx_wirereq_from_msg(const struct hx_msg *m, struct hx_request *rq,
			 struct hx_request_storage *st);

/* An exec's environment, read where the shim says its caller's envp is;
 * st->env and st->envp are the caller's to free after the decision. */
void hx_wirereq_env(const struct hx_msg *m, const struct hx_peer *peer,
		    struct hx_request *rq, struct hx_request_storage *st);

#endif
