#include "config.h"

#include "catchup-import.h"
