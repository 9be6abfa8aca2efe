// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * An ftrace event's fields as babeltrace2 fields. The mapping keeps what the
 * format says: integers keep their size and sign (pointers show in hex),
 * char arrays and __data_loc/__rel_loc strings are strings, other arrays are
 * static (fixed size) or dynamic (__data_loc) arrays of their element type,
 * and anything else is its bytes. Values are read from the record with
 * libtraceevent in the file's byte order; every offset and length comes from
 * the file and is checked against the record before use.
 */
#include <errno.h>
#include <string.h>

#include <traceevent/event-parse.h>

#include "plugin/bt-fields.h"

/* A field the format says is larger than a record can be: shown as bytes, bounded. */
#define FIELD_BYTES_MAX 65536u

enum field_kind {
	FIELD_INT,        /* 1, 2, 4 or 8 bytes */
	FIELD_STRING,     /* char array, fixed or to the end of the record */
	FIELD_DYN_STRING, /* __data_loc / __rel_loc char[] */
	FIELD_ARRAY,      /* fixed array of elementsize integers */
	FIELD_DYN_ARRAY,  /* __data_loc / __rel_loc array of elementsize integers */
	FIELD_BYTES,      /* anything else: its bytes */
};

static bool int_size(unsigned int n)
{
	return n == 1 || n == 2 || n == 4 || n == 8;
}

static bool is_char_array(const struct tep_format_field *f)
{
	return strncmp(f->type, "char", 4) == 0 || strncmp(f->type, "__data_loc char", 15) == 0 ||
	       strncmp(f->type, "__rel_loc char", 14) == 0 ||
	       strncmp(f->type, "const char", 10) == 0;
}

static enum field_kind kind_of(const struct tep_format_field *f)
{
	if (f->flags & TEP_FIELD_IS_DYNAMIC) {
		if (is_char_array(f) || (f->flags & TEP_FIELD_IS_STRING))
			return FIELD_DYN_STRING;
		return int_size((unsigned int)f->elementsize) ? FIELD_DYN_ARRAY : FIELD_DYN_STRING;
	}
	if (f->flags & TEP_FIELD_IS_ARRAY) {
		if (is_char_array(f) || (f->flags & TEP_FIELD_IS_STRING))
			return FIELD_STRING;
		if (int_size((unsigned int)f->elementsize) && f->arraylen > 0)
			return FIELD_ARRAY;
		return FIELD_BYTES;
	}
	return int_size((unsigned int)f->size) ? FIELD_INT : FIELD_BYTES;
}

static bt_field_class *int_class(bt_trace_class *tc, const struct tep_format_field *f,
				 unsigned int n_bytes)
{
	bool is_signed = f->flags & TEP_FIELD_IS_SIGNED;
	bt_field_class *c = is_signed ? bt_field_class_integer_signed_create(tc) :
					bt_field_class_integer_unsigned_create(tc);

	if (!c)
		return NULL;
	bt_field_class_integer_set_field_value_range(c, n_bytes * 8);
	if (f->flags & TEP_FIELD_IS_POINTER)
		bt_field_class_integer_set_preferred_display_base(
			c, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
	return c;
}

static bt_field_class *bytes_class(bt_trace_class *tc)
{
	bt_field_class *u8 = bt_field_class_integer_unsigned_create(tc), *c;

	if (!u8)
		return NULL;
	bt_field_class_integer_set_field_value_range(u8, 8);
	bt_field_class_integer_set_preferred_display_base(
		u8, BT_FIELD_CLASS_INTEGER_PREFERRED_DISPLAY_BASE_HEXADECIMAL);
	c = bt_field_class_array_dynamic_create(tc, u8, NULL);
	bt_field_class_put_ref(u8);
	return c;
}

static bt_field_class *field_class(bt_trace_class *tc, const struct tep_format_field *f)
{
	bt_field_class *elem, *c;

	switch (kind_of(f)) {
	case FIELD_INT:
		return int_class(tc, f, (unsigned int)f->size);
	case FIELD_STRING:
	case FIELD_DYN_STRING:
		return bt_field_class_string_create(tc);
	case FIELD_ARRAY:
	case FIELD_DYN_ARRAY:
		elem = int_class(tc, f, (unsigned int)f->elementsize);
		if (!elem)
			return NULL;
		c = kind_of(f) == FIELD_ARRAY ?
			    bt_field_class_array_static_create(tc, elem, f->arraylen) :
			    bt_field_class_array_dynamic_create(tc, elem, NULL);
		bt_field_class_put_ref(elem);
		return c;
	case FIELD_BYTES:
		break;
	}
	return bytes_class(tc);
}

/**
 * bt_fields_payload_class() - the payload class of @ev: one member per field
 * the format declares after the common ones, in order, by the format's names.
 *
 * Return: a new reference, or NULL (out of memory).
 */
bt_field_class *bt_fields_payload_class(bt_trace_class *tc, const struct tep_event *ev)
{
	bt_field_class *s = bt_field_class_structure_create(tc);

	if (!s)
		return NULL;
	for (const struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next) {
		bt_field_class *c = field_class(tc, f);
		bt_field_class_structure_append_member_status st;

		if (!c)
			goto fail;
		st = bt_field_class_structure_append_member(s, f->name, c);
		bt_field_class_put_ref(c);
		if (st != BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK)
			goto fail;
	}
	return s;
fail:
	bt_field_class_put_ref(s);
	return NULL;
}

/* Where a __data_loc/__rel_loc field's data is: Return: false if not inside the record. */
static bool dyn_span(struct tep_handle *tep, const struct tep_format_field *f, const uint8_t *data,
		     uint32_t size, uint32_t *ret_off, uint32_t *ret_len)
{
	uint32_t loc, off, len;

	if (f->size != 4 || (uint32_t)f->offset > size || size - (uint32_t)f->offset < 4)
		return false;
	loc = (uint32_t)tep_read_number(tep, data + f->offset, 4);
	off = loc & 0xffff;
	len = loc >> 16;
	/* __rel_loc counts from the end of the field itself. */
	if (f->flags & TEP_FIELD_IS_RELATIVE)
		off += (uint32_t)f->offset + 4;
	if (off > size || len > size - off)
		return false;
	*ret_off = off;
	*ret_len = len;
	return true;
}

static void set_int(bt_field *fld, struct tep_handle *tep, const uint8_t *p, unsigned int n,
		    bool is_signed)
{
	uint64_t v = tep_read_number(tep, p, (int)n);

	if (is_signed) {
		int64_t sv = n == 8 ? (int64_t)v : (int64_t)(v << (64 - 8 * n)) >> (64 - 8 * n);

		bt_field_integer_signed_set_value(fld, sv);
	} else {
		bt_field_integer_unsigned_set_value(fld, v);
	}
}

/* Text up to its first NUL, within @n bytes. */
static int set_string(bt_field *fld, const uint8_t *p, uint32_t n)
{
	const uint8_t *nul = memchr(p, '\0', n);

	bt_field_string_clear(fld);
	if (n == 0)
		return 0;
	return bt_field_string_append_with_length(fld, (const char *)p,
						  nul ? (uint64_t)(nul - p) : n) ==
			       BT_FIELD_STRING_APPEND_STATUS_OK ? 0 : -ENOMEM;
}

static int set_array(bt_field *fld, struct tep_handle *tep, const struct tep_format_field *f,
		     const uint8_t *p, uint32_t n, bool dynamic, unsigned int elem)
{
	uint64_t count = n / elem;

	if (dynamic && bt_field_array_dynamic_set_length(fld, count) !=
			       BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
		return -ENOMEM;
	count = bt_field_array_get_length(fld);
	for (uint64_t i = 0; i < count; i++) {
		bt_field *e = bt_field_array_borrow_element_field_by_index(fld, i);

		/* A fixed array the record is too short for: the rest reads as zeros. */
		if ((i + 1) * elem <= n)
			set_int(e, tep, p + i * elem, elem, f->flags & TEP_FIELD_IS_SIGNED);
		else if (f->flags & TEP_FIELD_IS_SIGNED)
			bt_field_integer_signed_set_value(e, 0);
		else
			bt_field_integer_unsigned_set_value(e, 0);
	}
	return 0;
}

static int set_field(bt_field *fld, struct tep_handle *tep, const struct tep_format_field *f,
		     const uint8_t *data, uint32_t size)
{
	uint32_t off = (uint32_t)f->offset, n = 0, len;
	enum field_kind kind = kind_of(f);

	if (kind == FIELD_DYN_STRING || kind == FIELD_DYN_ARRAY) {
		if (!dyn_span(tep, f, data, size, &off, &n))
			off = size, n = 0;
	} else if (off <= size) {
		/* A char array of size 0 (the marker's buf[]) runs to the end of the record. */
		len = f->size == 0 && kind == FIELD_STRING ? size - off : (uint32_t)f->size;
		n = len <= size - off ? len : size - off;
	} else {
		off = size;
	}
	switch (kind) {
	case FIELD_INT:
		if (n == (uint32_t)f->size)
			set_int(fld, tep, data + off, n, f->flags & TEP_FIELD_IS_SIGNED);
		else if (f->flags & TEP_FIELD_IS_SIGNED)
			bt_field_integer_signed_set_value(fld, 0);
		else
			bt_field_integer_unsigned_set_value(fld, 0);
		return 0;
	case FIELD_STRING:
	case FIELD_DYN_STRING:
		return set_string(fld, data + off, n);
	case FIELD_ARRAY:
	case FIELD_DYN_ARRAY:
		return set_array(fld, tep, f, data + off, n, kind == FIELD_DYN_ARRAY,
				 (unsigned int)f->elementsize);
	case FIELD_BYTES:
		break;
	}
	n = n < FIELD_BYTES_MAX ? n : FIELD_BYTES_MAX;
	if (bt_field_array_dynamic_set_length(fld, n) != BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		bt_field_integer_unsigned_set_value(bt_field_array_borrow_element_field_by_index(fld, i),
						    data[off + i]);
	return 0;
}

/**
 * bt_fields_set_payload() - set @payload (of bt_fields_payload_class(@ev)) from a record.
 * @data: the record's payload (it starts with the common fields)
 * @size: its size in bytes
 *
 * A field the record is too short for reads as zero or empty.
 * Return: 0, or -ENOMEM.
 */
int bt_fields_set_payload(bt_field *payload, struct tep_handle *tep, const struct tep_event *ev,
			  const uint8_t *data, uint32_t size)
{
	uint64_t i = 0;
	int k;

	for (const struct tep_format_field *f = ev ? ev->format.fields : NULL; f; f = f->next, i++) {
		k = set_field(bt_field_structure_borrow_member_field_by_index(payload, i), tep, f, data,
			      size);
		if (k < 0)
			return k;
	}
	return 0;
}
