#include "config.h"

#include "catchup-error.h"

G_DEFINE_QUARK (catchup-error-quark, catchup_error)
