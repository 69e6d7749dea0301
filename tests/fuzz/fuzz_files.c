/* Fuzz: the files the library reads back — the tune file (`locus tune`) and
 * the copy calibration file (`locus bench copy --calibrate`). The input is
 * written to a file the library is pointed at; any content must give a
 * value, "ignored" with a reason, or a clear error, never a crash. */
#include "fuzz.h"

#include "core/config.h"
#include "core/tune.h"
#include "copy/kernels.h"

#include <stdio.h>
#include <unistd.h>

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/locus-fuzz-files-%d", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    fwrite(data, 1, size, f);
    fclose(f);

    setenv("LOCUS_TUNE_FILE", path, 1);
    lc_tune_reset();
    (void)lc_tune_value("LOCUS_HEAP_CHUNK");
    (void)lc_tune_status();
    (void)locus_config_check(); /* validates whatever the file holds */
    uint64_t chunk;
    (void)lc_tun_size(LC_TUN_HEAP_CHUNK, &chunk);

    copy_calib_t cal;
    char why[128];
    if (copy_calibration_read(path, &cal, why, sizeof why) && !cal.l3_size)
        abort(); /* accepted files carry an L3 size */
    unsetenv("LOCUS_TUNE_FILE");
    lc_tune_reset();
    unlink(path); /* nothing left in /tmp after a run */
    return 0;
}
