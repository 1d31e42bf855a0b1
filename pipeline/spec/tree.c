/*
 * tree.c - the campaign file's YAML, as libyaml's events, into a tree of
 * nodes that keeps each node's mark (spec_internal.h).
 *
 * The event API is used rather than yaml_parser_load() because only events
 * show anchors, aliases, tags and extra documents.  All of these are
 * rejected: a campaign has no use for them, and aliases are the road to
 * exponential expansion ("billion laughs").  Nesting is capped at
 * SL_CAP_SPEC_DEPTH.
 */
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

static int yaml_failed(struct loader *ld, yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown problem";

	if (p->error == YAML_MEMORY_ERROR)
		return sl_err_set(ld->err, SL_ERROR, "%s: out of memory", ld->path);
	if (p->error == YAML_READER_ERROR) {
		size_t i, line = 1, col = 1;

		for (i = 0; i < p->problem_offset && i < ld->srclen; i++) {
			if (ld->src[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return spec_fail_at(ld, line, col, "invalid YAML: %s", problem);
	}
	if (p->problem_mark.index < ld->srclen && ld->src[p->problem_mark.index] == '\t')
		return spec_fail(ld, p->problem_mark,
				 "invalid YAML: a tab is not allowed here (YAML indents with spaces)");
	if (p->context)
		return spec_fail(ld, p->problem_mark, "invalid YAML: %s (%s at line %zu, column %zu)",
				 problem, p->context, p->context_mark.line + 1,
				 p->context_mark.column + 1);
	return spec_fail(ld, p->problem_mark, "invalid YAML: %s", problem);
}

static int next_event(struct loader *ld, yaml_parser_t *p, yaml_event_t *ev)
{
	if (yaml_parser_parse(p, ev))
		return 0;
	return yaml_failed(ld, p);
}

/* Build the node that *ev starts; consumes *ev. */
static int build(struct loader *ld, yaml_parser_t *p, yaml_event_t *ev, int depth,
		 struct node **out)
{
	struct node *n = NULL;
	yaml_char_t *anchor = NULL, *tag = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	switch (ev->type) {
	case YAML_ALIAS_EVENT:
		spec_fail(ld, ev->start_mark, "anchors and aliases are not supported");
		goto done;
	case YAML_SCALAR_EVENT:
		anchor = ev->data.scalar.anchor;
		tag = ev->data.scalar.tag;
		break;
	case YAML_SEQUENCE_START_EVENT:
		anchor = ev->data.sequence_start.anchor;
		tag = ev->data.sequence_start.tag;
		break;
	case YAML_MAPPING_START_EVENT:
		anchor = ev->data.mapping_start.anchor;
		tag = ev->data.mapping_start.tag;
		break;
	default:
		BUG("unexpected YAML event %d", (int)ev->type);
	}
	if (anchor) {
		spec_fail(ld, ev->start_mark, "anchors and aliases are not supported");
		goto done;
	}
	if (tag) {
		spec_fail(ld, ev->start_mark, "tags are not supported");
		goto done;
	}

	n = sl_xcalloc(1, sizeof(*n));
	n->start = ev->start_mark;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->type = N_SCALAR;
		n->len = ev->data.scalar.length;
		n->text = sl_xmalloc(sl_st_add(n->len, 1));
		memcpy(n->text, ev->data.scalar.value, n->len);
		n->text[n->len] = '\0';
		n->style = ev->data.scalar.style;
		ret = 0;
		goto done;
	}

	n->type = ev->type == YAML_MAPPING_START_EVENT ? N_MAP : N_SEQ;
	if (depth >= SL_CAP_SPEC_DEPTH) {
		spec_fail(ld, ev->start_mark, "nesting deeper than %d levels", SL_CAP_SPEC_DEPTH);
		goto done;
	}
	for (;;) {
		yaml_event_t kev;
		struct node *kid;

		if (next_event(ld, p, &kev))
			goto done;
		if (kev.type == YAML_MAPPING_END_EVENT || kev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&kev);
			break;
		}
		if (build(ld, p, &kev, depth + 1, &kid))
			goto done;
		SL_ALLOC_GROW(n->kid, n->nkid + 1, n->alloc);
		n->kid[n->nkid++] = kid;
	}
	ret = 0;
done:
	yaml_event_delete(ev);
	if (ret) {
		spec_node_free(n);
		n = NULL;
	}
	*out = n;
	return ret;
}

/* Parse the whole stream: exactly one document, whose root is returned. */
int spec_parse_tree(struct loader *ld, struct node **out)
{
	yaml_parser_t p;
	yaml_event_t ev;
	struct node *root = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	if (!yaml_parser_initialize(&p))
		return sl_err_set(ld->err, SL_ERROR, "%s: out of memory", ld->path);
	yaml_parser_set_input_string(&p, (const unsigned char *)ld->src, ld->srclen);

	if (next_event(ld, &p, &ev))           /* STREAM-START */
		goto done;
	yaml_event_delete(&ev);
	if (next_event(ld, &p, &ev))
		goto done;
	if (ev.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&ev);
		spec_fail_at(ld, 1, 1, "empty file");
		goto done;
	}
	yaml_event_delete(&ev);                /* DOCUMENT-START */
	if (next_event(ld, &p, &ev) || build(ld, &p, &ev, 0, &root))
		goto done;
	if (next_event(ld, &p, &ev))           /* DOCUMENT-END */
		goto done;
	yaml_event_delete(&ev);
	if (next_event(ld, &p, &ev))
		goto done;
	if (ev.type == YAML_DOCUMENT_START_EVENT) {
		spec_fail(ld, ev.start_mark, "multiple YAML documents are not supported");
		yaml_event_delete(&ev);
		goto done;
	}
	yaml_event_delete(&ev);
	*out = root;
	root = NULL;
	ret = 0;
done:
	spec_node_free(root);
	yaml_parser_delete(&p);
	return ret;
}

void spec_node_free(struct node *n)
{
	size_t i;

	if (!n)
		return;
	for (i = 0; i < n->nkid; i++)
		spec_node_free(n->kid[i]);
	free(n->kid);
	free(n->text);
	free(n);
}
