// SPDX-License-Identifier: GPL-2.0-or-later
/* The control protocol parser, fed raw packets: it must reject or parse, never misbehave. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/ctl/ctl-proto.h"
#include "lib/ctl/ctl-reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_request req;
	static struct reply rep;
	struct ctl_attr_iter it;
	struct ctl_attr a;
	struct ctl_msg m;

	if (ctl_request_parse(data, size, &req, NULL) == 0) {
		/* Whatever parsed must be bounded strings. */
		for (unsigned i = 0; i < req.n_events; i++)
			if (strlen(ctl_request_event(&req, i)) > FTRACED_EVENT_SPEC_MAX)
				abort();
	}
	/* The same bytes as a memfd's event list (what ATTR_EVENT_LIST points at). */
	if (ctl_request_parse_event_list(&req, data, size, NULL) == 0)
		for (unsigned i = 0; i < req.n_events; i++) {
			const char *f = ctl_request_event_filter(&req, i);

			if (strlen(ctl_request_event(&req, i)) > FTRACED_EVENT_SPEC_MAX ||
			    (f && strlen(f) > FTRACED_FILTER_MAX))
				abort();
		}
	ctl_request_done(&req);
	/* ftracectl's decoder of whole replies: ERROR's KERNEL_REFUSED, sessions, ... */
	if (ctl_reply_decode(data, size, &rep) == 0) {
		if (rep.type == FTRACED_MSG_ERROR && (rep.error >= 0 ||
		    strlen(rep.message) > FTRACED_MESSAGE_MAX))
			abort();
		ctl_reply_done(&rep);
	}
	/* The reply side (ftracectl) walks attributes generically. */
	if (ctl_msg_parse(data, size, &m) == 0) {
		ctl_attr_iter_init(&it, &m);
		while (ctl_attr_next(&it, &a) > 0) {
			char s[FTRACED_MESSAGE_MAX + 1];
			struct ftraced_cpu_stats st;

			ctl_attr_string(&a, FTRACED_MESSAGE_MAX, s);
			ctl_attr_cpu_stats(&a, &st);
		}
	}
	return 0;
}
