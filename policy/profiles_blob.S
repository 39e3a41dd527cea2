/* The built-in profiles, embedded at build time: the Makefile packs
 * policy/profiles/NAME.yaml into HX_PROFILES_BLOB as "NAME\0TEXT\0"
 * pairs (builtin_profiles.c reads them); the YAML files stay the source. */
	.section .rodata
	.global hx_profiles_start
	.global hx_profiles_end
	.type hx_profiles_start, @object
hx_profiles_start:
	.incbin HX_PROFILES_BLOB
hx_profiles_end:
	.byte 0
	.section .note.GNU-stack,"",@progbits
