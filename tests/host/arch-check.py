#!/usr/bin/env python3
"""Checks the layering rules of rxe_rs/ that the compiler does not: no import cycle between
source files, no file outside a layer or using a layer its own may not (the layer table of
Documentation/architecture.md, read from there), no function longer than MAX_FN_LINES in rxe/,
a `# Safety` section on every `unsafe fn` (callbacks included). Prints every violation; exits 1
if there is one.

    tests/host/arch-check.py [--graph]     (--graph: print the file dependency graph)

A file depends on another when it names an item of it by path (`crate::a::b`, `super::x`,
`self::y`), in a `use` or inline. `mod.rs` only declares its children, so edges *into* a
directory's `mod.rs` from its children count but `mod x;` lines do not.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "rxe_rs")
MAX_FN_LINES = 120
CRATE_ROOT = "rxe_rs.rs"


def rust_files():
    for d, _, fs in os.walk(ROOT):
        if "/tests" in d[len(ROOT):] or d.endswith("/tests"):
            continue
        for f in fs:
            if f.endswith(".rs"):
                yield os.path.relpath(os.path.join(d, f), ROOT)


def module_path(rel):
    """rxe/qp.rs -> ['rxe', 'qp']; rxe/mod.rs -> ['rxe']; rxe_rs.rs -> []"""
    if rel in (CRATE_ROOT, "proto_host.rs"):
        return []
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts.pop()
    return parts


def strip_comments_and_strings(src):
    src = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), src, flags=re.S)
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r'b?"(?:\\.|[^"\\])*"', '""', src, flags=re.S)
    return src


def expand_use(body):
    """Expands a `use` tree (without `use` and `;`) into flat paths."""
    body = body.strip()
    m = re.match(r"^(.*?)\{(.*)\}$", body, flags=re.S)
    if not m:
        return [re.split(r"\s+as\s+", body)[0].strip()]
    prefix, inner = m.group(1), m.group(2)
    items, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for it in items:
        if it.strip():
            out += [prefix + p if p != "self" else prefix.rstrip(":") for p in expand_use(it)]
    return out


def resolve(path, here, modules):
    """Maps a path as written in file `here` to the file (module) it names, or None."""
    segs = [s for s in path.replace(" ", "").split("::") if s]
    if not segs:
        return None
    base = module_path(here)
    is_mod_file = here.endswith("mod.rs") or here in (CRATE_ROOT,)
    cur = base if is_mod_file else base[:-1]
    if segs[0] == "crate":
        cur, segs = [], segs[1:]
    elif segs[0] == "self":
        cur, segs = base, segs[1:]
    elif segs[0] == "super":
        cur = base[:-1]
        segs = segs[1:]
        while segs and segs[0] == "super":
            cur, segs = cur[:-1], segs[1:]
    else:
        return None  # extern crate (kernel, core, alloc) or a local name
    best = None
    for i in range(len(segs) + 1):
        cand = tuple(cur + segs[:i])
        if cand in modules:
            best = modules[cand]
        elif i > 0:
            break
    return best


def dependencies(files):
    modules = {tuple(module_path(f)): f for f in files if f != "proto_host.rs"}
    deps = {f: set() for f in files}
    for f in files:
        if f == "proto_host.rs":
            continue
        src = strip_comments_and_strings(open(os.path.join(ROOT, f)).read())
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", src):
            paths += expand_use(m.group(1))
        paths += re.findall(r"\b((?:crate|super|self)(?:::\w+)+)", src)
        for p in paths:
            t = resolve(p, f, modules)
            # A directory's mod.rs is the parent of its files: an edge to it is a re-export,
            # not a dependency, unless it is named on purpose.
            if t and t != f and not (t.endswith("mod.rs") and f.startswith(os.path.dirname(t) + "/")):
                if t != CRATE_ROOT:
                    deps[f].add(t)
    return deps


def cycles(deps):
    """Tarjan's strongly connected components with more than one file."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in deps[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in deps:
        if v not in index:
            visit(v)
    return out


def long_functions(files):
    out = []
    for f in files:
        if not f.startswith("rxe/"):
            continue
        lines = strip_comments_and_strings(open(os.path.join(ROOT, f)).read()).split("\n")
        i = 0
        while i < len(lines):
            m = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:unsafe\s+)?(?:extern\s+\"C\"\s+)?fn\s+(\w+)", lines[i])
            if m:
                depth, started, j = 0, False, i
                while j < len(lines):
                    for ch in lines[j]:
                        if ch == "{":
                            depth += 1
                            started = True
                        elif ch == "}":
                            depth -= 1
                    if started and depth == 0:
                        break
                    if not started and lines[j].rstrip().endswith(";"):
                        break
                    j += 1
                if started and j - i + 1 > MAX_FN_LINES:
                    out.append(f"{f}:{i + 1}: fn {m.group(1)} is {j - i + 1} lines (max {MAX_FN_LINES})")
                i += 1
                continue
            i += 1
    return out


def unsafe_fns_without_safety(files):
    out = []
    for f in files:
        lines = open(os.path.join(ROOT, f)).read().split("\n")
        for i, l in enumerate(lines):
            if re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?unsafe\s+(?:extern\s+\"C\"\s+)?fn\s", l):
                # A trait impl's method: its contract is the trait's `# Safety`.
                k = i - 1
                while k >= 0 and not re.match(r"\s*(?:unsafe\s+)?impl\b", lines[k]):
                    k -= 1
                if l.startswith(" ") and k >= 0 and " for " in lines[k]:
                    continue
                # Walk up over attributes to the doc comment.
                j, doc = i - 1, []
                while j >= 0 and (lines[j].strip().startswith("#[") or lines[j].strip().startswith("///")):
                    doc.append(lines[j])
                    j -= 1
                if not any("# Safety" in d for d in doc):
                    out.append(f"{f}:{i + 1}: unsafe fn without a `# Safety` section")
    return out


ARCH_DOC = os.path.join(ROOT, "..", "Documentation", "architecture.md")


def layer_table():
    """{directory or file: (layer, {directories and files it may use})} from the "| layer |
    directory | may use | ..." table: the backquoted rxe_rs/ paths of the directory column, the
    backquoted layer names (`rxe`, `ib`, ...) of the may-use column."""
    rows, in_table = [], False
    for line in open(ARCH_DOC):
        if line.startswith("| layer | directory | may use"):
            in_table = True
            continue
        if in_table and not line.startswith("|"):
            break
        if in_table and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows.append(cells)
    table = {}
    for name, where, may_use, *_ in rows:
        dirs = [d[len("rxe_rs/"):] for d in re.findall(r"`(rxe_rs/[^`]*)`", where)]
        allowed = set()
        for n in re.findall(r"`([a-z_]+)`", may_use):
            allowed.add(n + "/")
        for d in dirs:
            table[d] = (name, allowed | set(dirs))
    return table


def layer_of(f, table):
    for d in sorted(table, key=len, reverse=True):
        if f == d or (d.endswith("/") and f.startswith(d)):
            return d
    return None


def layer_violations(deps):
    table = layer_table()
    if not table:
        return [f"{ARCH_DOC}: no layer table found"]
    out = []
    for f, targets in sorted(deps.items()):
        mine = layer_of(f, table)
        if mine is None:
            # Every file of the module has a layer; the host crate's root is not in the module.
            if f != "proto_host.rs":
                out.append(f"{f}: in no layer of {os.path.basename(ARCH_DOC)}'s table")
            continue
        name, allowed = table[mine]
        for t in sorted(targets):
            theirs = layer_of(t, table)
            if theirs is not None and theirs != mine and theirs not in allowed:
                others = ", ".join(sorted(allowed - {mine})) or "nothing else"
                out.append(f"{f} uses {t}: the {name} layer may use {others}")
    return out


def main():
    files = sorted(rust_files())
    deps = dependencies(files)
    if "--graph" in sys.argv:
        for f in files:
            print(f, "->", " ".join(sorted(deps[f])))
    problems = []
    for c in cycles(deps):
        problems.append("import cycle between: " + " ".join(c))
    problems += layer_violations(deps)
    problems += long_functions(files)
    problems += unsafe_fns_without_safety(files)
    for p in problems:
        print(p)
    print(f"arch-check: {len(files)} files, {sum(len(d) for d in deps.values())} file dependencies, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
