// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * record --proc-map: the processes' memory maps, as the client read them
 * (trace-cmd's PROCMAPS text, checked as printable by the protocol), kept
 * until the last file is assembled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/base/proc-maps.h"

/* Return: 0 or -ENOMEM. */
int proc_maps_add(struct proc_maps *m, const char *text)
{
	char *copy = strdup(text), **grown;

	if (!copy)
		return -ENOMEM;
	grown = reallocarray(m->texts, m->n + 1, sizeof(*m->texts));
	if (!grown) {
		free(copy);
		return -ENOMEM;
	}
	m->texts = grown;
	m->texts[m->n++] = copy;
	return 0;
}

void proc_maps_done(struct proc_maps *m)
{
	for (size_t k = 0; k < m->n; k++)
		free(m->texts[k]);
	free(m->texts);
	*m = (struct proc_maps){};
}
