/*
 * gate.c - run one gate command in the jail and turn its end into a verdict.
 *
 * Reads nothing but the gate definition; the jail (jail.c) does the work,
 * with bash's pipefail where the machine has bash.  Keeps the candidate's
 * failures (fail, timeout) apart from the machinery's (error), whose
 * message is copied into the result.  A failure the jail's limits caused
 * gets a last line of output naming the limit ("sluice: killed: out of
 * memory (jail.memory_mb 64)"; a full layer names jail.disk_mb; a layer
 * no tmpfs caps is measured afterwards), which the gate's log, `show` and
 * the reports carry.
 */
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "common/beneath.h"
#include "validators/gate.h"
#include "validators/jail.h"
#include "common/util.h"
#include "common/caps.h"

#define GATE_DEFAULT_TIMEOUT_S 600u

void sl_gate_result_init(sl_gate_result *r)
{
	memset(r, 0, sizeof(*r));
	r->verdict = SL_VERDICT_ERROR;
	r->exit_status = -1;
	sl_buf_init(&r->output, 0);
	sl_buf_init(&r->report, 0);
}

void sl_gate_result_release(sl_gate_result *r)
{
	sl_buf_release(&r->output);
	sl_buf_release(&r->report);
}

int sl_gate_pipefail(void)
{
	const char *no = getenv("SLUICE_TEST_NO_BASH");

	/* the jail mirrors /usr and the merged-/usr links: /bin/bash there is the host's */
	return !(no && !strcmp(no, "1")) && !access("/bin/bash", X_OK);
}

int sl_gate_command_pipes(const char *command)
{
	const char *c = command;
	char quote = 0;
	int word_start = 1;         /* a '#' here starts a comment */

	for (; *c; c++) {
		if (quote) {
			if (*c == quote)
				quote = 0;
			else if (quote == '"' && *c == '\\' && c[1])
				c++;
			continue;
		}
		if (*c == '\\' && c[1]) {
			c++;
			word_start = 0;
			continue;
		}
		if (*c == '\'' || *c == '"')
			quote = *c;
		else if (*c == '#' && word_start)
			while (c[1] && c[1] != '\n')      /* a comment, to its line's end */
				c++;
		else if (*c == '|' && c[1] == '|')
			c++;
		else if (*c == '|')
			return 1;
		word_start = strchr(" \t\n;&|()", *c) != NULL;
	}
	return 0;
}

/* nftw callback: the bytes a layer holds on disk, in the calling thread's counter. */
static __thread unsigned long long layer_bytes;
static int count_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag != FTW_NS)
		layer_bytes += (unsigned long long)st->st_blocks * 512;
	return 0;
}

/* With a host layer no tmpfs caps: a run that left more than the cap fails. */
static void check_layer(sl_gate_result *out, const sl_gate_def *gate)
{
	char *upper;

	if (!gate->layer || !gate->layer_cap_mb || out->verdict == SL_VERDICT_ERROR)
		return;
	upper = sl_path_join(gate->layer, "u");
	layer_bytes = 0;
	nftw(upper, count_one, 32, FTW_PHYS | FTW_MOUNT);
	free(upper);
	if (layer_bytes <= (unsigned long long)gate->layer_cap_mb << 20)
		return;
	out->verdict = SL_VERDICT_FAIL;
	sl_buf_addf(&out->output, "\nsluice: the gate left %llu MiB in the candidate's layer, "
		    "over its cap of %u MiB (jail.disk_mb)\n", layer_bytes >> 20,
		    gate->layer_cap_mb);
}

#define GATE_DEFAULT_MEM_MB 4096u
#define TMPFS_MAGIC_NR 0x01021994

/* What a program says when an allocation failed (malloc's NULL, the language's error). */
static int says_no_memory(const char *output)
{
	static const char *const words[] = {
		"cannot allocate", "out of memory", "bad_alloc", "MemoryError",
		"memory exhausted", "failed to allocate",
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		if (strcasestr(output, words[i]))
			return 1;
	return 0;
}

/*
 * A failed run that hit one of the jail's limits says so in its last line.
 * The cgroup's oom_kill count is certain; a per-process limit (RLIMIT_AS,
 * or RLIMIT_DATA where no memory cgroup holds memory_mb) makes allocations
 * fail, which only the program's words show.  A tmpfs layer (root's or an
 * ordinary user's, jail_layer.c) with less than 1/64 free was filled.
 */
static void explain_limits(sl_gate_result *out, const sl_gate_def *gate,
			   const sl_jail_result *jr)
{
	unsigned mem = gate->mem_mb ? gate->mem_mb : GATE_DEFAULT_MEM_MB;
	struct statfs fs;

	if (out->verdict != SL_VERDICT_FAIL && out->verdict != SL_VERDICT_TIMEOUT)
		return;
	if (jr->oom)
		sl_buf_addf(&out->output, "\nsluice: killed: out of memory (jail.memory_mb %u%s; "
			    "files in tmpfs, /tmp and the candidate's layer, count toward it)\n",
			    mem, gate->mem_mb ? "" : ", the default");
	else if (says_no_memory(out->output.buf) && gate->as_mb)
		sl_buf_addf(&out->output, "\nsluice: out of memory: an allocation failed under "
			    "jail.address_space_mb %u (per process)\n", gate->as_mb);
	else if (says_no_memory(out->output.buf) && gate->mem_mb &&
		 !(jr->layers & SL_JAIL_CG_MEMORY))
		sl_buf_addf(&out->output, "\nsluice: out of memory: an allocation failed under "
			    "jail.memory_mb %u (per process: no memory cgroup here)\n", gate->mem_mb);
	if (gate->layer && !statfs(gate->layer, &fs) && fs.f_type == TMPFS_MAGIC_NR &&
	    fs.f_blocks && fs.f_bavail < fs.f_blocks / 64)
		sl_buf_addf(&out->output, "\nsluice: the candidate's layer is full: writes beyond "
			    "jail.disk_mb %llu fail with 'No space left on device'\n",
			    ((unsigned long long)fs.f_blocks * (unsigned long long)fs.f_bsize) >> 20);
}

int sl_gate_run(sl_gate_result *out, const sl_gate_def *gate, const char *workdir)
{
	sl_jail_opts opts = SL_JAIL_OPTS_INIT;
	const char *collect[2] = { NULL, NULL };
	sl_jail_result jr;
	sl_err err = SL_ERR_INIT;
	unsigned timeout_s;

	sl_buf_release(&out->output);
	sl_buf_release(&out->report);
	out->has_report = 0;
	out->verdict = SL_VERDICT_ERROR;
	out->exit_status = -1;
	out->duration_ms = out->setup_ms = 0;
	out->output_total = 0;
	out->error[0] = '\0';
	if (!gate || !gate->command || !workdir) {
		snprintf(out->error, sizeof(out->error), "gate '%s' has no %s",
			 gate && gate->name ? gate->name : "?",
			 gate && gate->command ? "workdir" : "command");
		return 0;
	}

	timeout_s = gate->timeout_s ? gate->timeout_s : GATE_DEFAULT_TIMEOUT_S;
	if (timeout_s > UINT_MAX / 1000)
		timeout_s = UINT_MAX / 1000;
	opts.workdir = workdir;
	opts.command = gate->command;
	opts.timeout_ms = timeout_s * 1000;
	opts.output_cap = SL_CAP_GATE_OUTPUT;
	opts.allow_inet = gate->loopback;
	opts.unsafe = gate->unsafe;
	opts.mem_mb = gate->mem_mb;
	opts.pids_max = gate->pids_max;
	opts.tmp_mb = gate->tmp_mb;
	opts.disk_mb = gate->disk_mb;
	opts.cpu_milli = gate->cpu_milli;
	opts.as_mb = gate->as_mb;
	opts.accept = gate->accept;
	opts.writable_workdir = gate->writable_worktree;
	opts.pipefail = sl_gate_pipefail();
	opts.layer = gate->layer;
	if (gate->report && !gate->writable_worktree) {
		/* the command's writes vanish with the overlay: the jail reads it back */
		collect[0] = gate->report;
		opts.collect = collect;
		opts.collect_cap = SL_CAP_GATE_REPORT;
	}

	sl_jail_result_init(&jr);
	if (sl_jail_run(&jr, &opts, &err)) {
		size_t n = strnlen(err.msg, sizeof(out->error) - 1);

		memcpy(out->error, err.msg, n);     /* truncation is fine here */
		out->error[n] = '\0';
	} else if (jr.timed_out) {
		out->verdict = SL_VERDICT_TIMEOUT;
	} else if (jr.exited && jr.exit_status == 0) {
		out->verdict = SL_VERDICT_PASS;
	} else {
		out->verdict = SL_VERDICT_FAIL;
	}
	if (jr.exited && !jr.timed_out)
		out->exit_status = jr.exit_status;
	out->duration_ms = jr.duration_ms;
	out->setup_ms = jr.setup_ms;
	out->output_total = jr.output_total;
	out->layers = jr.layers;
	if (gate->report && jr.nfiles && !jr.files[0].err && !jr.files[0].truncated) {
		out->report = jr.files[0].data;     /* take the buffer */
		sl_buf_init(&jr.files[0].data, 0);
		out->has_report = 1;
	} else if (gate->report && gate->writable_worktree && out->verdict != SL_VERDICT_ERROR) {
		sl_err rerr = SL_ERR_INIT;

		/* written into the worktree on the host: never follow a planted link */
		out->has_report = !sl_read_beneath(&out->report, workdir, gate->report,
						   SL_CAP_GATE_REPORT, &rerr) &&
			!out->report.truncated;
	}
	out->output = jr.output;     /* take the buffer */
	sl_buf_init(&jr.output, 0);
	explain_limits(out, gate, &jr);
	sl_jail_result_release(&jr);
	check_layer(out, gate);
	return 0;
}
