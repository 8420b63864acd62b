#include "config.h"

#include "catchup-memory.h"
