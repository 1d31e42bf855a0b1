/*
 * load.c - load a campaign file into an sl_spec (pipeline/spec.h).
 *
 * Reads the file named by the caller (whole, at most 1 MiB) and writes a new
 * sl_spec that the caller frees with sl_spec_free().  Two passes: the YAML
 * is turned into a small tree of nodes that keeps each node's mark
 * (tree.c), then the tree is walked key by key, section by section
 * (root.c and the file of each section), checking names, types and values
 * and filling defaults.  Every problem becomes SL_EINPUT with a
 * "FILE:LINE:COLUMN: " message naming the node at fault.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/caps.h"
#include "pipeline/generate/provider.h"
#include "pipeline/spec/spec_internal.h"

static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return sl_xstrdup(".");
	while (slash > path && slash[-1] == '/')
		slash--;
	if (slash == path)
		return sl_xstrdup("/");
	return sl_xstrndup(path, (size_t)(slash - path));
}

int sl_spec_load_ext(sl_spec **out, const char *path, const sl_spec_opts *opts, sl_err *err)
{
	static const sl_spec_opts defaults = SL_SPEC_OPTS_INIT;
	sl_buf text = SL_BUF_INIT;
	struct loader ld;
	struct node *root = NULL;
	sl_spec *spec = NULL;
	struct stat st;
	int ret;

	*out = NULL;
	ld.path = path;
	ld.opts = opts ? opts : &defaults;
	ld.err = err;
	if (!stat(path, &st) && S_ISDIR(st.st_mode)) {
		ret = sl_err_set(err, SL_EINPUT, "'%s' is a directory, not a campaign file", path);
		goto done;
	}
	if ((ret = sl_read_file(&text, path, SL_CAP_SPEC_BYTES, err)))
		goto done;
	if (text.truncated) {
		ret = spec_fail_at(&ld, 1, 1, "file is larger than 1 MiB");
		goto done;
	}
	ld.src = text.buf;
	ld.srclen = text.len;
	if ((ret = spec_parse_tree(&ld, &root)))
		goto done;

	spec = sl_xcalloc(1, sizeof(*spec));
	spec->path = sl_xstrdup(path);
	spec->dir = dir_of(path);
	spec->provider = SL_PROVIDER_RULES;
	spec->temperature = -1;
	spec->provider_timeout_s = 300;
	spec->attempts = 3;
	spec->review.batch_files = 10;
	spec->review.batch_lines = 500;
	spec->review.max_open = 10;
	spec->review.max_per_hour = 10;
	spec->max_retries = -1;
	spec->price_in = spec->price_out = -1;
	spec->concurrency = 4;
	spec->context_tokens = 2000;
	if ((ret = spec_load_root(&ld, root, spec)))
		goto done;
	*out = spec;
	spec = NULL;
done:
	sl_spec_free(spec);
	spec_node_free(root);
	sl_buf_release(&text);
	return ret;
}

int sl_spec_load(sl_spec **out, const char *path, sl_err *err)
{
	return sl_spec_load_ext(out, path, NULL, err);
}

void sl_spec_free(sl_spec *spec)
{
	size_t i;

	if (!spec)
		return;
	for (i = 0; i < spec->nrules; i++) {
		free(spec->rules[i].capture);
		free(spec->rules[i].template_text);
		free(spec->rules[i].cocci);
		for (size_t k = 0; k < spec->rules[i].nwhere; k++) {
			free((char *)spec->rules[i].where[k].capture);
			free((char *)spec->rules[i].where[k].text);
		}
		free(spec->rules[i].where);
	}
	free(spec->expect_gone);
	free(spec->expect_present);
	free(spec->rules);
	for (i = 0; i < spec->ngates; i++) {
		free(spec->gates[i].name);
		free(spec->gates[i].command);
		free(spec->gates[i].report);
		sl_strvec_release(&spec->gates[i].must_fix);
		sl_strvec_release(&spec->gates[i].allow_test_changes);
		sl_strvec_release(&spec->gates[i].inputs);
		sl_strvec_release(&spec->gates[i].allow_paths);
		sl_strvec_release(&spec->gates[i].forbid);
		sl_strvec_release(&spec->gates[i].build_files);
	}
	free(spec->gates);
	if (spec->judge) {
		free(spec->judge->name);
		free(spec->judge->instructions);
		sl_spec_free(spec->judge->provider);
		free(spec->judge);
	}
	sl_strvec_release(&spec->warnings);
	sl_strvec_release(&spec->paths);
	sl_strvec_release(&spec->override_globs);
	sl_strvec_release(&spec->override_langs);
	free(spec->override_pos);
	free(spec->path);
	free(spec->dir);
	free(spec->name);
	free(spec->repository);
	free(spec->base);
	free(spec->scratch);
	free(spec->language);
	free(spec->query);
	free(spec->capture);
	free(spec->unit);
	free(spec->base_url);
	free(spec->model);
	free(spec->api_key_env);
	free(spec->command);
	free(spec->anthropic_version);
	free(spec->replay);
	free(spec->response_format);
	sl_strvec_release(&spec->headers);
	free(spec->instructions);
	free(spec->test_template);
	free(spec->findings_report);
	sl_strvec_release(&spec->test_paths);
	free(spec->prompt);
	free(spec->branch_prefix);
	free(spec->review.commit_message);
	free(spec->review.title);
	free(spec->review.body);
	free(spec->review.author);
	free(spec->review.committer);
	sl_strvec_release(&spec->review.labels);
	free(spec->review.api_url);
	free(spec->review.project);
	free(spec->review.token_env);
	free(spec->review.remote);
	free(spec->review.target_branch);
	free(spec);
}

sl_pos sl_spec_query_pos(const sl_spec *spec, uint32_t offset)
{
	sl_pos pos = { 0, 0 };
	size_t len, i, nl = 0, last = 0;

	if (!spec || !spec->query || !spec->query_pos.line)
		return pos;
	pos = spec->query_pos;
	len = strlen(spec->query);
	if (offset > len)
		offset = (uint32_t)len;
	if (!spec->query_block) {
		pos.col += offset;
		return pos;
	}
	for (i = 0; i < offset; i++) {
		if (spec->query[i] == '\n') {
			nl++;
			last = i + 1;
		}
	}
	pos.line += (uint32_t)nl;
	pos.col = (uint32_t)(nl ? spec->query_pos.col + (offset - last) : spec->query_pos.col + offset);
	return pos;
}
