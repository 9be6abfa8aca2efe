/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "ftraced/macro.h"


json_t *json_text(const char *s);
json_t *json_u64(uint64_t v);
void json_put(json_t *object, const char *key, json_t *value);
void json_put_text(json_t *object, const char *key, const char *s);
void json_put_u64(json_t *object, const char *key, uint64_t v);
void json_put_bool(json_t *object, const char *key, bool v);
int json_print(json_t *v);
void json_want(bool wanted);
bool json_wanted(void);
void json_note_error(const char *text, int error);
void json_finish(int exit_code);
