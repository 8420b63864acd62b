#include "config.h"

#include "catchup-summary.h"
