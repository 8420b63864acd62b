#include "config.h"

#include "catchup-store-private.h"
