// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The flight recorder's memory: per CPU, a FIFO of compressed chunks under
 * a byte budget. The capture worker pushes, evicting the oldest chunks
 * when the budget would be exceeded; a snapshot takes references to every
 * chunk held at that moment and writes them out at leisure, so neither
 * side waits for the other beyond a short lock (an append, or one
 * reference per chunk). Evicted chunks a snapshot still holds are freed
 * when it drops them.
 *
 * Memory charged against the budget is each chunk's allocation (header
 * and data); the FIFO's own slot array is a few bytes per chunk on top.
 *
 * A kept ring (chunk_ring_keep()) has its chunks' bytes in slabs that
 * outlive the daemon (store/ring-keep.h) instead: the oldest history goes
 * a slab at a time there (a slab's pages are touched only as far as it is
 * filled, so the budget counts the chunks' bytes all the same). The chunks a
 * snapshot holds are mapped until it lets go, as heap chunks are.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/log.h"
#include "daemon/capture/chunk-ring.h"
#include "daemon/store/ring-keep.h"

struct chunk_ring {
	pthread_mutex_t lock;
	uint64_t budget;
	struct chunk **slots; /* circular: n entries from head */
	size_t cap, head, n;
	uint64_t bytes, raw_bytes;
	uint64_t evicted_chunks, evicted_raw_bytes;
	struct ring_keep *keep; /* NULL: chunks on the heap */
	bool leave_files;       /* the daemon exits: the next start resumes the slabs */
};

static uint64_t charge(const struct chunk *c)
{
	return sizeof(*c) + c->size;
}

/**
 * chunk_new() - a chunk with room for @size bytes, one reference held.
 * @size: data bytes
 *
 * Return: the chunk (size set, the rest zero), or NULL.
 */
struct chunk *chunk_new(size_t size)
{
	struct chunk *c;

	if (size > UINT32_MAX)
		return NULL;
	c = malloc(sizeof(*c) + size);
	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	c->size = (uint32_t)size;
	c->raw_size = 0;
	c->first_ts = c->last_ts = 0;
	c->data = c->bytes;
	c->slab = NULL;
	c->resumed = false;
	return c;
}

struct chunk *chunk_ref(struct chunk *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	return c;
}

struct chunk *chunk_unref(struct chunk *c)
{
	if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1) {
		ring_slab_unref(c->slab);
		free(c);
	}
	return NULL;
}

void chunk_list_done(struct chunk_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		chunk_unref(l->chunks[i]);
	free(l->chunks);
	*l = (struct chunk_list){};
}

/**
 * chunk_ring_new() - an empty ring.
 * @budget: bytes the ring may hold (UINT64_MAX: no limit)
 * @ret: the ring
 *
 * Return: 0 or -ENOMEM.
 */
int chunk_ring_new(uint64_t budget, struct chunk_ring **ret)
{
	struct chunk_ring *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->budget = budget;
	*ret = r;
	return 0;
}

/* Lock held. */
static struct chunk *pop_oldest(struct chunk_ring *r)
{
	struct chunk *c = r->slots[r->head];

	r->head = (r->head + 1) % r->cap;
	r->n--;
	r->bytes -= charge(c);
	r->raw_bytes -= c->raw_size;
	return c;
}

/* The byte budget the ring was made with (UINT64_MAX: none); never changes. */
uint64_t chunk_ring_budget(const struct chunk_ring *r)
{
	return r->budget;
}

/* Lock held: the oldest chunk goes, and its slab's file once it held the slab's last chunk. */
static void evict_oldest(struct chunk_ring *r, bool count)
{
	struct chunk *old = pop_oldest(r);

	if (count) {
		r->evicted_chunks++;
		r->evicted_raw_bytes += old->raw_size;
	}
	/* Its slab's last chunk: the slab goes (the one being filled too: a new one follows). */
	if (old->slab && (r->n == 0 || r->slots[r->head]->slab != old->slab))
		ring_keep_drop(r->keep, old->slab);
	chunk_unref(old);
}

void chunk_ring_clear(struct chunk_ring *r)
{
	pthread_mutex_lock(&r->lock);
	while (r->n > 0)
		evict_oldest(r, /* count= */ false);
	/* The slab being filled goes too: a history begins afresh. */
	if (r->keep && r->keep->current)
		ring_keep_drop(r->keep, r->keep->current);
	r->evicted_chunks = r->evicted_raw_bytes = 0;
	pthread_mutex_unlock(&r->lock);
}

struct chunk_ring *chunk_ring_free(struct chunk_ring *r)
{
	if (!r)
		return NULL;
	if (r->leave_files) {
		/* The chunks let go of their mappings; the files stay for the next start. */
		while (r->n > 0)
			chunk_unref(pop_oldest(r));
	} else {
		chunk_ring_clear(r);
	}
	r->keep = ring_keep_free(r->keep, r->leave_files);
	free(r->slots);
	pthread_mutex_destroy(&r->lock);
	free(r);
	return NULL;
}

/* Lock held: room for one more slot. */
static int grow(struct chunk_ring *r)
{
	size_t cap = MAX(r->cap * 2, (size_t)64);
	struct chunk **slots;

	if (r->n < r->cap)
		return 0;
	slots = malloc(cap * sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		slots[i] = r->slots[(r->head + i) % r->cap];
	free(r->slots);
	r->slots = slots;
	r->cap = cap;
	r->head = 0;
	return 0;
}

/* Lock held: @c goes in as the newest, or (no memory for its slot) is counted as evicted. */
static int append_slot(struct chunk_ring *r, struct chunk *c)
{
	int ret = grow(r);

	if (ret < 0) {
		r->evicted_chunks++;
		r->evicted_raw_bytes += c->raw_size;
		chunk_unref(c);
		return ret;
	}
	r->slots[(r->head + r->n) % r->cap] = c;
	r->n++;
	r->bytes += charge(c);
	r->raw_bytes += c->raw_size;
	return 0;
}

/**
 * chunk_ring_push() - append a chunk, evicting the oldest ones to stay in budget.
 * @r: ring
 * @c: chunk; the ring takes the caller's reference, even on failure
 *
 * Return: 0, or -ENOMEM (the chunk is dropped and counted as evicted).
 */
int chunk_ring_push(struct chunk_ring *r, struct chunk *c)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	while (r->n > 0 && r->bytes + charge(c) > r->budget)
		evict_oldest(r, /* count= */ true);
	ret = append_slot(r, c);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

/* A chunk whose bytes are in @slab at @data; takes a reference to the slab. */
static struct chunk *slab_chunk(struct ring_slab *slab, uint8_t *data, size_t size,
				uint32_t raw_size, uint64_t first_ts, uint64_t last_ts)
{
	struct chunk *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	atomic_init(&c->refs, 1);
	c->size = (uint32_t)size;
	c->raw_size = raw_size;
	c->first_ts = first_ts;
	c->last_ts = last_ts;
	c->data = data;
	c->slab = ring_slab_ref(slab);
	return c;
}

struct resume {
	struct chunk_ring *r;
	struct ring_slab *last_slab;
};

static int resume_chunk(struct ring_slab *slab, const struct ring_record *rec, uint8_t *data,
			void *userdata)
{
	struct resume *u = userdata;
	struct chunk *c = slab_chunk(slab, data, rec->size, rec->raw_size, rec->first_ts,
				     rec->last_ts);

	if (!c)
		return -ENOMEM;
	c->resumed = true;
	if (slab != u->last_slab) {
		u->last_slab = slab;
		/* Its chunks came after older ones this ring let go of before. */
		if (u->r->n == 0 && slab->seq > 0)
			u->r->evicted_chunks = 1;
	}
	return append_slot(u->r, c);
}

/**
 * chunk_ring_keep() - keep the ring's chunks in slabs that outlive the daemon.
 * @r: an empty ring
 * @k: its CPU's keep; the ring owns it from now on, even on failure
 * @resume: take up the history the keep's files hold (the daemon started
 *	    again), instead of removing them
 *
 * Return: the number of chunks resumed, or -errno (the ring is then empty
 * and keeps nothing).
 */
int chunk_ring_keep(struct chunk_ring *r, struct ring_keep *k, bool resume)
{
	struct resume u = { .r = r };
	int n = 0;

	pthread_mutex_lock(&r->lock);
	r->keep = k;
	if (resume)
		n = ring_keep_load(k, resume_chunk, &u);
	else
		ring_keep_discard(k);
	pthread_mutex_unlock(&r->lock);
	if (n < 0) {
		chunk_ring_clear(r);
		pthread_mutex_lock(&r->lock);
		r->keep = ring_keep_free(r->keep, false);
		pthread_mutex_unlock(&r->lock);
	}
	return n;
}

/**
 * chunk_ring_append() - a copy of a chunk's bytes in as the newest, evicting to stay in budget.
 * @r: ring
 * @data: the chunk's bytes
 * @size: their number
 * @raw_size: the sub-buffer bytes they hold
 * @first_ts: its first sub-buffer's timestamp
 * @last_ts: its last one's
 *
 * In a kept ring the bytes go into its slab; where no slab can be made,
 * onto the heap (kept no longer than the daemon, said once).
 *
 * Return: 0, or -ENOMEM (the chunk is dropped and counted as evicted).
 */
int chunk_ring_append(struct chunk_ring *r, const void *data, size_t size, uint32_t raw_size,
		      uint64_t first_ts, uint64_t last_ts)
{
	struct chunk *c;
	int ret = -ENOMEM;

	if (size > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&r->lock);
	/* A slab's file goes whole: the oldest history goes a slab at a time. */
	while (r->keep && r->n > 0 && r->bytes + sizeof(*c) + size > r->budget) {
		struct ring_slab *oldest = r->slots[r->head]->slab;

		do
			evict_oldest(r, /* count= */ true);
		while (oldest && r->n > 0 && r->slots[r->head]->slab == oldest);
	}
	if (r->keep) {
		int k = ring_keep_fits(r->keep, size) ? 0 : ring_keep_new_slab(r->keep, size);
		uint8_t *at = NULL;

		if (k == 0) {
			at = ring_keep_append(r->keep, data, size, raw_size, first_ts, last_ts);
			k = at ? 0 : -errno;
		}
		if (at) {
			c = slab_chunk(r->keep->current, at, size, raw_size, first_ts, last_ts);
			if (c)
				ret = append_slot(r, c);
			pthread_mutex_unlock(&r->lock);
			return ret;
		}
		/* No room where it outlives us: on the heap, and what was kept goes (a hole). */
		log_ratelimit_warning_errno(k, "CPU %u: no room to keep the flight recorder's "
					    "history beyond the daemon's life, keeping it in memory "
					    "only: %m", r->keep->cpu);
		ring_keep_forget(r->keep);
	}
	pthread_mutex_unlock(&r->lock);
	c = chunk_new(size);
	if (!c)
		return -ENOMEM;
	memcpy(c->data, data, size);
	c->raw_size = raw_size;
	c->first_ts = first_ts;
	c->last_ts = last_ts;
	return chunk_ring_push(r, c);
}

/* The daemon exits: the ring's slabs stay for its next start (chunk_ring_free() leaves them). */
void chunk_ring_leave(struct chunk_ring *r)
{
	pthread_mutex_lock(&r->lock);
	r->leave_files = r->keep != NULL;
	pthread_mutex_unlock(&r->lock);
}

/**
 * chunk_ring_collect() - references to every chunk held now, oldest first.
 * @r: ring
 * @ret: the list; release with chunk_list_done()
 *
 * Return: 0 or -ENOMEM.
 */
int chunk_ring_collect(struct chunk_ring *r, struct chunk_list *ret)
{
	struct chunk_list l = {};

	pthread_mutex_lock(&r->lock);
	l.chunks = malloc(MAX(r->n, (size_t)1) * sizeof(*l.chunks));
	if (!l.chunks) {
		pthread_mutex_unlock(&r->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->n; i++) {
		struct chunk *c = r->slots[(r->head + i) % r->cap];

		l.chunks[l.n++] = chunk_ref(c);
		l.bytes += c->size;
		l.raw_bytes += c->raw_size;
		if (c->resumed)
			l.gap_from_ts = c->last_ts;
		else if (l.gap_from_ts && !l.gap_to_ts)
			l.gap_to_ts = c->first_ts;
	}
	l.evicted = r->evicted_chunks > 0;
	pthread_mutex_unlock(&r->lock);
	*ret = l;
	return 0;
}

void chunk_ring_stats(struct chunk_ring *r, struct chunk_ring_stats *ret)
{
	pthread_mutex_lock(&r->lock);
	*ret = (struct chunk_ring_stats){
		.chunks = r->n,
		.bytes = r->bytes,
		.raw_bytes = r->raw_bytes,
		.first_ts = r->n ? r->slots[r->head]->first_ts : 0,
		.last_ts = r->n ? r->slots[(r->head + r->n - 1) % r->cap]->last_ts : 0,
		.evicted_chunks = r->evicted_chunks,
		.evicted_raw_bytes = r->evicted_raw_bytes,
	};
	pthread_mutex_unlock(&r->lock);
}
