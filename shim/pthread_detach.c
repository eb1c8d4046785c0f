/* pthread_detach.c: see core/join.c. */
#include <pthread.h>
#include "shim.h"

GOSHIM_EXPORT int pthread_detach(pthread_t t)
{
	struct g *gp = shim_thread(t);
	if (gp == NULL)
		return real.pthread_detach(t);
	return go_detach(gp);
}
