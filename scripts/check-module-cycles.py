#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

For every `.rs` file under each crate's `src/`, the `crate::`, `super::` and `self::` paths it
names (outside comments and its `#[cfg(test)]` part) are resolved to the module they reach; an
edge to an ancestor or a descendant is not counted (a parent re-exports its children, a child
uses its parent's items). Cycles among the remaining edges (strongly connected components of
more than one module) are printed with the edges that form them.

Usage: scripts/check-module-cycles.py crates/reins/src [crates/other/src ...]
"""
import os
import re
import sys

PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
GROUP = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^}]*)\}")


def modules(src):
    """Module path (`a::b`) -> file."""
    found = {}
    for directory, _, files in os.walk(src):
        for name in files:
            if not name.endswith(".rs"):
                continue
            path = os.path.join(directory, name)
            parts = os.path.relpath(path, src)[:-3].split(os.sep)
            if parts[-1] in ("mod", "lib", "main"):
                parts = parts[:-1]
            found["::".join(parts)] = path
    return found


def resolve(mods, current, segments):
    """The longest module prefix of a path named in module `current`."""
    if segments[0] == "crate":
        base, rest = [], segments[1:]
    elif segments[0] == "super":
        base, rest = current[:-1], segments[1:]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    else:
        base, rest = list(current), segments[1:]
    for end in range(len(rest), -1, -1):
        candidate = "::".join(base + rest[:end])
        if candidate in mods:
            return candidate
    return None


def edges_of(mods):
    edges = {module: set() for module in mods}
    for module, path in mods.items():
        current = module.split("::") if module else []
        text = open(path, encoding="utf-8").read()
        test_part = text.find("#[cfg(test)]")
        if test_part >= 0:
            text = text[:test_part]
        text = re.sub(r"//.*", "", text)
        named = set()
        for group in GROUP.finditer(text):
            prefix = group.group(1).split("::")
            for item in group.group(2).split(","):
                item = item.strip().split(" ")[0]
                if item:
                    named.add(tuple(prefix + item.split("::")))
        for path_match in PATH.finditer(text):
            named.add(tuple(path_match.group(1).split("::")))
        for segments in named:
            target = resolve(mods, current, list(segments))
            if target is None or target == module or not target or not module:
                continue
            if module.startswith(target + "::") or target.startswith(module + "::"):
                continue
            edges[module].add(target)
    return edges


def cycles(edges):
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(node):
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in edges[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10_000)
    for node in edges:
        if node not in index:
            visit(node)
    return found


def main(sources):
    failed = False
    for src in sources:
        edges = edges_of(modules(src))
        for component in cycles(edges):
            failed = True
            print(f"{src}: these modules import each other in a circle:")
            for module in component:
                inside = sorted(target for target in edges[module] if target in component)
                print(f"  {module} -> {', '.join(inside)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["crates/reins/src"]))
