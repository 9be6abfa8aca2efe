/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ftraced/proto.h"

/* Answers about what an instance has, found once per daemon. */
struct instance_offer {
	uint32_t tag;                      /* the daemon's instance tag */
	char *text[_FTRACED_OFFER_MAX];    /* NULL until asked for */
	size_t n_text[_FTRACED_OFFER_MAX];
};

int instance_offer_open(struct instance_offer *o, enum ftraced_offer what, int *ret_fd);
void instance_offer_done(struct instance_offer *o);
