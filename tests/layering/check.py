#!/usr/bin/env python3
"""tests/layering/check.py BUILD_DIR: the layers of goshim, held by CI.

shim/ is the POSIX surface, core/ the runtime, arch/ the CPU layer, and
each may use only what is below it, through its face:
  1. no upward include: core/ and arch/ include nothing of shim/, arch/
     nothing of core/;
  2. core/ and arch/ call no name the library exports: such a call binds
     to goshim's own interposer, not to the C library (they use `real`);
  3. shim/ reaches no scheduler internal: it includes no arch/ header and
     none of core's own (runtime2.h, pd.h: what core files share among
     themselves), and touches no field of struct g, m or p (core/runtime.h
     keeps the types for the inline fast paths it offers) and not the
     scheduler's globals (sched., allp).
Rule 3's fields are read from the source by name (a field name of g/m/p
after -> or .). Prints each breach; exits 1 if there is one.
"""
import re
import subprocess
import sys
from pathlib import Path

root = Path(__file__).resolve().parents[2]
build = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "build"
bad = []


def includes(path):
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if m:
            yield n, m.group(1)


shim_headers = {p.name for p in (root / "shim").glob("*.h")}
core_headers = {p.name for p in (root / "core").glob("*.h")}

# 1. upward includes
for f in sorted((root / "core").glob("*.[ch]")):
    for n, inc in includes(f):
        if "shim/" in inc or (inc in shim_headers and inc not in core_headers):
            bad.append(f"{f.relative_to(root)}:{n}: core includes shim's {inc}")
for f in sorted((root / "arch").rglob("*.[chS]")):
    for n, inc in includes(f):
        if "core/" in inc or "shim/" in inc or inc in core_headers or inc in shim_headers:
            bad.append(f"{f.relative_to(root)}:{n}: arch includes {inc}")


# 2. core/arch calls of the library's exported names
def syms(args):
    out = subprocess.run(["nm"] + args, capture_output=True, text=True, check=True).stdout
    return out.splitlines()


lib = build / "libgoshim.so"
if not lib.exists():
    print(f"layering: {lib} missing: run make first", file=sys.stderr)
    sys.exit(2)
# What another object can bind to: defined, default or protected visibility
# (the linker lists hidden ones too, as the __start_ and __stop_ of a
# section).
dynsyms = subprocess.run(["readelf", "--dyn-syms", "-W", str(lib)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
exported = {f[7].split("@")[0] for f in (l.split() for l in dynsyms)
            if len(f) >= 8 and f[6] != "UND" and f[5] in ("DEFAULT", "PROTECTED")}
objs = sorted((build / "obj" / "core").glob("*.o")) + sorted((build / "obj" / "arch").rglob("*.o"))
if not objs:
    print(f"layering: no objects under {build}/obj: run make first", file=sys.stderr)
    sys.exit(2)
for o in objs:
    for l in syms(["-u", str(o)]):
        name = l.split()[-1].split("@")[0]
        if name in exported:
            bad.append(f"{o.relative_to(build)}: core calls the exported {name} (goshim's own interposer)")

# 3. shim's reach into the scheduler
src = (root / "core" / "runtime.h").read_text()
fields = set()
for s in ("g", "m", "p"):
    m = re.search(r"struct %s \{(.*?)\n\};" % s, src, re.S)
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    for decl in body.split(";"):
        fp = re.search(r"\(\s*\*\s*([A-Za-z_]\w*)\s*\)", decl)
        names = re.findall(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*(?:,|$)", decl.strip())
        if fp:
            fields.add(fp.group(1))
        elif names:
            fields.update(n for n in names if n != "_Atomic")
# Names every struct has: a use of them says nothing; nor do the names of
# struct spawn_attr, which shim fills for go_spawn and g_attr fills back.
fields -= {"arg", "fn", "link", "id", "name", "status", "map", "scope", "ctx",
           "keys", "trace", "timers", "magic", "robust", "p", "m"}
spawn = re.search(r"struct spawn_attr \{(.*?)\n\};", src, re.S).group(1)
fields -= set(re.findall(r"(\w+)\s*[;,]", re.sub(r"/\*.*?\*/", "", spawn, flags=re.S)))
reach = re.compile(r"(?:->|\.)(%s)\b|\bsched\.|\ballp\b|->m->|->p->" %
                   "|".join(sorted(fields)))
core_own = {"runtime2.h", "pd.h"}
seen = {}
for f in sorted((root / "shim").glob("*.[ch]")):
    rel = str(f.relative_to(root))
    n = 0
    # Comments blanked (newlines kept, so lines keep their numbers).
    text = re.sub(r"/\*.*?\*/|//[^\n]*",
                  lambda c: re.sub(r"[^\n]", " ", c.group(0)),
                  f.read_text(), flags=re.S)
    for ln, code in enumerate(text.splitlines(), 1):
        if re.search(r'#\s*include\s+"\.\./arch/', code):
            bad.append(f"{rel}:{ln}: shim includes arch/ directly")
        inc = re.match(r'\s*#\s*include\s+"(?:\.\./core/)?([^"/]+)"', code)
        if inc and inc.group(1) in core_own:
            bad.append(f"{rel}:{ln}: shim includes core's own {inc.group(1)}")
        if re.match(r"\s*#\s*include\b", code):
            continue  # <sched.h> is no use of sched.
        uses = reach.findall(code)
        n += len(uses)
        if uses:
            bad.append(f"{rel}:{ln}: a scheduler internal: add a core call "
                       "to core/runtime.h instead")
    seen[rel] = n

for b in bad:
    print("layering:", b)
total = sum(seen.values())
print(f"layering: {len(bad)} breaches; shim's reach into the scheduler: "
      f"{total} uses in {sum(1 for v in seen.values() if v)} files")
sys.exit(1 if bad else 0)
