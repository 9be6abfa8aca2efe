// SPDX-License-Identifier: GPL-2.0-or-later
/* Session files: anything parsed must become a request the protocol parser accepts. */
#include <stdint.h>
#include <stdlib.h>

#include "daemon/store/session-file.h"
#include "lib/ctl/ctl-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ctl_builder b;
	static struct ctl_request req;
	char error[256];
	unsigned line;

	if (session_file_parse((const char *)data, size, "fuzz", &b, error, sizeof(error),
			       &line) < 0) {
		ctl_builder_done(&b);
		return 0;
	}
	if (ctl_builder_parse(&b, &req, NULL) < 0)
		abort(); /* the daemon would reject what the file parser accepted */
	ctl_builder_done(&b);
	ctl_request_done(&req);
	return 0;
}
