/* The intrusive doubly linked list of render/ and xwm/: header-only, so the
 * window model (which links no renderer) and render/ (which links no Wayland
 * library, hence no wl_list) share it without a library between them. */
#ifndef DUET_LIST_H
#define DUET_LIST_H

#include <stddef.h>

struct duet_list {
	struct duet_list *prev, *next;
};

static inline void duet_list_init(struct duet_list *head)
{
	head->prev = head;
	head->next = head;
}

static inline void duet_list_insert_after(struct duet_list *pos, struct duet_list *elm)
{
	elm->prev = pos;
	elm->next = pos->next;
	pos->next->prev = elm;
	pos->next = elm;
}

/* Leaves elm linked to itself, so removing it twice is harmless. */
static inline void duet_list_remove(struct duet_list *elm)
{
	elm->prev->next = elm->next;
	elm->next->prev = elm->prev;
	elm->prev = elm;
	elm->next = elm;
}

#define duet_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#endif
