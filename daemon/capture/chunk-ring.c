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
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "daemon/capture/chunk-ring.h"

struct chunk_ring {
	pthread_mutex_t lock;
	uint64_t budget;
	struct chunk **slots; /* circular: n entries from head */
	size_t cap, head, n;
	uint64_t bytes, raw_bytes;
	uint64_t evicted_chunks, evicted_raw_bytes;
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
	return c;
}

struct chunk *chunk_ref(struct chunk *c)
{
	atomic_fetch_add_explicit(&c->refs, 1, memory_order_relaxed);
	return c;
}

struct chunk *chunk_unref(struct chunk *c)
{
	if (c && atomic_fetch_sub_explicit(&c->refs, 1, memory_order_acq_rel) == 1)
		free(c);
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

void chunk_ring_clear(struct chunk_ring *r)
{
	pthread_mutex_lock(&r->lock);
	while (r->n > 0)
		chunk_unref(pop_oldest(r));
	r->evicted_chunks = r->evicted_raw_bytes = 0;
	pthread_mutex_unlock(&r->lock);
}

struct chunk_ring *chunk_ring_free(struct chunk_ring *r)
{
	if (!r)
		return NULL;
	chunk_ring_clear(r);
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
	while (r->n > 0 && r->bytes + charge(c) > r->budget) {
		struct chunk *old = pop_oldest(r);

		r->evicted_chunks++;
		r->evicted_raw_bytes += old->raw_size;
		chunk_unref(old);
	}
	ret = grow(r);
	if (ret < 0) {
		r->evicted_chunks++;
		r->evicted_raw_bytes += c->raw_size;
		chunk_unref(c);
	} else {
		r->slots[(r->head + r->n) % r->cap] = c;
		r->n++;
		r->bytes += charge(c);
		r->raw_bytes += c->raw_size;
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
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
