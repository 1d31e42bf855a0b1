/* conn.c - connections (nothing is sent: a demo). */
#include "buf.h"
#include "net.h"

void conn_open(struct conn *c, const char *host)
{
	buf_copy(c->host, host);
	c->port = 443;
}

void conn_banner(char *out)
{
	/* already migrated */
	buf_copy_n(out, 8, "sluice");
}
