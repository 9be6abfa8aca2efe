// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * What a killed daemon held: the sub-buffers a capture worker had taken
 * from the kernel and not yet stored, kept in a hold (daemon/store/hold.h)
 * that outlived it. They came after every record of their spool and
 * before everything the orphan's ring still holds, so recovery appends
 * them to the spool as one chunk record between the two: in order, and
 * (the hold's header tells whether the spool already has them) once.
 * Called by recovery.c for each CPU of a compressed spool, after the
 * spool was cut after its last intact record and before the ring's drain.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "daemon/base/log.h"
#include "daemon/recovery/recovery-hold.h"
#include "daemon/store/hold.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"

/**
 * recovery_hold_append() - append to a CPU's spool what the daemon held for it.
 * @hold_dir_fd: the holds' directory (< 0: none)
 * @spool_id: the spool's trace id
 * @cpu: the CPU
 * @p: the spool's recipe
 * @fd: the CPU's spool file, its header at 0, cut after its last intact record
 * @scan: what it holds (updated when something is added)
 *
 * Failures are logged: what was held is then counted as lost, as it was
 * before holds existed.
 */
void recovery_hold_append(int hold_dir_fd, uint64_t spool_id, unsigned cpu,
			  const struct parsed_recipe *p, int fd, struct spool_scan *scan)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;
	_cleanup_free_ uint8_t *raw = NULL, *out = NULL;
	size_t n = 0, size;
	int r;

	if (hold_dir_fd < 0 || !p->zstd)
		return;
	r = hold_find(hold_dir_fd, spool_id, cpu, p->imeta.subbuf_size, scan->bytes, &raw, &n);
	if (r <= 0) {
		if (r < 0)
			log_warning_errno(r, "Recovery: cannot read what CPU %u's worker held: %m",
					  cpu);
		return;
	}
	size = chunk_record_bound(n);
	out = malloc(size);
	r = out ? compressor_new(&c) : -ENOMEM;
	if (r >= 0)
		r = compressor_for_chunks(c);
	if (r >= 0)
		r = chunk_record_encode(c, p->level, raw, n, out, size, &size);
	if (r >= 0)
		r = loop_pwrite(fd, out, size, (off_t)(scan->data_offset + scan->bytes));
	if (r < 0) {
		log_warning_errno(r, "Recovery: cannot add what CPU %u's worker held to its "
				  "spool (counted as lost): %m", cpu);
		return;
	}
	spool_scan(fd, 0, p->zstd, p->imeta.subbuf_size, scan);
	log_info("Recovery: CPU %u: %zu bytes its worker had taken from the kernel and not "
		 "stored were still held, and follow its spool", cpu, n);
}
