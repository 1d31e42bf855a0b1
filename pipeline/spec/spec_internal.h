/*
 * spec_internal.h - what the files of the campaign loader share; private to
 * pipeline/spec/ (tests/check-layout.sh refuses it elsewhere).
 *
 * The loader reads the file into a tree of nodes (tree.c), then each section
 * of the campaign file is read by its own file, with its own key table and
 * checks: the top level (root.c), targets (targets.c), rules and expect
 * (rules.c), provider (provider.c), gates (gates.c), jail (jail.c), review (review.c) and budget
 * (budget.c).  load.c is the public entry (pipeline/spec.h).  The reading
 * helpers below (read.c) check one node each and turn every problem into
 * SL_EINPUT with a "FILE:LINE:COLUMN: " message in the loader's error.
 *
 * Each section's keys are one table, "static const char *const
 * SECTION_keys[] = { ..., NULL };" (root_keys for the top level), read by
 * tests/check-campaign-manpage.sh against docs/sluice-campaign.5: a new key
 * goes into its table and the man page.
 *
 * Conventions of the helpers: key is the key being read, ctx the mapping
 * that holds it (NULL at the top level); a NULL value node means "absent or
 * null" and leaves the output alone; every helper returns 0 or SL_EINPUT.
 */
#ifndef SL_SPEC_INTERNAL_H
#define SL_SPEC_INTERNAL_H

#include <stddef.h>

#include <yaml.h>

#include "common/err.h"
#include "common/util.h"
#include "pipeline/spec.h"

enum { N_SCALAR = 1, N_MAP, N_SEQ };

/* One node of the file with its position (libyaml's mark, 0-based). */
struct node {
	int type;                   /* N_SCALAR, N_MAP or N_SEQ */
	yaml_mark_t start;
	char *text;                 /* scalars: NUL-terminated (may hold NULs) */
	size_t len;
	yaml_scalar_style_t style;
	struct node **kid;     /* maps: key, value, key, value...; seqs: items */
	size_t nkid, alloc;
};

/* The loader's state: the file (borrowed) and where errors go. */
struct loader {
	const char *path;
	const char *src;
	size_t srclen;
	const sl_spec_opts *opts;   /* never NULL */
	sl_err *err;
};

/* tree.c: the whole stream, exactly one document, into *out (freed by spec_node_free). */
int spec_parse_tree(struct loader *ld, struct node **out);
void spec_node_free(struct node *n);

/* read.c: messages. */
const char *spec_show(char *buf, size_t size, const char *s, size_t len);
int spec_fail_at(struct loader *ld, size_t line, size_t col, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define spec_fail(ld, mark, ...) \
	spec_fail_at((ld), (mark).line + 1, (mark).column + 1, __VA_ARGS__)

/* read.c: nodes and values. */
int spec_is_null(const struct node *n);
/*
 * Check a mapping's keys against the NULL-terminated list keys: no unknown
 * and no duplicate key.  vals[i] gets the value of keys[i], NULL when the
 * key is absent or its value is null.
 */
int spec_map_fields(struct loader *ld, const struct node *map, const char *ctx,
		    const char *const *keys, const struct node **vals);
/* "missing required field" at map when val is NULL. */
int spec_need(struct loader *ld, const struct node *map, const struct node *val,
	      const char *key, const char *ctx);
int spec_want_type(struct loader *ld, const struct node *v, int type,
		   const char *key, const char *ctx);
/* A scalar's text, borrowed from the node. */
int spec_get_word(struct loader *ld, const struct node *v, const char *key,
		  const char *ctx, int nonempty, const char **out);
/* A string, copied; a previous *out is freed. */
int spec_get_str(struct loader *ld, const struct node *v, const char *key,
		 const char *ctx, int nonempty, char **out);
/* A plain decimal integer in [min, max]. */
int spec_get_int(struct loader *ld, const struct node *v, const char *key,
		 const char *ctx, long long min, long long max, long long *out);
int spec_get_uint(struct loader *ld, const struct node *v, const char *key,
		  const char *ctx, long long min, long long max, unsigned *out);
/* A plain decimal number in [min, max]. */
int spec_get_num(struct loader *ld, const struct node *v, const char *key,
		 const char *ctx, double min, double max, double *out);
/* One of names[] (NULL-terminated), stored as values[index]. */
int spec_get_enum(struct loader *ld, const struct node *v, const char *key,
		  const char *ctx, const char *const *names, const int *values, int *out);
/* One string or a sequence of strings, appended to sv. */
int spec_get_strings(struct loader *ld, const struct node *v, const char *key,
		     const char *ctx, sl_strvec *sv);
int spec_get_bool(struct loader *ld, const struct node *v, const char *key,
		  const char *ctx, int *out);
/* Where a string value's first character sits in the file. */
sl_pos spec_text_pos(struct loader *ld, const struct node *v);
/* An HTTP endpoint's URL (provider base_url, review api_url): 0, or SL_EINPUT at v. */
int spec_check_http_url(struct loader *ld, const struct node *v, const char *key,
			const char *url);
/* 1 if s is a valid campaign or gate name: [A-Za-z0-9._-]+ */
int spec_valid_name(const char *s);
/* NULL if s is usable as a ref path prefix (git check-ref-format rules), else why not. */
const char *spec_bad_branch_prefix(const char *s);

/*
 * The sections, each in its file: map or seq is the section's value node
 * (targets: checked to be a mapping by the caller; the others check it).
 */
int spec_load_targets(struct loader *ld, const struct node *map, sl_spec *spec);
int spec_load_rules(struct loader *ld, const struct node *seq, sl_spec *spec);
/* rules.c: `expect` in `targets`, what a migration's candidate leaves in its unit. */
int spec_load_expect(struct loader *ld, const struct node *map, sl_spec *spec);
int spec_load_provider(struct loader *ld, const struct node *map, sl_spec *spec);
int spec_load_gates(struct loader *ld, const struct node *seq, sl_spec *spec);
int spec_load_jail(struct loader *ld, const struct node *map, sl_spec *spec);
int spec_load_review(struct loader *ld, const struct node *map, sl_spec *spec);
int spec_load_budget(struct loader *ld, const struct node *map, sl_spec *spec);
/* session.c: `generate` (may be NULL) and the `session` section (may be NULL). */
int spec_load_session(struct loader *ld, const struct node *generate, const struct node *map,
		      sl_spec *spec);
/* The top level, the whole file: every section, then the defaults. */
int spec_load_root(struct loader *ld, const struct node *root, sl_spec *spec);

/* targets.c: the query a fix campaign defaults to, or the error for its absence. */
int spec_default_query(struct loader *ld, const struct node *targets, sl_spec *spec);
/* gates.c: 1 if a gate of this kind is in the campaign. */
int spec_has_gate_kind(const sl_spec *spec, enum sl_gate_kind kind);

#endif
