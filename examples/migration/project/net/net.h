#ifndef NET_H
#define NET_H
struct conn {
	char host[16];
	int port;
};
void conn_open(struct conn *c, const char *host);
void conn_banner(char *out);
#endif
