// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ftraced-spool-events SPOOL_DIR: what a live spool holds, per CPU, as
 * recovery would read it (spool_scan()): the events of its intact chunk
 * records and the kernel's "read events" counter when it began. The
 * integration tests compare the two with the kernel's counter now, to
 * wait until everything the daemon took from the kernel is in the spool.
 * Reads only; the daemon may be writing as it runs. Prints one JSON object.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "daemon/recovery/recovery-recipe.h"
#include "daemon/store/spool.h"
#include "lib/io-util.h"

/* Opens CPU @cpu's spool, and says where its header is. */
static int open_cpu(int dir_fd, unsigned cpu, unsigned n_cpus, uint64_t *ret_header)
{
	char name[32];
	int fd;

	fd = openat(dir_fd, SPOOL_IN_PLACE_NAME, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0) {
		*ret_header = spool_region_start(spool_in_place_region(n_cpus), cpu);
		return fd;
	}
	snprintf(name, sizeof(name), "cpu%u", cpu);
	*ret_header = 0;
	fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? negative_errno() : fd;
}

int main(int argc, char *argv[])
{
	struct parsed_recipe p = {};
	int dir_fd, r;

	if (argc != 2) {
		fprintf(stderr, "Usage: ftraced-spool-events SPOOL_DIR\n");
		return 2;
	}
	dir_fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir_fd < 0) {
		fprintf(stderr, "cannot open '%s': %m\n", argv[1]);
		return 1;
	}
	r = recipe_parse(dir_fd, &p);
	if (r < 0) {
		fprintf(stderr, "'%s': no recipe: %s\n", argv[1], strerror(-r));
		close(dir_fd);
		return 1;
	}
	printf("{\"cpus\": [");
	for (unsigned cpu = 0; cpu < p.n_cpus; cpu++) {
		struct spool_scan scan = { .start = SPOOL_START_UNKNOWN };
		uint64_t header;
		int fd = open_cpu(dir_fd, cpu, p.n_cpus, &header);

		if (fd >= 0) {
			spool_scan(fd, header, p.zstd, p.imeta.subbuf_size, &scan);
			close(fd);
		}
		printf("%s{\"cpu\": %u, \"events\": %" PRIu64 ", \"start_read\": %" PRId64 "}",
		       cpu ? ", " : "", cpu, scan.events,
		       scan.start.read == UINT64_MAX ? (int64_t)-1 : (int64_t)scan.start.read);
	}
	printf("]}\n");
	recipe_done(&p);
	close(dir_fd);
	return 0;
}
