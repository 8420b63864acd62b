#pragma once

#include <stddef.h>
#include <stdint.h>

#include <glib.h>

#include "catchup.h"

G_BEGIN_DECLS

/*
 * A fuzz target defines
 *     static int fuzz_one (const guint8 *data, gsize size);
 * and ends with CATCHUP_FUZZ_TARGET ("NAME"). Built with --enable-fuzzing it is a libFuzzer target
 * (tests/fuzz/fuzz-NAME); in every other build it is a test (tests/fuzz/replay-NAME) that runs each input of
 * tests/fuzz/corpus/NAME through the same function: the seeds and every input that ever crashed a target are
 * replayed by make check, under the sanitizers too. A target aborts (g_error, g_assert_*) when an invariant
 * of the code under test breaks, so a wrong answer counts as a crash, not only a bad access.
 */

typedef int (*CatchupFuzzFunc) (const guint8 *data, gsize size);

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int catchup_fuzz_replay (int argc, char **argv, const char *name, CatchupFuzzFunc func);

/* The input as a string (it stops at the first NUL, as C strings do). */
char *catchup_fuzz_string (const guint8 *data, gsize size);

/* Splits the input at byte sep (at most max pieces; the last one keeps the rest). */
GPtrArray *catchup_fuzz_split (const guint8 *data, gsize size, char sep, guint max);

/* An in-memory store, replaced by a fresh one every few hundred inputs (memory and time per input stay flat). */
CatchupStore *catchup_fuzz_store (void);

/* The index of the message with this id in msgs (of CatchupMessage), or -1. */
gint catchup_fuzz_find (GPtrArray *msgs, const char *id);

/* A memory of turns (a reference to the array is taken), as the memory builder returns one: each turn kept as a
 * lead-in turn. */
CatchupMemory *catchup_fuzz_memory (GPtrArray *turns);

#ifdef CATCHUP_FUZZING
#define CATCHUP_FUZZ_TARGET(name)                                                                                 \
  int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size) { return fuzz_one (data, size); }
#else
#define CATCHUP_FUZZ_TARGET(name)                                                                                 \
  int main (int argc, char **argv) { return catchup_fuzz_replay (argc, argv, name, fuzz_one); }
#endif

G_END_DECLS
