"""Attack review 32, part d: files in $HOME that make code run later,
outside the sandbox (DESIGN class 5), from a static busybox and through
the shim, under the embedded default policy in enforce mode, as root
and as an ordinary user.

Outside every write root the default's file_write: deny holds them. A
session started in $HOME (its project rule allows $HOME/**) was held
by the names the twenty-sixth review listed only: go env -w's file
(GOFLAGS=-toolexec), ~/.curlrc (a proxy and -k under a curl | sh),
pnpm's global rc (a global pnpmfile), ~/.pdbrc, ~/.bazelrc, ccache's
prefix_command, conan's hooks, scons' site_init, ~/.asoundrc and
PulseAudio's client.conf (a plugin library, a daemon binary: code in
every program that plays a sound), per-desktop MIME lists, npm's
prefix in ~/.local/lib, ~/perl5, RVM's and GVM's sourced scripts,
Vim's XDG vimrc, zellij's and byobu's configs, Hyper's plugins, the
window managers' start scripts the list did not name, bars and
notification daemons that run commands, Taskwarrior's hooks,
neomutt's rc, mbsync's PassCmd, mpv's scripts, qutebrowser's
config.py, ~/.k5login... were written. And the profiles of browsers
the browser rule did not name (Chrome's beta channel, LibreWolf...),
Erlang's cookie and adb's key were read, from any session."""

import os

from lib import PYTHON, check, harness, xfail
from test_attack26a import WRITE_ALL, places_refused

BUSYBOX = "/bin/busybox"

# Each a place a program of the user's runs, sources or loads later,
# with the rule that refuses it.
PLACES = {
    ".config/go/env": "tool-rc",
    ".curlrc": "tool-rc",
    ".config/pnpm/rc": "tool-rc",
    ".pdbrc": "tool-rc",
    ".bazelrc": "tool-rc",
    ".config/ccache/ccache.conf": "tool-rc",
    ".conan2/extensions/hooks/hook_x.py": "tool-rc",
    ".scons/site_scons/site_init.py": "tool-rc",
    ".config/vim/vimrc": "tool-rc",
    ".config/zellij/config.kdl": "tool-rc",
    ".byobu/.tmux.conf": "tool-rc",
    ".hyper_plugins/node_modules/x/index.js": "tool-rc",
    ".task/hooks/on-launch.x": "tool-rc",
    ".neomuttrc": "tool-rc",
    ".mbsyncrc": "tool-rc",
    ".config/mpv/scripts/x.lua": "tool-rc",
    ".config/qutebrowser/config.py": "tool-rc",
    ".config/chrome-flags.conf": "tool-rc",
    ".config/bat/config": "tool-rc",
    ".makepkg.conf": "tool-rc",
    ".asoundrc": "session-autorun",
    ".config/pulse/client.conf": "session-autorun",
    ".config/gnome-mimeapps.list": "session-autorun",
    ".config/herbstluftwm/autostart": "session-autorun",
    ".fluxbox/startup": "session-autorun",
    ".config/waybar/config": "session-autorun",
    ".config/dunst/dunstrc": "session-autorun",
    ".config/autorandr/postswitch": "session-autorun",
    ".fehbg": "session-autorun",
    ".config/ksmserverrc": "session-autorun",
    ".local/share/flatpak/exports/share/applications/x.desktop": "session-autorun",
    ".k5login": "session-autorun",
    ".local/lib/node_modules/x/cli.js": "user-path",
    "perl5/lib/perl5/strict.pm": "user-path",
    ".local/share/virtualenv/wheel/3.12/image/1/pip/x.py": "user-path",
    ".local/share/cargo/bin/cargo": "user-path",
    ".rvm/scripts/rvm": "shell-rc",
    ".gvm/scripts/gvm": "shell-rc",
    ".config/broot/launcher/bash/br": "shell-rc",
    ".git-prompt.sh": "shell-rc",
}



def _home_as_project(wd):
    """$HOME is the project itself, with the directories the places sit
    in (the places are new files)."""
    for rel in PLACES:
        os.makedirs(os.path.dirname(os.path.join(wd.path, rel)), exist_ok=True)
    return wd.path


def test_a_session_in_home_leaves_none_of_the_unlisted_places(wd):
    home = _home_as_project(wd)
    paths = [os.path.join(home, rel) for rel in PLACES]
    script = "".join("echo pwned >> '%s'\n" % p for p in paths) + "echo ok > notes.txt\n"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    r2 = harness([PYTHON, "-c", WRITE_ALL] + paths, wd, policy=None, env={"HOME": home})
    check(os.path.exists(os.path.join(home, "notes.txt")),
          "a plain project write refused: %r" % r.stderr[-800:])
    places_refused(home, PLACES, r, r2)


# The ways around a name: a directory filled in the project and moved
# or linked to where the user's programs look, a file linked or renamed
# over one.
WAYS = r'''
cd "$HOME"
mkdir -p zj && echo 'default_shell "/h/evil"' > zj/config.kdl
mv zj .config/zellij
mkdir -p plug/x && echo 'require("child_process")' > plug/x/index.js
ln -s "$HOME/plug" .hyper_plugins
echo 'import os' > mine
ln mine .pdbrc
mv mine .curlrc
echo ok > notes.txt && echo project-ok
'''


def test_a_session_in_home_puts_none_in_place_by_a_move_or_a_link(wd):
    home = wd.path
    os.makedirs(os.path.join(home, ".config"))
    r = harness([BUSYBOX, "sh", "-c", WAYS], wd, policy=None, env={"HOME": home})
    check("project-ok" in r.stdout, "a plain project write refused: %r %r" % (r.stdout, r.stderr))
    for rel in (".config/zellij", ".hyper_plugins", ".pdbrc", ".curlrc"):
        check(not os.path.lexists(os.path.join(home, rel)), "~/%s put in place" % rel)
    for rel in (".config/zellij", ".curlrc"):
        rec = r.one(op="rename", args_path2=os.path.join(home, rel))
        check(rec["verdict"] == "deny" and rec["rule"] == "tool-rc", "~/%s: record %r" % (rel, rec))
    for rel in (".hyper_plugins", ".pdbrc"):
        recs = r.events(args_path=os.path.join(home, rel), verdict="deny")
        check(recs and all(x["rule"] == "tool-rc" for x in recs), "~/%s: %r" % (rel, recs))


# Secrets read from any session: each with what it holds and the rule.
SECRETS = {
    ".erlang.cookie": "tool-credentials",
    ".android/adbkey": "tool-credentials",
    ".google_authenticator": "tool-credentials",
    ".config/aws/credentials": "tool-credentials",
    ".config/google-chrome-beta/Default/Cookies": "browser-profiles",
    ".librewolf/x.default/logins.json": "browser-profiles",
    ".local/share/qutebrowser/webengine/Cookies": "browser-profiles",
}


def test_the_profiles_and_keys_the_lists_missed_are_not_read(wd):
    from test_default_policy import fake_home
    home = fake_home(wd)
    paths = []
    for rel in SECRETS:
        p = os.path.join(home, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write("SECRET-%s\n" % rel)
        os.chmod(p, 0o644)
        paths.append(p)
    for d in {os.path.dirname(p) for p in paths} | {home}:
        os.chmod(d, 0o755)
    script = "".join("cat '%s'\n" % p for p in paths)
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("SECRET" not in r.stdout, "read: %r" % r.stdout)
    for rel, rule in SECRETS.items():
        # A masked directory's record names the entry below the mask
        # the open met (the directory of a nested file).
        p = os.path.join(home, rel)
        recs = [x for x in r.events(op="read")
                if p == x["args"]["path"] or p.startswith(x["args"]["path"] + "/")]
        check(recs and all(x["verdict"] == "deny" and x["rule"] == rule for x in recs),
              "~/%s: %r, want a deny by %s" % (rel, recs, rule))


def test_a_session_in_home_leaves_no_editor_config_under_an_app_name(wd):
    """The class the lists cannot close: a program that takes its config
    directory's name from the environment (Neovim's NVIM_APPNAME: a
    user of LazyVim next to their own config runs `NVIM_APPNAME=lazyvim
    nvim`, which runs ~/.config/lazyvim/init.lua). No list names every
    such directory; a session started in $HOME writes it (README)."""
    home = _home_as_project(wd)
    target = os.path.join(home, ".config", "lazyvim", "init.lua")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    r = harness([BUSYBOX, "sh", "-c", "echo 'os.execute(\"x\")' >> '%s'" % target], wd,
                policy=None, env={"HOME": home})
    recs = r.events(args_path=target)
    check(recs, "no record of the write: %r" % r.stderr[-800:])
    if os.path.exists(target):
        xfail("a session started in $HOME writes a config an unlisted app name's program runs")
    else:
        check(all(x["verdict"] == "deny" for x in recs), "records %r" % recs)


def test_caches_the_users_tools_trust_are_asked(wd):
    """~/.cache is a write root. Not listed were antibody's plugin
    clones (sourced at every zsh start), KDE's service database (the
    command each .desktop runs, trusted while it is newer than the
    directories), esbuild's copied binary, PyTorch's JIT extensions,
    Pants' bootstrap environment, pyright's PyPI wrapper's package (run
    by every pyright), hermit's and trunk's tools, renv's package cache,
    IBus' registry (each input method's command) and lorri's cached
    environments. The rest of the cache stays the agent's."""
    from test_default_policy import fake_home
    home = fake_home(wd)
    os.makedirs(os.path.join(home, ".cache"), exist_ok=True)
    asked = ["ksycoca6_en_1a2b", "antibody/https-COLON--SLASH--SLASH-github.com-SLASH-x/x.zsh",
             "esbuild/bin/@esbuild-linux-x64@0.19.0", "torch_extensions/py311_cu121/x/x.so",
             "pants/setup/bootstrap-Linux-x86_64/2.18.0_py39/bin/pants",
             "pyright-python/1.1.380/node_modules/pyright/index.js", "hermit/pkg/go-1.22/bin/go",
             "trunk/launcher/1.3.1/trunk", "R/renv/cache/v5/R-4.3/x86_64-pc-linux-gnu/x/1.0/h/x/R/x",
             "ibus/bus/registry", "lorri/gc_roots/0a1b/gc_root/shell_gc_root"]
    script = "cd ~/.cache || exit 9; " + "".join("mkdir -p '%s'; echo x > '%s'; " % (
        os.path.dirname(p) or ".", p) for p in asked) + "echo y > pip-x && echo done"
    r = harness([BUSYBOX, "sh", "-c", script], wd, policy=None, env={"HOME": home})
    check("done" in r.stdout, "a plain cache write refused: %r" % r.stderr)
    for rel in asked:
        path = os.path.join(home, ".cache", rel)
        check(not os.path.exists(path), "~/.cache/%s written" % rel)
        rec = r.one(args_path=path)
        check(rec["verdict"] == "ask" and rec["rule"] == "cache-scripts" and rec["layer"] == "kernel",
              "~/.cache/%s: record %r" % (rel, rec))


# The agent: npm's cache, a write root of the toolchains profile, takes
# a packument for a package (here one the user has not installed) whose
# latest version is a tarball of the agent's with a postinstall, and
# that tarball, both under the registry's URLs, fresh for ten years.
PLANT_NPM = r'''
const zlib = require("zlib");
const root = "/usr/lib/node_modules/npm/node_modules/";
const cacache = require(root + "cacache"), ssri = require(root + "ssri");
const [cache, name, mark] = process.argv.slice(1);
const ver = "99.0.0", reg = "https://registry.npmjs.org/";
const turl = reg + name + "/-/" + name + "-" + ver + ".tgz";
const pkg = JSON.stringify({name, version: ver, scripts: {postinstall: "touch " + mark}});
function tar(n, body) {
  const h = Buffer.alloc(512);
  h.write(n, 0); h.write("0000644\0", 100); h.write("0000000\0", 108); h.write("0000000\0", 116);
  h.write(body.length.toString(8).padStart(11, "0") + "\0", 124);
  h.write("00000000000\0", 136); h.write("        ", 148); h.write("0", 156);
  h.write("ustar\0" + "00", 257);
  let sum = 0; for (const b of h) sum += b;
  h.write(sum.toString(8).padStart(6, "0") + "\0 ", 148);
  const pad = Buffer.alloc((512 - body.length % 512) % 512);
  return zlib.gzipSync(Buffer.concat([h, Buffer.from(body), pad, Buffer.alloc(1024)]));
}
const tgz = tar("package/package.json", pkg);
const integrity = ssri.fromData(tgz, {algorithms: ["sha512"]}).toString();
const doc = {name, "dist-tags": {latest: ver}, versions: {[ver]: {name, version: ver,
  scripts: {postinstall: "touch " + mark}, dist: {tarball: turl, integrity}}}};
const meta = (url, type, req) => ({metadata: {time: Date.now(), url, reqHeaders: req,
  resHeaders: {"content-type": type, date: new Date().toUTCString(),
               "cache-control": "public, max-age=315360000"}, options: {compress: true}}});
(async () => {
  const key = "make-fetch-happen:request-cache:";
  await cacache.put(cache, key + reg + name, Buffer.from(JSON.stringify(doc)),
                    meta(reg + name, "application/json", {accept: "application/json"}));
  await cacache.put(cache, key + turl, tgz, meta(turl, "application/octet-stream", {}));
  console.log("planted");
})().catch(e => console.log("refused", e.code));
'''


def test_a_packument_planted_in_npms_cache_is_not_installed_later(wd):
    """npm checks a tarball against the integrity its packument names,
    and takes the packument from its cache while the cached response
    is fresh by its own headers: both are the agent's to write in
    ~/.npm/_cacache (the toolchains profile allows it whole). The
    user's next `npm install` of that package ran the agent's
    postinstall, outside the harness. Refusing the cache's index
    breaks npm (it stops at EACCES there) in every session whose policy
    lets it reach a registry; left open (README)."""
    import shutil
    import subprocess
    from lib import Skip
    from test_default_policy import fake_home
    npm = shutil.which("npm")
    if not npm or not shutil.which("node") or \
            not os.path.isdir("/usr/lib/node_modules/npm/node_modules/cacache"):
        raise Skip("no npm with its cacache in /usr/lib/node_modules")
    home = fake_home(wd)
    cache = os.path.join(home, ".npm")
    os.makedirs(cache, exist_ok=True)
    mark = os.path.join(wd.state, "postinstall-ran")
    name = "hx-not-installed-pkg"
    r = harness(["node", "-e", PLANT_NPM, os.path.join(cache, "_cacache"), name, mark], wd,
                policy=None, env={"HOME": home})
    check("planted" in r.stdout or "refused" in r.stdout, "the plant: %r %r" % (r.stdout, r.stderr))
    user = os.path.join(wd.state, "user-project")
    os.makedirs(user)
    env = dict(os.environ, HOME=home, npm_config_cache=cache, npm_config_update_notifier="false")
    subprocess.run([npm, "install", name, "--offline", "--no-audit", "--no-fund"], cwd=user,
                   env=env, capture_output=True, text=True, timeout=120)
    if os.path.exists(mark):
        check("planted" in r.stdout, "ran, but the plant said %r" % r.stdout)
        xfail("a packument and tarball planted in ~/.npm/_cacache ran their postinstall in the "
              "user's next npm install")
    else:
        recs = [x for x in r.events(category="file_write") if "_cacache/index-v5" in x["args"]["path"]]
        check(recs and all(x["verdict"] != "allow" for x in recs), "index writes: %r" % recs)
