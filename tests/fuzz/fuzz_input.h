/* Shared by the fuzz targets of the file readers (T1, T4, cache): each
 * input is written to a scratch file, because the readers take paths,
 * and the reader's message is kept so that the plain driver can check
 * the regression inputs' expected messages. */
#ifndef CUTUNE_FUZZ_INPUT_H
#define CUTUNE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The message of the last input's refusal ("" when it was taken). */
const char *cutune_fuzz_message(void);

/* The scratch folder (made on first use, removed at exit) and a path in
 * it; `name` is copied. Returns NULL when the folder cannot be made. */
const char *cutune_fuzz_path(const char *name);

/* Writes `size` bytes to cutune_fuzz_path(name); returns its path or
 * NULL. */
const char *cutune_fuzz_write(const char *name, const uint8_t *data,
                              size_t size);

/* Keeps `text` as the message of this input. */
void cutune_fuzz_set_message(const char *text);

#endif
