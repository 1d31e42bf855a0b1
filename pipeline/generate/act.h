/*
 * act.h - the wire form of a model's session (`generate: act`, README,
 * "Letting the model work"): what the model is told, how its replies are
 * read, and how a command's result is shown to it.
 *
 * Plain text (any model, the command provider, the HTTP providers' plain
 * chat): each reply holds exactly one fenced block whose info string is
 * sh, bash, shell or empty:
 *
 *     ```sh
 *     grep -n old_api src/main.c
 *     ```
 *
 * Its text (without the fences) is the step's command.  A block whose only
 * word is `submit` ends the session: the candidate is what the commands
 * left changed.  Prose around the block is allowed and kept in the record;
 * no block, or more than one, is a format error shown to the model as the
 * step's observation (it costs a step).
 *
 * The observation of a command: "exit status N" (with why, when the step's
 * time ran out), then its output (stdout and stderr interleaved), its head
 * and tail when it is longer than the step's output budget, with a line
 * saying how many bytes were cut between them; control characters shown,
 * not sent (common/term.h).
 */
#ifndef SL_ACT_H
#define SL_ACT_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

enum sl_act_kind {
	SL_ACT_COMMAND = 1,         /* "command": run it */
	SL_ACT_SUBMIT,              /* "submit": the session ends with a candidate */
	SL_ACT_FORMAT,              /* "format": the reply could not be read */
	SL_ACT_BUDGET,              /* "budget": the session's budget ran out */
};

/* The name of a kind ("command", ...), NULL for none. */
const char *sl_act_kind_name(enum sl_act_kind k);
/* The kind of a name, 0 for none. */
enum sl_act_kind sl_act_kind_parse(const char *name);

/*
 * Read a reply.  SL_ACT_COMMAND: *command_out (caller frees) is the
 * block's text; SL_ACT_SUBMIT: *command_out is "submit"; SL_ACT_FORMAT:
 * *command_out NULL and why in err (a message for the model).
 */
enum sl_act_kind sl_act_parse(char **command_out, const char *reply, sl_err *err);

/* The system message of a session (static text): plain text, or tools (provider.h). */
const char *sl_act_system(int tools);

/*
 * The observation of a step from raw (len bytes: the total byte count the
 * command wrote on a line, then at most head + tail bytes of its output,
 * its first head and last tail) and its exit status: appended to out;
 * *total_out is the bytes the command wrote.  timed_out: the step's limit
 * ended it (timeout_s, said).
 */
void sl_act_observe(sl_buf *out, int64_t *total_out, const char *raw, size_t len,
		    int status, int timed_out, unsigned timeout_s, size_t head, size_t tail);

#endif
