/* The GPU worker's service loop (the cutune-worker program). */
#ifndef CUTUNE_TUNER_WORKER_H
#define CUTUNE_TUNER_WORKER_H

/* Serves requests on `fd` until the peer closes it or asks to quit. */
int cutune__worker_main(int fd);

#endif
