// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Crash recovery: rebuilding readable v7 files from the spools of captures that never
 * completed (the daemon was killed, or a file could not be written). When a segment
 * opens, its spool directory gets a recipe: the target file, compression, CPU count,
 * events, instance name, and the instance's header_page, header_event and trace_clock,
 * verbatim. After a crash that and the spools are enough: whatever the orphaned instance
 * still holds in its ring buffers is drained, each spool is read up to its last intact
 * chunk (sizes checked, every zstd frame decompressed against its checksum, pages well
 * formed), and the file is written next to where it would have gone, as
 * "...-recovered.dat", with formats, symbols and comms read at recovery time.
 *
 * Data the daemon had taken from the kernel but not yet stored outlives it in a hold
 * (recovery-hold.c), which goes between the spool and the ring's rest; a ring in
 * overwrite mode goes on overwriting after the crash. Each spool's header records the
 * kernel's "read events", "overrun" and "dropped events" counters when the spool began;
 * with the orphan's, read before its drain, they count per CPU what was lost between the
 * spool and the ring's rest, which follows in the same file. The counts go into the
 * file's CPU statistics as a session's files have them. The orphan is removed only once
 * the file is on disk: a crash during recovery leaves the spool and the orphan for the
 * next start. Used at start-up, before orphans are removed, and by `ftracectl recover`;
 * the state directory locked.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <tracefs.h>

#include "config.h"
#include "daemon/base/bounds.h"
#include "daemon/kernel/event-list.h"
#include "daemon/kernel/instance.h"
#include "daemon/kernel/instance-lease.h"
#include "daemon/kernel/kallsyms.h"
#include "daemon/kernel/clock-anchor.h"
#include "daemon/base/log.h"
#include "daemon/recovery/recovered-file.h"
#include "daemon/recovery/recovery-hold.h"
#include "daemon/recovery/recovery-recipe.h"
#include "daemon/recovery/persistent-history.h"
#include "daemon/recovery/recovery.h"
#include "daemon/store/hold.h"
#include "daemon/store/spool.h"
#include "lib/ctl/ctl-proto.h"
#include "lib/chunk-record.h"
#include "lib/compress.h"
#include "lib/io-util.h"
#include "lib/rb-page.h"
#include "lib/v7-writer.h"

/*
 * Appends what the orphaned instance still holds for one CPU to its spool;
 * counts into @d what it read.
 */
static void drain_orphan_cpu(struct instance *orphan, unsigned cpu, bool snapshot, int spool_fd,
			     const struct parsed_recipe *p, struct compressor *c,
			     struct ring_drained *d)
{
	uint32_t page = p->imeta.subbuf_size;
	size_t cap = MAX((size_t)page, (size_t)CHUNK_TARGET_BYTES), n = 0;
	uint8_t *raw = malloc(cap), *out = malloc(chunk_record_bound(cap));
	int fd = -EBADF;

	if ((snapshot ? instance_open_cpu_snapshot_raw(orphan, cpu, &fd) :
			instance_open_cpu_raw(orphan, cpu, &fd)) < 0 || !raw || !out)
		goto out;
	if (lseek(spool_fd, 0, SEEK_END) < 0)
		goto out;
	for (bool more = true; more;) {
		ssize_t k = read(fd, raw + n, page);

		more = k > 0;
		if (k > 0) {
			struct rb_page_info info;

			memset(raw + n + k, 0, page - (size_t)k);
			if (d->pages++ == 0 && rb_page_parse(raw + n, page, &info) >= 0)
				d->first_ts = info.ts;
			n += page;
		}
		if (n > 0 && (!more || n + page > cap)) {
			size_t csize = n;

			if (p->zstd) {
				if (chunk_record_encode(c, p->level, raw, n, out, chunk_record_bound(cap),
							&csize) < 0)
					break;
			}
			if (loop_write(spool_fd, p->zstd ? out : raw, csize) < 0)
				break;
			n = 0;
		}
	}
out:
	safe_close(fd);
	free(raw);
	free(out);
}

/*
 * What the orphaned instance's ring buffers still hold, never read, goes to
 * @fds (appended). The instance stays until the file is on disk
 * (remove_orphan()): a crash before leaves the spool to recover again.
 */
static void drain_orphan(struct instance *orphan, const struct parsed_recipe *p, int *fds,
			 struct ring_drained *drained)
{
	_cleanup_(compressor_freep) struct compressor *c = NULL;

	if (compressor_new(&c) >= 0 && compressor_for_chunks(c) >= 0)
		for (unsigned cpu = 0; cpu < p->n_cpus; cpu++)
			if (fds[cpu] >= 0) {
				/*
				 * A history swapped out for a snapshot, not yet all
				 * drained, is older than the ring's: first.
				 */
				if (p->kernel_history)
					drain_orphan_cpu(orphan, cpu, true, fds[cpu], p, c,
							 &drained[cpu]);
				drain_orphan_cpu(orphan, cpu, false, fds[cpu], p, c, &drained[cpu]);
			}
}

static void remove_orphan(struct instance *orphan, const struct parsed_recipe *p)
{
	int r;

	if (p->persistent) {
		/* The kernel's: drained (read empties it) and released, never removed. */
		instance_destroy(orphan);
		log_notice("Recovery: drained boot-mapped instance '%s'", p->instance);
		return;
	}
	if (instance_is_top_level(orphan)) {
		/* Never removed: its settings go back from the lease's journal after recovery. */
		instance_destroy(orphan);
		log_notice("Recovery: drained the leased top-level buffer");
		return;
	}
	r = instance_destroy(orphan);

	if (r < 0)
		log_warning_errno(r, "Recovery: drained orphaned instance '%s', but removing it "
				  "failed: %m", p->instance);
	else
		log_notice("Recovery: drained and removed orphaned instance '%s'", p->instance);
}

/*
 * A spool file, to be trimmed and read: a regular file with no other name.
 * A hard link planted in its place would have us truncate whatever it
 * links to.
 */
static int open_spool_file(int spool_dir_fd, const char *name)
{
	struct stat st;
	int fd;

	fd = openat(spool_dir_fd, name, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -EBADF;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		log_warning("Recovery: spool file '%s' is not a regular file with one link, "
			    "ignoring it", name);
		close(fd);
		return -EBADF;
	}
	return fd;
}

/*
 * Events of one CPU lost since its spool began, as its counters tell:
 * those the kernel overwrote or dropped, and those read from the ring but
 * not in the spool (the daemon died with them in hand). The orphan's
 * counters @now are read before its drain. UINT64_MAX: unknown.
 */
static void count_losses(const struct spool_scan *scan, const struct cpu_counters *now,
			 uint64_t *ret_ring, uint64_t *ret_in_flight)
{
	const struct spool_start *start = &scan->start;

	*ret_ring = *ret_in_flight = UINT64_MAX;
	if (start->overrun != UINT64_MAX && now->overrun >= start->overrun &&
	    now->dropped >= start->dropped)
		*ret_ring = (now->overrun - start->overrun) + (now->dropped - start->dropped);
	if (start->read != UINT64_MAX && now->read >= start->read &&
	    now->read - start->read >= scan->events)
		*ret_in_flight = now->read - start->read - scan->events;
}

/*
 * The file's CPU data: each CPU's intact spool records (fd < 0: none),
 * after its header. Return: bytes of captured data, all CPUs.
 */
static uint64_t describe_spools(const struct parsed_recipe *p, const int *fds,
				struct v7_cpu_data *data)
{
	uint64_t total = 0;

	for (unsigned cpu = 0; cpu < p->n_cpus; cpu++) {
		struct spool_scan scan;

		data[cpu] = (struct v7_cpu_data){ .cpu = cpu, .fd = fds[cpu] };
		if (fds[cpu] >= 0) {
			spool_scan(fds[cpu], 0, p->zstd, p->imeta.subbuf_size, &scan);
			data[cpu].offset = scan.data_offset;
			data[cpu].size = scan.bytes;
			data[cpu].n_chunks = (uint32_t)scan.chunks;
		}
		total += data[cpu].size;
	}
	return total;
}

/*
 * What the spools of one instance, taken oldest first, hold since each
 * CPU's last spool header with real counters. A rotation cuts the CPUs
 * one worker at a time: a daemon killed between two cuts leaves the newer
 * spool with the placeholder header ("nothing read yet") on the CPUs not
 * cut, whose events since the older spool's header went into it or died
 * in the worker's hands. Their loss counts from that header, less every
 * event stored since, in any of the spools.
 */
struct spool_carry {
	unsigned n_cpus;           /* 0: nothing carried yet */
	struct spool_start *start; /* per CPU: the last real header's counters */
	uint64_t *events;          /* per CPU: events stored since that header */
};

static void spool_carry_done(struct spool_carry *c)
{
	free(c->start);
	free(c->events);
	*c = (struct spool_carry){};
}

/* Sized for @n_cpus, nothing carried; -ENOMEM. */
static int spool_carry_reset(struct spool_carry *c, unsigned n_cpus)
{
	spool_carry_done(c);
	c->start = malloc(n_cpus * sizeof(*c->start));
	c->events = calloc(n_cpus, sizeof(*c->events));
	if (!c->start || !c->events) {
		spool_carry_done(c);
		return -ENOMEM;
	}
	for (unsigned cpu = 0; cpu < n_cpus; cpu++)
		c->start[cpu] = SPOOL_START_UNKNOWN;
	c->n_cpus = n_cpus;
	return 0;
}

/*
 * One CPU of the next spool: a real header starts over from it, a
 * placeholder adds its events to what came before. @ret: the scan to
 * count its losses with.
 */
static void spool_carry_step(struct spool_carry *c, unsigned cpu, const struct spool_scan *scan,
			     struct spool_scan *ret)
{
	*ret = *scan;
	if (scan->start.read != UINT64_MAX) {
		c->start[cpu] = scan->start;
		c->events[cpu] = scan->events;
	} else if (c->start[cpu].read != UINT64_MAX) {
		c->events[cpu] += scan->events;
		ret->start = c->start[cpu];
		ret->events = c->events[cpu];
	}
}

/* Everything one spool's recovery holds. */
struct recovery {
	struct parsed_recipe p;
	struct instance *orphan;   /* the instance that captured into it, if still there */
	int *fds;                  /* per CPU: its spool file, or < 0 */
	struct spool_scan *scan;   /* per CPU: what the spool held before the drain */
	struct ring_drained *drained; /* per CPU: what the drain read from the orphan */
	struct v7_cpu_data *data;
	struct cpustat_texts stats;
	char *last_boot_info;      /* persistent: the boot-mapped instance's, before the drain */
	bool followed;             /* a later segment's spool of its instance follows it */
	struct spool_carry *carry; /* the older spools of its instance; NULL: none */
	int hold_dir_fd;           /* what killed daemons held (hold.h); -EBADF: none */
	uint64_t spool_id;
};

static void recovery_done(struct recovery *rc)
{
	instance_free(rc->orphan);
	for (unsigned cpu = 0; rc->fds && cpu < rc->p.n_cpus; cpu++)
		safe_close(rc->fds[cpu]);
	free(rc->fds);
	free(rc->scan);
	free(rc->drained);
	free(rc->data);
	recovered_file_cpustat_done(&rc->stats);
	free(rc->last_boot_info);
	recipe_done(&rc->p);
}

static int recovery_alloc(struct recovery *rc)
{
	unsigned n = rc->p.n_cpus;

	rc->stats.n_cpus = n;
	rc->fds = malloc(n * sizeof(*rc->fds));
	rc->data = calloc(n, sizeof(*rc->data));
	rc->scan = calloc(n, sizeof(*rc->scan));
	rc->drained = calloc(n, sizeof(*rc->drained));
	rc->stats.texts = calloc(2 * (size_t)n, sizeof(*rc->stats.texts));
	if (!rc->fds || !rc->data || !rc->scan || !rc->drained || !rc->stats.texts)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < n; cpu++)
		rc->fds[cpu] = -EBADF;
	return 0;
}

/*
 * Each CPU's spool, cut after its last intact record, and what the
 * orphan's counters say was lost since it began: the statistics the file
 * will carry. A history's ring overwriting its oldest events is what a
 * flight recorder does, not a loss: there only what a drain took and did
 * not store counts. Return: events lost, all CPUs (those known).
 */
static uint64_t open_spools(struct recovery *rc, int spool_dir_fd, bool split)
{
	uint64_t lost = 0;

	if (rc->carry && rc->carry->n_cpus != rc->p.n_cpus &&
	    spool_carry_reset(rc->carry, rc->p.n_cpus) < 0)
		rc->carry = NULL; /* out of memory: each spool counts from its own header */
	for (unsigned cpu = 0; cpu < rc->p.n_cpus; cpu++) {
		_cleanup_free_ char *text = NULL;
		uint64_t ring = UINT64_MAX, in_flight = UINT64_MAX;
		struct spool_scan counted;
		struct cpu_counters now;
		const char *end;
		char name[32];

		snprintf(name, sizeof(name), "cpu%u", cpu);
		if (!split)
			rc->fds[cpu] = open_spool_file(spool_dir_fd, name);
		rc->scan[cpu] = (struct spool_scan){ .start = SPOOL_START_UNKNOWN };
		if (rc->fds[cpu] >= 0) {
			spool_scan(rc->fds[cpu], 0, rc->p.zstd, rc->p.imeta.subbuf_size,
				   &rc->scan[cpu]);
			/* A crash tears a record; anything more was never ours to recover. */
			if (rc->scan[cpu].ignored > 0)
				log_notice("Recovery: CPU %u's spool has %" PRIu64 " bytes after its "
					   "last intact record (torn, damaged, or not sub-buffers): "
					   "left out", cpu, rc->scan[cpu].ignored);
			if (ftruncate(rc->fds[cpu], (off_t)(rc->scan[cpu].data_offset +
							    rc->scan[cpu].bytes)) < 0)
				log_warning_errno(negative_errno(),
						  "Recovery: cannot trim spool, ignoring: %m");
			recovery_hold_append(rc->hold_dir_fd, rc->spool_id, cpu, &rc->p,
					     rc->fds[cpu], &rc->scan[cpu]);
		} else if (rc->p.kernel_history) {
			/* No drain was under way: the history is all in the ring. */
			rc->fds[cpu] = openat(spool_dir_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
			if (rc->fds[cpu] >= 0 &&
			    spool_write_header(rc->fds[cpu], &SPOOL_START_UNKNOWN, NULL) < 0)
				rc->fds[cpu] = safe_close(rc->fds[cpu]);
			in_flight = 0;
		}
		counted = rc->scan[cpu];
		if (rc->carry)
			spool_carry_step(rc->carry, cpu, &rc->scan[cpu], &counted);
		if (rc->orphan && instance_read_cpu_stats(rc->orphan, cpu, &now, &text) == 0) {
			if (!rc->p.kernel_history || in_flight != 0)
				count_losses(&counted, &now, &ring, &in_flight);
		} else {
			text = NULL;
		}
		end = text;
		if (rc->p.kernel_history)
			ring = 0;
		/*
		 * Followed: a later spool of its instance holds what came after,
		 * or for a CPU the rotation had not cut yet, counts what was lost
		 * since this one's header (spool_carry).
		 */
		if (rc->followed) {
			end = "";
			ring = in_flight = 0;
		}
		if (ring != UINT64_MAX)
			lost += ring;
		if (in_flight != UINT64_MAX)
			lost += in_flight;
		/* What the kernel lost is in its counters; what was in flight, ftraced says. */
		if (recovered_file_cpustat_set(&rc->stats, &rc->p, cpu, end, in_flight,
				rc->p.kernel_history ? &SPOOL_START_UNKNOWN : &counted.start) < 0)
			log_warning("Recovery: out of memory for CPU %u's statistics", cpu);
	}
	return lost;
}

/*
 * Rebuilds a spool's file: its records, then what the orphaned instance's
 * ring still holds (after the hole of what was lost, counted). A
 * kernel-backend flight recorder's history has no spool data of its own
 * but a drain's copy (flight.c): the orphan holds it all, and it becomes a
 * snapshot, "...-recovered.dat" in the session's snapshots directory.
 * -ESRCH: that instance is gone, and the history with it.
 */
static int recover_one(int state_dir_fd, int spool_dir_fd, const char *prefix, bool followed,
		       struct spool_carry *carry, struct kallsyms *ks, char *out, size_t n_out,
		       int hold_dir_fd, uint64_t spool_id)
{
	struct recovery rc = { .followed = followed, .carry = carry, .hold_dir_fd = hold_dir_fd,
			       .spool_id = spool_id };
	uint64_t total, lost;
	int r;

	r = recipe_parse(spool_dir_fd, &rc.p);
	if (r < 0)
		goto out;
	/* Armed in this boot: its session, created again, resumes it, unread. */
	if (persistent_history_of_this_boot(&rc.p)) {
		r = -EAGAIN;
		goto out;
	}
	/*
	 * The file is in place: the daemon died between renaming it and removing
	 * the spool. Recovering it again would duplicate every event.
	 */
	if (faccessat(state_dir_fd, rc.p.target, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		r = -EEXIST;
		goto out;
	}
	if (rc.p.persistent) {
		r = persistent_history_adopt(&rc.p, &rc.orphan, &rc.last_boot_info);
		if (r < 0)
			goto out;
	} else if (!prefix || followed ||
		   (instance_lease_adopt_orphan(state_dir_fd, rc.p.instance, &rc.orphan) < 0 &&
		    instance_adopt_orphan(rc.p.instance, prefix, &rc.orphan) < 0)) {
		rc.orphan = NULL;
	}
	/* A history is gone with its instance, unless a drain's copy holds part of it. */
	if (rc.p.kernel_history && !rc.orphan &&
	    faccessat(spool_dir_fd, "cpu0", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		r = -ESRCH;
		goto out;
	}
	r = recovery_alloc(&rc);
	if (r < 0)
		goto out;
	/* An in-place spool (spool.c) is first split into spool files of its own. */
	r = spool_split_in_place(spool_dir_fd, rc.p.n_cpus, rc.p.zstd, rc.p.imeta.subbuf_size,
				 rc.fds);
	if (r < 0 && r != -ENOENT)
		goto out;
	lost = open_spools(&rc, spool_dir_fd, r == 0);
	/* The ring's rest follows the spool: each CPU's events stay in time order. */
	if (rc.orphan)
		drain_orphan(rc.orphan, &rc.p, rc.fds, rc.drained);
	/* The kernel forgets a ring's overrun at a reboot: how full it was tells. */
	for (unsigned cpu = 0; rc.p.persistent && rc.orphan && cpu < rc.p.n_cpus; cpu++)
		rc.stats.texts[rc.p.n_cpus + cpu] = persistent_history_cpustat(
			rc.orphan, cpu, &rc.drained[cpu], rc.p.imeta.subbuf_size);
	total = describe_spools(&rc.p, rc.fds, rc.data);
	r = recovered_file_name(rc.p.target, "-recovered.dat", out, n_out);
	if (r >= 0)
		r = recovered_file_write(state_dir_fd, &rc.p, out, rc.data, &rc.stats, ks,
					 rc.last_boot_info);
	if (r < 0)
		goto out;
	if (rc.p.kernel_history)
		log_notice("Recovered the flight recorder history of instance '%s' as '%s' "
			   "(%" PRIu64 " bytes of captured data)", rc.p.instance, out, total);
	else
		log_notice("Recovered '%s' (%" PRIu64 " bytes of captured data)", out, total);
	if (lost > 0)
		log_warning("Recovery: %" PRIu64 " event(s) of '%s' were lost (overwritten in the "
			    "ring, or read but not stored, when the daemon stopped); its CPU "
			    "statistics count them", lost, out);
	/* Only now, with the file on disk: a crash before drained nothing for good. */
	if (rc.orphan) {
		remove_orphan(rc.orphan, &rc.p);
		rc.orphan = NULL;
	}
out:
	recovery_done(&rc);
	return r;
}

/*
 * A spool found at start-up. One instance can have several: a continuous
 * session's closed segment keeps its spool until its file is in place,
 * while the next segment's already receives the data. The orphan's ring
 * follows only the newest of them in time, so only that one drains it and
 * counts what the ring lost; for a CPU the rotation had not cut yet, it
 * counts from the older one's header (struct spool_carry).
 */
struct found_spool {
	char name[SPOOL_NAME_SIZE];
	char instance[RECIPE_INSTANCE_MAX]; /* "": no recipe read */
	struct timespec made; /* the recipe's: segments of one instance follow each other */
	bool followed; /* a later one of its instance's follows */
};

static int found_spool_cmp(const void *a, const void *b)
{
	const struct found_spool *x = a, *y = b;
	int c = strcmp(x->instance, y->instance);

	if (c != 0)
		return c;
	if (x->made.tv_sec != y->made.tv_sec)
		return x->made.tv_sec < y->made.tv_sec ? -1 : 1;
	if (x->made.tv_nsec != y->made.tv_nsec)
		return x->made.tv_nsec < y->made.tv_nsec ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Every spool directory, oldest first within each instance, all but the
 * newest of each marked as followed (never draining the orphan). Names
 * not of ours are logged and left out. Return: 0 (*ret_spools malloc'd),
 * or -ENOMEM.
 */
static int find_spools(int spool_fd, struct found_spool **ret_spools, size_t *ret_n)
{
	_cleanup_free_ struct found_spool *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	d = fdopendir(dup(spool_fd));
	if (!d)
		return -ENOMEM;
	while ((de = readdir(d))) {
		struct found_spool *f;
		struct stat st;
		int dir_fd;

		if (de->d_name[0] == '.')
			continue;
		if (!spool_name_valid(de->d_name)) {
			char shown[4 * NAME_MAX + 1];

			log_warning("Recovery: '%s' in the spool directory was not made by ftraced, "
				    "ignoring it", log_escape(de->d_name, shown, sizeof(shown)));
			continue;
		}
		if (n == cap) {
			struct found_spool *more = reallocarray(v, cap ? 2 * cap : 16, sizeof(*v));

			if (!more) {
				closedir(d);
				return -ENOMEM;
			}
			v = more;
			cap = cap ? 2 * cap : 16;
		}
		f = &v[n++];
		*f = (struct found_spool){};
		strcpy(f->name, de->d_name);
		dir_fd = openat(spool_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dir_fd < 0)
			continue;
		if (recipe_instance(dir_fd, f->instance, sizeof(f->instance)) < 0)
			f->instance[0] = '\0';
		else if (fstatat(dir_fd, RECIPE, &st, AT_SYMLINK_NOFOLLOW) == 0)
			f->made = st.st_mtim;
		close(dir_fd);
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), found_spool_cmp);
	for (size_t i = 0; i + 1 < n; i++)
		v[i].followed = v[i].instance[0] && strcmp(v[i].instance, v[i + 1].instance) == 0;
	*ret_spools = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

/**
 * recovery_recover_all() - rebuild a file from every stale spool, then remove it.
 * @state_dir_fd: the state directory, locked by the caller
 * @instance_prefix: orphaned instances named with it may be drained ("ftraced-<tag>-")
 * @ks: symbols for the files (NULL: none)
 * @ret_files: how many files were recovered
 * @ret_failed: how many spools could not be (kept, and logged)
 *
 * A spool that cannot be recovered (no recipe, a write error) is kept and
 * logged. Nothing else must capture into this state directory meanwhile.
 * The spools of one instance go oldest first, and only the newest takes
 * what its orphan's ring still holds: a crash part way leaves the orphan
 * to the one it belongs to.
 *
 * Return: 0, or -errno if the spool directory cannot be read.
 */
int recovery_recover_all(int state_dir_fd, const char *instance_prefix, struct kallsyms *ks,
			 unsigned *ret_files, unsigned *ret_failed)
{
	_cleanup_free_ struct found_spool *spools = NULL;
	_cleanup_close_ int spool_fd = -EBADF, hold_fd = -EBADF;
	struct spool_carry carry = {};
	size_t n_spools = 0;
	int r;

	*ret_files = 0;
	*ret_failed = 0;
	spool_fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (spool_fd < 0)
		return errno == ENOENT ? 0 : negative_errno();
	r = find_spools(spool_fd, &spools, &n_spools);
	if (r < 0)
		return r;
	if (hold_dir_open(state_dir_fd, &hold_fd) < 0)
		hold_fd = -EBADF; /* none kept (by a reboot, or an older daemon): lost, counted */
	for (size_t i = 0; i < n_spools; i++) {
		const char *name = spools[i].name;
		char out[PATH_MAX];
		int dir_fd;

		/* A new instance (or none named): nothing carried from the spools before. */
		if (i == 0 || !spools[i].instance[0] ||
		    strcmp(spools[i].instance, spools[i - 1].instance) != 0)
			spool_carry_done(&carry);
		dir_fd = openat(spool_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (dir_fd < 0)
			continue;
		r = recover_one(state_dir_fd, dir_fd, instance_prefix, spools[i].followed,
				spools[i].instance[0] ? &carry : NULL, ks, out, sizeof(out), hold_fd,
				strtoull(name, NULL, 16));
		if (r == -EEXIST) {
			log_info("Removing spool '%s': its file is complete", name);
			spool_remove_dir(spool_fd, name);
		} else if (r == -EAGAIN) {
			log_info("Keeping spool '%s': a persistent history of this boot, which its "
				 "session resumes", name);
		} else if (r == -ESRCH) {
			log_info("Removing spool '%s': the flight recorder history it kept is gone "
				 "with its instance, or cannot be read right", name);
			spool_remove_dir(spool_fd, name);
		} else if (r == -ENOENT && faccessat(dir_fd, RECIPE, F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
			/*
			 * No recipe: the spool was being created (no data yet) or
			 * removed (its file was complete). Nothing in it is lost.
			 */
			log_info("Removing spool '%s' of a segment that had no data of its own", name);
			spool_remove_dir(spool_fd, name);
		} else if (r < 0) {
			log_warning_errno(r, "Cannot recover spool '%s', keeping it: %m", name);
			(*ret_failed)++;
		} else {
			spool_remove_dir(spool_fd, name);
			(*ret_files)++;
		}
		close(dir_fd);
	}
	spool_carry_done(&carry);
	if (hold_fd >= 0)
		hold_dir_prune(hold_fd, spool_fd);
	return 0;
}

/**
 * recovery_recover_spool() - rebuild the file of one capture's kept spool now.
 * @state_dir_fd: the state directory
 * @trace_id: the capture whose file could not be written (its spool was kept)
 * @ks: symbols for the file (NULL: none)
 * @out: receives the recovered file's path, relative to the state directory
 * @n_out: its size
 *
 * For a running daemon: no orphaned instance is adopted (the capture's
 * instance, if any, is still the session's). The spool is removed once
 * its file is in place.
 *
 * Return: 0, or -errno (the spool is then kept for the next start).
 */
int recovery_recover_spool(int state_dir_fd, uint64_t trace_id, struct kallsyms *ks, char *out,
			   size_t n_out)
{
	_cleanup_close_ int spool_fd = -EBADF, dir_fd = -EBADF;
	char name[SPOOL_NAME_SIZE];
	int r;

	spool_name(trace_id, name, sizeof(name));
	spool_fd = openat(state_dir_fd, SPOOL_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (spool_fd < 0)
		return negative_errno();
	dir_fd = openat(spool_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dir_fd < 0)
		return negative_errno();
	/* Its streams are finished: nothing of it is held. */
	r = recover_one(state_dir_fd, dir_fd, /* prefix= */ NULL, /* followed= */ false,
			/* carry= */ NULL, ks, out, n_out, -EBADF, trace_id);
	if (r >= 0)
		spool_remove_dir(spool_fd, name);
	return r;
}

/**
 * recovery_forget() - the spool's file is complete: never recover it again.
 * @spool_dir_fd: the spool directory
 *
 * Called as soon as the file is in place (or, for a record, written into
 * the client's fd), before the spool is removed: a crash in between then
 * leaves a spool without recipe, which recovery drops.
 */
void recovery_forget(int spool_dir_fd)
{
	unlinkat(spool_dir_fd, RECIPE, 0);
}

/**
 * recovery_run_offline() - `ftraced --recover DIR`: what start-up does, without the daemon.
 * @state_dir: a state directory no daemon is using
 * @json: print the counts as JSON
 *
 * Recovery writes files as root, reads event formats from tracefs and
 * drains orphaned instances, so it is the daemon's step; ftracectl recover
 * runs it. The state directory's lock keeps it away from a running daemon,
 * and a directory without spool/ is refused before anything is created in it.
 *
 * Return: 0 if every capture was recovered, 1 if some could not be, -errno otherwise
 *         (after saying why on stderr).
 */
int recovery_run_offline(const char *state_dir, bool json)
{
	_cleanup_(kallsyms_freep) struct kallsyms *ks = NULL;
	_cleanup_close_ int dir_fd = -EBADF, lock_fd = -EBADF;
	_cleanup_free_ char *resolved = NULL;
	unsigned recovered, failed;
	uint32_t tag;
	char prefix[32], holder[64];
	struct stat st;
	int r;

	if (geteuid() != 0)
		return log_error_errno(-EPERM, "Recovery needs root: it writes files in '%s' and "
				       "removes tracefs instances", state_dir);
	if (!tracefs_tracing_dir())
		return log_error_errno(-ENOENT, "tracefs is not mounted (recovery reads event "
				       "formats from it)");
	dir_fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	resolved = realpath(state_dir, NULL);
	if (dir_fd < 0 || !resolved)
		return log_error_errno(-errno, "Cannot open '%s': %m", state_dir);
	if (fstatat(dir_fd, "spool", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return log_error_errno(-ENOENT, "'%s' is not an ftraced state directory (it has no "
				       "spool/ directory)", state_dir);
	lock_fd = openat(dir_fd, "lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock_fd < 0)
		return log_error_errno(-errno, "Cannot open '%s/lock': %m", state_dir);
	if (flock(lock_fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno == EWOULDBLOCK)
			return log_error_errno(-EBUSY, "ftraced is running on '%s'; it recovers by "
					       "itself when it starts", state_dir);
		return log_error_errno(-errno, "Cannot lock '%s': %m", state_dir);
	}
	if (ftruncate(lock_fd, 0) < 0 || dprintf(lock_fd, "%d\n", (int)getpid()) < 0)
		log_debug_errno(-errno, "Cannot write the pid into '%s/lock': %m", state_dir);
	r = instance_tag_load(dir_fd, resolved, /* create= */ false, &tag);
	if (r < 0)
		return log_error_errno(r, "Cannot read '%s/%s': %m", state_dir, INSTANCE_TAG_FILE);
	/* A copy of a running daemon's state directory: its instances are no orphans. */
	if (clock_anchor_check_tag(tag, holder, sizeof(holder)) == -EBUSY)
		return log_error_errno(-EBUSY, "Another ftraced (%s) runs with instance tag %08"
				       PRIx32 ": '%s' is a copy of its state directory?", holder,
				       tag, state_dir);
	snprintf(prefix, sizeof(prefix), "ftraced-%08" PRIx32 "-", tag);
	if (kallsyms_open(&ks) < 0 && !ks)
		return log_error_errno(-ENOMEM, "Out of memory");
	r = kallsyms_store_in(ks, dir_fd);
	if (r < 0)
		return log_error_errno(r, "Cannot duplicate the state directory's fd: %m");
	r = recovery_recover_all(dir_fd, prefix, ks, &recovered, &failed);
	if (r < 0)
		return log_error_errno(r, "Cannot read '%s/spool': %m", state_dir);
	r = instance_lease_restore_stale(dir_fd);
	if (r < 0)
		log_warning_errno(r, "Cannot put the leased top-level buffer back: %m");
	/* No daemon holds the directory: what is left of its instances (its clock anchor's) goes. */
	r = instance_remove_orphans(tag, NULL, NULL);
	if (r < 0)
		log_warning_errno(r, "Looking for orphaned instances failed, ignoring: %m");
	if (json)
		printf("{\"recovered\": %u, \"failed\": %u}\n", recovered, failed);
	else
		printf("%u capture(s) recovered, %u could not be\n", recovered, failed);
	return failed > 0 ? 1 : 0;
}
