/* Address -> names map and the policy host resolver; see dnsmap.h. */
#define _GNU_SOURCE
#include "supervisor/dnsmap.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/sockaddr.h"
#include "policy/policy.h"

struct key {
	sa_family_t family;
	uint8_t addr[16];
};

/* Entries of one address are chained from its bucket (a connect looks
 * one address up: no scan of the map); a free entry is on the free
 * chain. Indexes, -1 ending a chain. */
struct entry {
	struct key key;
	time_t expires; /* 0: free */
	enum hx_dns_source source;
	int32_t next;
	char name[HX_DNSMAP_NAME_MAX];
};

struct hx_dnsmap {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct entry *e;
	size_t cap;
	int32_t *bucket; /* nbuckets heads */
	size_t nbuckets; /* a power of 2, at least cap */
	int32_t free;	 /* released entries */
	size_t used;	 /* e[used..cap) never taken: untouched pages */
	/* resolver */
	bool running, stop, done;
	pthread_t thread;
	char **hosts;
	size_t nhosts;
	/* names the agent says it looked up, for the resolver to look up
	 * itself: only what it sees is mapped */
	char claims[HX_DNSMAP_CLAIMS][HX_DNSMAP_NAME_MAX];
	size_t nclaims;
};

static time_t now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + 1; /* never 0, which means free */
}

/* The address as the policy judges it (::ffff:a.b.c.d is a.b.c.d):
 * a name answered for one is the other's too. */
static int make_key(const struct sockaddr *sa, socklen_t len, struct key *k)
{
	struct hx_ipaddr ip;

	memset(k, 0, sizeof(*k));
	if (!sa || !hx_sockaddr_ip(sa, len, &ip))
		return -EINVAL;
	k->family = ip.family;
	memcpy(k->addr, ip.addr, sizeof(k->addr));
	return 0;
}

static size_t bucket_of(const struct hx_dnsmap *m, const struct key *k)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (size_t i = 0; i < sizeof(k->addr); i++)
		h = (h ^ k->addr[i]) * 16777619u;
	return (h ^ k->family) & (m->nbuckets - 1);
}

/* Takes e out of its bucket's chain onto the free chain. */
static void release(struct hx_dnsmap *m, int32_t i)
{
	int32_t *p = &m->bucket[bucket_of(m, &m->e[i].key)];

	while (*p != i)
		p = &m->e[*p].next;
	*p = m->e[i].next;
	m->e[i].expires = 0;
	m->e[i].next = m->free;
	m->free = i;
}

/* An entry to fill: a released one, one never taken, else the one
 * closest to expiry (a scan, when the map is full only). */
static int32_t take(struct hx_dnsmap *m, time_t now)
{
	int32_t i = 0;

	if (m->free < 0 && m->used < m->cap)
		return (int32_t)m->used++;
	if (m->free < 0) {
		for (size_t k = 0; k < m->cap; k++)
			if (m->e[k].expires <= now ||
			    m->e[k].expires < m->e[i].expires)
				i = (int32_t)k;
		release(m, i);
	}
	i = m->free;
	m->free = m->e[i].next;
	return i;
}

int hx_dnsmap_new(size_t cap, struct hx_dnsmap **out)
{
	struct hx_dnsmap *m = calloc(1, sizeof(*m));
	pthread_condattr_t ca;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->cap = cap ? cap : HX_DNSMAP_CAP;
	for (m->nbuckets = 1; m->nbuckets < m->cap; m->nbuckets *= 2)
		;
	/* Mapped, not allocated: malloc maps a block this large only
	 * until the start has freed larger ones, and from its heap calloc
	 * clears all of it (1.2 MB, 0.7 ms of a start); a mapping's pages
	 * stay untouched until entries are taken. */
	m->e = m->cap > INT32_MAX
		   ? MAP_FAILED
		   : mmap(NULL, m->cap * sizeof(*m->e), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m->bucket = malloc(m->nbuckets * sizeof(*m->bucket));
	if (m->e == MAP_FAILED || !m->bucket) {
		if (m->e != MAP_FAILED)
			munmap(m->e, m->cap * sizeof(*m->e));
		free(m->bucket);
		free(m);
		return -ENOMEM;
	}
	memset(m->bucket, 0xff, m->nbuckets * sizeof(*m->bucket)); /* -1 */
	m->free = -1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wake, &ca);
	pthread_condattr_destroy(&ca);
	*out = m;
	return 0;
}

const char *hx_dns_source_name(enum hx_dns_source s)
{
	return s == HX_DNS_ANSWER   ? "dns"
	       : s == HX_DNS_LOOKUP ? "lookup"
				    : "policy";
}

int hx_dnsmap_add(struct hx_dnsmap *m, const struct sockaddr *sa, socklen_t len,
		  const char *name, unsigned ttl, enum hx_dns_source source)
{
	struct sockaddr_storage lo;
	struct key k;
	struct entry *e = NULL;
	time_t now = now_s();
	int32_t i, next;
	size_t n;

	/* 0.0.0.0 is a "blocked" name's answer (a filtering resolver, a
	 * hosts file), and reaches loopback: it is no name's address. */
	if (make_key(sa, len, &k) || !name || !name[0] ||
	    hx_sockaddr_unspecified(sa, len, &lo))
		return -EINVAL;
	n = strnlen(name, HX_DNSMAP_NAME_MAX);
	if (n == HX_DNSMAP_NAME_MAX)
		return -EINVAL;
	if (!ttl || (source == HX_DNS_ANSWER && ttl < HX_DNSMAP_TTL))
		ttl = HX_DNSMAP_TTL;
	pthread_mutex_lock(&m->lock);
	for (i = m->bucket[bucket_of(m, &k)]; i >= 0; i = next) {
		next = m->e[i].next;
		if (m->e[i].expires <= now)
			release(m, i);
		else if (!memcmp(&m->e[i].key, &k, sizeof(k)) &&
			 !strcmp(m->e[i].name, name))
			e = &m->e[i];
	}
	if (e) {
		/* The agent's own answer is what it connects by: it wins. */
		if (e->source > source)
			source = e->source;
	} else {
		i = take(m, now);
		e = &m->e[i];
		e->key = k;
		memcpy(e->name, name, n + 1);
		e->next = m->bucket[bucket_of(m, &k)];
		m->bucket[bucket_of(m, &k)] = i;
	}
	e->source = source;
	e->expires = now + (time_t)ttl;
	pthread_mutex_unlock(&m->lock);
	return 0;
}

size_t hx_dnsmap_lookup(struct hx_dnsmap *m, const struct sockaddr *sa,
			socklen_t len, char (*names)[HX_DNSMAP_NAME_MAX],
			enum hx_dns_source *sources, size_t max)
{
	struct key k;
	time_t now = now_s();
	size_t n = 0;

	if (make_key(sa, len, &k))
		return 0;
	pthread_mutex_lock(&m->lock);
	for (int32_t i = m->bucket[bucket_of(m, &k)]; i >= 0 && n < max;
	     i = m->e[i].next) {
		const struct entry *e = &m->e[i];

		if (e->expires <= now || memcmp(&e->key, &k, sizeof(k)))
			continue;
		if (sources)
			sources[n] = e->source;
		memcpy(names[n++], e->name, HX_DNSMAP_NAME_MAX);
	}
	pthread_mutex_unlock(&m->lock);
	return n;
}

size_t hx_dnsmap_size(struct hx_dnsmap *m)
{
	time_t now = now_s();
	size_t i, n = 0;

	pthread_mutex_lock(&m->lock);
	for (i = 0; i < m->used; i++)
		n += m->e[i].expires > now;
	pthread_mutex_unlock(&m->lock);
	return n;
}

static void resolve_one(struct hx_dnsmap *m, const char *host,
			enum hx_dns_source source)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;

	if (getaddrinfo(host, NULL, &hints, &res))
		return;
	for (ai = res; ai; ai = ai->ai_next)
		hx_dnsmap_add(m, ai->ai_addr, ai->ai_addrlen, host,
			      2 * HX_DNSMAP_REFRESH, source);
	freeaddrinfo(res);
}

int hx_dnsmap_claim(struct hx_dnsmap *m, const char *name)
{
	size_t n = strnlen(name, HX_DNSMAP_NAME_MAX);
	int r = 0;

	if (!n || n == HX_DNSMAP_NAME_MAX)
		return -EINVAL;
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < m->nhosts; i++)
		if (!strcasecmp(m->hosts[i], name))
			goto out; /* resolved by itself anyway */
	for (size_t i = 0; i < m->nclaims; i++)
		if (!strcasecmp(m->claims[i], name))
			goto out;
	if (m->nclaims == HX_DNSMAP_CLAIMS) {
		r = -ENOSPC; /* a flood of reports: the rest wait */
		goto out;
	}
	memcpy(m->claims[m->nclaims++], name, n + 1);
	pthread_cond_broadcast(&m->wake);
out:
	pthread_mutex_unlock(&m->lock);
	return r;
}

/* Looks up the claimed names, with the lock held (dropped meanwhile). */
static void resolve_claims(struct hx_dnsmap *m)
{
	char name[HX_DNSMAP_NAME_MAX];

	while (m->nclaims && !m->stop) {
		memcpy(name, m->claims[--m->nclaims], sizeof(name));
		pthread_mutex_unlock(&m->lock);
		resolve_one(m, name, HX_DNS_LOOKUP);
		pthread_mutex_lock(&m->lock);
	}
}

static void *resolver(void *arg)
{
	struct hx_dnsmap *m = arg;
	struct timespec until;
	size_t i;

	pthread_mutex_lock(&m->lock);
	while (!m->stop) {
		for (i = 0; i < m->nhosts && !m->stop; i++) {
			pthread_mutex_unlock(&m->lock);
			resolve_one(m, m->hosts[i], HX_DNS_POLICY);
			pthread_mutex_lock(&m->lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += HX_DNSMAP_REFRESH;
		resolve_claims(m);
		while (!m->stop && pthread_cond_timedwait(&m->wake, &m->lock,
							  &until) != ETIMEDOUT)
			resolve_claims(m);
	}
	m->done = true;
	pthread_cond_broadcast(&m->wake);
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

struct hosts_acc {
	char **v;
	size_t n, cap;
	bool oom;
};

static void collect(const char *name, void *arg)
{
	struct hosts_acc *h = arg;

	if (h->oom)
		return;
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;
		char **v = realloc(h->v, cap * sizeof(*v));

		if (!v) {
			h->oom = true;
			return;
		}
		h->v = v;
		h->cap = cap;
	}
	h->v[h->n] = strdup(name);
	if (!h->v[h->n])
		h->oom = true;
	else
		h->n++;
}

static void free_hosts(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int hx_dnsmap_start_resolver(struct hx_dnsmap *m, const struct hx_policy *p)
{
	struct hosts_acc h = {0};
	sigset_t all, old;
	int r;

	if (m->running)
		return -EBUSY;
	hx_policy_foreach_host(p, collect, &h);
	if (h.oom) {
		free_hosts(h.v, h.n);
		return -ENOMEM;
	}
	/* Started without hosts too: it looks up what the agent claims. */
	m->hosts = h.v;
	m->nhosts = h.n;
	/* The thread must not take the signals the loop reads by signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&m->thread, NULL, resolver, m);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		free_hosts(m->hosts, m->nhosts);
		m->hosts = NULL;
		m->nhosts = 0;
		return -r;
	}
	m->running = true;
	return 0;
}

void hx_dnsmap_free(struct hx_dnsmap *m)
{
	bool done;

	if (!m)
		return;
	if (m->running) {
		pthread_mutex_lock(&m->lock);
		m->stop = true;
		pthread_cond_broadcast(&m->wake);
		done = m->done;
		pthread_mutex_unlock(&m->lock);
		if (!done) {
			/* getaddrinfo cannot be interrupted and may take
			 * seconds without a network; waiting for it would
			 * delay every exit. Leave it the map: the process
			 * is ending. */
			pthread_detach(m->thread);
			return;
		}
		pthread_join(m->thread, NULL);
	}
	free_hosts(m->hosts, m->nhosts);
	pthread_cond_destroy(&m->wake);
	pthread_mutex_destroy(&m->lock);
	munmap(m->e, m->cap * sizeof(*m->e));
	free(m->bucket);
	free(m);
}
