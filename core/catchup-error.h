#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Cancellation is never a CatchupError: every module reports it as G_IO_ERROR_CANCELLED. */
#define CATCHUP_ERROR (catchup_error_quark ())

typedef enum {
  CATCHUP_ERROR_FAILED,       /* anything without a better code */
  CATCHUP_ERROR_NOT_FOUND,    /* unknown room, message id, file */
  CATCHUP_ERROR_AMBIGUOUS,    /* a room name that matches several rooms */
  CATCHUP_ERROR_INVALID,      /* malformed input: a bad line, window, option */
  CATCHUP_ERROR_DB,           /* SQLite failed; the message carries SQLite's words */
  CATCHUP_ERROR_DB_BUSY,      /* the database stayed locked past the timeout */
  CATCHUP_ERROR_DB_FULL,      /* disk or quota full */
  CATCHUP_ERROR_DB_CORRUPT,   /* not a database, or a damaged one */
  CATCHUP_ERROR_IO,           /* files */
  CATCHUP_ERROR_NETWORK,      /* refused, DNS, TLS, timeout */
  CATCHUP_ERROR_HTTP,         /* a non-success HTTP status */
  CATCHUP_ERROR_MODEL,        /* a model answer that cannot be used */
  CATCHUP_ERROR_DB_IO,        /* the disk failed, or the database became read-only or unreachable */
} CatchupError;

GQuark catchup_error_quark (void);

G_END_DECLS
