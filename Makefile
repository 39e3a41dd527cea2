# harness: one non-recursive Makefile. `make run` builds what is missing
# and runs the demo agent under harness-exec; `make test` runs every test.

BUILD ?= build
# One job per CPU unless the caller chose (`make -j1`): CI and the quick
# start call plain `make test` / `make run`.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc)
endif
CC ?= cc
PKGS := jansson yaml-0.1 libgit2 libseccomp nettle libunwind check
# Debian 12 names, installed by scripts/install-deps when missing.
WERROR ?= -Werror
WARN := -Wall -Wextra -Wformat=2 -Wshadow -Wstrict-prototypes \
	-Wpointer-arith -Wundef -Wwrite-strings -Wmissing-declarations \
	-Wmissing-prototypes -Wvla $(WERROR)
OPT ?= -O2 -g
HARDEN := -D_FORTIFY_SOURCE=3 -fstack-protector-strong
SAN ?=
CFLAGS_COMMON := -std=gnu17 $(OPT) $(WARN) -fPIC -MMD -MP -I.
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS))
PKG_LIBS = $(shell pkg-config --libs jansson yaml-0.1 libseccomp nettle) -lresolv
GIT_LIBS = $(shell pkg-config --libs libgit2 zlib)
CFLAGS_HOST = $(CFLAGS_COMMON) $(HARDEN) $(SAN) $(PKG_CFLAGS)
# The shim lives in every agent process: no sanitizers, hidden symbols,
# no fortify wrappers around the very functions it defines, and no stack
# protector (its canary check would call __stack_chk_fail, in libc, from
# hooks that run before libc is set up and inside vfork children).
CFLAGS_SHIM = $(CFLAGS_COMMON) -fvisibility=hidden -fno-stack-protector \
	-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=0 -ftls-model=initial-exec
LDLIBS_SHIM := -ldl -lpthread

COMMON_SRCS := $(wildcard common/*.c)
POLICY_SRCS := $(wildcard policy/*.c)
POLICY_ASM := policy/default_policy.S policy/profiles_blob.S policy/policy_nodes.S
PROFILES := $(sort $(wildcard policy/profiles/*.yaml))
PROFILES_BLOB := $(BUILD)/profiles.blob
# Their YAML documents, parsed at build time (policy/yamlpack.h).
POLICY_NODES := $(BUILD)/policy.nodes
# The git half of the supervisor (worktrees, checkpoints, provenance):
# also the plugin libharness-git.so, which harness-exec loads only when
# it needs it (supervisor/gitplugin.c): libgit2 costs every start ~3 ms.
GIT_SRCS := $(wildcard supervisor/git/*.c)
GITPLUGIN_SRC := supervisor/gitplugin.c
SUP_SRCS := $(filter-out $(GITPLUGIN_SRC),$(wildcard supervisor/*.c)) \
	$(wildcard supervisor/kernel/*.c) $(wildcard supervisor/export/*.c) \
	$(wildcard supervisor/mcp/*.c)
# harness-mcp's tool definitions, embedded (supervisor/mcp/tools.c).
MCP_ASM := supervisor/mcp/tools_blob.S
SHIM_SRCS := $(wildcard shim/*.c)
SHIM_CORE_SRCS := $(filter-out shim/interpose_%.c,$(SHIM_SRCS))
# The CLI halves of the tools, next to their mains.
CLI_SRCS := $(filter-out tools/harness-%.c,$(wildcard tools/*.c))
# harness-mcp-worker's logic (it runs in the sandbox as the agent):
# jansson and nettle only, no libseccomp, libgit2 or libyaml.
MCPWORK_SRCS := $(wildcard tools/mcpwork/*.c)
TOOLS := harness-exec harness-policy harness-audit harness-mcp
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
HELPER_SRCS := $(wildcard tests/helpers/*.c)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))
shimobj = $(patsubst %.c,$(BUILD)/shim-obj/%.o,$(1))

LIB_POLICY := $(BUILD)/libhxpolicy.a
LIB_COMMON := $(BUILD)/libhxcommon.a
LIB_CLI := $(BUILD)/libhxcli.a
LIB_MCPWORK := $(BUILD)/libhxmcpwork.a
LIB_SUP := $(BUILD)/libhxsupervisor.a
LIB_GIT := $(BUILD)/libhxgit.a
GIT_SO := $(BUILD)/libharness-git.so
LIB_SHIMCORE := $(BUILD)/libhxshimcore.a
SHIM_SO := $(BUILD)/libharness-shim.so
BINS := $(addprefix $(BUILD)/,$(TOOLS))
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
HELPER_BINS := $(patsubst tests/helpers/%.c,$(BUILD)/helpers/%,$(HELPER_SRCS)) \
	$(BUILD)/helpers/dyn_errno
ESCAPE_BINS := $(patsubst tests/escape/%.c,$(BUILD)/escape/%,$(wildcard tests/escape/*.c))
DEPS_OK := $(BUILD)/.deps-ok

.SECONDARY:
.PHONY: all run test unit unit-bins integration asan bench fuzz soak clean \
	install-deps format format-check agents test-agents lint clang-check \
	layout-check
all: $(BINS) $(SHIM_SO) $(GIT_SO) $(BUILD)/harness-mcp-worker

# Install the Debian packages when a library or a test program is missing.
$(DEPS_OK): scripts/install-deps
	@mkdir -p $(@D)
	@pkg-config --exists $(PKGS) && command -v busybox >/dev/null && \
	  command -v jq >/dev/null && command -v python3 >/dev/null && \
	  command -v git >/dev/null && command -v go >/dev/null && \
	  command -v ip >/dev/null && command -v clang >/dev/null && \
	  command -v clang-format >/dev/null || scripts/install-deps
	@touch $@
install-deps:
	scripts/install-deps

# The agent CLIs the agent tests drive (tests/agents/NAME/package-lock.json
# pins each), installed with npm into $(BUILD)/agents/NAME; apart from
# the Debian packages so that `make` needs no npm registry. `make test`
# drives TEST_AGENTS, `make test-agents` all of them.
AGENTS_ALL := claude codex gemini
TEST_AGENTS ?= codex
# The CLIs test_mcp.py registers harness-mcp with (their own `mcp add`
# and the client each starts it with): installed, not driven.
MCP_AGENTS ?= claude codex gemini
agent_stamps = $(foreach a,$(1),$(BUILD)/agents/$(a)/.installed)
$(BUILD)/agents/%/.installed: tests/agents/%/package-lock.json tests/agents/%/package.json
	@BUILD=$(BUILD) scripts/install-deps --agents $*
agents: $(call agent_stamps,$(AGENTS_ALL))

$(BUILD)/obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_HOST) -c $< -o $@
$(BUILD)/obj/%.o: %.S policy/default.yaml $(PROFILES_BLOB) $(POLICY_NODES) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -DHX_PROFILES_BLOB='"$(PROFILES_BLOB)"' \
	  -DHX_POLICY_NODES='"$(POLICY_NODES)"' -c $< -o $@
$(BUILD)/gen/yamlpack: tools/gen/yamlpack.c policy/yamlpack.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_HOST) -o $@ $^ $(PKG_LIBS)
$(POLICY_NODES): $(BUILD)/gen/yamlpack policy/default.yaml $(PROFILES)
	$(BUILD)/gen/yamlpack $@.tmp default=policy/default.yaml \
	  $(foreach f,$(PROFILES),$(basename $(notdir $(f)))=$(f)) && mv $@.tmp $@
# The built-in profiles as "NAME\0TEXT\0" pairs (policy/builtin_profiles.c).
$(PROFILES_BLOB): $(PROFILES) policy/profiles
	@mkdir -p $(@D)
	@for f in $(PROFILES); do n=$${f##*/}; printf '%s\0' "$${n%.yaml}"; \
	  cat "$$f"; printf '\0'; done > $@.tmp && mv $@.tmp $@
$(BUILD)/shim-obj/%.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS_SHIM) -c $< -o $@

$(LIB_POLICY): $(call obj,$(POLICY_SRCS)) $(patsubst %.S,$(BUILD)/obj/%.o,$(POLICY_ASM))
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_COMMON): $(call obj,$(COMMON_SRCS))
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_CLI): $(call obj,$(CLI_SRCS))
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_MCPWORK): $(call obj,$(MCPWORK_SRCS))
	rm -f $@ && $(AR) rcs $@ $^
$(BUILD)/obj/supervisor/mcp/tools_blob.o: supervisor/mcp/tools.json
$(LIB_SUP): $(call obj,$(SUP_SRCS)) $(patsubst %.S,$(BUILD)/obj/%.o,$(MCP_ASM))
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_GIT): $(call obj,$(GIT_SRCS))
	rm -f $@ && $(AR) rcs $@ $^
$(LIB_SHIMCORE): $(call shimobj,$(SHIM_CORE_SRCS) $(COMMON_SRCS))
	rm -f $@ && $(AR) rcs $@ $^

$(SHIM_SO): $(call shimobj,$(SHIM_SRCS) $(COMMON_SRCS)) shim/exports.map
	$(CC) -shared -Wl,-z,now -Wl,--version-script=shim/exports.map \
	  -o $@ $(filter %.o,$^) $(LDLIBS_SHIM)

HOST_LIBS = $(LIB_SUP) $(LIB_POLICY) $(LIB_COMMON)
# harness-exec reaches the git half through the plugin; the others link
# it in.
$(BUILD)/harness-exec: $(BUILD)/obj/tools/harness-exec.o \
  $(call obj,$(GITPLUGIN_SRC)) $(HOST_LIBS)
	$(CC) $(SAN) -Wl,--as-needed -o $@ $(filter %.o,$^) $(HOST_LIBS) \
	  $(PKG_LIBS) -ldl -lpthread
# harness-mcp is harness-exec with an MCP front: the same plugin.
$(BUILD)/harness-mcp: $(BUILD)/obj/tools/harness-mcp.o \
  $(BUILD)/obj/tools/mcp_cli.o $(call obj,$(GITPLUGIN_SRC)) $(HOST_LIBS)
	$(CC) $(SAN) -Wl,--as-needed -o $@ $(filter %.o,$^) $(HOST_LIBS) \
	  $(PKG_LIBS) -ldl -lpthread
# The worker runs inside the sandbox: the libraries it needs and no more.
$(BUILD)/harness-mcp-worker: $(BUILD)/obj/tools/harness-mcp-worker.o \
  $(LIB_MCPWORK) $(LIB_COMMON)
	$(CC) $(SAN) -Wl,--as-needed -o $@ $< $(LIB_MCPWORK) $(LIB_COMMON) \
	  $$(pkg-config --libs jansson nettle)
# Calls go one way: the tools' CLI halves, then git, then the core.
ALL_LIBS = $(LIB_CLI) $(LIB_GIT) $(HOST_LIBS)
$(BUILD)/harness-%: $(BUILD)/obj/tools/harness-%.o $(LIB_CLI) $(LIB_GIT) $(HOST_LIBS)
	$(CC) $(SAN) -Wl,--as-needed -o $@ $< $(ALL_LIBS) $(PKG_LIBS) \
	  $(GIT_LIBS) -lpthread
# Its own copies of the core it calls (they keep no global state); only
# hx_git_api is meant to be looked up, and -Bsymbolic binds the rest
# inside.
$(GIT_SO): $(call obj,$(GIT_SRCS)) $(HOST_LIBS)
	$(CC) $(SAN) -shared -Wl,-z,now,-z,defs -Wl,-Bsymbolic -Wl,--as-needed \
	  -o $@ $(call obj,$(GIT_SRCS)) $(HOST_LIBS) $(PKG_LIBS) \
	  $(GIT_LIBS) -lpthread

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB_MCPWORK) $(LIB_CLI) $(LIB_GIT) $(HOST_LIBS) $(LIB_SHIMCORE)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $< $(LIB_MCPWORK) $(ALL_LIBS) $(LIB_SHIMCORE) $(PKG_LIBS) \
	  $(GIT_LIBS) $$(pkg-config --libs check) -lunwind -ldl -lpthread

# Programs that run under the harness: never sanitized (ASan makes
# syscalls of its own), built with the plain toolchain.
$(BUILD)/helpers/%: tests/helpers/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -O2 -Wall -Wextra $(WERROR) -o $@ $< -lpthread

# Static helpers never load the shim: they stand for programs that skip it.
$(BUILD)/helpers/static_%: tests/helpers/static_%.c $(COMMON_SRCS) | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -O2 -Wall -Wextra $(WERROR) -I. -static -o $@ $< $(COMMON_SRCS)

# static_errno's dynamic twin: the same calls, through the shim.
$(BUILD)/helpers/dyn_errno: tests/helpers/static_errno.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -O2 -Wall -Wextra $(WERROR) -o $@ $<

# The escape suite: static, unsanitized, so only the kernel layers see
# what they try (tests/integration/test_escape.py runs them).
$(BUILD)/escape/%: tests/escape/%.c tests/escape/escape.h | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) -std=gnu17 -O2 -Wall -Wextra $(WERROR) -static -o $@ $< -lpthread

run: all
	scripts/demo

# Debian's Prometheus and OpenTelemetry JS's OTLP decoder, for the
# metrics and export tests (scripts/install-deps).
PROMETHEUS := $(BUILD)/prometheus/usr/bin/prometheus
$(PROMETHEUS):
	@BUILD=$(BUILD) scripts/install-deps --prometheus
OTLP_DECODER := $(BUILD)/otlp/.installed
$(OTLP_DECODER): tests/otlp/package-lock.json tests/otlp/package.json
	@BUILD=$(BUILD) scripts/install-deps --otlp
# The MCP TypeScript SDK's client and the inspector CLI (test_mcp.py).
MCP_CLIENTS := $(BUILD)/mcp/.installed
$(MCP_CLIENTS): tests/mcp/package-lock.json tests/mcp/package.json
	@BUILD=$(BUILD) scripts/install-deps --mcp
unit: $(UNIT_BINS)
	@tests/run-unit $(UNIT_BINS)
unit-bins: $(UNIT_BINS)
integration: all $(HELPER_BINS) $(ESCAPE_BINS) $(PROMETHEUS) $(OTLP_DECODER) \
  $(MCP_CLIENTS)
	@BUILD=$(BUILD) tests/run-integration
test: lint all $(UNIT_BINS) $(HELPER_BINS) $(ESCAPE_BINS) $(PROMETHEUS) \
  $(OTLP_DECODER) $(MCP_CLIENTS) \
	  $(call agent_stamps,$(sort $(TEST_AGENTS) $(MCP_AGENTS)))
	@BUILD=$(BUILD) HX_AGENTS="$(TEST_AGENTS)" \
	  HX_MCP_AGENTS="$(MCP_AGENTS)" tests/run $(UNIT_BINS)

# The checks that keep the tree as HACKING.md says, first in `make test`:
# a second compiler's warnings as errors (every object and unit program
# built by clang too, in its own build directory), the layout rules
# (scripts/check-layout), the format (clang-format 14, Debian 12's).
lint: clang-check layout-check format-check
clang-check: | $(DEPS_OK)
	@$(MAKE) --no-print-directory BUILD=$(BUILD)/clang CC=clang OPT=-O1 \
	  all unit-bins >/dev/null
	@echo "clang-check: ok"
layout-check: all
	@scripts/check-layout $(BUILD)
# Only the agent tests, every agent, as root and as the ordinary user.
test-agents: all $(HELPER_BINS) agents
	@BUILD=$(BUILD) HX_AGENTS="$(AGENTS_ALL)" tests/run --integration test_agents

asan:
	@# Sanitized code runs several times slower: Check's 4 s per test, x4.
	CK_TIMEOUT_MULTIPLIER=4 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp ASAN_OPTIONS=fast_unwind_on_malloc=0 \
	$(MAKE) BUILD=build-asan SAN='-fsanitize=address,undefined -fno-omit-frame-pointer' \
	  OPT='-O1 -g' unit

# Micro benchmarks of the libraries (tests/bench/), for make bench only.
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/bench/%,$(wildcard tests/bench/*.c))
$(BUILD)/bench/%: $(BUILD)/obj/tests/bench/%.o $(HOST_LIBS)
	@mkdir -p $(@D)
	$(CC) $(SAN) -o $@ $< $(HOST_LIBS) $(PKG_LIBS) -lpthread

bench: all $(HELPER_BINS) $(BENCH_BINS) agents
	scripts/install-deps --bench
	BUILD=$(BUILD) scripts/bench

FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
# The pure parts the targets reach: common/, policy/, the DNS messages,
# the redaction of records, harness-mcp-worker's decoders, /proc and
# audit text, an exec's environment, an agent's config (a target that #includes a .c file
# of the supervisor reaches its static parsers).
FUZZ_SRCS := $(COMMON_SRCS) $(POLICY_SRCS) supervisor/dnsmsg.c \
	$(wildcard supervisor/redact*.c) supervisor/fmt.c supervisor/export/logscan.c \
	tools/mcpwork/wire.c tools/mcpwork/args.c tools/mcpwork/text.c tools/mcpwork/grow.c \
	tools/mcpwork/patch.c supervisor/mcp/schema.c supervisor/mcp/tools.c \
	supervisor/git/indexfile.c supervisor/proc.c supervisor/envdiff.c \
	supervisor/sha256.c supervisor/kernel/kaudit_parse.c supervisor/agentconf.c
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_SRCS) $(POLICY_ASM) $(MCP_ASM) policy/default.yaml supervisor/mcp/tools.json $(PROFILES_BLOB) $(POLICY_NODES) | $(DEPS_OK)
	@mkdir -p $(@D)
	clang -std=gnu17 -g -O1 -I. -fsanitize=fuzzer,address,undefined \
	  -DHX_PROFILES_BLOB='"$(PROFILES_BLOB)"' -DHX_POLICY_NODES='"$(POLICY_NODES)"' \
	  $(PKG_CFLAGS) -o $@ $< $(FUZZ_SRCS) $(POLICY_ASM) $(MCP_ASM) $(PKG_LIBS) \
	  $(GIT_LIBS)
fuzz: $(FUZZ_TARGETS)
	@# New inputs go to the build dir; the checked-in seeds stay as they are.
	@for f in $(FUZZ_TARGETS); do n=$$(basename $$f); echo "== $$n"; \
	  mkdir -p $(BUILD)/fuzz/corpus-$$n; \
	  $$f -max_total_time=$${FUZZ_SECONDS:-60} -rss_limit_mb=2048 \
	    $(BUILD)/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

# One session kept busy for SOAK_SECONDS (default an hour): the
# supervisor's memory, threads and fds over time (scripts/soak).
soak: all $(HELPER_BINS)
	BUILD=$(BUILD) scripts/soak

# Every C file of ours: the top-level folders' and one level below.
FORMAT_FILES = $(filter-out $(BUILD)/% build-asan/%,$(wildcard */*.[ch] */*/*.[ch]))
format:
	clang-format -i $(FORMAT_FILES)
# Pinned: another clang-format lays the same code out otherwise.
CLANG_FORMAT_MAJOR := 14
format-check: | $(DEPS_OK)
	@clang-format --version | grep -q 'version $(CLANG_FORMAT_MAJOR)\.' || \
	  { echo "format-check: clang-format $(CLANG_FORMAT_MAJOR) (Debian 12's) is needed, not: $$(clang-format --version)"; exit 1; }
	@clang-format --dry-run --Werror $(FORMAT_FILES)
	@echo "format-check: ok"

clean:
	rm -rf $(BUILD) build-asan

-include $(shell find $(BUILD) -name '*.d' -type f 2>/dev/null)
