#include "config.h"

#include "catchup-chunk.h"
