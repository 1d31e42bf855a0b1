int q(void) <% for (;;) break; return 0; %>
int r(void) { return 0; }
