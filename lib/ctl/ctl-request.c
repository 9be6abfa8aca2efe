// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a parsed request (ctl-proto.h) holds beyond fixed fields, and what
 * the parser's rules are in words.
 *
 * Its events are the one list of the protocol without a small cap, since a
 * session may name every event of a kernel (tens of thousands with many
 * modules). They come inline or, when long, from the memfd ATTR_EVENT_LIST
 * points into; either way they are stored as they come, in memory that
 * grows to what they use, up to FTRACED_EVENTS_PER_REQUEST_MAX.
 *
 * ctl_attr_rule() says what each attribute must look like, for the error
 * reply that refuses it. No I/O, no logging.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftraced/macro.h"
#include "lib/ctl/ctl-proto.h"

/*
 * An EVENT or EVENT_FILTER string at the end of the request's event text,
 * which grows: events come from the packet or from a memfd of up to
 * FTRACED_EVENT_LIST_SIZE_MAX bytes, so offsets fit in 32 bits.
 */
static int event_string(struct ctl_request *req, const char *s, size_t len, uint32_t *ret)
{
	size_t need;

	need = req->n_event_text + len + 1;
	if (need > UINT32_MAX)
		return -EBADMSG;
	if (need > req->n_event_text_allocated) {
		size_t want = MAX(MAX(req->n_event_text_allocated * 2, (size_t)1024), need);
		char *grown = realloc(req->event_text, want);

		if (!grown)
			return -ENOMEM;
		req->event_text = grown;
		req->n_event_text_allocated = want;
	}
	memcpy(req->event_text + req->n_event_text, s, len);
	req->event_text[req->n_event_text + len] = '\0';
	*ret = (uint32_t)req->n_event_text;
	req->n_event_text = need;
	return 0;
}

/**
 * ctl_request_store_event() - store one event spec the parser checked.
 * @req: request being parsed
 * @spec: the spec, @len bytes, no NUL in them
 * @len: at most FTRACED_EVENT_SPEC_MAX
 *
 * Return: 0; -E2BIG beyond FTRACED_EVENTS_PER_REQUEST_MAX events; -ENOMEM.
 */
int ctl_request_store_event(struct ctl_request *req, const char *spec, size_t len)
{
	uint32_t offset;
	int r;

	if (req->n_events >= FTRACED_EVENTS_PER_REQUEST_MAX)
		return -E2BIG;
	if (req->n_events == req->n_events_allocated) {
		size_t want = MAX(req->n_events_allocated * 2, (size_t)16);
		struct ctl_event *grown = reallocarray(req->events, want, sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		req->events = grown;
		req->n_events_allocated = want;
	}
	r = event_string(req, spec, len, &offset);
	if (r < 0)
		return r;
	req->events[req->n_events++] = (struct ctl_event){ .spec = offset };
	return 0;
}

/**
 * ctl_request_store_event_filter() - store one event filter the parser checked.
 * @req: request being parsed
 * @filter: the filter, @len bytes, no NUL in them
 * @len: at most FTRACED_FILTER_MAX
 *
 * Like trace-cmd's -f: the filter of the event just before, once.
 *
 * Return: 0; -EBADMSG without an unfiltered event before it; -ENOMEM.
 */
int ctl_request_store_event_filter(struct ctl_request *req, const char *filter, size_t len)
{
	struct ctl_event *e = req->n_events ? &req->events[req->n_events - 1] : NULL;
	uint32_t offset;
	int r;

	if (!e || e->filter)
		return -EBADMSG;
	r = event_string(req, filter, len, &offset);
	if (r < 0)
		return r;
	e->filter = offset + 1;
	return 0;
}

/**
 * ctl_request_store_event_trigger() - store one event trigger (-R) the parser checked.
 * @req: request being parsed
 * @trigger: the trigger, @len bytes, no NUL in them
 * @len: at most FTRACED_EVENT_TRIGGER_MAX
 *
 * Like trace-cmd's -R: the trigger of the event just before, once.
 *
 * Return: 0; -EBADMSG without an event before it, or a second one; -ENOMEM.
 */
int ctl_request_store_event_trigger(struct ctl_request *req, const char *trigger, size_t len)
{
	struct ctl_event *e = req->n_events ? &req->events[req->n_events - 1] : NULL;
	uint32_t offset;
	int r;

	if (!e || e->trigger)
		return -EBADMSG;
	r = event_string(req, trigger, len, &offset);
	if (r < 0)
		return r;
	e->trigger = offset + 1;
	return 0;
}

/**
 * ctl_request_done() - free what a parsed request allocated (its events).
 * @req: a request from ctl_request_parse(), or zeroed; zeroed again after
 */
void ctl_request_done(struct ctl_request *req)
{
	free(req->events);
	free(req->event_text);
	req->events = NULL;
	req->event_text = NULL;
	req->n_events = 0;
	req->n_events_allocated = 0;
	req->n_event_text = 0;
	req->n_event_text_allocated = 0;
}

/**
 * ctl_attr_event_list() - read an ATTR_EVENT_LIST.
 * @a: the attribute
 * @ret: the range it names
 *
 * Return: 0, or -EBADMSG if it is not 16 bytes or names an empty range or
 * one beyond FTRACED_EVENT_LIST_SIZE_MAX.
 */
int ctl_attr_event_list(const struct ctl_attr *a, struct ftraced_event_list *ret)
{
	uint64_t offset, size;

	if (a->len != sizeof(struct ftraced_event_list))
		return -EBADMSG;
	offset = get_le64(a->data);
	size = get_le64(a->data + 8);
	if (size == 0 || size > FTRACED_EVENT_LIST_SIZE_MAX ||
	    offset > FTRACED_EVENT_LIST_SIZE_MAX - size)
		return -EBADMSG;
	*ret = (struct ftraced_event_list){ .offset = offset, .size = size };
	return 0;
}

/**
 * ctl_attr_rule() - what a request attribute must look like, for an error reply.
 * @type: the attribute a request was refused over
 * @buf: receives its name and rule, e.g. "filter (printable ASCII on one line, ...)"
 * @n: its size
 */
void ctl_attr_rule(uint16_t type, char *buf, size_t n)
{
	switch (type) {
	case FTRACED_ATTR_PROC_MAPS:
		snprintf(buf, n, "proc maps (printable text with newlines, at most %u bytes and %u "
			 "processes)", FTRACED_PROC_MAPS_MAX, FTRACED_PIDS_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_PROC_MAP:
		snprintf(buf, n, "proc-map (0 or 1, record only)");
		break;
	case FTRACED_ATTR_KEEP_KB:
		snprintf(buf, n, "kept size (-m: 1 to %" PRIu64 " KiB per CPU, record only)",
			 FTRACED_KEEP_KB_MAX);
		break;
	case FTRACED_ATTR_READ_INTERVAL_US:
		snprintf(buf, n, "read interval (-s: %u to %u microseconds)",
			 FTRACED_READ_INTERVAL_MIN_US, FTRACED_READ_INTERVAL_MAX_US);
		break;
	case FTRACED_ATTR_EVENT_TRIGGER:
		snprintf(buf, n, "event trigger (-R: printable ASCII on one line, at most %u bytes, "
			 "one for the event just before it)", FTRACED_EVENT_TRIGGER_MAX);
		break;
	case FTRACED_ATTR_EXCLUDE_EVENT:
		snprintf(buf, n, "excluded event (-v: SYSTEM, SYSTEM:EVENT or EVENT of letters, "
			 "digits, _ - . and the globs * ? [ ]; at most %u characters and %u of them)",
			 FTRACED_EVENT_SPEC_MAX, FTRACED_EXCLUDED_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_EVENT:
		snprintf(buf, n, "event (all, SYSTEM, SYSTEM:EVENT or EVENT of letters, digits, "
			 "_ - . and the globs * ? [ ]; at most %u characters)", FTRACED_EVENT_SPEC_MAX);
		break;
	case FTRACED_ATTR_EVENT_LIST:
		snprintf(buf, n, "event list (16 bytes: where in the memfd passed last the events "
			 "are, at most %u bytes; events inline or there, not both)",
			 FTRACED_EVENT_LIST_SIZE_MAX);
		break;
	case FTRACED_ATTR_FILTER:
		snprintf(buf, n, "filter (printable ASCII on one line, at most %u bytes)",
			 FTRACED_FILTER_MAX);
		break;
	case FTRACED_ATTR_CLOCK:
	case FTRACED_ATTR_SESSION:
		snprintf(buf, n, "%s (1 to %u letters, digits, _ and -)",
			 type == FTRACED_ATTR_CLOCK ? "clock" : "session name", FTRACED_NAME_MAX);
		break;
	case FTRACED_ATTR_INSTANCE:
		snprintf(buf, n, "boot-mapped instance name (1 to %u letters, digits, _ and -)",
			 FTRACED_NAME_MAX);
		break;
	case FTRACED_ATTR_ON_SEGMENT:
		snprintf(buf, n, "on-segment command (printable ASCII on one line, at most %u bytes)",
			 FTRACED_COMMAND_MAX);
		break;
	case FTRACED_ATTR_TRIGGER:
		snprintf(buf, n, "trigger (printable ASCII on one line, at most %u bytes and %u "
			 "triggers)", FTRACED_TRIGGER_MAX, FTRACED_TRIGGERS_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_COMPRESSION:
		snprintf(buf, n, "compression (zstd or none)");
		break;
	case FTRACED_ATTR_MODE:
		snprintf(buf, n, "mode (record, continuous or flight)");
		break;
	case FTRACED_ATTR_FLIGHT_BACKEND:
		snprintf(buf, n, "flight backend (memory, kernel or persistent)");
		break;
	case FTRACED_ATTR_PID:
		snprintf(buf, n, "pid (1 to %d, at most %u)", INT32_MAX, FTRACED_PIDS_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_EVENT_FILTER:
		snprintf(buf, n, "event filter (printable ASCII on one line, at most %u bytes, one "
			 "for each event and after it)", FTRACED_FILTER_MAX);
		break;
	case FTRACED_ATTR_TRACER:
		snprintf(buf, n, "tracer (1 to %u letters, digits and _)", FTRACED_TRACER_MAX);
		break;
	case FTRACED_ATTR_FTRACE_FILTER:
	case FTRACED_ATTR_FTRACE_NOTRACE:
	case FTRACED_ATTR_GRAPH_FUNCTION:
		snprintf(buf, n, "function (a glob of letters, digits and _ . * ? [ ] : - $, at most "
			 "%u characters and %u functions)", FTRACED_FUNCTION_MAX,
			 FTRACED_FUNCTIONS_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_MAX_GRAPH_DEPTH:
		snprintf(buf, n, "max graph depth (at least 1)");
		break;
	case FTRACED_ATTR_PROBE:
		snprintf(buf, n, "probe (printable ASCII on one line, at most %u bytes and %u probes)",
			 FTRACED_PROBE_MAX, FTRACED_PROBES_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_TRACE_OPTION:
		snprintf(buf, n, "trace option (letters, digits, _ and -, at most %u characters and "
			 "%u options)", FTRACED_OPTION_MAX, FTRACED_OPTIONS_PER_REQUEST_MAX);
		break;
	case FTRACED_ATTR_CPUMASK:
		snprintf(buf, n, "CPU mask (hex digits and commas, at most %u characters)",
			 FTRACED_CPUMASK_MAX);
		break;
	default:
		snprintf(buf, n, "attribute %u (unknown to this request, repeated, of the wrong "
			 "size, or missing)", type);
	}
}
