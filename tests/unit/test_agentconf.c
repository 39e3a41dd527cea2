/* An agent's configuration that names the programs it starts
 * (supervisor/agentconf.h): what lands must hold the MCP servers that
 * were there. */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "supervisor/agentconf.h"
#include "tests/unit/check_main.h"

#define WAS                                                                    \
	"{\"numStartups\":1,\"mcpServers\":{\"a\":{\"command\":\"x\"}},"       \
	"\"projects\":{\"/p\":{\"mcpServers\":{}}}}"

static const struct {
	const char *now, *was;
	bool same;
} ac_table[] = {
    /* what Claude Code rewrites at each start: the rest */
    {"{\"numStartups\":2,\"mcpServers\":{\"a\":{\"command\":\"x\"}}}", WAS,
     true},
    {"{\"mcpServers\":{\"a\":{\"command\":\"x\"}},\"projects\":"
     "{\"/p\":{\"allowedTools\":[]},\"/q\":{\"mcpServers\":{}}}}",
     WAS, true},
    {"{\"projects\":{}}", NULL, true},
    {"{\"projects\":{}}", "not json", true},
    /* a server added, changed or moved to a project */
    {"{\"mcpServers\":{\"a\":{\"command\":\"x\"},\"b\":{\"command\":\"y\"}}}",
     WAS, false},
    {"{\"mcpServers\":{\"a\":{\"command\":\"y\"}}}", WAS, false},
    {"{\"mcpServers\":{\"a\":{\"command\":\"x\"}},\"projects\":{\"/p\":"
     "{\"mcpServers\":{\"c\":{\"command\":\"z\"}}}}}",
     WAS, false},
    {"{\"mcpServers\":{\"b\":{\"command\":\"y\"}}}", NULL, false},
    /* what another parser could read otherwise: refused */
    {"{\"mcpServers\":{},\"mcpServers\":{\"b\":{\"command\":\"y\"}}}", NULL,
     false},
    {"{\"mcpServers\":{\"a\":{\"command\":\"x\"}}", WAS, false}, /* cut */
    {"[1]", NULL, false},
    /* removed: what the user had is gone, nothing runs */
    {"{\"numStartups\":2}", WAS, true},
    {"{\"mcpServers\":{}}", WAS, true},
};

START_TEST(agentconf_same_servers_table)
{
	const char *now = ac_table[_i].now, *was = ac_table[_i].was;

	ck_assert_msg(hx_agentconf_same_servers(now, strlen(now), was,
						was ? strlen(was) : 0) ==
			  ac_table[_i].same,
		      "row %d", _i);
}
END_TEST

START_TEST(agentconf_path_of_home)
{
	ck_assert_str_eq(hx_agentconf_path("/"), "/.claude.json");
	ck_assert_ptr_null(hx_agentconf_path(""));
	ck_assert_ptr_null(hx_agentconf_path(NULL));
	ck_assert_ptr_null(hx_agentconf_path("/nonexistent-hx-home"));
}
END_TEST

static Suite *agentconf_suite(void)
{
	Suite *s = suite_create("agentconf");
	TCase *tc = tcase_create("core");

	tcase_add_loop_test(tc, agentconf_same_servers_table, 0,
			    sizeof(ac_table) / sizeof(*ac_table));
	tcase_add_test(tc, agentconf_path_of_home);
	suite_add_tcase(s, tc);
	return s;
}

HX_TEST_MAIN(agentconf_suite)
