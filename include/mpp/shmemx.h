#include <shmemx.h>
