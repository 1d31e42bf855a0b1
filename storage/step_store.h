/*
 * step_store.h - the steps of a model's session (generate: act): for each
 * attempt (target, n), step 1, 2, ... in order.  A step is written twice:
 * once the moment the model's reply arrives (ran 0: the command has not run;
 * a kill then never pays for the reply again), and again with the command's
 * exit status and output (ran 1).  A resumed session takes the recorded
 * replies and runs their commands again to rebuild its layer; a command
 * whose output is not what was recorded is marked (differs 1).
 *
 * Records returned are owned by the caller (sl_step_list_free).
 */
#ifndef SL_STEP_STORE_H
#define SL_STEP_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "storage/store.h"

typedef struct sl_step_rec {
	int64_t target_id, n, step;
	char *reply;                /* the model's message, as it came */
	char *request_key;          /* may be NULL */
	char *kind;                 /* "command", "submit", "format", "budget"
				       (sl_act_kind, pipeline/generate/act.h); a
				       refused submit or the gates' feedback on it
				       is its output */
	char *command;              /* may be NULL */
	int64_t exit_status;        /* -1: none */
	char *output;               /* the observation the model was shown; may be NULL */
	int64_t output_bytes;       /* what the command wrote in all */
	int64_t model_ms, command_ms;
	int64_t tokens_in, tokens_out;
	double cost;
	int ran;                    /* the command's result is recorded */
	int differs;                /* replayed, its output was not the recorded one */
} sl_step_rec;

/* Insert or replace one step, inside the caller's transaction or on its own. */
int sl_step_put(sl_store *st, const sl_step_rec *in, sl_err *err);
/* Every step of an attempt (n > 0) or of the target (n 0), in order. */
int sl_step_list(sl_store *st, int64_t target_id, int64_t n, sl_step_rec **out,
		 size_t *nout, sl_err *err);
void sl_step_list_free(sl_step_rec *v, size_t n);
/*
 * Append to out one line of the replay provider's file for each step with a
 * reply (sl_replay_record's shape): its key and reply, its position in the
 * session ("at") and the hash of the observation the model had seen
 * ("seen"), so a replay from a store finds it as from a --record file.
 */
int sl_step_export(sl_store *st, sl_buf *out, sl_err *err);

#endif
