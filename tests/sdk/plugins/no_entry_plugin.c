/* A shared library named like a plugin but without the entry symbol. */
#include <switchyard/sdk.h>

SY_EXPORT int switchyard_plugin_init_misspelled(void) { return 0; }
