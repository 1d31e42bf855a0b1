/*
 * rules_cocci.c - rules that are Coccinelle semantic patches (`cocci:` in
 * the campaign file): spatch sees C the way tree-sitter cannot (inside
 * macro bodies, control flow, types), and its output is a candidate like
 * any rule's.  Also the text differences both it and the check of what a
 * change left (pipeline/run/expect.c) read.
 *
 * Per target: the unit's text is written as the only file of a fresh
 * directory (with the extension of the target's path) beside the semantic
 * patch, and `spatch --in-place` rewrites a copy of it in the jail
 * (validators.h: no network, the directory as an overlay, nothing written
 * back but the collected copy).  spatch thus sees the target's unit and
 * nothing else of the repository, and every change it makes lies inside
 * the unit: each changed stretch becomes one splice edit.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <git2.h>

#include "pipeline/generate/rules.h"
#include "validators/validators.h"

#define COCCI_TIMEOUT_MS 60000u
#define COCCI_OUT_CAP (16u << 20)

struct stretches {
	const char *old, *now;
	size_t oldlen, nowlen;
	sl_text_change *v;
	size_t n, alloc;
};

/* Offset of the start of 1-based line `line` in text (len at most). */
static uint32_t line_offset(const char *text, size_t len, int line)
{
	size_t off = 0;

	for (int l = 1; l < line && off < len; l++) {
		const char *nl = memchr(text + off, '\n', len - off);

		off = nl ? (size_t)(nl - text) + 1 : len;
	}
	return (uint32_t)off;
}

static int add_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	struct stretches *st = payload;
	sl_text_change *s;

	(void)d;
	SL_ALLOC_GROW(st->v, st->n + 1, st->alloc);
	s = &st->v[st->n++];
	/* a count of 0 lines: the stretch is empty, after line *_start */
	s->ob = line_offset(st->old, st->oldlen, h->old_start + !h->old_lines);
	s->oe = h->old_lines ? line_offset(st->old, st->oldlen, h->old_start + h->old_lines) :
		s->ob;
	s->nb = line_offset(st->now, st->nowlen, h->new_start + !h->new_lines);
	s->ne = h->new_lines ? line_offset(st->now, st->nowlen, h->new_start + h->new_lines) :
		s->nb;
	/* the bytes that differ: drop the common prefix and suffix */
	while (s->ob < s->oe && s->nb < s->ne && st->old[s->ob] == st->now[s->nb])
		s->ob++, s->nb++;
	while (s->oe > s->ob && s->ne > s->nb && st->old[s->oe - 1] == st->now[s->ne - 1])
		s->oe--, s->ne--;
	return 0;
}

int sl_text_changes(sl_text_change **out, size_t *n, const char *old, size_t oldlen,
		    const char *now, size_t nowlen, sl_err *err)
{
	struct stretches st = { old, now, oldlen, nowlen, NULL, 0, 0 };
	git_diff_options opts;

	*out = NULL;
	*n = 0;
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 0;
	if (git_diff_buffers(old, oldlen, NULL, now, nowlen, NULL, &opts, NULL, NULL, add_hunk,
			     NULL, &st)) {
		free(st.v);
		return sl_err_set(err, SL_ERROR, "cannot diff two texts: %s", sl_git_error());
	}
	*out = st.v;
	*n = st.n;
	return SL_OK;
}

/* Write the unit and the semantic patch into dir. */
static int write_inputs(const char *dir, const char *unit_name, const sl_target *t,
			const char *cocci, sl_err *err)
{
	sl_buf patch = SL_BUF_INIT, path = SL_BUF_INIT;
	int ret;

	if ((ret = sl_read_file(&patch, cocci, 1u << 20, err)))
		goto done;
	sl_buf_addf(&path, "%s/rule.cocci", dir);
	if ((ret = sl_write_file(path.buf, patch.buf, patch.len, err)))
		goto done;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/%s", dir, unit_name);
	ret = sl_write_file(path.buf, t->unit_text, strlen(t->unit_text), err);
done:
	sl_buf_release(&patch);
	sl_buf_release(&path);
	return ret;
}

static void remove_inputs(const char *dir, const char *unit_name)
{
	sl_buf path = SL_BUF_INIT;

	sl_buf_addf(&path, "%s/rule.cocci", dir);
	unlink(path.buf);
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/%s", dir, unit_name);
	unlink(path.buf);
	sl_buf_release(&path);
	rmdir(dir);
}

/* spatch on the unit in the jail: the rewritten unit into now. */
static int run_spatch(sl_buf *now, const char *dir, const char *unit_name, sl_err *err)
{
	sl_jail_opts jo = SL_JAIL_OPTS_INIT;
	sl_jail_result res;
	sl_buf cmd = SL_BUF_INIT;
	const char *collect[] = { NULL, NULL };
	char out_name[64];
	int ret = SL_ERROR;

	snprintf(out_name, sizeof(out_name), "out-%s", unit_name);
	collect[0] = out_name;
	sl_buf_addf(&cmd, "cp %s %s && spatch --very-quiet --sp-file rule.cocci --in-place %s",
		    unit_name, out_name, out_name);
	jo.workdir = dir;
	jo.command = cmd.buf;
	jo.timeout_ms = COCCI_TIMEOUT_MS;
	jo.collect = collect;
	jo.collect_cap = COCCI_OUT_CAP;
	sl_jail_result_init(&res);
	if (sl_jail_run(&res, &jo, err))
		goto done;
	if (!res.exited || res.exit_status || !res.nfiles || res.files[0].err ||
	    res.files[0].truncated) {
		sl_err_set(err, SL_EINPUT, "spatch failed%s: %.300s", res.timed_out ?
			   " (timed out)" : "", res.output.buf);
		goto done;
	}
	sl_buf_add(now, res.files[0].data.buf, res.files[0].data.len);
	ret = SL_OK;
done:
	sl_jail_result_release(&res);
	sl_buf_release(&cmd);
	return ret;
}

int sl_rules_cocci(sl_edit_list *out, const sl_rule *r, const sl_target *t, sl_err *err)
{
	const char *ext = strrchr(t->path, '.'), *tmp = getenv("TMPDIR");
	sl_buf dir = SL_BUF_INIT, now = SL_BUF_INIT;
	sl_text_change *ch = NULL;
	char unit_name[32];
	size_t n = 0, n0 = out->n;
	int ret = SL_ERROR, made = 0;

	if (!t->unit_text)
		return 0;
	snprintf(unit_name, sizeof(unit_name), "unit%s",
		 ext && !strchr(ext, '/') && strlen(ext) < 8 ? ext : ".c");
	sl_buf_addf(&dir, "%s/sluice-cocci-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir.buf)) {
		sl_err_set(err, SL_ERROR, "cannot create '%s': %s", dir.buf, strerror(errno));
		goto done;
	}
	made = 1;
	if ((ret = write_inputs(dir.buf, unit_name, t, r->cocci, err)) ||
	    (ret = run_spatch(&now, dir.buf, unit_name, err)) ||
	    (ret = sl_text_changes(&ch, &n, t->unit_text, strlen(t->unit_text), now.buf, now.len,
				   err)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		sl_buf old = SL_BUF_INIT, new_text = SL_BUF_INIT;
		sl_edit *e;

		sl_buf_add(&old, t->unit_text + ch[i].ob, ch[i].oe - ch[i].ob);
		sl_buf_add(&new_text, now.buf + ch[i].nb, ch[i].ne - ch[i].nb);
		e = sl_edit_list_add(out, SL_EDIT_SPLICE, t->path, old.buf, new_text.buf);
		e->start = t->start_byte + ch[i].ob;
		e->end = t->start_byte + ch[i].oe;
		sl_buf_release(&old);
		sl_buf_release(&new_text);
	}
	ret = (int)(out->n - n0);
done:
	if (ret < 0 && err)
		sl_err_prefix(err, "rule '%s': ", r->cocci);
	if (made)
		remove_inputs(dir.buf, unit_name);
	free(ch);
	sl_buf_release(&dir);
	sl_buf_release(&now);
	return ret;
}
