// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * A kept flight ring (capture/chunk-ring.c over store/ring-keep.c): its
 * chunks are in slab files that a ring left at the daemon's exit, or a
 * killed daemon's, gives back in order to the next ring; eviction removes
 * a slab's file once its last chunk goes while a snapshot's hold stays
 * readable; a damaged record ends the history there; clearing, destroying
 * and pruning remove the files.
 */
#undef NDEBUG
#include <assert.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/capture/chunk-ring.h"
#include "daemon/store/ring-keep.h"

#define SUBBUF 4096u

static char hold_dir[] = "/tmp/test-ring-keep.XXXXXX";
static int hold_fd;

static unsigned n_files(const char *session)
{
	char path[256];
	unsigned n = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/" RING_KEEP_DIR_PREFIX "%s", hold_dir, session);
	d = opendir(path);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

static struct chunk_ring *kept_ring(const char *session, uint64_t budget, bool resume, int *ret_n)
{
	struct chunk_ring *r;
	struct ring_keep *k;

	assert(chunk_ring_new(budget, &r) == 0);
	assert(ring_keep_open(hold_fd, session, 0, SUBBUF, true, budget, &k) == 0);
	*ret_n = chunk_ring_keep(r, k, resume);
	assert(*ret_n >= 0);
	return r;
}

/* Chunk @i: @size bytes of (i + j) & 0xff, SUBBUF raw bytes per 100 bytes stored. */
static void append(struct chunk_ring *r, unsigned i, size_t size)
{
	uint8_t *data = malloc(size);

	for (size_t j = 0; j < size; j++)
		data[j] = (uint8_t)(i + j);
	assert(chunk_ring_append(r, data, size, SUBBUF, 1000 + i, 1000 + i) == 0);
	free(data);
}

static void check_chunks(const struct chunk_list *l, unsigned first, size_t size)
{
	for (size_t n = 0; n < l->n; n++) {
		const struct chunk *c = l->chunks[n];

		assert(c->size == size && c->first_ts == 1000 + first + n && c->raw_size == SUBBUF);
		for (size_t j = 0; j < size; j++)
			assert(c->data[j] == (uint8_t)(first + n + j));
	}
}

static bool no_session(const char *name, void *userdata)
{
	return false;
}

int main(void)
{
	const uint64_t budget = 16 * 8192;
	struct chunk_ring_stats st;
	struct chunk_list l, held;
	struct chunk_ring *r;
	int n;

	assert(mkdtemp(hold_dir));
	hold_fd = open(hold_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert(hold_fd >= 0);

	/* 10 chunks of 3000 bytes in 8 KiB slabs; the daemon exits; the next start resumes. */
	r = kept_ring("s", budget, false, &n);
	for (unsigned i = 0; i < 10; i++)
		append(r, i, 3000);
	assert(n_files("s") == 5);
	chunk_ring_leave(r);
	chunk_ring_free(r);
	assert(n_files("s") == 5);
	r = kept_ring("s", budget, true, &n);
	assert(n == 10);
	chunk_ring_stats(r, &st);
	assert(st.chunks == 10 && st.last_ts == 1009 && st.evicted_chunks == 0);
	append(r, 10, 3000);
	assert(chunk_ring_collect(r, &l) == 0);
	assert(l.n == 11 && l.gap_from_ts == 1009 && l.gap_to_ts == 1010 && !l.evicted);
	check_chunks(&l, 0, 3000);
	chunk_list_done(&l);

	/* Past the budget: whole slabs go, files with them; a snapshot's hold stays readable. */
	assert(chunk_ring_collect(r, &held) == 0);
	for (unsigned i = 11; i < 60; i++)
		append(r, i, 3000);
	chunk_ring_stats(r, &st);
	assert(st.bytes <= budget && st.evicted_chunks > 0);
	assert(n_files("s") == (st.chunks + 1) / 2);
	check_chunks(&held, 0, 3000);
	chunk_list_done(&held);
	assert(chunk_ring_collect(r, &l) == 0);
	assert(l.evicted && l.gap_from_ts == 0 && l.chunks[l.n - 1]->first_ts == 1059);
	check_chunks(&l, 60 - (unsigned)l.n, 3000);
	chunk_list_done(&l);

	/* Killed (the ring simply never freed its files): resumed, older data said dropped. */
	chunk_ring_leave(r);
	chunk_ring_free(r);
	r = kept_ring("s", budget, true, &n);
	chunk_ring_stats(r, &st);
	assert(n > 0 && st.evicted_chunks > 0 && st.last_ts == 1059);
	chunk_ring_leave(r);
	chunk_ring_free(r);

	/* A record damaged in the middle: the history ends before it, later slabs go. */
	{
		char path[256];
		int fd;

		snprintf(path, sizeof(path), "%s/" RING_KEEP_DIR_PREFIX "s", hold_dir);
		r = kept_ring("t", budget, false, &n);
		for (unsigned i = 0; i < 6; i++)
			append(r, i, 3000);
		chunk_ring_leave(r);
		chunk_ring_free(r);
		snprintf(path, sizeof(path), "%s/" RING_KEEP_DIR_PREFIX "t/cpu0-%016x", hold_dir, 1);
		fd = open(path, O_RDWR);
		assert(fd >= 0);
		/* The second record of slab 1 (chunk 3): its magic. */
		assert(pwrite(fd, "XXXX", 4, RING_SLAB_HDR_SIZE + sizeof(struct ring_record) + 3000) == 4);
		close(fd);
		r = kept_ring("t", budget, true, &n);
		assert(n == 3);
		assert(chunk_ring_collect(r, &l) == 0);
		check_chunks(&l, 0, 3000);
		chunk_list_done(&l);
		assert(n_files("t") == 2);
		/* A start that does not resume: a new history, the old files gone. */
		chunk_ring_leave(r);
		chunk_ring_free(r);
		r = kept_ring("t", budget, false, &n);
		assert(n == 0 && n_files("t") == 0);
		append(r, 0, 3000);
		assert(n_files("t") == 1);
		chunk_ring_clear(r);
		assert(n_files("t") == 0);
		chunk_ring_free(r);
	}

	/* Pruned when no session has the name, removed when it is destroyed. */
	r = kept_ring("u", budget, false, &n);
	append(r, 0, 3000);
	chunk_ring_leave(r);
	chunk_ring_free(r);
	assert(n_files("u") == 1 && n_files("s") > 0);
	ring_keep_dir_remove(hold_fd, "s");
	assert(n_files("s") == 0);
	ring_keep_prune(hold_fd, no_session, NULL);
	assert(n_files("u") == 0 && n_files("t") == 0);
	assert(rmdir(hold_dir) == 0);
	return 0;
}
