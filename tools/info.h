/* `esmm info`: the library version, its build and the device it would use. */
#ifndef ESMM_TOOLS_INFO_H
#define ESMM_TOOLS_INFO_H

/* argv are the arguments after "info". Returns an ESMM_EXIT_* code. */
int info_command(int argc, char **argv);

#endif
