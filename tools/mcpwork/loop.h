/* The worker's loop: reads requests from the front on fd, runs the file
 * tools one at a time in order of arrival and the code_run calls side
 * by side (poll; no threads), and writes their replies. */
#ifndef HX_MW_LOOP_H
#define HX_MW_LOOP_H

/* Serves the front on fd (a connected SOCK_STREAM socket) until it
 * closes or says {"exit": true}; running children are then killed.
 * Sends the hello first. Sets SIGPIPE ignored and a SIGCHLD handler.
 * 0, or -errno when the loop itself could not be set up. */
int hx_mw_loop_run(int fd);

#endif
