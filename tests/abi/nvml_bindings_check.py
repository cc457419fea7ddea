#!/usr/bin/env python3
"""Hold our NVML declarations (src/telemetry/nvml_api.h) against bindgen's translation of nvml.h.

Inputs
  --dump      what nvml_layout_dump prints (JSON lines): a file, "-" for stdin, or the dumper
              executable itself (it is then run and its stdout read).
  --bindings  bindings.rs of the Rust crate nvml-wrapper-sys (Debian: librust-nvml-wrapper-sys-dev),
              bindgen's output for NVIDIA's nvml.h. A glob pattern is accepted; the highest
              crate version wins.
  --header    optional: src/telemetry/nvml_api.h, to check that the dump covers every struct,
              field, typedef, constant and PFN_ type declared there.
  --source    optional: src/telemetry/nvml_source.cc, to check that the dump's functions are
              exactly the GPUPLAN_NVML_SYMBOLS table (symbol names and PFN types).

Checks
  structs    size, alignment, field count, field names (identical to nvml.h), offsets, sizes and
             types; the bindgen side is laid out here with x86-64 SysV / LP64 rules.
  typedefs   ours against the bindings' type (enums: any 4-byte integer).
  constants  values (bindgen's plain consts, its enum constants `<enum>_<NAME>`, and the
             NVML_STRUCT_VERSION macros such as nvmlMemory_v2, recomputed from the bindings'
             struct size because bindgen cannot translate function-like macros).
  functions  the symbol exists (bindgen's `.get(b"symbol\\0")`), the return type, the parameter count
             and each parameter type; enum parameters must be spelled with NVML's typedef name.

Exit status: 0 all match, 1 one line per mismatch ("MISMATCH: ..."), 77 bindings.rs absent (skip;
1 under GPUPLAN_CI=1, where scripts/install-deps.sh has installed it).
Python 3 standard library only.
"""

import argparse
import difflib
import glob
import json
import os
import re
import subprocess
import sys

SKIP = 77

# Functions we call that are newer than the NVML header the bindings were generated from. They are
# reported as "not in bindings (newer than NVML x)" and do not fail the check; their signature is
# compared with the one written here instead (nvml.h / NVML API reference, R535 and later; the same
# signatures are in NVIDIA's cuda-python nvml bindings generated from nvml.h 12.9-13.0). A symbol
# missing from the bindings that is NOT listed here is a failure (most likely a misspelled name).
NEWER_THAN_BINDINGS = {
    "nvmlDeviceGetGpuMaxPcieLinkGeneration": ("nvmlReturn_t", ["nvmlDevice_t", "unsigned int*"]),
    "nvmlDeviceGetCurrentClocksEventReasons": ("nvmlReturn_t", ["nvmlDevice_t", "unsigned long long*"]),
    "nvmlDeviceGetNumaNodeId": ("nvmlReturn_t", ["nvmlDevice_t", "unsigned int*"]),
}

# ---------------------------------------------------------------------------------------------
# Type trees, shared by both sides:
#   ("scalar", name)  name in SCALARS
#   ("ptr", const, tree)  ("array", tree, n)  ("struct", ident)  ("fnptr",)
#   ("enum", frozenset(names along the typedef chain), underlying scalar name)   (bindings only)
#   ("unknown", text)
SCALARS = {  # name: (size, C spelling)
    "void": (0, "void"), "bool": (1, "bool"),
    "char": (1, "char"), "schar": (1, "signed char"), "uchar": (1, "unsigned char"),
    "short": (2, "short"), "ushort": (2, "unsigned short"),
    "int": (4, "int"), "uint": (4, "unsigned int"),
    "long": (8, "long"), "ulong": (8, "unsigned long"),
    "llong": (8, "long long"), "ullong": (8, "unsigned long long"),
    "int64": (8, "int64_t"), "uint64": (8, "uint64_t"),
    "float": (4, "float"), "double": (8, "double"),
}
# bindgen spells fixed-width C types (uint64_t, ...) as u64 etc.; these are the C types they can be.
SCALAR_COMPATIBLE = {"uint64": {"ulong", "ullong"}, "int64": {"long", "llong"}}

RUST_SCALARS = {
    "c_void": "void", "c_char": "char", "c_schar": "schar", "c_uchar": "uchar",
    "c_short": "short", "c_ushort": "ushort", "c_int": "int", "c_uint": "uint",
    "c_long": "long", "c_ulong": "ulong", "c_longlong": "llong", "c_ulonglong": "ullong",
    "c_float": "float", "c_double": "double",
    "u8": "uchar", "i8": "schar", "u16": "ushort", "i16": "short", "u32": "uint", "i32": "int",
    "u64": "uint64", "i64": "int64", "usize": "ulong", "isize": "long",
    "f32": "float", "f64": "double", "bool": "bool",
}

C_SCALARS = {
    "void": "void", "bool": "bool", "char": "char", "signed char": "schar",
    "unsigned char": "uchar", "short": "short", "unsigned short": "ushort", "int": "int",
    "unsigned": "uint", "unsigned int": "uint", "long": "long", "unsigned long": "ulong",
    "long long": "llong", "unsigned long long": "ullong", "float": "float", "double": "double",
}


def render(t):
    """A tree as C text, for messages."""
    kind = t[0]
    if kind == "scalar":
        return SCALARS[t[1]][1]
    if kind == "ptr":
        return ("const " if t[1] else "") + render(t[2]) + "*"
    if kind == "array":
        return "%s[%d]" % (render(t[1]), t[2])
    if kind == "struct":
        return t[1]
    if kind == "enum":
        named = sorted(n for n in t[1] if n.endswith("_t")) or sorted(t[1])
        return named[0]
    if kind == "fnptr":
        return "function pointer"
    return "?" + str(t[1])


def split_top(text, sep=","):
    """Split at top-level separators, ignoring those inside () [] <> (and the '>' of '->')."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        c = text[i]
        if c == "-" and text[i:i + 2] == "->":
            cur.append("->")
            i += 2
            continue
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def leaf_name(text):
    """'const nvmlEnableState_t *' -> 'nvmlEnableState_t'."""
    return re.sub(r"\bconst\b|[*&\s]", "", text or "")


# ---------------------------------------------------------------------------------------------
class Bindings:
    def __init__(self, path):
        self.path = path
        raw = open(path, encoding="utf-8").read()
        first = raw.splitlines()[0] if raw else ""
        m = re.search(r"rust-bindgen\s+([\d.]+)", first)
        self.bindgen = m.group(1) if m else None
        text = re.sub(r"/\*.*?\*/", "", raw, flags=re.S)
        text = re.sub(r"(?m)^\s*//.*$", "", text)
        self.text = text
        self._parse_consts()
        self._parse_types()
        self._parse_functions()
        self._layouts = {}
        self.crate, self.crate_version, self.nvml_version = self._version_info()

    # -- consts --
    def _parse_consts(self):
        self.consts = {}        # name -> (value, rust type)
        self.enumerators = {}   # NAME -> [(value, enum type, bindgen const name)]
        self.enum_types = set()
        for m in re.finditer(r"\bpub\s+const\s+(\w+)\s*:\s*([^=;]+?)\s*=\s*([^;]+?)\s*;", self.text, re.S):
            name, rtype, val = m.group(1), m.group(2).strip(), m.group(3).strip()
            value = parse_int(val)
            if value is None:
                continue  # byte strings and the like
            self.consts[name] = (value, rtype)
            if re.fullmatch(r"\w+", rtype) and name.startswith(rtype + "_"):
                self.enum_types.add(rtype)
                self.enumerators.setdefault(name[len(rtype) + 1:], []).append((value, rtype, name))

    # -- structs, unions, aliases --
    def _parse_types(self):
        self.aliases = {}  # name -> rust type text
        for m in re.finditer(r"\bpub\s+type\s+(\w+)\s*=\s*([^;]+?)\s*;", self.text, re.S):
            self.aliases[m.group(1)] = " ".join(m.group(2).split())
        for m in re.finditer(r"\bpub\s+use\s+self::(\w+)\s+as\s+(\w+)\s*;", self.text):
            self.aliases[m.group(2)] = m.group(1)
        self.records = {}  # ident -> (kind "struct"/"union", repr text, [(name, rust type)])
        rec = re.compile(r"#\[repr\(([^)]*)\)\]\s*(?:#\[[^\]]*\]\s*)*pub\s+(struct|union)\s+(\w+)\s*\{")
        for m in rec.finditer(self.text):
            body_start = m.end()
            depth, i = 1, body_start
            while depth and i < len(self.text):
                depth += {"{": 1, "}": -1}.get(self.text[i], 0)
                i += 1
            body = self.text[body_start:i - 1]
            fields = []
            for part in split_top(body):
                fm = re.match(r"^(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:\s*(.+)$", part, re.S)
                if fm:
                    fields.append((fm.group(1), " ".join(fm.group(2).split())))
            self.records[m.group(3)] = (m.group(2), m.group(1), fields)

    # -- functions --
    def _parse_functions(self):
        self.symbols = set(re.findall(r'\.get\(\s*b"([A-Za-z_]\w*)\\0"\s*\)', self.text))
        self.functions = {}  # name -> (return rust text or None, [(param, rust text)], legacy)
        head = re.compile(r'\bpub\s+(\w+)\s*:\s*Result<\s*unsafe\s+extern\s+"C"\s+fn\s*\(')
        for m in head.finditer(self.text):
            i, depth = m.end(), 1
            while depth and i < len(self.text):
                depth += {"(": 1, ")": -1}.get(self.text[i], 0)
                i += 1
            params_text = self.text[m.end():i - 1]
            rest = self.text[i:]
            ret = None
            rm = re.match(r"\s*->\s*", rest)
            if rm:
                ret = split_top(rest[rm.end():])[0]
            params = []
            for p in split_top(params_text):
                pm = re.match(r"^(\w+)\s*:\s*(.+)$", p, re.S)
                params.append((pm.group(1), " ".join(pm.group(2).split())) if pm else ("", p))
            before = self.text[:m.start()].rstrip()
            legacy = before.endswith('#[cfg(feature = "legacy-functions")]')
            self.functions[m.group(1)] = (ret and " ".join(ret.split()), params, legacy)

    def _version_info(self):
        pkg = os.path.dirname(os.path.dirname(os.path.abspath(self.path)))
        crate, version, nvml = "nvml-wrapper-sys", None, None
        try:
            cargo = open(os.path.join(pkg, "Cargo.toml"), encoding="utf-8").read()
            m = re.search(r'(?m)^name\s*=\s*"([^"]+)"', cargo)
            crate = m.group(1) if m else crate
            m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', cargo)
            version = m.group(1) if m else None
        except OSError:
            m = re.search(r"([\w-]+)-(\d+\.\d+\.\d+)$", pkg)
            if m:
                crate, version = m.group(1), m.group(2)
        try:  # newest release section first: "regenerated using the NVML 11.8 header"
            log = open(os.path.join(pkg, "CHANGELOG.md"), encoding="utf-8").read()
            m = re.search(r"NVML\s+(\d+\.\d+(?:\s+update\s+\d+)?)\s+header", log)
            nvml = m.group(1) if m else None
        except OSError:
            pass
        if nvml is None and "NVML_API_VERSION" in self.consts:
            nvml = "API version %d" % self.consts["NVML_API_VERSION"][0]
        return crate, version, nvml or "unknown"

    # -- type resolution --
    def resolve_name(self, name, seen=()):
        if name in self.records:
            return ("struct", name)
        if name not in self.aliases or name in seen:
            return ("unknown", name)
        chain, cur = [name], name
        while cur in self.aliases and re.fullmatch(r"\w+", self.aliases[cur]) \
                and self.aliases[cur] not in RUST_SCALARS and self.aliases[cur] not in chain:
            cur = self.aliases[cur]
            chain.append(cur)
        if cur in self.records:
            return ("struct", cur)
        if cur not in self.aliases:
            return ("unknown", cur)
        t = self.parse_rust(self.aliases[cur], seen + tuple(chain))
        if t[0] == "scalar" and any(n in self.enum_types for n in chain):
            return ("enum", frozenset(chain), t[1])
        return t

    def parse_rust(self, text, seen=()):
        s = text.strip()
        m = re.match(r"^\*\s*(mut|const)\s+(.+)$", s, re.S)
        if m:
            return ("ptr", m.group(1) == "const", self.parse_rust(m.group(2), seen))
        if s.startswith("[") and s.endswith("]"):
            parts = split_top(s[1:-1], ";")
            if len(parts) == 2:
                n = parse_int(parts[1])
                return ("array", self.parse_rust(parts[0], seen), n if n is not None else -1)
        m = re.match(r"^(?:::)?(?:std::)?(?:option::)?Option\s*<\s*unsafe\s+extern", s)
        if m:
            return ("fnptr",)
        m = re.match(r"^__BindgenBitfieldUnit\s*<(.*)>$", s, re.S)
        if m:
            return self.parse_rust(m.group(1), seen)
        m = re.match(r"^__IncompleteArrayField\s*<(.*)>$", s, re.S)
        if m:
            return ("array", self.parse_rust(m.group(1), seen), 0)
        last = re.sub(r"^.*::", "", s)  # raw::c_uint, ::std::os::raw::c_uint, self::Foo
        if last in RUST_SCALARS:
            return ("scalar", RUST_SCALARS[last])
        if re.fullmatch(r"\w+", last):
            return self.resolve_name(last, seen)
        return ("unknown", s)

    # -- layout (x86-64 SysV / LP64, natural alignment) --
    def size_align(self, t):
        kind = t[0]
        if kind == "scalar":
            size = SCALARS[t[1]][0]
            return size, max(size, 1)
        if kind == "enum":
            size = SCALARS[t[2]][0]
            return size, size
        if kind in ("ptr", "fnptr"):
            return 8, 8
        if kind == "array":
            size, align = self.size_align(t[1])
            return size * max(t[2], 0), align
        if kind == "struct":
            lay = self.layout(t[1])
            return lay["size"], lay["align"]
        raise ValueError("cannot lay out bindgen type %s" % (t[1],))

    def layout(self, ident):
        if ident in self._layouts:
            return self._layouts[ident]
        kind, repr_text, fields = self.records[ident]
        packed = re.search(r"packed(?:\((\d+)\))?", repr_text)
        pack = int(packed.group(1) or 1) if packed else None
        min_align = re.search(r"align\((\d+)\)", repr_text)
        offset, size, align, out = 0, 0, 1, []
        for name, rtype in fields:
            t = self.parse_rust(rtype)
            fsize, falign = self.size_align(t)
            if pack:
                falign = min(falign, pack)
            if kind == "union":
                foff = 0
                size = max(size, fsize)
            else:
                foff = (offset + falign - 1) // falign * falign
                offset = foff + fsize
                size = offset
            align = max(align, falign)
            out.append({"name": name, "offset": foff, "size": fsize, "type": t, "rust": rtype})
        if min_align:
            align = max(align, int(min_align.group(1)))
        size = (size + align - 1) // align * align
        lay = {"size": size, "align": align, "fields": out}
        self._layouts[ident] = lay
        return lay


def parse_int(text):
    s = text.strip().replace("_", "")
    s = re.sub(r"(?:u|i)(?:8|16|32|64|128|size)$", "", s)
    s = re.sub(r"^\((.*)\)$", r"\1", s)
    try:
        return int(s, 0)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
def parse_ours(text):
    """The dumper's grammar: int uint ... | const T | ptr(T) | array(T,N) | struct NAME -> (tree, const)."""
    s = text.strip()
    if s.startswith("const "):
        t, _ = parse_ours(s[6:])
        return t, True
    if s.startswith("ptr(") and s.endswith(")"):
        inner, const = parse_ours(s[4:-1])
        return ("ptr", const, inner), False
    if s.startswith("array(") and s.endswith(")"):
        inner, n = s[6:-1].rsplit(",", 1)
        return ("array", parse_ours(inner)[0], int(n)), False
    if s.startswith("struct "):
        return ("struct", s[7:].strip()), False
    if s in SCALARS:
        return ("scalar", s), False
    return ("unknown", s), False


def parse_c_text(text, bindings):
    """C spelling from NEWER_THAN_BINDINGS ('unsigned int*', 'nvmlDevice_t') -> bindings-side tree."""
    s = text.strip()
    if s.endswith("*"):
        inner = s[:-1].strip()
        const = bool(re.match(r"^const\b", inner))
        inner = re.sub(r"^const\s+", "", inner)
        return ("ptr", const, parse_c_text(inner, bindings))
    s = " ".join(s.split())
    if s in C_SCALARS:
        return ("scalar", C_SCALARS[s])
    return bindings.resolve_name(s)


def compare(ours, theirs, bindings, text=None):
    """None when our tree matches the bindings tree, else a short reason."""
    if theirs[0] == "unknown":
        return "bindings type %r not understood by this script" % (theirs[1],)
    if theirs[0] == "enum":
        if not (ours[0] == "scalar" and SCALARS[ours[1]][0] == SCALARS[theirs[2]][0]
                and ours[1] in ("int", "uint")):
            return "not a %d-byte integer (the C enum's size)" % SCALARS[theirs[2]][0]
        if text is not None and leaf_name(text) not in theirs[1]:
            return "spelled %r where nvml.h uses the enum typedef %s" % (leaf_name(text), render(theirs))
        return None
    if ours[0] != theirs[0]:
        return "different kind of type"
    kind = ours[0]
    if kind == "scalar":
        if ours[1] == theirs[1] or ours[1] in SCALAR_COMPATIBLE.get(theirs[1], ()):
            return None
        return "different scalar type"
    if kind == "ptr":
        if ours[1] != theirs[1]:
            return "const-ness of the pointee differs"
        return compare(ours[2], theirs[2], bindings, text)
    if kind == "array":
        if ours[2] != theirs[2]:
            return "array length differs"
        return compare(ours[1], theirs[1], bindings, text)
    if kind == "struct":
        resolved = bindings.resolve_name(ours[1])
        if resolved[0] != "struct":
            return "no struct %s in the bindings" % ours[1]
        return None if resolved[1] == theirs[1] else "different struct"
    return "cannot compare"


# ---------------------------------------------------------------------------------------------
def load_dump(path):
    if path == "-":
        text = sys.stdin.read()
    elif os.path.isfile(path) and os.access(path, os.X_OK) and not path.endswith((".json", ".jsonl", ".txt")):
        text = subprocess.run([path], check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout
    else:
        text = open(path, encoding="utf-8").read()
    items = []
    for n, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                items.append(json.loads(line))
            except ValueError as e:
                raise SystemExit("nvml_bindings_check: %s line %d is not JSON: %s" % (path, n, e))
    return items


def find_bindings(pattern):
    if any(c in pattern for c in "*?["):
        found = glob.glob(pattern)

        def key(p):
            m = re.search(r"-(\d+(?:\.\d+)*)", p)
            return [int(x) for x in m.group(1).split(".")] if m else []
        return max(found, key=key) if found else None
    return pattern if os.path.isfile(pattern) else None


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def header_coverage(path, dump, report):
    text = strip_c_comments(open(path, encoding="utf-8").read())
    consts = re.findall(r"\binline\s+constexpr\s+[\w\s:]+?\s+(\w+)\s*=", text)
    usings = re.findall(r"\busing\s+(\w+)\s*=", text)
    structs = {m.group(1): m.group(2) for m in re.finditer(r"\bstruct\s+(\w+)\s*\{(.*?)\}\s*;", text, re.S)}
    d_consts = {d["name"] for d in dump if d["kind"] == "const"}
    d_typedefs = {d["name"] for d in dump if d["kind"] == "typedef"}
    d_pfns = {d["pfn"] for d in dump if d["kind"] == "function"}
    d_fields = {}
    for d in dump:
        if d["kind"] == "field":
            d_fields.setdefault(d["struct"], []).append(d["name"])
    for c in consts:
        if c not in d_consts:
            report("dump incomplete: constant %s is declared in %s but nvml_layout_dump does not print it" % (c, path))
    for u in usings:
        if u.startswith("PFN_"):
            if u not in d_pfns:
                report("dump incomplete: %s is declared in %s but no dumped function uses it" % (u, path))
        elif u not in d_typedefs:
            report("dump incomplete: typedef %s is declared in %s but nvml_layout_dump does not print it" % (u, path))
    for name, body in structs.items():
        fields = [m.group(1) for m in re.finditer(r"(\w+)\s*(?:\[[^\]]*\])?\s*;", body)]
        if name not in d_fields:
            report("dump incomplete: struct %s is declared in %s but nvml_layout_dump does not print it" % (name, path))
        elif fields != d_fields[name]:
            report("dump incomplete: struct %s fields in %s are %s, nvml_layout_dump prints %s"
                   % (name, path, fields, d_fields[name]))
    return len(consts) + len(usings) + len(structs)


def source_coverage(path, dump, report):
    text = strip_c_comments(open(path, encoding="utf-8").read())
    table = re.findall(r'\bX\(\s*(\w+)\s*,\s*"(\w+)"\s*,\s*(\w+)\s*\)', text)
    ours = {s: p for _, s, p in table}
    dumped = {d["symbol"]: d["pfn"] for d in dump if d["kind"] == "function"}
    if not table:
        report("no GPUPLAN_NVML_SYMBOLS entries X(member, \"symbol\", PFN_type) found in %s" % path)
    for sym, pfn in ours.items():
        if sym not in dumped:
            report("dump incomplete: %s (%s) is looked up in %s but nvml_layout_dump does not print it"
                   % (sym, pfn, path))
        elif dumped[sym] != pfn:
            report("dump stale: %s is %s in %s but %s in nvml_layout_dump" % (sym, pfn, path, dumped[sym]))
    for sym in dumped:
        if sym not in ours:
            report("dump stale: nvml_layout_dump prints %s, which %s no longer looks up" % (sym, path))
    return len(table)


# ---------------------------------------------------------------------------------------------
def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--bindings", required=True)
    ap.add_argument("--header")
    ap.add_argument("--source")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)

    bpath = find_bindings(args.bindings)
    if bpath is None:
        why = "no bindings.rs at %s (Debian: apt-get install librust-nvml-wrapper-sys-dev)" % args.bindings
        if os.environ.get("GPUPLAN_CI") == "1":  # scripts/install-deps.sh installs it (docs/testing.md)
            print("FAIL: %s (GPUPLAN_CI=1: a skip is a failure)" % why)
            return 1
        print("SKIP: " + why)
        return SKIP
    dump = load_dump(args.dump)
    meta = next((d for d in dump if d["kind"] == "meta"), {})
    if meta.get("pointer_size") != 8 or meta.get("long_size") != 8:
        print("SKIP: the layout rules here are LP64 (x86-64 SysV); the dump says pointer %s, long %s bytes"
              % (meta.get("pointer_size"), meta.get("long_size")))
        return SKIP
    b = Bindings(bpath)
    newer_label = "newer than NVML %s" % b.nvml_version

    problems, notes = [], []
    report = problems.append

    def ok(line):
        if args.verbose:
            print("ok   " + line)

    def suggest(name, pool):
        close = difflib.get_close_matches(name, pool, n=1, cutoff=0.8)
        return " (closest there: %s)" % close[0] if close else ""

    # typedefs
    n_typedefs = 0
    for d in (d for d in dump if d["kind"] == "typedef"):
        n_typedefs += 1
        ours, _ = parse_ours(d["type"])
        theirs = b.resolve_name(d["name"])
        if theirs[0] == "unknown":
            report("typedef %s: not in bindings%s" % (d["name"], suggest(d["name"], b.aliases)))
            continue
        why = compare(ours, theirs, b, d["name"])
        if why:
            report("typedef %s: ours %s, bindings %s (%s)" % (d["name"], render(ours), render(theirs), why))
        else:
            ok("typedef %s = %s" % (d["name"], render(ours)))

    # structs
    structs = [d for d in dump if d["kind"] == "struct"]
    fields = {}
    for d in dump:
        if d["kind"] == "field":
            fields.setdefault(d["struct"], []).append(d)
    n_fields = 0
    for s in structs:
        name = s["name"]
        target = b.resolve_name(name)
        if target[0] != "struct":
            report("struct %s: not in bindings%s" % (name, suggest(name, list(b.records) + list(b.aliases))))
            continue
        ident = target[1]
        lay = b.layout(ident)
        if s["size"] != lay["size"]:
            report("struct %s: sizeof ours %d, bindings %d (%s)" % (name, s["size"], lay["size"], ident))
        if s["align"] != lay["align"]:
            report("struct %s: alignof ours %d, bindings %d (%s)" % (name, s["align"], lay["align"], ident))
        ofields = fields.get(name, [])
        tfields = lay["fields"]
        if len(ofields) != len(tfields):
            report("struct %s: ours has %d fields %s, bindings %d %s (%s)" % (
                name, len(ofields), [f["name"] for f in ofields], len(tfields), [f["name"] for f in tfields], ident))
        for of, tf in zip(ofields, tfields):
            n_fields += 1
            where = "struct %s.%s" % (name, of["name"])
            if of["name"] != tf["name"]:
                report("%s: field name ours %s, bindings %s (%s, field %d)" % (
                    where, of["name"], tf["name"], ident, ofields.index(of) + 1))
            if of["offset"] != tf["offset"]:
                report("%s: offset ours %d, bindings %d (%s.%s)"
                       % (where, of["offset"], tf["offset"], ident, tf["name"]))
            if of["size"] != tf["size"]:
                report("%s: size ours %d, bindings %d (%s.%s)" % (where, of["size"], tf["size"], ident, tf["name"]))
            ours, _ = parse_ours(of["type"])
            why = compare(ours, tf["type"], b)
            if why:
                report("%s: type ours %s, bindings %s = %s (%s)"
                       % (where, render(ours), tf["rust"], render(tf["type"]), why))
            else:
                ok("%s @%d size %d %s" % (where, of["offset"], of["size"], render(ours)))
        if len(ofields) == len(tfields) and s["size"] == lay["size"]:
            ok("struct %s = %s, %d bytes" % (name, ident, lay["size"]))

    # constants
    n_consts, derived = 0, []
    for d in (d for d in dump if d["kind"] == "const"):
        n_consts += 1
        name, ours = d["name"], d["value"]
        source = None
        if name in b.consts:
            theirs, source = b.consts[name][0], name
        elif name in b.enumerators:
            values = {v for v, _, _ in b.enumerators[name]}
            if len(values) > 1:
                report("constant %s: ambiguous in bindings: %s" % (name, b.enumerators[name]))
                continue
            theirs, source = b.enumerators[name][0][0], b.enumerators[name][0][2]
        else:
            m = re.fullmatch(r"nvml(\w+)_v(\d+)", name)
            target = b.resolve_name(name + "_t") if m else ("unknown",)
            if target[0] == "struct":
                # nvml.h: #define nvmlX_vN NVML_STRUCT_VERSION(X, N) = sizeof(nvmlX_vN_t) | (N << 24)
                theirs = b.layout(target[1])["size"] | (int(m.group(2)) << 24)
                source = "NVML_STRUCT_VERSION(%s, %s) from sizeof(%s)" % (m.group(1), m.group(2), target[1])
                derived.append(name)
            else:
                pool = list(b.consts) + list(b.enumerators)
                report("constant %s: not in bindings%s" % (name, suggest(name, pool)))
                continue
        if ours != theirs:
            report("constant %s: ours %d, bindings %d (%s)" % (name, ours, theirs, source))
        else:
            ok("constant %s = %d (%s)" % (name, ours, source))

    # functions
    n_funcs, newer, legacy = 0, [], []
    for d in (d for d in dump if d["kind"] == "function"):
        n_funcs += 1
        sym = d["symbol"]
        ours_ret, _ = parse_ours(d["ret"])
        ours_params = [parse_ours(p)[0] for p in d["params"]]
        texts = d.get("params_text") or [None] * len(ours_params)
        if sym in b.symbols and sym in b.functions:
            ret_text, params, is_legacy = b.functions[sym]
            theirs_ret = b.parse_rust(ret_text) if ret_text else ("scalar", "void")
            theirs_params = [b.parse_rust(t) for _, t in params]
            their_texts = ["%s: %s" % p for p in params]
            if is_legacy:
                legacy.append(sym)
            if sym in NEWER_THAN_BINDINGS:
                notes.append("note: %s is listed in NEWER_THAN_BINDINGS but is in these bindings; "
                             "checked against them" % sym)
            label = "bindings"
        elif sym in NEWER_THAN_BINDINGS:
            newer.append(sym)
            ret_c, params_c = NEWER_THAN_BINDINGS[sym]
            theirs_ret = parse_c_text(ret_c, b)
            theirs_params = [parse_c_text(p, b) for p in params_c]
            their_texts = list(params_c)
            label = "NEWER_THAN_BINDINGS table (not bindings)"
        else:
            report("function %s: symbol not in bindings (no .get(b\"%s\\0\")) and not listed as %s%s" % (
                sym, sym, newer_label, suggest(sym, b.symbols)))
            continue
        fails = []
        why = compare(ours_ret, theirs_ret, b, d.get("ret_text"))
        if why:
            fails.append("function %s: return type ours %s, %s %s (%s)" % (
                sym, d.get("ret_text") or render(ours_ret), label, render(theirs_ret), why))
        if len(ours_params) != len(theirs_params):
            fails.append("function %s: %d parameters ours (%s), %d in %s (%s)" % (
                sym, len(ours_params), ", ".join(t or render(o) for t, o in zip(texts, ours_params)),
                len(theirs_params), label, ", ".join(their_texts)))
        else:
            for i, (o, t, txt, ttxt) in enumerate(zip(ours_params, theirs_params, texts, their_texts), 1):
                why = compare(o, t, b, txt)
                if why:
                    fails.append("function %s: parameter %d ours %s, %s %s = %s (%s)" % (
                        sym, i, txt or render(o), label, ttxt, render(t), why))
        problems.extend(fails)
        if not fails:
            ok("function %s(%s) [%s]" % (sym, ", ".join(t or render(o) for t, o in zip(texts, ours_params)), label))

    # coverage of the dump itself
    if args.header:
        header_coverage(args.header, dump, report)
    if args.source:
        source_coverage(args.source, dump, report)

    print("nvml_bindings_check: bindings %s (%s %s, NVML %s header, bindgen %s)" % (
        bpath, b.crate, b.crate_version or "?", b.nvml_version, b.bindgen or "?"))
    print("checked %d structs (%d fields), %d typedefs, %d constants, %d functions" % (
        len(structs), n_fields, n_typedefs, n_consts, n_funcs))
    if derived:
        print("constants derived from bindings' struct sizes (NVML_STRUCT_VERSION): %s" % ", ".join(derived))
    if newer:
        print("not in bindings (%s), checked only against NEWER_THAN_BINDINGS: %s" % (newer_label, ", ".join(newer)))
    if legacy:
        print("note: legacy (superseded) in bindings: %s" % ", ".join(legacy))
    for n in notes:
        print(n)
    if not args.header or not args.source:
        print("note: without --header and --source the dump's completeness is not checked")
    for p in problems:
        print("MISMATCH: " + p)
    print("%d mismatches" % len(problems) if problems else "all match")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
