/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ftraced/proto.h"

/* A message after its header was checked: the payload still points into the packet. */
struct ctl_msg {
	uint16_t type;
	const uint8_t *payload;
	size_t n_payload;
};

struct ctl_attr {
	uint16_t type;
	uint16_t len;
	const uint8_t *data;
};

struct ctl_attr_iter {
	const uint8_t *p;
	size_t n;
};

/* A set of attribute types, each below FTRACED_ATTR_SET_MAX. */
struct ctl_attr_set {
	uint64_t bits[FTRACED_ATTR_SET_MAX / 64];
};

static inline bool ctl_attr_set_has(const struct ctl_attr_set *s, unsigned a)
{
	return a < FTRACED_ATTR_SET_MAX && (s->bits[a / 64] & (UINT64_C(1) << (a % 64)));
}

static inline void ctl_attr_set_add(struct ctl_attr_set *s, unsigned a)
{
	if (a < FTRACED_ATTR_SET_MAX)
		s->bits[a / 64] |= UINT64_C(1) << (a % 64);
}

static inline void ctl_attr_set_remove(struct ctl_attr_set *s, unsigned a)
{
	if (a < FTRACED_ATTR_SET_MAX)
		s->bits[a / 64] &= ~(UINT64_C(1) << (a % 64));
}

/* One event spec of a request: offsets into its event_text. */
struct ctl_event {
	uint32_t spec;
	uint32_t filter;  /* offset + 1; 0: none */
	uint32_t trigger; /* -R: offset + 1; 0: none */
};

/*
 * A request, fully validated for syntax; strings are NUL-terminated copies.
 * Its events are allocated, as many as it has (a kernel may have tens of
 * thousands): ctl_request_done() frees them.
 */
struct ctl_request {
	uint16_t type;
	struct ctl_attr_set present; /* each attribute seen */
	unsigned n_events;
	struct ctl_event *events;
	size_t n_events_allocated;
	char *event_text;
	size_t n_event_text;
	size_t n_event_text_allocated;
	struct ftraced_event_list event_list; /* ATTR_EVENT_LIST: where the events are */
	unsigned n_excluded;         /* -v: specs whose events are left out */
	char excluded[FTRACED_EXCLUDED_PER_REQUEST_MAX][FTRACED_EVENT_SPEC_MAX + 1];
	char filter[FTRACED_FILTER_MAX + 1];
	char clock[FTRACED_NAME_MAX + 1];
	char session[FTRACED_NAME_MAX + 1];
	uint32_t buffer_kb;
	uint32_t subbuf_kb;
	uint32_t compression;
	int32_t level;
	uint64_t duration_ms;
	uint32_t mode;
	uint64_t segment_size;
	uint64_t segment_time_ms;
	uint64_t max_total;
	uint32_t max_files;
	uint64_t max_age_ms;
	uint64_t keep_free;
	uint32_t keep_free_percent;
	char on_segment[FTRACED_COMMAND_MAX + 1];
	uint32_t flight_backend;
	char boot_instance[FTRACED_NAME_MAX + 1]; /* FTRACED_ATTR_INSTANCE: persistent backend's */
	uint64_t flight_size;
	unsigned n_triggers;
	char triggers[FTRACED_TRIGGERS_PER_REQUEST_MAX][FTRACED_TRIGGER_MAX + 1];
	uint32_t trim;
	uint64_t since_us;       /* FTRACED_ATTR_SINCE_US */
	uint32_t stacktrace;
	uint32_t rt_priority; /* 0: normal scheduling */
	uint32_t read_interval_us; /* -s; 0: the watermark only */
	uint32_t proc_map;         /* --proc-map */
	uint64_t keep_kb;          /* record -m: KiB kept per CPU, the most recent; 0: all */
	unsigned n_proc_maps;      /* STOP: PROCMAPS texts, offsets into text */
	uint32_t proc_maps[FTRACED_PIDS_PER_REQUEST_MAX];
	uint32_t ignore_missing;
	unsigned n_pids;
	uint32_t pids[FTRACED_PIDS_PER_REQUEST_MAX];
	uint32_t follow_fork;
	/* Long repeated strings: offsets into text, which holds them NUL-terminated. */
	char tracer[FTRACED_TRACER_MAX + 1];
	unsigned n_functions;
	struct {
		uint16_t attr; /* FTRACE_FILTER, FTRACE_NOTRACE or GRAPH_FUNCTION */
		uint32_t offset;
	} functions[FTRACED_FUNCTIONS_PER_REQUEST_MAX];
	uint32_t max_graph_depth;
	uint32_t func_stack;
	unsigned n_probes;
	uint32_t probes[FTRACED_PROBES_PER_REQUEST_MAX];
	unsigned n_options;
	uint32_t options[FTRACED_OPTIONS_PER_REQUEST_MAX]; /* -O: offsets into text */
	uint32_t cpumask;   /* -M: offset + 1 into text; 0: none */
	uint32_t no_filter; /* --no-filter */
	uint32_t top_level; /* --top-level */
	uint32_t offer;     /* OFFER: enum ftraced_offer */
	size_t n_text;
	char text[FTRACED_MSG_SIZE_MAX]; /* each string came with a 4-byte header: they fit */
};

/* The memory maps (--proc-map) of request PROC_MAPS entry @k. */
static inline const char *ctl_request_proc_maps(const struct ctl_request *r, unsigned k)
{
	return r->text + r->proc_maps[k];
}

/* Request event @k as given: SYSTEM[:EVENT], globs allowed. */
static inline const char *ctl_request_event(const struct ctl_request *r, unsigned k)
{
	return r->event_text + r->events[k].spec;
}

/* The per-event trigger (-R) of request event @k, or NULL. */
static inline const char *ctl_request_event_trigger(const struct ctl_request *r, unsigned k)
{
	return r->events[k].trigger ? r->event_text + r->events[k].trigger - 1 : NULL;
}

/* The per-event filter of request event @k, or NULL. */
static inline const char *ctl_request_event_filter(const struct ctl_request *r, unsigned k)
{
	return r->events[k].filter ? r->event_text + r->events[k].filter - 1 : NULL;
}

static inline bool ctl_request_has(const struct ctl_request *r, enum ftraced_attr a)
{
	return ctl_attr_set_has(&r->present, a);
}

/* -M's mask, or NULL. */
static inline const char *ctl_request_cpumask(const struct ctl_request *r)
{
	return r->cpumask ? r->text + r->cpumask - 1 : NULL;
}

int ctl_msg_parse(const void *buf, size_t n, struct ctl_msg *ret);
void ctl_attr_iter_init(struct ctl_attr_iter *it, const struct ctl_msg *m);
int ctl_attr_next(struct ctl_attr_iter *it, struct ctl_attr *ret);
int ctl_attr_u32(const struct ctl_attr *a, uint32_t *ret);
int ctl_attr_u64(const struct ctl_attr *a, uint64_t *ret);
int ctl_attr_string(const struct ctl_attr *a, size_t max, char *ret);
int ctl_attr_cpu_stats(const struct ctl_attr *a, struct ftraced_cpu_stats *ret);
int ctl_attr_session_counters(const struct ctl_attr *a, struct ftraced_session_counters *ret);
int ctl_attr_daemon_counters(const struct ctl_attr *a, struct ftraced_daemon_counters *ret);
int ctl_attr_event_list(const struct ctl_attr *a, struct ftraced_event_list *ret);
int ctl_request_parse(const void *buf, size_t n, struct ctl_request *ret, uint16_t *ret_bad_attr);
int ctl_request_store_event(struct ctl_request *req, const char *spec, size_t len);
int ctl_request_store_event_filter(struct ctl_request *req, const char *filter, size_t len);
int ctl_request_store_event_trigger(struct ctl_request *req, const char *trigger, size_t len);
int ctl_request_parse_event_list(struct ctl_request *req, const void *list, size_t n,
				 uint16_t *ret_bad_attr);
void ctl_request_done(struct ctl_request *req);

/* For _cleanup_: a heap request and its events (the pointer is cleared). */
static inline void ctl_request_freep(struct ctl_request **p)
{
	if (*p) {
		ctl_request_done(*p);
		free(*p);
		*p = NULL;
	}
}
void ctl_attr_rule(uint16_t type, char *buf, size_t n);

bool ctl_name_valid(const char *s);
bool ctl_string_valid(enum ftraced_attr type, const char *s, size_t max);

/*
 * Building a message into a fixed buffer; the first overflow sticks. Event
 * attributes (ctl_put_event()) gather in a list that grows as needed;
 * ctl_put_events_end() moves a short list inline and leaves a long one for
 * the memfd (ATTR_EVENT_LIST). ctl_builder_done() frees the list.
 */
struct ctl_builder {
	uint8_t buf[FTRACED_MSG_SIZE_MAX];
	size_t n;
	int error;
	uint8_t *list;        /* the events' attributes: pending, then those for the memfd */
	size_t n_list;
	size_t n_list_allocated;
	size_t list_pending;  /* where the events not yet ended begin */
};

void ctl_builder_init(struct ctl_builder *b, enum ftraced_msg_type type);
void ctl_put(struct ctl_builder *b, enum ftraced_attr type, const void *data, size_t len);
void ctl_put_u32(struct ctl_builder *b, enum ftraced_attr type, uint32_t v);
void ctl_put_u64(struct ctl_builder *b, enum ftraced_attr type, uint64_t v);
void ctl_put_string(struct ctl_builder *b, enum ftraced_attr type, const char *s);
void ctl_put_cpu_stats(struct ctl_builder *b, enum ftraced_attr type,
		       const struct ftraced_cpu_stats *s);
void ctl_put_session_counters(struct ctl_builder *b, const struct ftraced_session_counters *c);
void ctl_put_daemon_counters(struct ctl_builder *b, const struct ftraced_daemon_counters *c);
void ctl_put_event(struct ctl_builder *b, enum ftraced_attr type, const char *s);
void ctl_put_events_end(struct ctl_builder *b);
int ctl_builder_finish(struct ctl_builder *b, size_t *ret_size);
void ctl_builder_done(struct ctl_builder *b);

/* For _cleanup_: a heap builder (zeroed or initialized) and the events it gathered. */
static inline void ctl_builder_freep(struct ctl_builder **p)
{
	if (*p) {
		ctl_builder_done(*p);
		free(*p);
	}
}
int ctl_builder_parse(struct ctl_builder *b, struct ctl_request *ret, uint16_t *ret_bad_attr);
