#pragma once

#include <glib.h>

G_BEGIN_DECLS

G_END_DECLS
