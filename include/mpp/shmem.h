/* <mpp/shmem.h>: the older include path some OpenSHMEM codes still use. */
#include <shmem.h>
