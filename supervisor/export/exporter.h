/* A session's traces sent as it runs (--otlp-endpoint): a thread of
 * harness-exec follows the session's own audit log, so what is sent is
 * what is recorded (and redacted), and sends each process's span once
 * the process has ended (its process_exit record), in batches every two
 * seconds, to an OTLP/HTTP collector; the rest and the session's span
 * at the end. A collector that is away is retried with a backoff (1 s,
 * doubling to 30 s); past 10,000 spans waiting, the oldest are dropped
 * and counted. Nothing of it waits for the collector but the end,
 * which gives it a few seconds. */
#ifndef HX_EXPORTER_H
#define HX_EXPORTER_H

struct hx_exporter;

struct hx_exporter_stats {
	unsigned long long spans_sent, spans_dropped, batches, failures;
	char last_error[256]; /* of the last failed POST, or "" */
};

/* Follows the records of session in the log at log (opened now) and
 * sends them to url (an http:// URL). 0 or -errno. */
int hx_exporter_start(const char *url, const char *log, const char *session,
		      struct hx_exporter **out);

/* Sends what is left, the session's span included, trying for at most
 * wait_ms; fills *st; frees e. NULL: nothing. */
void hx_exporter_finish(struct hx_exporter *e, int wait_ms,
			struct hx_exporter_stats *st);

#endif
