# make/cflags.mk -- the one set of C compiler flags: every C file of the build (the shim, the test
# hosts and plugins, the bench drivers) is compiled with $(CFLAGS) plus only what its kind of
# output needs (-fPIC -shared -fvisibility=hidden for a library, its -I directories, -D switches).
# Included first by the top-level Makefile and by tests/harness/Makefile; `make CFLAGS=...` on the
# command line overrides it for all of them.
#
#   -std=c11                 the shim is C11 (docs/dev/architecture.md); so are the hosts
#   -O2 -g                   optimised, with debug info (gdb on a host's core file)
#   -Wall -Wextra -Werror    a warning fails the build
#   -pthread                 every host and the shim use pthreads

CFLAGS := -std=c11 -O2 -g -Wall -Wextra -Werror -pthread
