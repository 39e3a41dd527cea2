/* The default policy, embedded from policy/default.yaml at build time:
 * the YAML file stays the source of truth. */
	.section .rodata
	.global hx_default_policy_start
	.global hx_default_policy_end
	.type hx_default_policy_start, @object
hx_default_policy_start:
	.incbin "policy/default.yaml"
hx_default_policy_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
