"""The shim exports exactly the interposed functions of issue 2, item 5."""

import subprocess

from lib import SHIM, check

INTERPOSED = """
execve execv execvp execvpe execl execlp execle fexecve execveat
posix_spawn posix_spawnp system popen
open open64 openat openat64 __open_2 __open64_2 __openat_2 __openat64_2
creat creat64 fopen fopen64 freopen freopen64
rename renameat renameat2 unlink unlinkat rmdir mkdir mkdirat link linkat
symlink symlinkat truncate truncate64
connect sendto sendmsg getaddrinfo gethostbyname gethostbyname2
syscall
""".split()


def test_shim_exports_exactly_the_interposed_functions(wd):
    out = subprocess.run(["nm", "-D", "--defined-only", SHIM], capture_output=True,
                         text=True, check=True).stdout
    exported = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TWi":
            exported.add(parts[2].split("@")[0])
        elif len(parts) >= 2:
            exported.add(parts[-1].split("@")[0])
    missing = set(INTERPOSED) - exported
    extra = exported - set(INTERPOSED)
    check(not missing, "not interposed: %s" % sorted(missing))
    check(not extra, "exported but not interposed: %s" % sorted(extra))
