/* The embedded policies' YAML documents, packed at build time by
 * tools/gen/yamlpack.c (policy/yamlpack.h): the YAML files stay the
 * source, and a blob that does not check out is parsed from them. */
	.section .rodata
	.balign 8
	.global hx_policy_nodes_start
	.global hx_policy_nodes_end
	.type hx_policy_nodes_start, @object
hx_policy_nodes_start:
	.incbin HX_POLICY_NODES
hx_policy_nodes_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
