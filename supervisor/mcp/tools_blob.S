/* harness-mcp's tool definitions, embedded from supervisor/mcp/tools.json
 * at build time: the JSON file stays the source of truth. */
	.section .rodata
	.global hx_mcp_tools_start
	.global hx_mcp_tools_end
	.type hx_mcp_tools_start, @object
hx_mcp_tools_start:
	.incbin "supervisor/mcp/tools.json"
hx_mcp_tools_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
