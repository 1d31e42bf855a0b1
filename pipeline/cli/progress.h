/*
 * progress.h - what `sluice run` shows while a campaign runs (README,
 * "Watching a campaign"; progress.c).
 *
 * Calling sequence: sl_progress_start() fills the run's options (progress,
 * event, watch) and starts the thread that redraws the terminal or writes
 * the heartbeats; sl_run(); sl_progress_stop() ends it and closes the
 * event stream.
 */
#ifndef SL_CLI_PROGRESS_H
#define SL_CLI_PROGRESS_H

#include "common/err.h"
#include "pipeline/run.h"

typedef struct sl_progress sl_progress;

/*
 * Start showing the run of ro (its progress, event and watch fields are
 * set; ro must outlive the sl_progress).  events: the event stream's file
 * (appended to, made on the first event), "-" for stdout, or NULL.
 */
sl_progress *sl_progress_start(sl_run_opts *ro, const char *events);
/*
 * Stop the thread, clear the terminal's block and close the stream.
 * SL_ERROR with err set when the stream could not be written.  NULL: SL_OK.
 */
int sl_progress_stop(sl_progress *p, sl_err *err);

#endif
