#include "config.h"

#include "catchup-gaps.h"
